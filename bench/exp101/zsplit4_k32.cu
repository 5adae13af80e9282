// Run 101 prototype, fourth version: the third (below) with m16n8k16 (each the two m16n8k8 of
// k-steps 2J and 2J + 1 side by side: A = bt[2J] then bt[2J + 1], B = the four k-slots'
// values; chains half as deep) and the L2 prefetch PF slices ahead (default 3, was 2).
//
// Third version: the second (below) with each slice loaded by one bulk copy
// of 8 KB issued by lane 0 into an unpadded slot. The first two issued one 256-byte copy per
// lane into rows of pitch 40: a bulk copy takes uniform operands, so the compiler issues the 32
// lanes' copies one after another in a loop (~250 instructions per slice, ~8 per DMMA). The
// price: pass 0's 16-byte slot loads are 2-way bank-conflicted (rows g, g + 1 on the same banks).
//
// Second version (zsplit2_k32.cu; zsplit_k32.cu is the first; same layout of the work):
//  - the block's half h is a template parameter, so pass 0 reads Bt's m-tile h itself (no copy:
//    32 registers fewer);
//  - pass 1 of a_{i-1} runs after pass 0 of a_i in the same stretch of code, so the two passes'
//    chains (4 + 4) overlap instead of the second waiting for the first's last DMMA;
//  - each warp asks L2 for its slice after next (cp.async.bulk.prefetch.L2) when it refills
//    its slot, so the slot's copy finds it in L2.
// The first version's description follows.
//
// First version:
//
// C(x, y, z) = sum_abc A(a, b, c) B(a, x) B(b, y) B(c, z). Half-tensor ht = 2 n + h is tensor n's
// z in [16 h, 16 h + 16); a block takes ht = blockIdx.x, += gridDim.x (gridDim even, so h is
// the block's parity). Per half-tensor:
//   phase 1, for each a (warp w takes a = w, w + 8, w + 16, w + 24):
//     T1t(z, b) = sum_c Bt(z, c) A(a, b, c)     m16n8k8: A = Bt rows z (registers), B = the a-slice
//                                               (the warp's shared-memory slot, read into registers)
//     T2(a, y, z) = sum_b Bt(y, b) T1(b, z)     A = Bt rows y (registers), B = T1t's accumulators as
//                                               they lie (lane (g, t) holds columns b = 2t, 2t + 1,
//                                               the k-slots t, t + 4 once every k order within a
//                                               group of 8 is (0, 2, 4, 6, 1, 3, 5, 7))
//     T2 to shared memory (one K x 16 K buffer for the block).
//   phase 2: C(x, y, z) = sum_a Bt(x, a) T2(a, y, z), stored from the accumulators.
// All three passes' A operands are the same 64 registers: Bt(m, k) = B(k, m) for m-tiles 0, 1
// and k-steps 0..3 in the permuted k order. A warp's slot is refilled (32 bulk copies, one row
// each) as soon as the warp has read it, so a slice has a whole a's two passes to land.

namespace zsplit4_k32 {

constexpr int K = 32, K2 = K * K, K3 = K * K * K;
constexpr int THREADS = 256, WARPS = THREADS / 32;
constexpr int SP = 32;                 // slot row pitch: the slice as it lies in memory (one bulk copy)
constexpr int SLOT = K * SP;
constexpr int TP = 514;                // T2 row pitch (a): 8-byte loads of rows 2t, 2t + 1 conflict-free
constexpr int T2_ELEMS = K * TP;
constexpr int SMEM_BYTES = (T2_ELEMS + WARPS * SLOT) * 8 + WARPS * 8;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ void mbar_init(void* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect(void* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(void* bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    }
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, void* bar) {
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1;\n\t"
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [g], %2, [%3]; }"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// D(16x8) += A(16x8) B(8x8), FP64. A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
// B: b0 (t, g), b1 (t+4, g); D: d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1).
__device__ __forceinline__ void mma8(double (&d)[4], const double (&a)[4], double b0, double b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b0), "d"(b1));
}
// D(16x8) += A(16x16) B(16x8): A rows g, g + 8 at k-slots t, t + 4 (a0..a3), t + 8, t + 12
// (a4..a7); B k-slots t, t + 4, t + 8, t + 12.
__device__ __forceinline__ void mma16(double (&d)[4], const double (&a)[4], const double (&a2)[4], double b0, double b1, double b2, double b3) {
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a2[0]), "d"(a2[1]), "d"(a2[2]), "d"(a2[3]), "d"(b0), "d"(b1), "d"(b2), "d"(b3));
}
#ifndef PF
#define PF 3
#endif
__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(p), "r"(bytes) : "memory");
}

// T2's column of (y, z local): 16-byte units of z XOR-ed by 4 (y & 1), so that a store of rows
// y, y + 1 (lanes g = 0, 1 of a quarter warp) covers all 32 banks.
__device__ __forceinline__ int t2col(int y, int zl) { return y * 16 + ((((zl >> 1) ^ ((y & 1) << 2))) << 1) + (zl & 1); }

// Pass 1 for slice aa from pass 0's accumulators d1, and its T2 stores.
__device__ __forceinline__ void pass1_store(const double (&bt)[2][4][4], const double (&d1)[4][4], double* t2, int aa, int g, int t) {
    double* row = t2 + aa * TP;
    #pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
        double d2[2][4];
        #pragma unroll
        for (int zf = 0; zf < 2; ++zf) {
            #pragma unroll
            for (int r = 0; r < 4; ++r) d2[zf][r] = 0;
            #pragma unroll
            for (int J = 0; J < 2; ++J)
                mma16(d2[zf], bt[mt][2 * J], bt[mt][2 * J + 1], d1[2 * J][2 * zf], d1[2 * J][2 * zf + 1], d1[2 * J + 1][2 * zf], d1[2 * J + 1][2 * zf + 1]);
        }
        #pragma unroll
        for (int zf = 0; zf < 2; ++zf) {
            const int y = 16 * mt + g, zl = 8 * zf + 2 * t;
            *reinterpret_cast<double2*>(row + t2col(y, zl)) = make_double2(d2[zf][0], d2[zf][1]);
            *reinterpret_cast<double2*>(row + t2col(y + 8, zl)) = make_double2(d2[zf][2], d2[zf][3]);
        }
    }
}

template <int H>
__device__ __forceinline__ void body(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, int nfuncs, double* smem) {
    double* t2 = smem;
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;
    double* slot = smem + T2_ELEMS + w * SLOT;
    unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem + T2_ELEMS + WARPS * SLOT) + w;
    const int halves = 2 * nfuncs, stride = gridDim.x;
    // Bt(m, k) = B(k, m), m-tile mt, k-step j, k-slots t, t + 4 -> k = 8 j + 2 t, 8 j + 2 t + 1.
    double bt[2][4][4];
    #pragma unroll
    for (int mt = 0; mt < 2; ++mt)
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k = 8 * j + 2 * t, m = 16 * mt + g;
            bt[mt][j][0] = b[k * K + m];
            bt[mt][j][1] = b[(k) * K + m + 8];
            bt[mt][j][2] = b[(k + 1) * K + m];
            bt[mt][j][3] = b[(k + 1) * K + m + 8];
        }
    if (lane == 0) mbar_init(bar, 1);
    __syncwarp();
    // The warp's q-th slice from (ht, i): half-tensors advance by gridDim.x every 4 slices.
    auto slice = [&](int ht, int i, int q) -> const double* {
        i += q;
        while (i >= 4) { i -= 4; ht += stride; }
        if (ht >= halves) return nullptr;
        return a + (long long)(ht >> 1) * K3 + (long long)(w + 8 * i) * K2;
    };
    auto load_slice = [&](const double* src) {
        if (lane == 0) {
            mbar_expect(bar, K2 * 8);
            bulk_copy(slot, src, K2 * 8, bar);
        }
    };
    unsigned phase = 0;
    const int first = blockIdx.x;
    if (first < halves) {
        load_slice(slice(first, 0, 0));
        if (lane == 0) for (int q = 1; q < PF; ++q) if (const double* p = slice(first, 0, q)) prefetch_l2(p, K2 * 8);
    }
    for (int ht = first; ht < halves; ht += stride) {
        const int n = ht >> 1;
        double d1o[4][4];
        #pragma unroll 1
        for (int i = 0; i < 4; ++i) {
            mbar_wait(bar, phase);
            phase ^= 1;
            double2 s[4][4];
            #pragma unroll
            for (int nf = 0; nf < 4; ++nf)
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    s[nf][j] = *reinterpret_cast<const double2*>(slot + (8 * nf + g) * SP + 8 * j + 2 * t);
            fence_proxy_async();
            __syncwarp();
            if (const double* p = slice(ht, i, 1)) load_slice(p);
            if (lane == 0) if (const double* p = slice(ht, i, PF)) prefetch_l2(p, K2 * 8);
            // Pass 0 of a_i: T1t(z, b), z = 16 H + (g, g + 8), b = 8 nf + (2t, 2t + 1).
            double d1[4][4];
            #pragma unroll
            for (int nf = 0; nf < 4; ++nf) {
                #pragma unroll
                for (int r = 0; r < 4; ++r) d1[nf][r] = 0;
                #pragma unroll
                for (int J = 0; J < 2; ++J) mma16(d1[nf], bt[H][2 * J], bt[H][2 * J + 1], s[nf][2 * J].x, s[nf][2 * J].y, s[nf][2 * J + 1].x, s[nf][2 * J + 1].y);
            }
            // Pass 1 of a_{i-1}, whose chains overlap pass 0's above.
            if (i > 0) pass1_store(bt, d1o, t2, w + 8 * (i - 1), g, t);
            #pragma unroll
            for (int nf = 0; nf < 4; ++nf)
                #pragma unroll
                for (int r = 0; r < 4; ++r) d1o[nf][r] = d1[nf][r];
        }
        pass1_store(bt, d1o, t2, w + 24, g, t);
        __syncthreads();  // T2 complete
        // Phase 2: C(x, n') = sum_a Bt(x, a) T2(a, n'), n' = (y, z local) = 8 f + g; warp w takes
        // f in [8 w, 8 w + 8), four at a time.
        double* out = c + (long long)n * K3 + 16 * H;
        #pragma unroll 1
        for (int round = 0; round < 2; ++round) {
            const int f0 = 8 * w + 4 * round;
            double acc[2][4][4];
            #pragma unroll
            for (int mt = 0; mt < 2; ++mt)
                #pragma unroll
                for (int q = 0; q < 4; ++q)
                    #pragma unroll
                    for (int r = 0; r < 4; ++r) acc[mt][q][r] = 0;
            #pragma unroll
            for (int J = 0; J < 2; ++J) {
                const int ar = 16 * J + 2 * t;  // k-slots t, t + 4, t + 8, t + 12: a = ar, ar + 1, ar + 8, ar + 9
                #pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int f = f0 + q, y = f >> 1, zl = 8 * (f & 1) + g;
                    const int col = t2col(y, zl);
                    const double b0 = t2[ar * TP + col], b1 = t2[(ar + 1) * TP + col];
                    const double b2 = t2[(ar + 8) * TP + col], b3 = t2[(ar + 9) * TP + col];
                    #pragma unroll
                    for (int mt = 0; mt < 2; ++mt) mma16(acc[mt][q], bt[mt][2 * J], bt[mt][2 * J + 1], b0, b1, b2, b3);
                }
            }
            #pragma unroll
            for (int mt = 0; mt < 2; ++mt)
                #pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int f = f0 + q, y = f >> 1, zl = 8 * (f & 1) + 2 * t, x = 16 * mt + g;
                    *reinterpret_cast<double2*>(out + x * K2 + y * K + zl) = make_double2(acc[mt][q][0], acc[mt][q][1]);
                    *reinterpret_cast<double2*>(out + (x + 8) * K2 + y * K + zl) = make_double2(acc[mt][q][2], acc[mt][q][3]);
                }
        }
        __syncthreads();  // T2 read before the next half-tensor's phase 1 writes it
    }
}

}  // namespace zsplit4_k32

extern "C" __global__ void __launch_bounds__(256, 1)
mra_zsplit4_k32(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, double*, int nfuncs, int) {
    extern __shared__ __align__(128) double smem[];
    if (blockIdx.x & 1) zsplit4_k32::body<1>(a, b, c, nfuncs, smem);  // z in [16, 32) (gridDim.x is even)
    else zsplit4_k32::body<0>(a, b, c, nfuncs, smem);
}
