// Run 106: mra_transform(K, ...) of an export directory, built by nvcc, timed on one stream:
// N = 2048 tensors per call, 200 ms of warm-up calls, then 5 repetitions of 20 calls, events,
// median. Build against an export (bench/exp106/run106.sh builds it twice: the default export
// and one with -l L7-breg) and run: ./time_export K...
#include "mra_transform.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)
int main(int argc, char** argv) {
    const int N = 2048;
    for (int i = 1; i < argc; ++i) {
        const int K = std::atoi(argv[i]);
        const size_t elems = (size_t)N * K * K * K;
        double *a, *b, *c, *w = nullptr;
        CK(cudaMalloc(&a, elems * 8)); CK(cudaMalloc(&c, elems * 8)); CK(cudaMalloc(&b, (size_t)K * K * 8));
        CK(cudaMemset(a, 0, elems * 8)); CK(cudaMemset(b, 0, (size_t)K * K * 8));
        const size_t ws = mra_transform_workspace_bytes(K, N);
        if (ws) CK(cudaMalloc(&w, ws));
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        auto reps = [&](int calls) {
            CK(cudaEventRecord(e0));
            for (int t = 0; t < calls; ++t) { int rc = mra_transform(K, a, b, c, w, N, 0); if (rc) { std::fprintf(stderr, "K=%d: %s\n", K, mra_status_string(rc)); std::exit(1); } }
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1000.0 / calls;
        };
        double warm = 0; while (warm < 200e3) warm += reps(20) * 20;
        std::vector<double> t; for (int r = 0; r < 5; ++r) t.push_back(reps(20));
        std::sort(t.begin(), t.end());
        std::printf("K=%d us/call median %.1f (min %.1f max %.1f)\n", K, t[2], t[0], t[4]);
        CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(c)); if (w) CK(cudaFree(w));
    }
    return 0;
}
