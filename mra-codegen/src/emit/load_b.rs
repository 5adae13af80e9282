//! `load_b`: B made available to the passes once per block (staged into shared memory,
//! loaded into register fragments, or read where it lies), the call to it, and the B
//! arguments and parameters the passes take.

use super::Emitter;
use crate::ir::{Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// `load_b`: B made available to the passes, once per block (staged into shared memory,
    /// loaded into register fragments, or read where it lies). The kernel calls it before its
    /// batch loop, `transform_block` before its one tensor.
    pub(super) fn b_loader(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let inline = self.d.inline_device();
        let body = match tp.fragment {
            Some(f) => self.tile_b_setup(tp, &f),
            None => self.thread_b_setup(tp),
        };
        if tp.b.memory == Memory::Registers {
            let f = tp.fragment.expect("B in registers is a fragment level");
            if tp.swap_operands {
                let note = self.step_comment(|s| matches!(s, Step::SwapOperands(_)));
                self.w.line(format!("// B^T fragments in registers ({}): one set per lane, for every pass of every tensor.", note.trim_start_matches("// ")));
                self.w.line(format!("typedef {} BFrags[K_STEPS][M_FRAGS];", self.swapped_b_type(&f)));
            } else {
                let b_ty = self.d.mma_operand_type(&f, self.plan.request.dtype, f.b.regs);
                self.w.line("// B fragments in registers: one set per lane, for every pass of every tensor.");
                self.w.line(format!("typedef {b_ty} BFrags[K_STEPS][{}];", if tp.col_split > 1 { "WARP_FRAGS" } else { "N_FRAGS" }));
            }
            let tail = if tp.fma_tail {
                let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
                self.w.line(format!("typedef {t} BTail[K];  {note}: this lane's tail column of B, every row k"));
                ", BTail& b_tail"
            } else {
                ""
            };
            self.w.block(format!("{inline} void load_b(const {t}* b, int tid, BFrags& b_frag{tail})"), "", |w| {
                w.line("const int lane = tid % LANES;");
                w.lines(&body);
            });
        } else {
            self.w.line("// B as the passes read it; `b_shared` is used only when B is staged in shared memory.");
            self.w.block(format!("{inline} const {t}* load_b(const {t}* b, {t}* b_shared, int tid)"), "", |w| {
                if tp.b.memory != Memory::Shared {
                    w.line("(void)b_shared;");
                    w.line("(void)tid;");
                }
                w.lines(&body);
                w.line("return bm;");
            });
        }
    }

    /// The statement(s) that call `load_b` at the top of a kernel or of `transform_block`.
    pub(super) fn b_setup_call(&self, tp: &TransformPlan, b_shared: &str) -> String {
        let t = self.t();
        if self.op().matrices == crate::op::Matrices::PerDim {
            return self.per_dim_b_setup(tp, b_shared);
        }
        if tp.b.memory == Memory::Registers {
            if tp.fma_tail {
                "BFrags b_frag;\nBTail b_tail;\nload_b(b, tid, b_frag, b_tail);\n".to_string()
            } else {
                "BFrags b_frag;\nload_b(b, tid, b_frag);\n".to_string()
            }
        } else {
            format!("const {t}* bm = load_b(b, {b_shared}, tid);\n")
        }
    }
}

impl Emitter<'_> {
    /// [`Emitter::b_setup_call`] for a matrix per dimension: `load_b` three times, matrix p at
    /// `b + p * K2` into its own registers or shared region, for pass p.
    fn per_dim_b_setup(&self, tp: &TransformPlan, b_shared: &str) -> String {
        let t = self.t();
        let mut s = String::from("// A matrix per dimension: pass p contracts dimension p with matrix p, at b + p * K2.\n");
        let at = |p: usize| if p == 0 { "b".to_string() } else { format!("b + {p} * K2") };
        if tp.b.memory == Memory::Registers {
            s += "BFrags b_frag0, b_frag1, b_frag2;\n";
            if tp.fma_tail {
                s += "BTail b_tail0, b_tail1, b_tail2;\n";
            }
            for p in 0..3 {
                let tail = if tp.fma_tail { format!(", b_tail{p}") } else { String::new() };
                s += &format!("load_b({}, tid, b_frag{p}{tail});\n", at(p));
            }
        } else {
            let region = if tp.fragment.is_some() { "KP * B_STRIDE" } else { "K * B_STRIDE" };
            for p in 0..3 {
                let shared = match (b_shared, p) {
                    ("nullptr", _) => "nullptr".to_string(),
                    (_, 0) => b_shared.to_string(),
                    _ => format!("{b_shared} + {p} * {region}"),
                };
                s += &format!("const {t}* bm{p} = load_b({}, {shared}, tid);\n", at(p));
            }
        }
        s
    }

    /// The B arguments of `transform_tensor`'s call ([`b_args`], three of them for a matrix per
    /// dimension).
    pub(super) fn b_args_op(&self, tp: &TransformPlan) -> String {
        match self.op().matrices {
            crate::op::Matrices::One | crate::op::Matrices::RankSum => b_args(tp).to_string(),
            crate::op::Matrices::PerDim => super::operation::all_dims(b_args(tp)),
        }
    }

    /// The parameters that receive [`Emitter::b_args_op`].
    pub(super) fn b_params_op(&self, tp: &TransformPlan) -> String {
        let params = b_params(tp, self.t());
        match self.op().matrices {
            crate::op::Matrices::One | crate::op::Matrices::RankSum => params,
            crate::op::Matrices::PerDim => super::operation::all_dims(&params),
        }
    }

    /// Pass `p`'s call with its own matrix where each dimension has one.
    pub(super) fn pass_for_dim(&self, tp: &TransformPlan, call: &str, p: usize) -> String {
        if self.op().matrices == crate::op::Matrices::One {
            return call.to_string();
        }
        let b = b_args(tp);
        let at = format!(", {b},");
        assert!(call.contains(&at), "pass {p} takes B as `{b}`: {call}");
        call.replacen(&at, &format!(", {},", super::operation::for_dim(b, p)), 1)
    }
}

/// The B arguments the kernel passes on to `transform_tensor` and the passes: the lane's B
/// fragments (and with `fma_tail(1)` its tail column), or the pointer to B.
pub(super) fn b_args(tp: &TransformPlan) -> &'static str {
    match tp.b.memory {
        Memory::Registers if tp.fma_tail => "b_frag, b_tail",
        Memory::Registers => "b_frag",
        _ => "bm",
    }
}

/// The parameters that receive [`b_args`] (element type `t`), with the `load_b` typedefs.
pub(super) fn b_params(tp: &TransformPlan, t: &str) -> String {
    match tp.b.memory {
        Memory::Registers if tp.fma_tail => "const BFrags& b_frag, const BTail& b_tail".to_string(),
        Memory::Registers => "const BFrags& b_frag".to_string(),
        _ => format!("const {t}* bm"),
    }
}
