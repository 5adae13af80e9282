// How many thread-block clusters of each size the GPU holds at once, against its block slots,
// and the SM -> GPC map that decides it. Run 90 (bench/NOTES.md). Build: nvcc -arch=sm_90 -o c clusters.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

// Each block records its SM and its cluster's first block's SM; spins a little so a cluster's
// blocks are resident together (they are by definition) and many clusters run at once.
__global__ void where(int *out) {
    extern __shared__ char smem[];
    cg::cluster_group cl = cg::this_cluster();
    unsigned me = smid();
    smem[0] = 0;
    long long t0 = clock64();
    while (clock64() - t0 < 20000) {}
    out[2 * blockIdx.x] = me;
    out[2 * blockIdx.x + 1] = blockIdx.x / cl.num_blocks();
}

int find(std::vector<int> &p, int x) { while (p[x] != x) x = p[x] = p[p[x]]; return x; }

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s: %d SMs, %zu B shared per SM (opt-in per block %zu)\n", prop.name, prop.multiProcessorCount,
           prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin);
    CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)prop.sharedMemPerBlockOptin));
    CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const int threads = 256;
    const int smems[] = {101392, 73728, 200000};  // fused-cluster K=32 (2 per SM), 3 per SM, 1 per SM
    for (int s : smems) {
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, where, threads, s));
        printf("shared %6d B: %d blocks per SM = %d slots;", s, per_sm, per_sm * prop.multiProcessorCount);
        for (int c : {1, 2, 4, 8, 16}) {
            cudaLaunchConfig_t cfg = {};
            cudaLaunchAttribute a[1];
            a[0].id = cudaLaunchAttributeClusterDimension;
            a[0].val.clusterDim.x = c; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
            cfg.gridDim = dim3(c * 64); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = s;
            cfg.attrs = a; cfg.numAttrs = 1;
            int n = -1;
            cudaError_t e = cudaOccupancyMaxActiveClusters(&n, where, &cfg);
            if (e != cudaSuccess) { printf(" c%d: %s", c, cudaGetErrorString(e)); cudaGetLastError(); continue; }
            printf(" c%d: %d clusters = %d blocks (%.1f%%)", c, n, n * c, 100.0 * n * c / (per_sm * prop.multiProcessorCount));
        }
        printf("\n");
    }
    // The SM -> GPC map: SMs that share a cluster are in one GPC. Clusters of 16 at one block per SM.
    int nsm = prop.multiProcessorCount, grid = 16 * 64;
    int *d; CK(cudaMalloc(&d, 2 * grid * sizeof(int)));
    std::vector<int> h(2 * grid), parent(1024);
    for (int i = 0; i < 1024; i++) parent[i] = i;
    for (int rep = 0; rep < 20; rep++) for (int c : {16, 8}) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute a[1];
        a[0].id = cudaLaunchAttributeClusterDimension;
        a[0].val.clusterDim.x = c; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(grid); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = 200000;
        cfg.attrs = a; cfg.numAttrs = 1;
        if (cudaLaunchKernelEx(&cfg, where, d) != cudaSuccess) { printf("cluster %d launch failed\n", c); cudaGetLastError(); continue; }
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), d, 2 * grid * sizeof(int), cudaMemcpyDeviceToHost));
        for (int b = 0; b < grid; b++) {
            int first = (b / c) * c;
            parent[find(parent, h[2 * b])] = find(parent, h[2 * first]);
        }
    }
    std::vector<std::vector<int>> gpcs;
    std::vector<int> seen(1024, -1);
    for (int sm = 0; sm < nsm; sm++) {
        int r = find(parent, sm);
        if (seen[r] < 0) { seen[r] = gpcs.size(); gpcs.push_back({}); }
        gpcs[seen[r]].push_back(sm);
    }
    printf("GPCs (SMs linked by shared clusters): %zu\n", gpcs.size());
    std::vector<int> sizes;
    for (auto &g : gpcs) sizes.push_back(g.size());
    std::sort(sizes.begin(), sizes.end());
    printf("SMs per GPC:"); for (int s : sizes) printf(" %d", s); printf("\n");
    for (int per_sm : {1, 2, 3}) {
        printf("%d blocks per SM: clusters of 8 that fit by GPC = ", per_sm);
        int t = 0; for (int s : sizes) t += s * per_sm / 8; printf("%d (%d of %d slots)\n", t, 8 * t, per_sm * nsm);
    }
    return 0;
}
