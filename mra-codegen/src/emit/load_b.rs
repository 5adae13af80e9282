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
