// Run 103 harness (run 101's, bench/exp101/main.cu): the seed's harness (N tensors per task, M
// blocks at most per launch, 4 streams round-robin, >= 200 ms warm-up, 5 timed repetitions of
// 100 tasks, events, median) for the copy floor and fused-cluster K = 32 (compiled in, as run 78
// generated them) and any number of fused-split variants loaded from NVRTC-built cubins:
// VARIANTS="name=path.cubin,name=path.cubin". N and M from the environment (default 2048, 512).
// Every variant is validated first against an FP64 CPU reference on fresh random inputs with a
// NaN-poisoned output at VAL_NS (default 1,3,17,2047,2048) and at the timing N.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cmath>
#include <vector>
#include <random>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <cuda.h>
#include "../exp78/copy_k32.cu"
#include "../exp78/base_k32.cu"
#include <string>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef void (*KFn)(const double*, const double*, double*, double*, int, int);
// halves: one block per half-tensor (the z-split), so a launch has min(2N, M) blocks, even.
struct Kern { const char* name; KFn fn; int threads; int smem; int cluster; bool halves = false; CUfunction cu = nullptr; };

static const int K = 32, K2 = K * K, K3 = K * K * K;

static void reference(const std::vector<double>& A, const std::vector<double>& B, std::vector<double>& C, int N) {
    #pragma omp parallel
    {
        std::vector<double> x(K3), y(K3);
        #pragma omp for
        for (int n = 0; n < N; ++n) {
            std::copy(A.begin() + (size_t)n * K3, A.begin() + (size_t)(n + 1) * K3, x.begin());
            for (int p = 0; p < 3; ++p) {  // out[m][j] = sum_k in[k][m] B[k][j], in: K x K^2
                std::fill(y.begin(), y.end(), 0.0);
                for (int k = 0; k < K; ++k)
                    for (int m = 0; m < K2; ++m) {
                        const double v = x[(size_t)k * K2 + m];
                        for (int j = 0; j < K; ++j) y[(size_t)m * K + j] += v * B[k * K + j];
                    }
                std::swap(x, y);
            }
            std::copy(x.begin(), x.end(), C.begin() + (size_t)n * K3);
        }
    }
}

static int grid_of(const Kern& k, int N, int M) { if (k.halves) { int b = std::min(2 * N, M); return b + (b & 1); } int b = std::min(N, M); return (b + k.cluster - 1) / k.cluster * k.cluster; }

static void launch(const Kern& k, cudaStream_t s, const double* a, const double* b, double* c, int N, int M) {
    // nblocks (the kernels' last argument) is the grid actually launched: the copy walks the
    // batch by it (run 101's harness passed M, right only where min(N, M) = M).
    int grid = grid_of(k, N, M);
    void* args[] = {(void*)&a, (void*)&b, (void*)&c, nullptr, (void*)&N, (void*)&grid};
    double* ws = nullptr; args[3] = &ws;
    if (k.cu) {  // loaded from a cubin (CHAIN_CUBIN): the NVRTC-compiled build mra-bench would use
        CUresult r = cuLaunchKernel(k.cu, grid, 1, 1, k.threads, 1, 1, k.smem, s, args, nullptr);
        if (r != CUDA_SUCCESS) { fprintf(stderr, "cuLaunchKernel %s: %d\n", k.name, (int)r); exit(1); }
        return;
    }
    CK(cudaLaunchKernel((const void*)k.fn, dim3(grid), dim3(k.threads), args, k.smem, s));
}

// Validates kernel k at N tensors: fresh inputs (seed), poisoned output. Returns max rel error.
static bool validate(const Kern& k, int N, unsigned seed, bool copy) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> A((size_t)N * K3), B(K2), C((size_t)N * K3), R((size_t)N * K3);
    for (auto& v : A) v = u(rng);
    for (auto& v : B) v = u(rng);
    double *dA, *dB, *dC;
    CK(cudaMalloc(&dA, A.size() * 8)); CK(cudaMalloc(&dB, B.size() * 8)); CK(cudaMalloc(&dC, C.size() * 8));
    CK(cudaMemcpy(dA, A.data(), A.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), B.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(dC, 0xFF, C.size() * 8));  // NaN
    launch(k, 0, dA, dB, dC, N, 512);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, C.size() * 8, cudaMemcpyDeviceToHost));
    if (copy) R = A; else reference(A, B, R, N);
    double maxd = 0, maxr = 0; size_t nonfinite = 0;
    for (size_t i = 0; i < C.size(); ++i) {
        if (!std::isfinite(C[i])) { ++nonfinite; continue; }
        maxd = std::max(maxd, std::fabs(C[i] - R[i]));
        maxr = std::max(maxr, std::fabs(R[i]));
    }
    const double rel = maxd / maxr;
    const bool ok = nonfinite == 0 && rel < 1e-10;
    printf("validate %-14s N=%5d seed=%u: max rel %.3e, non-finite %zu: %s\n", k.name, N, seed, rel, nonfinite, ok ? "PASS" : "FAIL");
    CK(cudaFree(dA)); CK(cudaFree(dB)); CK(cudaFree(dC));
    return ok;
}

struct Timed { double us_per_task; std::vector<double> reps; };

static Timed time_kernel(const Kern& k, const double* a, const double* b, double* c, int N, int M, int tasks, int reps, cudaStream_t* st, int ns) {
    cudaEvent_t e0, e1, joins[8];
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < ns; ++i) CK(cudaEventCreate(&joins[i]));
    auto one = [&]() {
        CK(cudaEventRecord(e0, st[0]));
        for (int i = 1; i < ns; ++i) CK(cudaStreamWaitEvent(st[i], e0, 0));
        for (int t = 0; t < tasks; ++t) launch(k, st[t % ns], a, b, c, N, M);
        for (int i = 1; i < ns; ++i) { CK(cudaEventRecord(joins[i], st[i])); CK(cudaStreamWaitEvent(st[0], joins[i], 0)); }
        CK(cudaEventRecord(e1, st[0]));
        CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        return (double)ms;
    };
    // WARM_MS: untimed repetitions until this long has passed (200 ms, mra-bench's harness);
    // WARM_MS=0 still runs one.
    const double warm_ms = getenv("WARM_MS") ? atof(getenv("WARM_MS")) : 200.0;
    double warm = 0; int w = 0;
    while (w == 0 || warm < warm_ms) { warm += one(); ++w; }
    Timed r;
    for (int i = 0; i < reps; ++i) r.reps.push_back(one() * 1000.0 / tasks);
    std::vector<double> s = r.reps; std::sort(s.begin(), s.end());
    r.us_per_task = s[s.size() / 2];
    CK(cudaGetLastError());
    return r;
}

int main(int argc, char** argv) {
    const int N = getenv("N") ? atoi(getenv("N")) : 2048, M = getenv("M") ? atoi(getenv("M")) : 512;
    int tasks = 100, reps = getenv("REPS") ? atoi(getenv("REPS")) : 5, rounds = argc > 1 ? atoi(argv[1]) : 3;
    std::vector<Kern> kerns = {
        {"copy", mra_copy_k32_f64, 128, 0, 1},
        {"fused-cluster", mra_fused_cluster_k32_f64, 256, 101392, 8},
    };
    CK(cudaFree(0));
    std::vector<std::string> names;
    if (const char* v = getenv("VARIANTS")) {
        std::string s(v);
        size_t p = 0;
        while (p < s.size()) {
            size_t e = s.find(',', p); if (e == std::string::npos) e = s.size();
            std::string item = s.substr(p, e - p); p = e + 1;
            size_t eq = item.find('=');
            names.push_back(item.substr(0, eq));
            std::string path = item.substr(eq + 1);
            // name=path[:smem:threads]: a variant with its own shared bytes and block size.
            int smem = 197184, threads = 256;
            if (size_t c1 = path.find(':'); c1 != std::string::npos) {
                size_t c2 = path.find(':', c1 + 1);
                smem = atoi(path.substr(c1 + 1, c2 - c1 - 1).c_str());
                threads = atoi(path.substr(c2 + 1).c_str());
                path = path.substr(0, c1);
            }
            CUmodule mod; CUfunction f;
            if (cuModuleLoad(&mod, path.c_str()) != CUDA_SUCCESS || cuModuleGetFunction(&f, mod, "mra_fused_split_k32_f64") != CUDA_SUCCESS) { fprintf(stderr, "cannot load %s\n", path.c_str()); return 1; }
            cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
            int regs = 0, local = 0; cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f); cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
            Kern k{nullptr, nullptr, threads, smem, 1, true};
            k.cu = f;
            kerns.push_back(k);
            printf("variant %s from %s: %d threads, %d B shared, regs %d, local %d B\n", item.substr(0, eq).c_str(), path.c_str(), threads, smem, regs, local);
        }
    }
    for (size_t i = 2; i < kerns.size(); ++i) kerns[i].name = names[i - 2].c_str();
    for (int ki = 0; ki < 2; ++ki) {
        auto& k = kerns[ki];
        if (k.smem > 48 * 1024) CK(cudaFuncSetAttribute((const void*)k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, k.smem));
        cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, (const void*)k.fn));
        printf("kernel %-14s regs %d, smem %d B dynamic, local %zu B\n", k.name, fa.numRegs, k.smem, fa.localSizeBytes);
    }
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs; N %d, M %d\n", prop.name, prop.multiProcessorCount, N, M);
    unsigned seed = (unsigned)time(nullptr);
    bool ok = true;
    if (!getenv("NOVAL")) {
        std::vector<int> ns;
        { std::string s = getenv("VAL_NS") ? getenv("VAL_NS") : "1,3,17,2047,2048"; size_t p = 0;
          while (p < s.size()) { size_t e = s.find(',', p); if (e == std::string::npos) e = s.size(); ns.push_back(atoi(s.substr(p, e - p).c_str())); p = e + 1; } }
        if (std::find(ns.begin(), ns.end(), N) == ns.end()) ns.push_back(N);
        ok &= validate(kerns[0], N, seed++, true);
        ok &= validate(kerns[1], N, seed++, false);
        for (size_t kk = 2; kk < kerns.size(); ++kk) for (int n : ns) ok &= validate(kerns[kk], n, seed++, false);
    }
    if (!ok) { printf("VALIDATION FAILED: not timing\n"); return 1; }
    std::vector<double> A((size_t)N * K3), B(K2);
    std::mt19937_64 rng(seed); std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto& v : A) v = u(rng);
    for (auto& v : B) v = u(rng);
    double *dA, *dB, *dC;
    CK(cudaMalloc(&dA, A.size() * 8)); CK(cudaMalloc(&dB, B.size() * 8)); CK(cudaMalloc(&dC, A.size() * 8));
    CK(cudaMemcpy(dA, A.data(), A.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), B.size() * 8, cudaMemcpyHostToDevice));
    cudaStream_t st[4];
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("\nround kernel          us/task  (reps)                                   time/copy\n");
    for (int r = 0; r < rounds; ++r) {
        double copy_us = 0;
        // The order rotates each round (the copy first), so no kernel always follows the same one.
        std::vector<size_t> order;
        for (size_t i = 1; i < kerns.size(); ++i) order.push_back(i);
        std::rotate(order.begin(), order.begin() + (r % order.size()), order.end());
        order.insert(order.begin(), 0);
        const char* only = getenv("ONLY");  // time the copy and this kernel only (one per process)
        for (size_t ki : order) {
            const Kern& k = kerns[ki];
            if (only && ki != 0 && strcmp(only, k.name)) continue;
            Timed t = time_kernel(k, dA, dB, dC, N, M, tasks, reps, st, 4);
            if (ki == 0) copy_us = t.us_per_task;
            printf("%5d %-14s %8.2f  (", r, k.name, t.us_per_task);
            for (double v : t.reps) printf(" %.2f", v);
            printf(")  %.3f\n", t.us_per_task / copy_us);
        }
    }
    return 0;
}
