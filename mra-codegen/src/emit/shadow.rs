//! `shadow_mma(..)`: the `bound` level's matrix instructions beside its copy. Per tensor the
//! fewest instructions of the arch's shape any tensorized transform needs at K
//! ([`crate::plan::fewest_mma_per_tensor`]), on operands held in registers, results never
//! stored: no shared memory, no barriers, no waiting for data. A transform level does at least
//! this work and moves at least this data, so in the same harness it cannot be faster.

use super::copy::CopyLoops;
use super::Emitter;
use crate::ir::Step;
use crate::plan::Shadow;

impl Emitter<'_> {
    /// The bound's kernel: its constants, then the copying and multiplying waves (split) or
    /// every wave doing both; after the copy's vector type.
    pub(super) fn bound_kernel(&mut self, entry: &str, sh: &Shadow, copy: &CopyLoops) {
        self.shadow_constants(sh);
        let note = self.step_comment(|s| matches!(s, Step::Copy { .. }));
        let shadow_note = self.step_comment(|s| matches!(s, Step::ShadowMma(_)));
        let using = self.begin_kernel();
        let (tid, bid) = (self.d.thread_index(), self.d.block_index());
        self.w.line(format!("{} {{", self.kernel_signature(entry)));
        self.w.indent();
        self.w.line(using);
        self.w.line(format!("const int tid = {tid};"));
        self.w.line(if sh.split { "const int wave = tid / LANES;" } else { "const int wave = tid / LANES, lane = tid % LANES;" });
        self.w.line("const long long total = (long long)nfuncs * K3;");
        self.w.line("const long long launch = (long long)nfuncs * MMA_PER_TENSOR;  // the launch's instructions, spread over its waves");
        if sh.split {
            self.w.block("if (wave < COPY_WAVES)", "", |w| {
                w.line(format!("{note}: the batch is one flat array, walked by the copying waves of all blocks."));
                w.line("const long long stride = (long long)nblocks * COPY_WAVES * LANES;");
                w.line(format!("const long long first = (long long){bid} * COPY_WAVES * LANES + tid;"));
                copy.write(w, None);
                w.line("return;");
            });
            self.shadow_share(&format!("{shadow_note}: this wave's share of the instructions."), bid, "(wave - COPY_WAVES)", "const long long");
            self.w.line("if (count == 0) return;");
            self.shadow_operands(sh, "tid");
            self.w.line("mra_shadow(acc, op_a, op_b, count);");
        } else {
            self.shadow_share(&format!("{shadow_note}: this wave's share of the instructions, a part after each copy iteration."), bid, "wave", "long long");
            self.w.line("if (total == 0) return;");
            self.shadow_operands(sh, "tid");
            self.w.line(format!("{note}: the batch is one flat array, walked by all blocks together."));
            self.w.line("const long long stride = (long long)nblocks * THREADS;");
            self.w.line(format!("const long long first = (long long){bid} * THREADS + tid;"));
            copy.write(&mut self.w, Some("mra_shadow(acc, op_a, op_b, per);"));
            self.w.line("mra_shadow(acc, op_a, op_b, count);  // the rest");
        }
        self.shadow_sink(sh, "tid");
        self.w.dedent();
        self.w.line("}");
    }

    /// `count`: this wave's share of the launch's instructions, spread evenly over the
    /// multiplying waves of every block (the first `launch % waves` take one more).
    fn shadow_share(&mut self, note: &str, bid: &str, wave_in_block: &str, count_decl: &str) {
        self.w.line(note);
        self.w.line("const long long waves = (long long)nblocks * MMA_WAVES;");
        self.w.line(format!("const long long index = (long long){bid} * MMA_WAVES + {wave_in_block};"));
        self.w.line(format!("{count_decl} count = launch / waves + (index < launch % waves ? 1 : 0);"));
    }

    /// Constants and the helper issuing `count` instructions; after the copy's constants.
    fn shadow_constants(&mut self, sh: &Shadow) {
        let note = self.step_comment(|s| matches!(s, Step::ShadowMma(_)));
        let f = sh.fragment;
        let k = self.plan.request.k;
        self.w.line(format!("constexpr int LANES = {};  // lanes of a wave", f.lanes));
        self.w.line("constexpr int WAVES = THREADS / LANES;");
        if sh.split {
            self.w.line(format!("constexpr int COPY_WAVES = WAVES / 2;  {note}: waves 0 .. COPY_WAVES - 1 copy, the others multiply"));
            self.w.line("constexpr int MMA_WAVES = WAVES - COPY_WAVES;");
        } else {
            self.w.line(format!("constexpr int MMA_WAVES = WAVES;  {note}: every wave copies and multiplies"));
        }
        self.w.line(format!(
            "constexpr long long MMA_PER_TENSOR = {};  // 3 passes of a {k}^2 x {k} by {k} GEMM in whole {}x{}x{} fragments: the fewest at K = {k}",
            sh.per_tensor, f.m, f.n, f.k
        ));
        let tensorize = self.step_comment(|s| matches!(s, Step::Tensorize(_)));
        self.w.line("");
        self.w.line(format!("{tensorize}: the arch's {} instruction, as the transform levels take it", f.instr.name()));
        self.w.lines(&self.d.mma_prelude(&f, self.plan.request.dtype));
        self.w.line("");
        let inline = self.d.inline_device();
        let mma = |acc: &str, a: &str, b: &str| self.d.mma_call(&f, self.plan.request.dtype, acc, a, b);
        self.w.line(format!("{note}: `count` instructions on two independent accumulators, the operands"));
        self.w.line("// alternating between two registers of each kind (two chains: enough to keep the pipe busy);");
        self.w.line("// one instruction per chain and iteration: unrolled by 8, ptxas took 59 registers on sm_90 instead");
        self.w.line("// of 40, and the copying waves of the same kernel would have fewer blocks per SM.");
        self.w.line("template <typename Acc, typename OpA, typename OpB>");
        let (unrolled, rest) = (mma("acc[u % 2]", "a[u % 2]", "b[(u + 1) % 2]"), mma("acc[0]", "a[1]", "b[0]"));
        self.w.block(format!("{inline} void mra_shadow(Acc& acc, const OpA (&a)[2], const OpB (&b)[2], long long count)"), "", |w| {
            w.line("long long i = 0;");
            w.line("#pragma unroll 1");
            w.block("for (; i + 2 <= count; i += 2)", "", |w| {
                w.line("#pragma unroll");
                w.line(format!("for (int u = 0; u < 2; ++u) {unrolled}"));
            });
            w.line("#pragma unroll 1");
            w.line(format!("for (; i < count; ++i) {rest}"));
        });
    }

    /// The wave's operands and accumulators: random values from the first elements of A (a
    /// few cache lines, so no traffic the copy does not have). Needs `total` > 0.
    fn shadow_operands(&mut self, sh: &Shadow, tid: &str) {
        let f = sh.fragment;
        let dtype = self.plan.request.dtype;
        let (at, bt) = (self.d.mma_operand_type(&f, dtype, f.a.regs), self.d.mma_operand_type(&f, dtype, f.b.regs));
        self.w.line(self.d.mma_acc_decl(&f, "acc", "2"));
        self.w.line(format!("for (int q = 0; q < 2; ++q) for (int r = 0; r < {}; ++r) acc[q][r] = 0;", f.c.regs));
        self.w.line(format!("{at} op_a[2];"));
        self.w.line(format!("{bt} op_b[2];"));
        let elem = |regs: u32, name: &str, offset: &str| {
            if regs == 1 {
                format!("{name}[u] = a[({tid} * 4 + u{offset}) % total];")
            } else {
                format!("for (int r = 0; r < {regs}; ++r) {name}[u][r] = a[({tid} * 4 + u + r{offset}) % total];")
            }
        };
        self.w.block("for (int u = 0; u < 2; ++u)", "", |w| {
            w.line(elem(f.a.regs, "op_a", ""));
            w.line(elem(f.b.regs, "op_b", " + 1"));
        });
    }

    /// Keeps the instructions: their results feed a store that never runs (nfuncs >= 0), which
    /// the compiler cannot prove.
    fn shadow_sink(&mut self, sh: &Shadow, tid: &str) {
        let regs = sh.fragment.c.regs;
        self.w.block("if (nfuncs < 0)", "", |w| {
            w.line("double s = 0;");
            w.line(format!("for (int q = 0; q < 2; ++q) for (int r = 0; r < {regs}; ++r) s += acc[q][r];"));
            w.line(format!("c[{tid}] = s;  // never: the results are not the transform's"));
        });
    }
}
