// export_demo.cu: a C++ program that uses an `mra-bench export` directory the way an MRA code
// would, and checks every result against a CPU reference written here from the definition.
//
//   mra-bench export --arch sm_90 -K 5,8,9,11,13,16,20,28,32 -o mra_export
//   nvcc -arch=sm_90 -O3 -I mra_export examples/export_demo.cu mra_export/*.cu -o export_demo
//   ./export_demo            # exit status 0 when every check passed
//
// For each K: (1) the host dispatch mra_transform(K, ...) from mra_transform.h, and (2) a kernel
// of our own that calls the block-level device function mra::k<K>_f64::transform_block once per
// tensor, with the dynamic shared memory and workspace it asks for. On sm_90 the launchers of
// K = 28 and 32 spread a tensor over several blocks (fused-cluster, fused-split) and the block
// function is another level's (L7-breg): both are checked. N is odd and larger than
// the launch's block count, so blocks walk several tensors. Outputs are poisoned (NaN) first.
// The error codes of the dispatch (an unsupported K, a negative nfuncs) are checked too.

#include "mra_transform.h"
#include "mra_transform_device.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "export_demo: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(2);                                                                       \
        }                                                                                       \
    } while (0)

// C(i,j,k) = sum_{a,b,c} A(a,b,c) B(a,i) B(b,j) B(c,k), as three mode products in the order of
// the formula (innermost index c first): T1(a,b,k) = sum_c A(a,b,c) B(c,k);
// T2(a,j,k) = sum_b T1(a,b,k) B(b,j); C(i,j,k) = sum_a T2(a,j,k) B(a,i). Row-major, FP64.
static void reference(int K, const double* A, const double* B, double* C) {
    std::vector<double> t1((size_t)K * K * K, 0.0), t2((size_t)K * K * K, 0.0);
    auto at = [K](int x, int y, int z) { return ((size_t)x * K + y) * K + z; };
    for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b)
            for (int k = 0; k < K; ++k) {
                double s = 0.0;
                for (int c = 0; c < K; ++c) s += A[at(a, b, c)] * B[c * K + k];
                t1[at(a, b, k)] = s;
            }
    for (int a = 0; a < K; ++a)
        for (int j = 0; j < K; ++j)
            for (int k = 0; k < K; ++k) {
                double s = 0.0;
                for (int b = 0; b < K; ++b) s += t1[at(a, b, k)] * B[b * K + j];
                t2[at(a, j, k)] = s;
            }
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j)
            for (int k = 0; k < K; ++k) {
                double s = 0.0;
                for (int a = 0; a < K; ++a) s += t2[at(a, j, k)] * B[a * K + i];
                C[at(i, j, k)] = s;
            }
}

// The direct six-loop definition, for a spot check of the reference itself at small K.
static double direct(int K, const double* A, const double* B, int i, int j, int k) {
    double s = 0.0;
    for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b)
            for (int c = 0; c < K; ++c) s += A[((size_t)a * K + b) * K + c] * B[a * K + i] * B[b * K + j] * B[c * K + k];
    return s;
}

// A kernel of the caller's: one block per tensor at a time, the transform as a block-level
// device function. Dynamic shared memory: mra::k<K>_f64::SHARED_BYTES.
#define USER_KERNEL(KK)                                                                                           \
    __global__ void user_kernel_k##KK(const double* a, const double* b, double* c, double* workspace, int nfuncs) { \
        namespace t = mra::k##KK##_f64;                                                                           \
        extern __shared__ __align__(32) unsigned char smem_k##KK[];                                               \
        const size_t k3 = (size_t)KK * KK * KK;                                                                   \
        double* ws = workspace + (size_t)blockIdx.x * t::WORKSPACE_ELEMS;                                         \
        for (int n = blockIdx.x; n < nfuncs; n += gridDim.x) t::transform_block(a + n * k3, b, c + n * k3, ws, smem_k##KK); \
    }

USER_KERNEL(5)
USER_KERNEL(8)
USER_KERNEL(9)
USER_KERNEL(10)
USER_KERNEL(11)
USER_KERNEL(13)
USER_KERNEL(16)
USER_KERNEL(20)
USER_KERNEL(28)
USER_KERNEL(32)

typedef void (*UserKernel)(const double*, const double*, double*, double*, int);

struct Case {
    int K;
    UserKernel kernel;
    int threads;
    int shared_bytes;
    long long workspace_elems;
};

#define CASE(KK) \
    { KK, user_kernel_k##KK, mra::k##KK##_f64::THREADS, mra::k##KK##_f64::SHARED_BYTES, mra::k##KK##_f64::WORKSPACE_ELEMS }

static const Case CASES[] = {CASE(5), CASE(8), CASE(9), CASE(10), CASE(11), CASE(13), CASE(16), CASE(20), CASE(28), CASE(32)};

// max |got - want| / max |want|; NaN (an unwritten element) counts as a failure.
static bool compare(const char* what, int K, int N, const std::vector<double>& got, const std::vector<double>& want) {
    double max_abs = 0.0, max_ref = 0.0;
    size_t bad = 0;
    for (size_t e = 0; e < want.size(); ++e) {
        if (!std::isfinite(got[e])) {
            ++bad;
            continue;
        }
        max_abs = std::fmax(max_abs, std::fabs(got[e] - want[e]));
        max_ref = std::fmax(max_ref, std::fabs(want[e]));
    }
    const double rel = max_ref > 0 ? max_abs / max_ref : max_abs;
    const bool pass = bad == 0 && rel < 1e-10;
    std::printf("K=%-2d %-16s N=%d max_abs_err=%.3e max_rel_err=%.3e non_finite=%zu %s\n", K, what, N, max_abs, rel, bad, pass ? "PASS" : "FAIL");
    return pass;
}

int main(int argc, char** argv) {
    const int N = argc > 1 ? std::atoi(argv[1]) : 1031;  // odd, more tensors than blocks
    const unsigned seed = argc > 2 ? (unsigned)std::atoi(argv[2]) : (unsigned)std::random_device{}();
    int device = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("# export_demo on %s (sm_%d%d), N=%d, seed=%u\n", prop.name, prop.major, prop.minor, N, seed);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    int failures = 0;

    // Error codes: a K this export has no kernel for, and a negative nfuncs.
    {
        const int rc7 = mra_transform(7, nullptr, nullptr, nullptr, nullptr, 1, 0);
        const int rcn = mra_transform(8, nullptr, nullptr, nullptr, nullptr, -1, 0);
        const bool ok = rc7 == MRA_ERROR_UNSUPPORTED_K && rcn == MRA_ERROR_INVALID_ARGUMENT && !mra_transform_supported(7) && mra_transform_supported(8);
        std::printf("errors: mra_transform(7) = %d (%s); nfuncs=-1: %d (%s) %s\n", rc7, mra_status_string(rc7), rcn, mra_status_string(rcn), ok ? "PASS" : "FAIL");
        failures += !ok;
    }

    for (const Case& c : CASES) {
        const int K = c.K;
        const size_t k3 = (size_t)K * K * K, elems = (size_t)N * k3;
        std::vector<double> a(elems), b((size_t)K * K), want(elems), got(elems);
        for (double& x : a) x = uniform(rng);
        for (double& x : b) x = uniform(rng);
        for (int n = 0; n < N; ++n) reference(K, &a[n * k3], b.data(), &want[n * k3]);
        if (K <= 8) {  // the reference against the definition, a few elements
            const double d = direct(K, a.data(), b.data(), K - 1, 0, K / 2);
            const double r = want[((size_t)(K - 1) * K + 0) * K + K / 2];
            if (std::fabs(d - r) > 1e-12 * (1 + std::fabs(d))) {
                std::printf("K=%d reference disagrees with the definition: %g vs %g FAIL\n", K, r, d);
                ++failures;
            }
        }
        double *da, *db, *dc, *dw = nullptr;
        CUDA_CHECK(cudaMalloc(&da, elems * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&db, b.size() * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&dc, elems * sizeof(double)));
        CUDA_CHECK(cudaMemcpy(da, a.data(), elems * sizeof(double), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice));
        cudaStream_t stream;
        CUDA_CHECK(cudaStreamCreate(&stream));

        // (1) The host dispatch.
        const size_t ws_bytes = mra_transform_workspace_bytes(K, N);
        if (ws_bytes) CUDA_CHECK(cudaMalloc(&dw, ws_bytes));
        CUDA_CHECK(cudaMemset(dc, 0xFF, elems * sizeof(double)));  // NaN
        const int rc = mra_transform(K, da, db, dc, dw, N, stream);
        if (rc != MRA_SUCCESS) {
            std::printf("K=%-2d mra_transform returned %d: %s FAIL\n", K, rc, mra_status_string(rc));
            ++failures;
        } else {
            CUDA_CHECK(cudaStreamSynchronize(stream));
            CUDA_CHECK(cudaMemcpy(got.data(), dc, elems * sizeof(double), cudaMemcpyDeviceToHost));
            failures += !compare("mra_transform", K, N, got, want);
        }
        if (dw) CUDA_CHECK(cudaFree(dw));

        // (2) Our own kernel calling the block-level device function.
        const int blocks = 200;  // fewer than N: each block transforms several tensors
        double* uw = nullptr;
        if (c.workspace_elems) CUDA_CHECK(cudaMalloc(&uw, (size_t)blocks * c.workspace_elems * sizeof(double)));
        if (c.shared_bytes > 48 * 1024)
            CUDA_CHECK(cudaFuncSetAttribute((const void*)c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.shared_bytes));
        CUDA_CHECK(cudaMemset(dc, 0xFF, elems * sizeof(double)));
        c.kernel<<<blocks, c.threads, c.shared_bytes, stream>>>(da, db, dc, uw, N);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(got.data(), dc, elems * sizeof(double), cudaMemcpyDeviceToHost));
        char what[64];
        std::snprintf(what, sizeof what, "transform_block");
        failures += !compare(what, K, N, got, want);
        std::printf("      (block function: %d threads, %d bytes of shared memory, %lld workspace elements per block)\n", c.threads, c.shared_bytes, c.workspace_elems);

        if (uw) CUDA_CHECK(cudaFree(uw));
        CUDA_CHECK(cudaStreamDestroy(stream));
        CUDA_CHECK(cudaFree(da));
        CUDA_CHECK(cudaFree(db));
        CUDA_CHECK(cudaFree(dc));
    }
    std::printf("# %s: %d failure(s)\n", failures ? "FAILED" : "all passed", failures);
    return failures ? 1 : 0;
}
