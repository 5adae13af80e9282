// export_timing.cu: the API regime, measured the way an MRA code calls an export: for every K the
// export has, one call of mra_transform(K, ...) per repetition over 2 GiB of input, against a
// cudaMemcpyAsync device-to-device copy of the same bytes, both timed with events on one stream
// after warm-up (median of 5), in this one process.
//
//   mra-bench export --arch sm_90 -K 6,8,10,12,16,20,24,32 -o mra_export
//   nvcc -arch=sm_90 -O3 -I mra_export examples/export_timing.cu mra_export/*.cu -o export_timing
//   ./export_timing [GiB] [warm-up ms]   # one line per K: time, copy time, time / copy
//
// Each is warmed up for 200 ms (as mra-bench's harness is) before its timed runs: under its power
// limit a GPU runs a burst of a few milliseconds faster than a sustained load.
//
// The results are not checked here (examples/export_demo.cu checks them against a CPU reference);
// the input is a few thousand random tensors repeated over the batch.

#include "mra_transform.h"

// <cstdlib> before <algorithm>: clang's CUDA wrapper of <new> calls ::malloc.
#include <cstdlib>
#include <cstdio>
#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "export_timing: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(2);                                                                         \
        }                                                                                         \
    } while (0)

// Median microseconds of `reps` runs of `f` on `stream`, after untimed ones for `warmup_ms`.
template <typename F>
static double median_us(F f, cudaStream_t stream, double warmup_ms, int reps) {
    cudaEvent_t start, end;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&end));
    const auto t0 = std::chrono::steady_clock::now();
    do {
        f();
        CUDA_CHECK(cudaStreamSynchronize(stream));
    } while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < warmup_ms);
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        CUDA_CHECK(cudaEventRecord(start, stream));
        f();
        CUDA_CHECK(cudaEventRecord(end, stream));
        CUDA_CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
        t.push_back(ms * 1000.0);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(end));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char** argv) {
    const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
    const double warmup_ms = argc > 2 ? std::atof(argv[2]) : 200.0;
    cudaDeviceProp prop;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("# export_timing on %s: one mra_transform call over %.1f GiB of input per repetition against a device-to-device copy of the same bytes, each after %.0f ms of warm-up\n", prop.name, gib, warmup_ms);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    int failures = 0;
    for (int K = 1; K <= 32; ++K) {
        if (!mra_transform_supported(K)) continue;
        const size_t k3 = (size_t)K * K * K;
        const int N = (int)(gib * (1u << 30) / (k3 * sizeof(double)));
        const size_t elems = (size_t)N * k3, bytes = elems * sizeof(double);
        double *a, *b, *c, *w = nullptr;
        CUDA_CHECK(cudaMalloc(&a, bytes));
        CUDA_CHECK(cudaMalloc(&c, bytes));
        CUDA_CHECK(cudaMalloc(&b, (size_t)K * K * sizeof(double)));
        // A few thousand random tensors, repeated over the batch by doubling copies.
        const size_t seed_elems = std::min(elems, (size_t)4096 * k3);
        std::vector<double> host(seed_elems), hb((size_t)K * K);
        for (double& x : host) x = uniform(rng);
        for (double& x : hb) x = uniform(rng);
        CUDA_CHECK(cudaMemcpy(a, host.data(), seed_elems * sizeof(double), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(b, hb.data(), hb.size() * sizeof(double), cudaMemcpyHostToDevice));
        for (size_t have = seed_elems; have < elems; have *= 2)
            CUDA_CHECK(cudaMemcpy(a + have, a, std::min(have, elems - have) * sizeof(double), cudaMemcpyDeviceToDevice));
        const size_t ws = mra_transform_workspace_bytes(K, N);
        if (ws) CUDA_CHECK(cudaMalloc(&w, ws));
        cudaStream_t stream;
        CUDA_CHECK(cudaStreamCreate(&stream));
        int rc = MRA_SUCCESS;
        const double t = median_us([&] { if (rc == MRA_SUCCESS) rc = mra_transform(K, a, b, c, w, N, stream); }, stream, warmup_ms, 5);
        const double copy = median_us([&] { CUDA_CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, stream)); }, stream, warmup_ms, 5);
        if (rc != MRA_SUCCESS) {
            std::printf("K=%-2d mra_transform returned %d: %s FAIL\n", K, rc, mra_status_string(rc));
            ++failures;
        } else {
            std::printf("K=%-2d N=%-8d time_us=%.1f copy_us=%.1f time/copy=%.3f\n", K, N, t, copy, t / copy);
        }
        CUDA_CHECK(cudaStreamDestroy(stream));
        if (w) CUDA_CHECK(cudaFree(w));
        CUDA_CHECK(cudaFree(a));
        CUDA_CHECK(cudaFree(b));
        CUDA_CHECK(cudaFree(c));
    }
    return failures ? 1 : 0;
}
