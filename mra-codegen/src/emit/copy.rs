//! The copy level (the floor: each tensor read once and written once, no arithmetic) and the
//! loops over the flat batch that the bound level shares with it.

use super::writer::Writer;
use super::Emitter;
use crate::ir::Step;
use crate::plan::Shadow;

impl Emitter<'_> {
    pub(super) fn copy_kernel(&mut self, entry: &str, vector: u32, shadow: Option<Shadow>) {
        let note = self.step_comment(|s| matches!(s, Step::Copy { .. }));
        self.w.line("");
        match shadow {
            None => {
                self.w.line("// The floor: the same harness as the transform levels, but each tensor is only read once");
                self.w.line("// and written once. `b` and `workspace` are unused; they keep the parameter list common.");
            }
            Some(_) => {
                self.w.line("// The bound: the copy level's reads and writes, and beside them the fewest matrix instructions");
                self.w.line("// the transform needs, whose results are discarded. C receives a copy of A (validated as the");
                self.w.line("// copy level is); `b` and `workspace` are unused.");
            }
        }
        let (vec_t, decl) = self.d.vector_type(self.plan.request.dtype, vector);
        if vector > 1 {
            if let Some(decl) = decl {
                self.w.line(decl);
            }
            self.w.line(format!("constexpr int VEC = {vector};"));
        }
        let copy = CopyLoops { vector, vec_t, dtype: self.plan.request.dtype };
        if let Some(sh) = shadow {
            self.bound_kernel(entry, &sh, &copy);
            return;
        }
        let using = self.begin_kernel();
        let (tid, bid) = (self.d.thread_index(), self.d.block_index());
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.line(using);
            w.line(format!("{note}: the batch is one flat array, walked by all blocks together."));
            w.line("const long long total = (long long)nfuncs * K3;");
            w.line("const long long stride = (long long)nblocks * THREADS;");
            w.line(format!("const long long first = (long long){bid} * THREADS + {tid};"));
            copy.write(w, None);
        });
    }
}

/// The copy level's loops over the flat batch (`total` elements from `first`, `stride` apart),
/// also the bound's copying part.
pub(super) struct CopyLoops {
    vector: u32,
    /// The `vector`-element type the accesses use.
    vec_t: String,
    dtype: crate::dtype::DType,
}

impl CopyLoops {
    /// With `each`: every lane runs its wave's lane 0's iterations and runs `each` after each
    /// one (the bound's interleaved instructions, which need the whole wave), `per` of `count`.
    pub(super) fn write(&self, w: &mut Writer, each: Option<&str>) {
        let (vector, vec_t) = (self.vector, &self.vec_t);
        if vector == 1 {
            w.line(format!("for (long long e = first; e < total; e += stride) c[e] = a[e];  // {}", self.dtype.cpp()));
            return;
        }
        w.line(format!("// {}-byte accesses for all but the last total % VEC elements.", vector * self.dtype.bytes()));
        w.line("const long long nvec = total / VEC;");
        w.line(format!("const {vec_t}* a_vec = reinterpret_cast<const {vec_t}*>(a);"));
        w.line(format!("{vec_t}* c_vec = reinterpret_cast<{vec_t}*>(c);"));
        match each {
            None => {
                w.line("// Unrolled so that each thread has several loads in flight (small K is latency-bound).");
                w.line("#pragma unroll 4");
                w.line("for (long long v = first; v < nvec; v += stride) c_vec[v] = a_vec[v];");
            }
            Some(each) => {
                w.line("// Every lane of a wave runs its lane 0's iterations: the matrix instructions need the whole wave.");
                w.line("const long long iters = first - lane < nvec ? (nvec - 1 - (first - lane)) / stride + 1 : 0;");
                w.line("const long long per = iters > 0 ? count / iters : 0;  // instructions per iteration");
                w.block("for (long long i = 0; i < iters; ++i)", "", |w| {
                    w.line("const long long v = first + i * stride;");
                    w.line("if (v < nvec) c_vec[v] = a_vec[v];");
                    w.line(each);
                });
                w.line("count -= per * iters;");
            }
        }
        w.line("for (long long e = nvec * VEC + first; e < total; e += stride) c[e] = a[e];");
    }
}
