// Checks the operations of an export on the GPU against a host reference written here from the
// definitions: general (a matrix per dimension), dir (one dimension) and the rank sum, each with
// C = alpha T(A) + beta C0 over contiguous, strided and pointer-array batches, beta = 0 over a C
// full of NaN. Exits 1 on any failure.
//
//   mra-bench export --arch sm_90 -K 5,10,16 --ops general,dir,ranksum -o ex
//   nvcc -arch=sm_90 -std=c++17 -I ex examples/export_ops_check.cu ex/*.cu -o ops_check
//   ./ops_check 5 10 16
#include "mra_transform_ops.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef std::vector<double> Vec;

static double uniform() { return std::rand() / (double)RAND_MAX * 2 - 1; }
static Vec random_vec(size_t n) {
    Vec v(n);
    for (double& x : v) x = uniform();
    return v;
}

// out(x,y,z) with dimension d contracted against M: for d = 1, out(a,j,c) = sum_b t(a,b,c) M(b,j).
static Vec contract(int K, const Vec& t, const double* m, int d) {
    Vec out(t.size(), 0.0);
    for (int x = 0; x < K; ++x)
        for (int y = 0; y < K; ++y)
            for (int z = 0; z < K; ++z) {
                const int i[3] = {x, y, z};
                double s = 0;
                for (int q = 0; q < K; ++q) {
                    int j[3] = {x, y, z};
                    j[d] = q;
                    s += t[(j[0] * K + j[1]) * K + j[2]] * m[q * K + i[d]];
                }
                out[(x * K + y) * K + z] = s;
            }
    return out;
}

static bool ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess) std::printf("%s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

int main(int argc, char** argv) {
    int failures = 0, cases = 0;
    const int N = 7, R = 3;
    for (int arg = 1; arg < argc; ++arg) {
        const int K = std::atoi(argv[arg]);
        const int K2 = K * K, K3 = K2 * K;
        // Gaps between tensors: even where K^3 is (the kernels read A 16 bytes at a time), else odd.
        const long long stride_a = K3 % 2 ? K3 + 3 : K3 + 2, stride_c = K3 % 2 ? K3 + 5 : K3 + 6;
        Vec a = random_vec((size_t)N * K3), c0 = random_vec((size_t)N * K3), xyz = random_vec(3 * K2);
        Vec terms = random_vec((size_t)R * (3 * K2 + 1));
        // 0: general, 1-3: dir 0..2, 4: rank sum.
        for (int what = 0; what < 5; ++what) {
            for (int layout = 0; layout < 3; ++layout) {
                for (int accumulate = 0; accumulate < 2; ++accumulate) {
                    const double alpha = accumulate ? 1.5 : 1.0, beta = accumulate ? -0.75 : 0.0;
                    Vec want((size_t)N * K3);
                    for (int n = 0; n < N; ++n) {
                        Vec t(a.begin() + (size_t)n * K3, a.begin() + (size_t)(n + 1) * K3), sum(K3, 0.0);
                        if (what == 0) {
                            sum = contract(K, contract(K, contract(K, t, &xyz[0], 0), &xyz[K2], 1), &xyz[2 * K2], 2);
                        } else if (what <= 3) {
                            sum = contract(K, t, &xyz[0], what - 1);
                        } else {
                            for (int mu = 0; mu < R; ++mu) {
                                const double* m = &terms[(size_t)mu * 3 * K2];
                                Vec term = contract(K, contract(K, contract(K, t, m, 0), m + K2, 1), m + 2 * K2, 2);
                                for (int e = 0; e < K3; ++e) sum[e] += terms[(size_t)R * 3 * K2 + mu] * term[e];
                            }
                        }
                        for (int e = 0; e < K3; ++e) want[(size_t)n * K3 + e] = alpha * sum[e] + (beta != 0 ? beta * c0[(size_t)n * K3 + e] : 0);
                    }
                    // Device buffers: tensor n of A at n * sa, of C at n * sc (pointers: the same slots).
                    const long long sa = layout == 1 ? stride_a : K3, sc = layout == 1 ? stride_c : K3;
                    double *da, *dc, *dm, *dw = nullptr;
                    const double** pa = nullptr;
                    double** pc = nullptr;
                    bool good = ok(cudaMalloc(&da, sa * N * sizeof(double)), "malloc") && ok(cudaMalloc(&dc, sc * N * sizeof(double)), "malloc")
                        && ok(cudaMalloc(&dm, terms.size() * sizeof(double)), "malloc");
                    Vec host_c(sc * N, NAN);
                    for (int n = 0; n < N; ++n) {
                        cudaMemcpy(da + n * sa, &a[(size_t)n * K3], K3 * sizeof(double), cudaMemcpyHostToDevice);
                        if (beta != 0) std::copy(c0.begin() + (size_t)n * K3, c0.begin() + (size_t)(n + 1) * K3, host_c.begin() + n * sc);
                    }
                    cudaMemcpy(dc, host_c.data(), host_c.size() * sizeof(double), cudaMemcpyHostToDevice);
                    const Vec& m = what == 4 ? terms : xyz;
                    cudaMemcpy(dm, m.data(), m.size() * sizeof(double), cudaMemcpyHostToDevice);
                    if (layout == 2) {
                        std::vector<const double*> ha(N);
                        std::vector<double*> hc(N);
                        for (int n = 0; n < N; ++n) ha[n] = da + n * sa, hc[n] = dc + n * sc;
                        cudaMalloc(&pa, N * sizeof(double*));
                        cudaMalloc(&pc, N * sizeof(double*));
                        cudaMemcpy(pa, ha.data(), N * sizeof(double*), cudaMemcpyHostToDevice);
                        cudaMemcpy(pc, hc.data(), N * sizeof(double*), cudaMemcpyHostToDevice);
                    }
                    size_t ws = 0;
                    int rc = 0;
                    if (what == 0) ws = layout == 0 ? mra_transform_general_workspace_bytes(K, N) : layout == 1 ? mra_transform_general_strided_workspace_bytes(K, N) : mra_transform_general_pointers_workspace_bytes(K, N);
                    else if (what <= 3) ws = layout == 0 ? mra_transform_dir_workspace_bytes(K, N) : layout == 1 ? mra_transform_dir_strided_workspace_bytes(K, N) : mra_transform_dir_pointers_workspace_bytes(K, N);
                    else ws = layout == 0 ? mra_transform_ranksum_workspace_bytes(K, N) : layout == 1 ? mra_transform_ranksum_strided_workspace_bytes(K, N) : mra_transform_ranksum_pointers_workspace_bytes(K, N);
                    if (ws) cudaMalloc(&dw, ws);
                    if (what == 0 && layout == 0) rc = mra_transform_general(K, da, dc, dm, alpha, beta, dw, N, 0);
                    if (what == 0 && layout == 1) rc = mra_transform_general_strided(K, da, sa, dc, sc, dm, alpha, beta, dw, N, 0);
                    if (what == 0 && layout == 2) rc = mra_transform_general_pointers(K, pa, pc, dm, alpha, beta, dw, N, 0);
                    if (what >= 1 && what <= 3 && layout == 0) rc = mra_transform_dir(K, da, dc, dm, what - 1, alpha, beta, dw, N, 0);
                    if (what >= 1 && what <= 3 && layout == 1) rc = mra_transform_dir_strided(K, da, sa, dc, sc, dm, what - 1, alpha, beta, dw, N, 0);
                    if (what >= 1 && what <= 3 && layout == 2) rc = mra_transform_dir_pointers(K, pa, pc, dm, what - 1, alpha, beta, dw, N, 0);
                    if (what == 4 && layout == 0) rc = mra_transform_ranksum(K, da, dc, dm, R, alpha, beta, dw, N, 0);
                    if (what == 4 && layout == 1) rc = mra_transform_ranksum_strided(K, da, sa, dc, sc, dm, R, alpha, beta, dw, N, 0);
                    if (what == 4 && layout == 2) rc = mra_transform_ranksum_pointers(K, pa, pc, dm, R, alpha, beta, dw, N, 0);
                    good = good && rc == 0 && ok(cudaDeviceSynchronize(), "kernel");
                    cudaMemcpy(host_c.data(), dc, host_c.size() * sizeof(double), cudaMemcpyDeviceToHost);
                    double max_err = 0, max_want = 0;
                    for (int n = 0; n < N; ++n)
                        for (int e = 0; e < K3; ++e) {
                            const double g = host_c[n * sc + e], w = want[(size_t)n * K3 + e];
                            max_err = std::isfinite(g) ? std::fmax(max_err, std::fabs(g - w)) : INFINITY;
                            max_want = std::fmax(max_want, std::fabs(w));
                        }
                    const double rel = max_err / max_want;
                    good = good && rel < 1e-12;
                    const char* names[] = {"general", "dir0", "dir1", "dir2", "ranksum"};
                    const char* layouts[] = {"contiguous", "strided", "pointers"};
                    std::printf("K=%d %s %s alpha=%g beta=%g rc=%d max_rel_err=%.2e %s\n", K, names[what], layouts[layout], alpha, beta, rc, rel, good ? "PASS" : "FAIL");
                    failures += !good;
                    ++cases;
                    cudaFree(da), cudaFree(dc), cudaFree(dm), cudaFree(dw), cudaFree(pa), cudaFree(pc);
                    dw = nullptr, pa = nullptr, pc = nullptr;
                }
            }
        }
    }
    std::printf("# %d cases, %d failed\n", cases, failures);
    return failures ? 1 : 0;
}
