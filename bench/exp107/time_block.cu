// Run 107: the block-level device function of an export, as an MRA code calls it: a kernel of the
// caller's own in which each block transforms tensors n = blockIdx.x, + gridDim.x, ... with
// mra::k<K>_f64::transform_block, the grid the device holds at once (occupancy API), N = 2048,
// one stream, 200 ms of warm-up, 5 repetitions of 20 launches, events, median. Built against an
// export of K = 25, 28, 30 (bench/exp107/run107.sh: one with -l fused-1buf, one with -l L7-breg).
#include "mra_transform_device.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)
#define USER_KERNEL(KK)                                                                                        \
    __global__ void user_k##KK(const double* a, const double* b, double* c, double* workspace, int nfuncs) {    \
        namespace t = mra::k##KK##_f64;                                                                        \
        extern __shared__ __align__(32) unsigned char smem_k##KK[];                                            \
        const size_t k3 = (size_t)KK * KK * KK;                                                                \
        double* ws = workspace + (size_t)blockIdx.x * t::WORKSPACE_ELEMS;                                      \
        for (int n = blockIdx.x; n < nfuncs; n += gridDim.x) t::transform_block(a + n * k3, b, c + n * k3, ws, smem_k##KK); \
    }
USER_KERNEL(25)
USER_KERNEL(28)
USER_KERNEL(30)
typedef void (*UserKernel)(const double*, const double*, double*, double*, int);
struct Case { int K; UserKernel f; int threads; int shared; long long ws; const char* level; };
#define CASE(KK) { KK, user_k##KK, mra::k##KK##_f64::THREADS, mra::k##KK##_f64::SHARED_BYTES, mra::k##KK##_f64::WORKSPACE_ELEMS, LEVEL }
int main() {
    const Case cases[] = {CASE(25), CASE(28), CASE(30)};
    const int N = 2048;
    int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (const Case& c : cases) {
        if (c.shared > 48 * 1024) CK(cudaFuncSetAttribute((const void*)c.f, cudaFuncAttributeMaxDynamicSharedMemorySize, c.shared));
        int per_sm = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void*)c.f, c.threads, c.shared));
        const int grid = std::min(N, std::max(1, per_sm) * sms);
        const size_t elems = (size_t)N * c.K * c.K * c.K;
        double *a, *b, *out, *w = nullptr;
        CK(cudaMalloc(&a, elems * 8)); CK(cudaMalloc(&out, elems * 8)); CK(cudaMalloc(&b, (size_t)c.K * c.K * 8));
        CK(cudaMemset(a, 0, elems * 8)); CK(cudaMemset(b, 0, (size_t)c.K * c.K * 8));
        if (c.ws) CK(cudaMalloc(&w, (size_t)grid * c.ws * 8));
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        auto reps = [&](int calls) {
            CK(cudaEventRecord(e0));
            for (int t = 0; t < calls; ++t) c.f<<<grid, c.threads, c.shared>>>(a, b, out, w, N);
            CK(cudaGetLastError());
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1000.0 / calls;
        };
        double warm = 0; while (warm < 200e3) warm += reps(20) * 20;
        std::vector<double> t; for (int r = 0; r < 5; ++r) t.push_back(reps(20));
        std::sort(t.begin(), t.end());
        std::printf("K=%d %s transform_block: %d threads, %d B shared, %lld workspace elements, grid %d (%d per SM): us/call median %.1f (min %.1f max %.1f)\n",
                    c.K, c.level, c.threads, c.shared, c.ws, grid, per_sm, t[2], t[0], t[4]);
        CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(out)); if (w) CK(cudaFree(w));
    }
    return 0;
}
