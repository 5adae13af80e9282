//! `cluster(N)`: one tensor per thread-block cluster (NVIDIA sm_90), split along its last
//! index c over the cluster's N blocks. Block r holds the values c0 = r·CL .. c0 + CL of c
//! (CL a whole number of fragment k-steps; the last block's missing values are zeros):
//!
//! ```text
//! pass 0 (contracts a, block-local):  A(a, b, c)   -> T1(b, c, x)   K·CL output rows (b, c)
//! pass 1 (contracts b, scattered):    T1(b, c, x)  -> T2(c, x, y)   K·CL output rows (c, x)
//! pass 2 (contracts c, block-local):  T2(c, x, y)  -> C(x, y, z)    this block's RB rows (x, y)
//! ```
//!
//! Pass 1 stores each element of T2 straight into the shared memory of the block whose rows
//! of C need it (distributed shared memory: `mapa` gives the generic address of the same
//! offset in another block; stores do not wait for a reply), so pass 2 reads only its own
//! shared memory. Two cluster barriers order the exchange: after pass 1 (every block's
//! gather buffer is complete), and before the next pass 1 (every block has read its gather
//! buffer), split into an arrive after pass 2 and a wait before pass 1 so that the wait is
//! normally over by then. The next tensor's slice is copied with cp.async (`pipeline(2)`)
//! from the end of pass 0 on, into the buffer pass 0 has finished reading.

use super::tensor::{SlicePass, TileMode, Variant};
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The slice geometry, after the tile constants.
    pub(super) fn cluster_constants(&mut self, tp: &TransformPlan) {
        let k = self.plan.request.k;
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let cl = tp.cluster_slice_width(k);
        self.w.line(format!("constexpr int CLUSTER = {};  {note}: blocks sharing one tensor", tp.cluster));
        self.w.line(format!("constexpr int CL = {cl};  // values of the last index per block: whole k-steps of FK"));
        self.w.line(format!(
            "constexpr int SLICE_STRIDE = K * CL + {};  // row stride of the slice of A and of the first intermediate",
            tp.shared_row_pad()
        ));
        self.w.line("constexpr int SLICE_ROWS = K * CL;  // output rows of passes 0 and 1");
        self.w.line("constexpr int SLICE_TILES = (SLICE_ROWS + FM - 1) / FM;");
        self.w.line("constexpr int GATHER_TILES = (ROW_TILES + CLUSTER - 1) / CLUSTER;  // pass 2 row tiles per block");
        self.w.line(format!("constexpr int RB = {};  // GATHER_TILES * FM: columns (x, y) of the last pass's input per block", tp.cluster_gather_width(k)));
        self.w.line(format!("constexpr int G_STRIDE = RB + {};  // row stride of the gather buffer (K rows c)", tp.shared_row_pad()));
        self.w.line("// One buffer holds K rows of SLICE_STRIDE (A, first intermediate) or of G_STRIDE (gather).");
        self.w.line("constexpr int SLICE = K * (SLICE_STRIDE > G_STRIDE ? SLICE_STRIDE : G_STRIDE);");
        self.w.line("");
        // Before the passes: pass 1 stores through the cluster mapping.
        let helpers = self.async_copy_helpers(tp) + &self.cluster_helpers();
        self.w.lines(&helpers);
    }

    /// The PTX the cluster kernel needs (sm_90, PTX ISA 7.8).
    fn cluster_helpers(&self) -> String {
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let mut s = format!("{note}: thread-block cluster primitives (PTX, sm_90).\n");
        s += "__device__ __forceinline__ unsigned mra_cluster_rank() { unsigned r; asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r)); return r; }\n";
        s += "__device__ __forceinline__ unsigned mra_cluster_id() { unsigned r; asm volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(r)); return r; }\n";
        s += "__device__ __forceinline__ unsigned mra_cluster_count() { unsigned r; asm volatile(\"mov.u32 %0, %%nclusterid.x;\" : \"=r\"(r)); return r; }\n";
        s += "// Every thread of every block of the cluster arrives (releasing its memory accesses,\n";
        s += "// distributed shared memory included) and waits for all (acquiring the others').\n";
        s += "__device__ __forceinline__ void mra_cluster_arrive() { asm volatile(\"barrier.cluster.arrive.aligned;\" ::: \"memory\"); }\n";
        s += "__device__ __forceinline__ void mra_cluster_wait() { asm volatile(\"barrier.cluster.wait.aligned;\" ::: \"memory\"); }\n";
        s += "// The generic address of `p`'s counterpart in the shared memory of block `rank` of the cluster.\n";
        s += &format!(
            "__device__ __forceinline__ {t}* mra_cluster_map_rw({t}* p, unsigned rank) {{\n\
             \x20   unsigned long long r;\n\
             \x20   asm volatile(\"mapa.u64 %0, %1, %2;\" : \"=l\"(r) : \"l\"(p), \"r\"(rank));\n\
             \x20   return reinterpret_cast<{t}*>(r);\n}}\n",
            t = self.t()
        );
        s
    }

    /// The three pass functions; returns the calls, as `tile_gemm_passes` does.
    pub(super) fn cluster_passes(&mut self, tp: &TransformPlan, f: &Fragment) -> [String; 3] {
        let t = self.t();
        let b = if tp.b.memory == Memory::Registers { "b_frag" } else { "bm" };
        let b_param = match tp.b.memory {
            Memory::Registers => format!("const {} (&b_frag)[K_STEPS][N_FRAGS]", self.d.mma_operand_type(f, self.plan.request.dtype, f.b.regs)),
            _ => format!("const {t}* bm"),
        };
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let inline = self.d.inline_device();
        let step = if tp.jam > 1 { "JAM * WAVES" } else { "WAVES" };
        let passes = [
            (SlicePass::First, "// Pass 0 on this block's slice: A(a, (b, c)) -> T1(b, (c, x)), block-local.", "int lane, int wave"),
            (SlicePass::Second, "// Pass 1 on this block's slice: T1(b, (c, x)) -> T2(c, (x, y)), each element stored into the\n// gather buffer (`out`, at the same offset in every block) of the block owning column (x, y).", "int lane, int wave, int c0"),
            (SlicePass::Gather, "// Pass 2: this block's gather buffer, rows c of the columns row0 .. row0 + RB, to C's rows\n// row0 .. row0 + RB (its row tiles rank * GATHER_TILES, ...).", "int lane, int wave, int rank"),
        ];
        for (pass, doc, tail) in passes {
            let v = Variant::slice(pass);
            let body = self.tile_body(tp, f, v, TileMode::Whole);
            self.w.line("");
            self.w.lines(doc);
            self.w.block(format!("{inline} void {}(const {t}* in, {b_param}, {t}* out, {tail})", v.name()), "", |w| {
                if pass == SlicePass::Gather {
                    w.line("const int row0 = rank * RB;");
                    w.line("const int end = (rank + 1) * GATHER_TILES < ROW_TILES ? (rank + 1) * GATHER_TILES : ROW_TILES;");
                    w.line(format!("{bind}: wave w owns this block's row tiles w, w + WAVES, ..."));
                    w.block(format!("for (int tile = rank * GATHER_TILES + wave; tile < end; tile += {step})"), "", |w| body(w));
                } else {
                    w.line(format!("{bind}: wave w owns the slice's row tiles w, w + WAVES, ..."));
                    w.line("const int end = SLICE_TILES;");
                    w.block(format!("for (int tile = wave; tile < end; tile += {step})"), "", |w| body(w));
                }
            });
        }
        [
            format!("{}({{in}}, {b}, {{out}}, lane, wave);", Variant::slice(SlicePass::First).name()),
            format!("{}({{in}}, {b}, {{out}}, lane, wave, c0);", Variant::slice(SlicePass::Second).name()),
            format!("{}({{in}}, {b}, {{out}}, lane, wave, rank);", Variant::slice(SlicePass::Gather).name()),
        ]
    }

    /// The copies of this block's slice of tensor `src` into `dst` (one commit group): the
    /// values c0 .. c0 + CL of the last index, zeros past K.
    fn slice_copies(&self, src: &str, dst: &str) -> String {
        let k = self.plan.request.k;
        let zero = self.plan.request.dtype.zero();
        let tp = match self.plan.body {
            crate::plan::Body::Transform(tp) => tp,
            _ => unreachable!("a cluster plan transforms"),
        };
        let (cl, pad) = (tp.cluster_slice_width(k), tp.shared_row_pad());
        // The width of the copy helper: 16 bytes when K and the row pad are even. Then pairs
        // (c, c + 1) stay inside a slice row and aligned (c0 and CL are even: whole k-steps),
        // and c < K implies c + 1 < K.
        let width = self.async_width(&tp);
        assert!(width == 1 || (cl % width == 0 && k % width == 0 && pad % width == 0), "16-byte slice copies need even CL, K, pad");
        let mut s = String::new();
        s += &format!("for (int e = tid; e < K * K * CL / {width}; e += THREADS) {{\n");
        s += &format!("    const int x = e * {width};  // element (a, b, c) of the slice: x = (a * K + b) * CL + c\n");
        s += "    const int a_ = x / (K * CL), b_ = (x / CL) % K, c_ = x % CL;\n";
        s += &format!("    {t}* d = {dst} + a_ * SLICE_STRIDE + b_ * CL + c_;\n", t = self.t());
        s += &format!("    if (c0 + c_ < K) mra_cp_async(d, {src} + (a_ * K + b_) * K + c0 + c_);\n");
        if width == 1 {
            s += &format!("    else *d = {zero};  // past the last index: zeros, which the passes carry as zeros\n");
        } else {
            s += &format!("    else d[0] = d[1] = {zero};  // past the last index: zeros, which the passes carry as zeros\n");
        }
        s += "}\nmra_cp_async_commit();\n";
        s
    }

    /// The kernel body after B is loaded: the cluster's walk over the batch. Three buffers per
    /// block: the slice of A (then the next tensor's), the first intermediate, the gather buffer.
    pub(super) fn cluster_batch_loop(&self, passes: &[String; 3]) -> String {
        let t = self.t();
        let barrier = self.d.barrier();
        let note = self.step_comment(|s| matches!(s, Step::Cluster(_)));
        let pipe = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let call = |i: usize, input: &str, out: &str| passes[i].replace("{in}", input).replace("{out}", out);
        let mut s = String::new();
        s += "const int lane = tid % LANES;\nconst int wave = tid / LANES;\n";
        s += &format!("{note}: block `rank` of the cluster holds the last index's values c0 .. c0 + CL.\n");
        s += "const int rank = (int)mra_cluster_rank();\nconst int c0 = rank * CL;\n";
        s += "// Clusters walk the batch: cluster q transforms tensors q, q + clusters, ...\n";
        s += "const int first = (int)mra_cluster_id();\nconst int stride = (int)mra_cluster_count();\n";
        s += &format!("{buffers}: three buffers.\n");
        s += &format!("{t}* wa = w0;  // this tensor's slice of A, from pass 0 on the next tensor's\n");
        s += &format!("{t}* wb = w0 + SLICE;  // the first intermediate\n");
        s += &format!("{t}* wg = w0 + 2 * SLICE;  // the gather buffer: every block's pass 1 stores into it\n");
        s += "if (first < nfuncs) {\n";
        s += &indent(&self.slice_copies("(a + (long long)first * K3)", "wa"), 4);
        s += "    mra_cp_async_wait_all();\n}\n";
        s += &format!("{barrier}  // the first slice is staged\n");
        s += "mra_cluster_arrive();  // every block has started (its shared memory may be written)\n";
        s += "for (int n = first; n < nfuncs; n += stride) {\n";
        s += &format!("    {}  // pass 0: slice of A (wa) -> wb\n", call(0, "wa", "wb"));
        s += &format!("    {barrier}  // wa is free\n");
        s += "    if (n + stride < nfuncs) {\n";
        s += &format!("        {pipe}: the next tensor's slice arrives in wa during passes 1 and 2.\n");
        s += &indent(&self.slice_copies("(a + (long long)(n + stride) * K3)", "wa"), 8);
        s += "    }\n";
        s += "    mra_cluster_wait();  // every block is done reading its gather buffer (previous tensor)\n";
        s += &format!("    {}  // pass 1: wb -> the gather buffers of the cluster\n", call(1, "wb", "wg"));
        s += "    mra_cluster_arrive();\n";
        s += "    mra_cluster_wait();  // every block's gather buffer is complete\n";
        s += &format!("    {}  // pass 2: wg -> this block's rows of C\n", call(2, "wg", "(c + (long long)n * K3)"));
        s += "    mra_cluster_arrive();  // this block's gather buffer may be overwritten\n";
        s += "    mra_cp_async_wait_all();\n";
        s += &format!("    {barrier}  // the next slice is in wa for every thread\n");
        s += "}\n";
        s += "mra_cluster_wait();  // pairs the last arrive\n";
        s
    }

    /// `cluster(N)`'s kernel: constants and passes were emitted by the caller.
    pub(super) fn cluster_kernel(&mut self, entry: &str, tp: &TransformPlan, passes: &[String; 3]) {
        let body = self.cluster_batch_loop(passes);
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
