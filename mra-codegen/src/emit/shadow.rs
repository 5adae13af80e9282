//! `shadow_mma(..)`: the `bound` level's matrix instructions beside its copy. Per tensor the
//! fewest instructions of the arch's shape any tensorized transform needs at K
//! ([`crate::plan::fewest_mma_per_tensor`]), on operands held in registers, results never
//! stored: no shared memory, no barriers, no waiting for data. A transform level does at least
//! this work and moves at least this data, so in the same harness it cannot be faster
//! (bench/NOTES.md run 92).

use super::Emitter;
use crate::ir::Step;
use crate::plan::Shadow;

impl Emitter<'_> {
    /// Constants and the helper issuing `count` instructions; after the copy's constants.
    pub(super) fn shadow_constants(&mut self, sh: &Shadow) {
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
        self.w.line("// alternating between two registers of each kind (two chains: enough to keep the pipe busy, run 92);");
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
    pub(super) fn shadow_operands(&mut self, sh: &Shadow, tid: &str) {
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
    pub(super) fn shadow_sink(&mut self, sh: &Shadow, tid: &str) {
        let regs = sh.fragment.c.regs;
        self.w.block("if (nfuncs < 0)", "", |w| {
            w.line("double s = 0;");
            w.line(format!("for (int q = 0; q < 2; ++q) for (int r = 0; r < {regs}; ++r) s += acc[q][r];"));
            w.line(format!("c[{tid}] = s;  // never: the results are not the transform's"));
        });
    }
}
