//! `cluster(N)`: one tensor per thread-block cluster (NVIDIA sm_90), split over the cluster's
//! N blocks. Block r holds the values b0 = r·CL .. b0 + CL of the tensor's second index b,
//! and, after pass 0, x0 = r·CL .. x0 + CL of the new first index x:
//!
//! ```text
//! pass 0 (contracts a):  A(a, b, c)  -> T1(b, c, x)  rows (b, c) of this block; each element
//!                                                     stored into the block owning x
//! pass 1 (contracts b):  T1(b, c, x) -> T2(c, x, y)  rows (c, x) of this block, local
//! pass 2 (contracts c):  T2(c, x, y) -> C(x, y, z)   rows (x, y) of this block, local
//! ```
//!
//! Every pass is a GEMM on K rows of K·CL values in this block's shared memory. For each a the
//! slice of A is one contiguous run of CL·K values, so on sm_90 it is copied by K bulk
//! copies (`cp.async.bulk`, the TMA unit) completing on one mbarrier, instead of thousands of
//! 16-byte `cp.async`; and the block's rows of C are one contiguous range, which pass 2
//! stages in the (by then free) gather buffer and one bulk copy stores (4096 16-byte stores
//! per block and tensor at K = 32 made pass 2 take twice as long as pass 1).
//! Pass 0 stores into other blocks' shared memory (distributed shared memory: `mapa` gives
//! the generic address of the same offset in another block; stores need no reply). Two
//! cluster barriers order the exchange: after pass 0 (every gather buffer complete) and
//! before the next pass 0 (every block has read its gather buffer), the latter split into a
//! relaxed arrive after the block is done with its gather buffer and a wait before pass 0,
//! by when it is normally over. With `buffers(4)` tensors alternate two gather buffers and the
//! second barrier goes away (a gather buffer is written again two tensors later, after a
//! barrier its reader has passed).
//!
//! With `async_exchange(1)` pass 0 sends with `st.async` (PTX ISA 8.1) to 32-bit
//! `mapa.shared::cluster` addresses; each store performs a complete-tx of its bytes (release at
//! cluster scope) on the receiving block's gather mbarrier (one per gather buffer, so its
//! parity follows the buffer). Thread 0 arms it once per tensor with `arrive.expect_tx` of
//! exactly the bytes the block receives, K·K·min(CL, K − x0) values (padding is not sent);
//! stores that land before the arming take the tx-count below zero, which the ISA allows. Pass 1
//! waits on that mbarrier (acquire, cluster scope) instead of the cluster barrier, and a block
//! barrier orders the reuse of the slice buffer. "Done reading" stays a relaxed arrive and a
//! wait before pass 0; with two gather buffers the arrive follows the next tensor's pass 0 (once
//! the bulk store of C has read the buffer).

use super::tile_pass::{tile_walk, waits_in_pass0, waits_late, SlicePass, TileMode, Variant};
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    fn bulk(&self, tp: &TransformPlan) -> bool {
        tp.cluster_bulk_copies(self.plan.request.arch)
    }

    /// `bulk_copy(1)` at odd K ([`TransformPlan::cluster_shifted`]).
    fn slice_shifted(&self, tp: &TransformPlan) -> bool {
        tp.cluster_shifted(self.plan.request.k)
    }

    /// The slice geometry and the helpers, after the tile constants.
    pub(super) fn cluster_constants(&mut self, tp: &TransformPlan) {
        let k = self.plan.request.k;
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let cl = tp.cluster_slice_width(k);
        self.w.line(format!("constexpr int CLUSTER = {};  {note}: blocks sharing one tensor", tp.cluster));
        self.w.line(format!("constexpr int CL = {cl};  // values of b (then of x) per block: ceil(K / CLUSTER)"));
        self.w.line(format!("constexpr int SLICE_STRIDE = K * CL + {};  // row stride of every buffer", tp.shared_row_pad()));
        self.w.line("constexpr int SLICE_ROWS = K * CL;  // output rows of every pass");
        self.w.line("constexpr int SLICE_TILES = (SLICE_ROWS + FM - 1) / FM;");
        if self.slice_shifted(tp) {
            let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
            self.w.line(format!("constexpr int WS_STRIDE = SLICE_STRIDE + 1;  {bulk}: pass 0's input rows, odd (odd K: see the slice copies)"));
            self.w.line("constexpr int SLICE = K * WS_STRIDE + 1;  // elements of one buffer: K rows and the shift (even: buffers stay 16-byte aligned)");
        } else {
            self.w.line("constexpr int SLICE = K * SLICE_STRIDE;  // elements of one buffer: K rows");
        }
        self.w.line("");
        let helpers = self.cluster_helpers(tp);
        self.w.lines(&helpers);
    }

    /// The PTX the cluster kernel needs (sm_90, PTX ISA 8.0), before the passes.
    fn cluster_helpers(&self, tp: &TransformPlan) -> String {
        let t = self.t();
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let pipe = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let mut s = format!("{note}: thread-block cluster primitives (PTX, sm_90).\n");
        s += "__device__ __forceinline__ unsigned mra_cluster_rank() { unsigned r; asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r)); return r; }\n";
        s += "__device__ __forceinline__ unsigned mra_cluster_id() { unsigned r; asm volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(r)); return r; }\n";
        s += "__device__ __forceinline__ unsigned mra_cluster_count() { unsigned r; asm volatile(\"mov.u32 %0, %%nclusterid.x;\" : \"=r\"(r)); return r; }\n";
        s += "// Every thread of every block of the cluster arrives (releasing its memory accesses,\n";
        s += "// distributed shared memory included) and waits for all (acquiring the others').\n";
        s += "__device__ __forceinline__ void mra_cluster_arrive() { asm volatile(\"barrier.cluster.arrive.aligned;\" ::: \"memory\"); }\n";
        s += "// An arrival that publishes nothing (no release fence): for \"done reading\" only, whose reads\n";
        s += "// have completed (their values were used) before the arrival.\n";
        s += "__device__ __forceinline__ void mra_cluster_arrive_relaxed() { asm volatile(\"barrier.cluster.arrive.relaxed.aligned;\" ::: \"memory\"); }\n";
        s += "__device__ __forceinline__ void mra_cluster_wait() { asm volatile(\"barrier.cluster.wait.aligned;\" ::: \"memory\"); }\n";
        s += "// The generic address of `p`'s counterpart in the shared memory of block `rank` of the cluster.\n";
        s += &format!(
            "__device__ __forceinline__ {t}* mra_cluster_map_rw({t}* p, unsigned rank) {{\n\
             \x20   unsigned long long r;\n\
             \x20   asm volatile(\"mapa.u64 %0, %1, %2;\" : \"=l\"(r) : \"l\"(p), \"r\"(rank));\n\
             \x20   return reinterpret_cast<{t}*>(r);\n}}\n"
        );
        if self.bulk(tp) || tp.async_exchange {
            if self.bulk(tp) {
                let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
                s += &format!("{}: bulk asynchronous copies (PTX cp.async.bulk, the TMA unit of sm_90) that\n", if bulk.is_empty() { pipe } else { bulk });
                s += "// complete on an mbarrier in shared memory: one phase per tensor.\n";
            } else {
                s += &format!("{}: mbarriers in shared memory, one phase per tensor.\n", self.step_comment(|s| matches!(s, Step::AsyncExchange(_))));
            }
            s += &super::tma::mbarrier_helpers();
        }
        if tp.async_exchange {
            s += &self.async_exchange_helpers();
        }
        if self.bulk(tp) {
            s += &super::tma::bulk_load_helpers();
            s += "// `bytes` (a multiple of 16) from shared `src` to global `dst`, as one bulk group.\n";
            s += "__device__ __forceinline__ void mra_bulk_store(void* dst, const void* src, unsigned bytes) {\n";
            s += "    asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\" :: \"l\"(__cvta_generic_to_global(dst)), \"r\"(mra_smem_addr(src)), \"r\"(bytes) : \"memory\");\n";
            s += "    asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");\n}\n";
            s += "// The bulk stores have read their shared source (it may be overwritten) / are complete.\n";
            s += "__device__ __forceinline__ void mra_bulk_wait_read() { asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\"); }\n";
            s += "__device__ __forceinline__ void mra_bulk_wait() { asm volatile(\"cp.async.bulk.wait_group 0;\" ::: \"memory\"); }\n";
            if self.slice_shifted(tp) {
                let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
                s += &format!("{bulk}: at odd K a row's values off the 16-byte grid, by 8-byte cp.async.\n");
                s += &super::pipeline::cp_async_helpers("mra_cp_async8", 8);
            }
        } else {
            s += &self.async_copy_helpers(tp);
        }
        s
    }

    /// `async_exchange(1)`: pass 0's asynchronous stores into other blocks (PTX ISA 8.1, sm_90).
    fn async_exchange_helpers(&self) -> String {
        let note = self.step_comment(|s| matches!(s, Step::AsyncExchange(_)));
        let mut s = format!("{note}: pass 0 sends with st.async; each store performs a complete-tx of its\n");
        s += "// bytes (with release semantics at cluster scope) on the receiving block's gather mbarrier,\n";
        s += "// whose phase completes once the block has armed it (arrive.expect_tx of all the bytes it\n";
        s += "// receives) and every byte has landed; early stores take its tx-count below zero, which the\n";
        s += "// ISA allows (-(2^20 - 1) .. 2^20 - 1).\n";
        s += "// The shared::cluster address of `p`'s counterpart in block `rank` (no side effects: not volatile).\n";
        s += "__device__ __forceinline__ unsigned mra_cluster_map_shared(const void* p, unsigned rank) {\n";
        s += "    unsigned r;\n";
        s += "    asm(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(mra_smem_addr(p)), \"r\"(rank));\n";
        s += "    return r;\n}\n";
        s += "// Stores `v` at `p`'s counterpart in block `rank`, completing 8 bytes on that block's `bar`.\n";
        s += "__device__ __forceinline__ void mra_send(double* p, unsigned rank, double v, void* bar) {\n";
        s += "    asm volatile(\"st.async.shared::cluster.mbarrier::complete_tx::bytes.f64 [%0], %1, [%2];\"\n";
        s += "                 :: \"r\"(mra_cluster_map_shared(p, rank)), \"d\"(v), \"r\"(mra_cluster_map_shared(bar, rank)) : \"memory\");\n}\n";
        s += "// The same for a 16-byte aligned pair: one 16-byte store.\n";
        s += "__device__ __forceinline__ void mra_send_pair(double* p, unsigned rank, double v0, double v1, void* bar) {\n";
        s += "    asm volatile(\"st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 [%0], {%1, %2}, [%3];\"\n";
        s += "                 :: \"r\"(mra_cluster_map_shared(p, rank)), \"d\"(v0), \"d\"(v1), \"r\"(mra_cluster_map_shared(bar, rank)) : \"memory\");\n}\n";
        s += "// Waits for a phase of the gather mbarrier with acquire semantics at cluster scope: the other\n";
        s += "// blocks' st.async (released at cluster scope by their complete-tx) are visible after it.\n";
        s += &super::tma::mbar_wait("mra_mbar_wait_cluster", ".acquire.cluster");
        s
    }

    /// The three pass functions; returns the calls, as `tile_gemm_passes` does.
    pub(super) fn cluster_passes(&mut self, tp: &TransformPlan, f: &Fragment) -> [String; 3] {
        let t = self.t();
        let b = if tp.b.memory == Memory::Registers { "b_frag" } else { "bm" };
        let b_param = self.pass_b_param(tp, f);
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let inline = self.d.inline_device();
        let (first, step) = tile_walk(tp);
        let (k, cl) = (self.plan.request.k, tp.cluster_slice_width(self.plan.request.k));
        let passes = [
            (SlicePass::First, "// Pass 0: the slice of A, rows a, columns (b - b0, c), to T1(b, c, x), each element stored\n// into the gather buffer `out` (the same offset in every block) of the block owning x.", "int b0"),
            (SlicePass::Second, "// Pass 1: the gather buffer, rows b, columns (c, x - x0), to T2: rows c, columns (x - x0, y).", "int"),
            (SlicePass::Third, "// Pass 2: T2, rows c, columns (x - x0, y), to this block's rows of C, laid out as in C at `out`\n// (C + x0 K^2, or the gather buffer that a bulk copy stores to C).", "int x0"),
        ];
        let send = tp.async_exchange;
        for (pass, doc, tail) in passes {
            let tail = if send && pass == SlicePass::First { "int b0, void* bar" } else { tail };
            let v = Variant::slice(pass);
            let body = self.tile_body(tp, f, v, TileMode::Whole);
            self.w.line("");
            self.w.lines(doc);
            let late_wait = pass == SlicePass::First && waits_late(tp);
            let late_note = self.step_comment(|s| matches!(s, Step::LateWait(_)));
            self.w.block(format!("{inline} void {}(const {t}* in, {b_param}, {t}* out, int lane, int wave, {tail})", v.name()), "", |w| {
                w.line(format!("{bind}: wave w owns the slice's row tiles w, w + WAVES, ..."));
                // Passes 0 and 2: a block's valid rows are a prefix, (b - b0, c) or (x - x0, y) with b, x < K,
                // so where CL·CLUSTER > K the last block skips the tiles past it. Pass 1's rows (c, x - x0)
                // interleave the empty x among the valid ones.
                match pass {
                    SlicePass::First if cl * tp.cluster > k => w.line("const int end = ((K - b0 < CL ? K - b0 : CL) * K + FM - 1) / FM;  // the tiles holding rows with b < K"),
                    SlicePass::Third if cl * tp.cluster > k => w.line("const int end = ((K - x0 < CL ? K - x0 : CL) * K + FM - 1) / FM;  // the tiles holding rows with x < K"),
                    _ => w.line("const int end = SLICE_TILES;"),
                };
                if late_wait {
                    w.line(format!("{late_note}: the cluster wait that lets this block store into the others'"));
                    w.line("// gather buffers comes after this wave's first tile is computed: a late block's skew overlaps that work.");
                    w.line("bool waited = false;");
                }
                w.block(format!("for (int tile = {first}; tile < end; tile += {step})"), "", |w| body(w));
                if late_wait {
                    w.line("if (!waited) mra_cluster_wait();  // a wave without tiles still pairs the arrive");
                }
            });
        }
        [
            format!("{}({{in}}, {b}, {{out}}, lane, wave, b0{});", Variant::slice(SlicePass::First).name(), if send { ", gather_bar" } else { "" }),
            format!("{}({{in}}, {b}, {{out}}, lane, wave, 0);", Variant::slice(SlicePass::Second).name()),
            format!("{}({{in}}, {b}, {{out}}, lane, wave, x0);", Variant::slice(SlicePass::Third).name()),
        ]
    }

    /// Starts the copy of this block's slice of tensor `src` into `dst`: bulk copies by warp 0
    /// (lane a: row a) on one mbarrier phase, or cp.async by every thread (one group).
    fn slice_copies(&self, tp: &TransformPlan, src: &str, dst: &str) -> String {
        let mut s = String::new();
        if self.slice_shifted(tp) {
            s += &self.shifted_slice_copies(src, dst);
        } else if self.bulk(tp) {
            s += "if (wave == 0) {\n";
            s += "    const int rows = K - b0 < CL ? K - b0 : CL;  // values of b this block holds\n";
            s += &format!("    const unsigned bytes = (unsigned)(rows * K * sizeof(*{src}));\n");
            s += "    if (lane == 0) mra_mbar_expect(mbar, K * bytes);\n";
            s += "    __syncwarp();\n";
            s += &format!("    for (int r = lane; r < K; r += LANES) mra_bulk_copy({dst} + r * SLICE_STRIDE, {src} + (long long)r * K2 + b0 * K, bytes, mbar);\n");
            s += "}\n";
        } else {
            // 16-byte copies where K is even (CL and the pad are even: every vector lies in one
            // row of both memories), else one element each.
            let width = self.async_width(tp);
            s += &format!("for (int e = tid * {width}; e < K * SLICE_ROWS; e += THREADS * {width}) {{\n");
            s += "    const int r = e / SLICE_ROWS, i = e % SLICE_ROWS;  // row a, column (b - b0, c)\n";
            s += &format!("    if (b0 + i / K < K) mra_cp_async({dst} + r * SLICE_STRIDE + i, {src} + (long long)r * K2 + b0 * K + i);\n");
            s += "}\nmra_cp_async_commit();\n";
        }
        s
    }

    /// `bulk_copy(1)` at odd K ([`TransformPlan::cluster_shifted`]): the slice of tensor `src`
    /// into `dst` from element `ws_sh` on (set here: row 0's address / 8 mod 2) at the odd row
    /// stride WS_STRIDE, so row a lies at the same offsets mod 16 bytes in both memories; lane a
    /// copies row a: the value before the grid (if any) and the one after it (if any) by 8-byte
    /// cp.async (one commit group, waited for before a block barrier), the rest by one bulk copy.
    fn shifted_slice_copies(&self, src: &str, dst: &str) -> String {
        let t = self.t();
        let mut s = format!("ws_sh = (int)((reinterpret_cast<unsigned long long>({src} + b0 * K) >> 3) & 1);  // 1: row 0 starts off the 16-byte grid\n");
        s += "if (wave == 0) {\n";
        s += "    const int len = (K - b0 < CL ? K - b0 : CL) * K;  // values per row: the b this block holds, times K\n";
        s += "    // Row a starts off the grid where ws_sh + a is odd (K² is odd): ceil or floor of K / 2 rows.\n";
        s += "    const int off_rows = (K + ws_sh) / 2;\n";
        s += &format!("    if (lane == 0) mra_mbar_expect(mbar, (unsigned)(((K - off_rows) * (len & ~1) + off_rows * ((len - 1) & ~1)) * sizeof({t})));\n");
        s += "    __syncwarp();\n";
        s += "    for (int r = lane; r < K; r += LANES) {\n";
        s += "        const int head = (ws_sh + r) & 1;  // the row's first value is off the grid\n";
        s += "        const int body = (len - head) & ~1;  // values in whole 16-byte units\n";
        s += &format!("        {t}* to = {dst} + ws_sh + r * WS_STRIDE;\n");
        s += &format!("        const {t}* from = {src} + (long long)r * K2 + b0 * K;\n");
        s += &format!("        mra_bulk_copy(to + head, from + head, (unsigned)(body * sizeof({t})), mbar);\n");
        s += "        if (head) mra_cp_async8(to, from);\n";
        s += "        if (head + body < len) mra_cp_async8(to + len - 1, from + len - 1);\n";
        s += "    }\n";
        s += "    mra_cp_async_commit();\n";
        s += "}\n";
        s
    }

    /// Waits for the slice started by [`Self::slice_copies`], for every thread of the block.
    fn slice_wait(&self, tp: &TransformPlan) -> String {
        if self.bulk(tp) {
            "mra_mbar_wait(mbar, phase);  // the bulk copies of this phase have landed\nphase ^= 1;\n".into()
        } else {
            format!("mra_cp_async_wait_all();\n{}  // the slice is in shared memory for every thread\n", self.d.barrier())
        }
    }

    /// The kernel body after B is loaded: the cluster's walk over the batch.
    fn cluster_batch_loop(&self, tp: &TransformPlan, passes: &[String; 3]) -> String {
        let t = self.t();
        let barrier = self.d.barrier();
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let pipe = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let exchange = self.step_comment(|s| matches!(s, Step::AsyncExchange(_)));
        let call = |i: usize, input: &str, out: &str| passes[i].replace("{in}", input).replace("{out}", out);
        let bulk = self.bulk(tp);
        // bulk_copy(1) at odd K: ws holds the slice from element ws_sh on, the gather buffer C's
        // rows from element c_sh on (TransformPlan::cluster_shifted).
        let shifted = self.slice_shifted(tp);
        let bulk_note = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
        let ws_in = if shifted { "ws + ws_sh" } else { "ws" };
        // buffers(4): two gather buffers, used by alternate tensors. Other blocks write a gather
        // buffer (pass 0 of tensor n + 2) only after the cluster barrier of tensor n + 1, which
        // this block reaches after reading it (pass 1 of tensor n): one cluster barrier per
        // tensor instead of two.
        let double = tp.shared_buffers == 4;
        // async_exchange(1): pass 0's stores complete on the receiving block's gather mbarrier
        // (one per gather buffer), so no cluster barrier follows pass 0. "Done reading" stays a
        // relaxed arrive and a wait before the next pass 0: with one gather buffer the arrive
        // ends the tensor; with two it follows the next tensor's pass 0 (the buffer is written
        // again two tensors on), after the bulk store of C from it has read it.
        let send = tp.async_exchange;
        // Is there a relaxed "done reading" arrival at the end of each tensor?
        let done_arrive = !double;
        // Does a cluster wait precede each pass 0's stores (pairing the previous "done reading")?
        // Pass 0 makes it, before each wave's first store (see `waits_in_pass0`).
        let wait_first = waits_in_pass0(tp);
        let mut s = String::new();
        s += "const int lane = tid % LANES;\nconst int wave = tid / LANES;\n";
        s += &format!("{note}: block `rank` of the cluster holds b (and later x) in b0 .. b0 + CL.\n");
        s += "const int rank = (int)mra_cluster_rank();\nconst int b0 = rank * CL, x0 = rank * CL;\n";
        s += "// Clusters walk the batch: cluster q transforms tensors q, q + clusters, ...\n";
        s += "const int first = (int)mra_cluster_id();\nconst int stride = (int)mra_cluster_count();\n";
        s += &format!("{buffers}: {} buffers.\n", if double { "four" } else { "three" });
        s += &format!("{t}* ws = w0;  // this tensor's slice of A, from the end of pass 0 on the next tensor's\n");
        s += &format!("{t}* wt = w0 + SLICE;  // the second intermediate\n");
        s += &format!("{t}* wg = w0 + 2 * SLICE;  // the gather buffer: every block's pass 0 stores into it\n");
        if double {
            s += &format!("{t}* wg_next = w0 + 3 * SLICE;  // the gather buffer of the next tensor\n");
        }
        if bulk && !send {
            s += &format!("void* mbar = w0 + {} * SLICE;  // the mbarrier of the bulk copies\n", tp.shared_buffers);
            s += "unsigned phase = 0;\n";
            s += "if (tid == 0) mra_mbar_init(mbar);\n";
            s += &format!("{barrier}  // the mbarrier is initialised\n");
        }
        if send {
            s += &format!("unsigned long long* bars = reinterpret_cast<unsigned long long*>(w0 + {} * SLICE);  // the mbarriers, after the buffers\n", tp.shared_buffers);
        }
        if bulk && send {
            s += "void* mbar = bars;  // the mbarrier of the bulk copies\n";
            s += "unsigned phase = 0;\n";
        }
        if send {
            let at = if bulk { "bars + 1" } else { "bars" };
            s += &format!("{exchange}: the mbarrier the st.async into wg complete on.\n");
            s += &format!("void* gather_bar = {at};\nunsigned gather_phase = 0;\n");
            if double {
                s += &format!("void* gather_bar_next = {at} + 1;  // wg_next's\nunsigned gather_phase_next = 0;\n");
            }
            s += "// The bytes this block receives per tensor: all (b, c) rows of T1 for the values of x it owns.\n";
            s += &format!("const unsigned gather_bytes = (unsigned)(K * K * (K - x0 < CL ? K - x0 : CL) * sizeof({t}));\n");
        }
        if send {
            s += "if (tid == 0) {\n";
            if bulk {
                s += "    mra_mbar_init(mbar);\n";
            }
            if send {
                s += "    mra_mbar_init(gather_bar);\n";
                if double {
                    s += "    mra_mbar_init(gather_bar_next);\n";
                }
            }
            s += "}\n";
            s += &format!("{barrier}  // the mbarriers are initialised (the cluster barrier below publishes them to the other blocks)\n");
        }
        if shifted {
            s += &format!("int ws_sh = 0;  {bulk_note}: where this tensor's slice starts in ws (set by its copies)\n");
        }
        s += &format!("{pipe}: the first slice.\n");
        s += "if (first < nfuncs) {\n";
        s += &indent(&self.slice_copies(tp, "(a + (long long)first * K3)", "ws"), 4);
        s += "}\n";
        if shifted {
            s += &format!("mra_cp_async_wait_all();\n{barrier}  {bulk_note}: the first slice's 8-byte copies are visible to every thread\n");
        }
        if double && !send {
            s += "mra_cluster_arrive();\nmra_cluster_wait();  // every block has started (its shared memory may be written)\n";
        } else {
            s += "mra_cluster_arrive();  // every block has started (its shared memory may be written)\n";
        }
        s += "for (int n = first; n < nfuncs; n += stride) {\n";
        s += &indent(&self.slice_wait(tp), 4);
        let late_note = self.step_comment(|s| matches!(s, Step::LateWait(_)));
        let late_note = if late_note.is_empty() { "//".to_string() } else { late_note };
        if wait_first {
            let what = if double { "is done with wg, two tensors back" } else { "is done reading its gather buffer" };
            if waits_late(tp) {
                s += &format!("    {late_note}: pass 0 waits until every block of the cluster {what}, before each wave's first store.\n");
            } else {
                s += &format!("    mra_cluster_wait();  {late_note}: every block of the cluster {what} (previous tensor)\n");
            }
        } else {
            s += &format!("    {late_note}: pass 0 does not wait (two gather buffers, plain stores: the barrier after pass 0 orders their reuse)\n");
        }
        if send {
            s += &format!("    if (tid == 0) mra_mbar_expect(gather_bar, gather_bytes);  {exchange}: this tensor's phase of wg's mbarrier\n");
            s += &format!("    {}  // pass 0: ws -> the gather buffers of the cluster (st.async)\n", call(0, ws_in, "wg"));
            if double && bulk {
                s += "    if (tid == 0) mra_bulk_wait_read();  // the bulk store from wg_next (previous tensor) has read it\n";
            }
            s += &format!("    {barrier}  // every thread is done reading ws\n");
            if double {
                s += "    mra_cluster_arrive_relaxed();  // this block is done with wg_next (previous tensor): the next pass 0 may write it\n";
            }
        } else {
            s += &format!("    {}  // pass 0: ws -> the gather buffers of the cluster\n", call(0, ws_in, "wg"));
            if !exchange.is_empty() {
                s += &format!("    {exchange}: pass 0 stored into the other blocks; the cluster barrier publishes it.\n");
            }
            if double && bulk {
                s += "    if (tid == 0) mra_bulk_wait_read();  // the bulk store from wg_next (previous tensor) has read it\n";
            }
            s += "    mra_cluster_arrive();\n";
            s += "    mra_cluster_wait();  // every gather buffer is complete; every thread is done with ws\n";
        }
        s += "    if (n + stride < nfuncs) {\n";
        s += &format!("        {pipe}: the next tensor's slice arrives in ws during passes 1 and 2.\n");
        if bulk {
            s += "        if (wave == 0) mra_fence_proxy_async();  // pass 0's reads of ws before the copies' writes\n";
        }
        s += &indent(&self.slice_copies(tp, "(a + (long long)(n + stride) * K3)", "ws"), 8);
        s += "    }\n";
        if send {
            s += "    mra_mbar_wait_cluster(gather_bar, gather_phase);  // every byte of wg has landed\n";
            s += "    gather_phase ^= 1;\n";
        }
        s += &format!("    {}  // pass 1: wg -> wt\n", call(1, "wg", "wt"));
        // The relaxed "done reading" arrival at the end of a tensor (one gather buffer).
        let done = "    mra_cluster_arrive_relaxed();  // this block's gather buffer may be overwritten\n";
        if bulk && shifted {
            s += &format!("    {barrier}  // pass 2 reads what every wave of pass 1 wrote; wg is free\n");
            s += &format!("    {t}* c_rows = c + (long long)n * K3 + x0 * K2;  // this block's rows of C\n");
            s += &format!("    const int c_sh = (int)((reinterpret_cast<unsigned long long>(c_rows) >> 3) & 1);  {bulk_note}: 1: they start off the 16-byte grid\n");
            s += &format!("    {}  // pass 2: wt -> this block's rows of C, staged in wg from element c_sh on\n", call(2, "wt", "wg + c_sh"));
            s += "    mra_fence_proxy_async();  // this thread's writes of wg before the bulk store reads them\n";
            s += &format!("    mra_cp_async_wait_all();  {bulk_note}: the next slice's 8-byte copies, before the barrier publishes them\n");
            s += &format!("    {barrier}\n");
            s += "    if (tid == 0) {\n";
            s += "        const int len = (K - x0 < CL ? K - x0 : CL) * K2;  // values of C this block holds\n";
            s += "        const int body = (len - c_sh) & ~1;  // in whole 16-byte units, at the same offsets in wg + c_sh\n";
            s += "        mra_bulk_store(c_rows + c_sh, wg + 2 * c_sh, (unsigned)(body * sizeof(*c)));\n";
            s += "        if (c_sh) c_rows[0] = wg[c_sh];  // the value before the grid\n";
            s += "        if (c_sh + body < len) c_rows[len - 1] = wg[c_sh + len - 1];  // the value after it\n";
        } else if bulk {
            s += &format!("    {barrier}  // pass 2 reads what every wave of pass 1 wrote; wg is free\n");
            s += &format!("    {}  // pass 2: wt -> this block's rows of C, staged in wg\n", call(2, "wt", "wg"));
            s += "    mra_fence_proxy_async();  // this thread's writes of wg before the bulk store reads them\n";
            s += &format!("    {barrier}\n");
            s += "    if (tid == 0) {\n";
            s += "        const int rows = K - x0 < CL ? K - x0 : CL;  // values of x this block holds\n";
            s += "        mra_bulk_store(c + (long long)n * K3 + x0 * K2, wg, (unsigned)(rows * K2 * sizeof(*c)));  // one contiguous range of C\n";
        }
        if bulk {
            if done_arrive {
                s += "        mra_bulk_wait_read();  // wg may be written again\n";
            }
            s += "    }\n";
            if done_arrive {
                s += done;
            }
        } else {
            if done_arrive {
                s += done;
            }
            s += &format!("    {barrier}  // pass 2 reads what every wave of pass 1 wrote\n");
            s += &format!("    {}  // pass 2: wt -> this block's rows of C\n", call(2, "wt", "(c + (long long)n * K3 + x0 * K2)"));
        }
        if double {
            s += &format!("    {t}* used = wg;\n    wg = wg_next;\n    wg_next = used;\n");
            if send {
                s += "    void* used_bar = gather_bar;\n    gather_bar = gather_bar_next;\n    gather_bar_next = used_bar;\n";
                s += "    const unsigned used_phase = gather_phase;\n    gather_phase = gather_phase_next;\n    gather_phase_next = used_phase;\n";
            }
        }
        s += "}\n";
        if wait_first {
            s += "mra_cluster_wait();  // pairs the last arrive\n";
        }
        if bulk {
            s += "if (tid == 0) mra_bulk_wait();  // the last stores are complete\n";
        } else {
            s += "mra_cp_async_wait_all();  // nothing is in flight at exit\n";
        }
        s
    }

    /// `cluster(N)`'s kernel: constants and passes were emitted by the caller.
    pub(super) fn cluster_kernel(&mut self, entry: &str, tp: &TransformPlan, passes: &[String; 3]) {
        let body = self.cluster_batch_loop(tp, passes);
        let (tid, shared) = (self.d.thread_index(), self.shared_declarations(tp));
        let b_setup = self.b_setup_call(tp, if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" });
        let ws_note = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let t = self.t();
        let using = self.begin_kernel();
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.line(using);
            w.line(format!("const int tid = {tid};"));
            w.lines(&shared);
            w.lines(&b_setup);
            w.line(format!("{ws_note}: the slice buffers are in shared memory."));
            w.line(format!("{t}* w0 = w_shared;"));
            w.lines(&body);
        });
    }
}

/// `text` with every line indented by `spaces`.
fn indent(text: &str, spaces: usize) -> String {
    text.lines().map(|l| format!("{}{l}\n", " ".repeat(spaces))).collect()
}
