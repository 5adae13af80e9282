// Run 78 prototype (hand-written, not generated): fused-cluster at K = 32 with the first two
// passes chained in registers.
//
// Block `rank` of a cluster of 8 holds the a-slice a in [4 rank, 4 rank + 4) of a tensor: 4
// contiguous K x K planes A(a, b, c). For each of its planes and each 16-row tile of z a warp
// computes, with no shared-memory round trip between the two GEMMs,
//   D1(z, b) = sum_c B(c, z) A(a, b, c)       (mma m16n8k8: A operand B^T in registers,
//                                               B operand from the plane in shared memory)
//   D2(z, y) = sum_b D1(z, b) B(b, y)         (A operand = D1's accumulators as they lie:
//                                               m16n8 accumulator lane (g, t) holds columns
//                                               2t, 2t+1, which are the A operand's k-slots
//                                               t, t+4 once the k order within each group
//                                               of 8 is (0,2,4,6,1,3,5,7) - B's rows follow)
// and sends U(a, y, z) = D2(z, y) to the block that owns y (st.async into its gather buffer).
// That block then does the last pass C(x, y, z) = sum_a B(a, x) U(a, y, z) for its 4 values of
// y from the gather buffer and stores C directly from the accumulators.
// Software pipeline: the last pass of tensor n-1 runs after tensor n's sends (two gather
// buffers), so a block never waits for the cluster's slowest block's sends of the same tensor.
// No block-wide barrier inside the loop: a plane is refilled once its two warps have read it
// (named barrier of 64 threads), the gather buffers are guarded by the cluster barrier
// (arrive after the last pass of n-1, wait before the sends of n+1) and an mbarrier each.

namespace chain_k32 {

constexpr int K = 32, K2 = K * K, K3 = K * K * K;
constexpr int THREADS = 256, LANES = 32;
constexpr int CLUSTER = 8, CL = 4;
constexpr int RS = 36;                  // ws row stride: 8-byte fragment loads conflict-free
constexpr int PLANE = K * RS;           // one plane a: K rows b of K values c
constexpr int WS_ELEMS = CL * PLANE;
constexpr int GROWS = CL * K;           // gather rows per a: (y - y0, z)
constexpr int WG_ELEMS = K * GROWS;     // one gather buffer: all a
constexpr int BS = 34;                  // B row stride in shared memory
constexpr int B_ELEMS = K * BS;
constexpr unsigned GATHER_BYTES = K * GROWS * 8;
constexpr int SMEM_BYTES = (WS_ELEMS + 2 * WG_ELEMS + B_ELEMS) * 8 + 3 * 8;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ unsigned cl_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned cl_id() { unsigned r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned cl_count() { unsigned r; asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ void cl_arrive() { asm volatile("barrier.cluster.arrive.aligned;" ::: "memory"); }
__device__ __forceinline__ void cl_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
__device__ __forceinline__ void cl_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
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
__device__ __forceinline__ void mbar_wait_cluster(void* bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    }
}
__device__ __forceinline__ unsigned map_shared(const void* p, unsigned rank) {
    unsigned r;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
    return r;
}
__device__ __forceinline__ void send(double* p, unsigned rank, double v, void* bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f64 [%0], %1, [%2];"
                 :: "r"(map_shared(p, rank)), "d"(v), "r"(map_shared(bar, rank)) : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, void* bar) {
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1;\n\t"
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [g], %2, [%3]; }"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void pair_barrier(int id) { asm volatile("bar.sync %0, 64;" :: "r"(id) : "memory"); }

// D(16x8) += A(16x8) B(8x8), FP64. A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
// B: b0 (t, g), b1 (t+4, g); D: d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1).
__device__ __forceinline__ void mma8(double (&d)[4], double a0, double a1, double a2, double a3, double b0, double b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
}

// Gather buffer index of U(a, y0 + yl, z): row i = yl K + z, XOR-swizzled by a so that the
// last pass's fragment loads (rows a = 8 ks + 2t, 2t + 1 across lanes) hit 16 banks.
__device__ __forceinline__ int gidx(int a, int i) { return a * GROWS + (i ^ (((a >> 1) & 3) << 2)); }

// The last pass for tensor n from gather buffer g: C(x, y0 + yl, z), rows i = yl K + z.
__device__ __forceinline__ void last_pass(const double* G, const double* bm, double* c, int n, int y0, int wave, int g, int t) {
    const int half = wave & 1;
    double* out = c + (long long)n * K3 + y0 * K;
    for (int tile = wave >> 1; tile < GROWS / 16; tile += 4) {
        const int i0 = tile * 16;
        double acc[2][4];
        #pragma unroll
        for (int j = 0; j < 2; ++j) for (int r = 0; r < 4; ++r) acc[j][r] = 0;
        #pragma unroll 2
        for (int ks = 0; ks < 4; ++ks) {
            const int a = 8 * ks + 2 * t;  // k-slots t, t + 4 are a, a + 1
            const double a0 = G[gidx(a, i0 + g)], a1 = G[gidx(a, i0 + g + 8)];
            const double a2 = G[gidx(a + 1, i0 + g)], a3 = G[gidx(a + 1, i0 + g + 8)];
            #pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int x = 8 * (2 * half + j) + g;
                mma8(acc[j], a0, a1, a2, a3, bm[a * BS + x], bm[(a + 1) * BS + x]);
            }
        }
        #pragma unroll
        for (int j = 0; j < 2; ++j) {
            #pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int i = i0 + g + (r >> 1) * 8;
                const int x = 8 * (2 * half + j) + 2 * t + (r & 1);
                out[(long long)x * K2 + i] = acc[j][r];
            }
        }
    }
}

}  // namespace chain_k32

extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(256, 2)
mra_chain_k32(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, double*, int nfuncs, int) {
    using namespace chain_k32;
    extern __shared__ __align__(128) double smem[];
    double* ws = smem;
    double* wg = smem + WS_ELEMS;
    double* bm = smem + WS_ELEMS + 2 * WG_ELEMS;
    unsigned long long* bars = reinterpret_cast<unsigned long long*>(bm + B_ELEMS);
    void* ws_bar = bars;
    const int tid = threadIdx.x, lane = tid & 31, wave = tid >> 5, g = lane >> 2, t = lane & 3;
    const int rank = (int)cl_rank();
    const int a0 = rank * CL, y0 = rank * CL;
    const int first = (int)cl_id(), stride = (int)cl_count();
    for (int e = tid; e < K2; e += THREADS) bm[(e / K) * BS + e % K] = b[e];
    // This warp's chain unit: plane al (a = a0 + al), z rows z0 .. z0 + 15.
    const int al = wave >> 1, ag = a0 + al, z0 = (wave & 1) * 16;
    // GEMM-1's A operand, B^T(z, c) = B(c, z), k-step s: c = 8s + t (slot t), 8s + 4 + t (slot t + 4).
    double bt[4][4];
    #pragma unroll
    for (int s = 0; s < 4; ++s) {
        bt[s][0] = b[(8 * s + t) * K + z0 + g];
        bt[s][1] = b[(8 * s + t) * K + z0 + g + 8];
        bt[s][2] = b[(8 * s + 4 + t) * K + z0 + g];
        bt[s][3] = b[(8 * s + 4 + t) * K + z0 + g + 8];
    }
    if (tid == 0) {
        mbar_init(ws_bar, CL);  // one arrival per plane
        mbar_init(bars + 1, 1);
        mbar_init(bars + 2, 1);
    }
    __syncthreads();
    // The lead warp of a plane's pair loads its K rows of tensor n (one bulk copy per lane).
    const bool lead = (wave & 1) == 0;
    auto load_plane = [&](int n) {
        if (lane == 0) mbar_expect(ws_bar, K * K * 8);
        __syncwarp();
        bulk_copy(ws + al * PLANE + lane * RS, a + (long long)n * K3 + (long long)ag * K2 + lane * K, K * 8, ws_bar);
    };
    if (first < nfuncs && lead) load_plane(first);
    cl_arrive();  // started: mbarriers initialised, gather buffers may be written
    unsigned ws_phase = 0, gphase0 = 0, gphase1 = 0;
    int k = 0, prev = -1;
    const double* wp = ws + al * PLANE;
    for (int n = first; n < nfuncs; n += stride, ++k) {
        const int buf = k & 1;
        void* gbar = bars + 1 + buf;
        if (tid == 0) mbar_expect(gbar, GATHER_BYTES);
        mbar_wait(ws_bar, ws_phase);
        ws_phase ^= 1;
        double d1[4][4];
        #pragma unroll
        for (int nf = 0; nf < 4; ++nf) for (int r = 0; r < 4; ++r) d1[nf][r] = 0;
        #pragma unroll
        for (int s = 0; s < 4; ++s) {
            #pragma unroll
            for (int nf = 0; nf < 4; ++nf) {
                const double* row = wp + (8 * nf + g) * RS + 8 * s;
                mma8(d1[nf], bt[s][0], bt[s][1], bt[s][2], bt[s][3], row[t], row[4 + t]);
            }
        }
        pair_barrier(1 + al);  // both warps of this plane are done reading it
        if (lead && n + stride < nfuncs) {
            fence_proxy_async();
            load_plane(n + stride);
        }
        cl_wait();  // every block is done with this gather buffer's previous tensor
        double* wgb = wg + buf * WG_ELEMS;
        // GEMM-2 in two halves of y (two accumulator chains each), each sent as it is done:
        // D1, B^T and one half's accumulators stay under 128 registers (two blocks per SM).
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            double d2[2][4];
            #pragma unroll
            for (int j = 0; j < 2; ++j) for (int r = 0; r < 4; ++r) d2[j][r] = 0;
            #pragma unroll
            for (int s = 0; s < 4; ++s) {
                const int bb = 8 * s + 2 * t;  // k-slots t, t + 4 are b = bb, bb + 1 (D1's columns 2t, 2t + 1)
                #pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const int y = 8 * (2 * h + j) + g;
                    mma8(d2[j], d1[s][0], d1[s][2], d1[s][1], d1[s][3], bm[bb * BS + y], bm[(bb + 1) * BS + y]);
                }
            }
            #pragma unroll
            for (int j = 0; j < 2; ++j) {
                #pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const int z = z0 + g + (r >> 1) * 8;
                    const int y = 8 * (2 * h + j) + 2 * t + (r & 1);
                    send(&wgb[gidx(ag, (y & 3) * K + z)], (unsigned)(y >> 2), d2[j][r], gbar);
                }
            }
        }
        if (k >= 1) {
            void* pbar = bars + 1 + (buf ^ 1);
            mbar_wait_cluster(pbar, buf ? gphase0 : gphase1);
            if (buf) gphase0 ^= 1; else gphase1 ^= 1;
            last_pass(wg + (buf ^ 1) * WG_ELEMS, bm, c, prev, y0, wave, g, t);
        }
        cl_arrive_relaxed();  // done reading the other gather buffer
        prev = n;
    }
    if (k >= 1) {
        const int buf = (k - 1) & 1;
        mbar_wait_cluster(bars + 1 + buf, buf ? gphase1 : gphase0);
        last_pass(wg + buf * WG_ELEMS, bm, c, prev, y0, wave, g, t);
    }
    cl_wait();  // pairs the last arrival
}
