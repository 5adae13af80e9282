// Run 83 prototype (hand-written from fused-pipe K = 10 as mra-bench generates it at 35d1040):
// S tensors stacked along the GEMM rows. A pass of fused-pipe is out(i, j) = sum_k in(k, i) B(k, j)
// with i over one tensor's K^2 = 100 rows: 7 row tiles of 16 (112 rows, 12 of them padding).
// Stacking S tensors side by side in the shared buffer (in(k, t K^2 + i) is tensor t's in(k, i))
// makes the rows S K^2: S = 2 -> 13 tiles (104 rows), S = 4 -> 25 tiles (400 rows, no padding).
// Each row is computed alone, so a tile may straddle two tensors; an output row i = t K^2 + x K + y
// goes to row x, column t K^2 + y K + j of the next pass's input, so tensors never mix.
// The block walks groups of S consecutive tensors (group g: tensors g S .. g S + S - 1, the last
// one possibly partial: slots past N are computed on stale data and never stored).
// Bulk copies (TMA) of the next group while the group's last pass runs, as fused-pipe does.
namespace stackp {
using namespace mra::fused_pipe_k10_f64;  // K, mma helpers, mbarrier and bulk-copy helpers

template <int S> struct Geo {
    static constexpr int MS = S * K2;                        // stacked rows
    static constexpr int PAD = (MS % 8 == 4) ? 0 : (MS % 8 == 0 ? 4 : (12 - MS % 8) % 8);
    static constexpr int WS = MS + PAD;                      // row stride, 4 mod 8 doubles
    static constexpr int TILES = (MS + FM - 1) / FM;
    static constexpr int SMEM = (2 * K * WS + 2) * 8;
};

// One pass: in (K x S K^2, stride WS) -> out, shared to shared (TO_GLOBAL = false) or the last
// pass to C (rows t K^2 + l of the group are C's consecutive tensors: c_g + i K + j), rows < rows.
template <int S, int THREADS, bool TO_GLOBAL, int V = 0>
__device__ __forceinline__ void pass(const double* in, const double (&b_frag)[K_STEPS][N_FRAGS], double* out, int rows, int lane, int wave) {
    using G = Geo<S>;
    constexpr int W = THREADS / 32;
    for (int tile = wave; tile < G::TILES; tile += W) {
        const int i0 = tile * FM;
        double acc[N_FRAGS][4];
        #pragma unroll
        for (int nf = 0; nf < N_FRAGS; ++nf) for (int r = 0; r < 4; ++r) acc[nf][r] = 0;
        {   // k-steps 0, 1 as one m16n8k8
            mra_f64x2 a_steps[2];
            #pragma unroll
            for (int s = 0; s < 2; ++s)
                #pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const int a_i = i0 + (lane >> 2) + r * 8;
                    const int a_k = s * FK + (lane & 3);
                    if (V == 2) a_steps[s][r] = (a_k < K && a_i < G::MS) ? in[a_k * G::WS + a_i] : 0;
                    else a_steps[s][r] = (a_i < G::MS) ? in[a_k * G::WS + a_i] : 0;
                }
            #pragma unroll
            for (int nf = 0; nf < N_FRAGS; ++nf) {
                double b_steps[2] = {b_frag[0][nf], b_frag[1][nf]};
                mma_m16n8k8_steps(acc[nf], a_steps, b_steps);
            }
        }
        {   // k-step 2 (k = 8, 9; 10, 11 are zero padding)
            mra_f64x2 a;
            #pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int a_i = i0 + (lane >> 2) + r * 8;
                const int a_k = 2 * FK + (lane & 3);
                a[r] = (a_k < K && a_i < G::MS) ? in[a_k * G::WS + a_i] : 0;
            }
            #pragma unroll
            for (int nf = 0; nf < N_FRAGS; ++nf) mma_m16n8k4(acc[nf], a, b_frag[2][nf]);
        }
        #pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int i = i0 + (lane >> 2) + q * 8;
            if (TO_GLOBAL) {
                if (i < rows) {
                    #pragma unroll
                    for (int nf = 0; nf < N_FRAGS; ++nf) {
                        const int j = nf * FN + (lane & 3) * 2;
                        if (j < K) *reinterpret_cast<double2*>(&out[i * K + j]) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);
                    }
                }
            } else if (V == 1) {
                if (q == 0) {  // gen's store block, once for both q
                    int at[4];
                    #pragma unroll
                    for (int r = 0; r < 4; ++r) {
                        const int ii = i0 + (lane >> 2) + (r >> 1) * 8;
                        at[r] = ((ii % K2) / K) * G::WS + (ii / K2) * K2 + (ii % K) * K;
                    }
                    #pragma unroll
                    for (int nf = 0; nf < N_FRAGS; ++nf) {
                        #pragma unroll
                        for (int qq = 0; qq < 2; ++qq) {
                            const int ii = i0 + (lane >> 2) + qq * 8;
                            const int j = nf * FN + (lane & 3) * 2;
                            if (ii < G::MS && j < K) *reinterpret_cast<double2*>(&out[at[2 * qq] + j]) = make_double2(acc[nf][2 * qq], acc[nf][2 * qq + 1]);
                        }
                    }
                }
            } else if (i < G::MS) {
                const int t = i / K2, l = i - t * K2, x = l / K, y = l - x * K;
                double* row = out + x * G::WS + t * K2 + y * K;
                #pragma unroll
                for (int nf = 0; nf < N_FRAGS; ++nf) {
                    const int j = nf * FN + (lane & 3) * 2;
                    if (j < K) *reinterpret_cast<double2*>(&row[j]) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);
                }
            }
        }
    }
}

// The group's cnt tensors (consecutive from a_g) into buffer w: one bulk copy per tensor and row.
__device__ __forceinline__ void stage(double* w, int ws, const double* a_g, int cnt, void* bar, int lane) {
    mra_fence_proxy_async();
    if (lane == 0) mra_mbar_expect(bar, (unsigned)(cnt * K3 * 8));
    __syncwarp();
    for (int e = lane; e < cnt * K; e += 32) {
        const int t = e / K, r = e - t * K;
        mra_bulk_copy(w + r * ws + t * K2, a_g + (long long)t * K3 + (long long)r * K2, (unsigned)(K2 * 8), bar);
    }
}

template <int S, int THREADS, int GEN = 0, int V = 0>
__global__ void __launch_bounds__(THREADS) stack_k10(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, double* workspace, int nfuncs, int nblocks) {
    using G = Geo<S>;
    const int tid = (int)threadIdx.x, lane = tid % 32, wave = tid / 32;
    extern __shared__ __align__(32) double w_shared[];  // G::SMEM bytes, dynamic (S = 4: 64.6 KB)
    double* wa = w_shared;
    double* wb = w_shared + K * G::WS;
    unsigned long long* bars = reinterpret_cast<unsigned long long*>(w_shared + 2 * K * G::WS);
    if (tid == 0) { for (int i = 0; i < 2; ++i) mra_mbar_init(&bars[i]); mra_fence_proxy_async(); }
    __syncthreads();
    const int groups = (nfuncs + S - 1) / S;
    unsigned phases = 0;
    int ia = 0, ib = 1;
    const int first = (int)blockIdx.x;
    if (first < groups && wave == 0) stage(wa, G::WS, a + (long long)first * S * K3, min(S, nfuncs - first * S), &bars[ia], lane);
    BFrags b_frag;
    load_b(b, tid, b_frag);
    if (first < groups) { mra_mbar_wait(&bars[ia], (phases >> ia) & 1u); phases ^= 1u << ia; }
    for (int g = first; g < groups; g += nblocks) {
        const int cnt = min(S, nfuncs - g * S);
        if constexpr (GEN == 1 || GEN == 2) {  // run 83 hybrid: the generated passes (stack 2, pad 4: the same layout)
            mra::fused_pipe_s2_k10_f64::gemm_pass_shared(wa, b_frag, wb, lane, wave);
            __syncthreads();
            mra::fused_pipe_s2_k10_f64::gemm_pass_shared(wb, b_frag, wa, lane, wave);
        } else {
            pass<S, THREADS, false, V>(wa, b_frag, wb, 0, lane, wave);
            __syncthreads();
            pass<S, THREADS, false, V>(wb, b_frag, wa, 0, lane, wave);
        }
        __syncthreads();
        const int gn = g + nblocks;
        if (gn < groups && wave == 0) stage(wb, G::WS, a + (long long)gn * S * K3, min(S, nfuncs - gn * S), &bars[ib], lane);
        if constexpr (GEN == 1 || GEN == 3) mra::fused_pipe_s2_k10_f64::gemm_pass_to_global(wa, b_frag, c + (long long)g * S * K3, cnt * K2, lane, wave);
        else pass<S, THREADS, true>(wa, b_frag, c + (long long)g * S * K3, cnt * K2, lane, wave);
        if (gn < groups) { mra_mbar_wait(&bars[ib], (phases >> ib) & 1u); phases ^= 1u << ib; }
        __syncthreads();
        const int si = ia; ia = ib; ib = si;
        double* sw = wa; wa = wb; wb = sw;
    }
}
}  // namespace stackp
