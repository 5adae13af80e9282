//! Library levels: the transform as vendor BLAS calls (cuBLAS / hipBLAS). What is generated is
//! the Kronecker matrix's build kernel, or, for the three-GEMM level, a description of the
//! calls the runtime makes (there is no kernel of ours to compile).

use super::Emitter;
use crate::ir::{LibraryCall, Step};

impl Emitter<'_> {
    /// Emits the level's source; returns the entry point (empty when there is no kernel).
    pub(super) fn library(&mut self, entry: &str, call: LibraryCall) -> String {
        let note = self.step_comment(|s| matches!(s, Step::Library(_)));
        let blas = match self.plan.request.arch.vendor {
            crate::Vendor::Nvidia => "cuBLAS",
            crate::Vendor::Amd => "hipBLAS",
        };
        let gemm = match self.plan.request.dtype {
            crate::DType::F64 => "Dgemm",
            crate::DType::F32 => "Sgemm",
            d @ (crate::DType::F16 | crate::DType::Bf16) => unreachable!("the planner refuses library levels in {d}"),
        };
        self.w.line("");
        match call {
            LibraryCall::Kronecker => {
                let entry = format!("{entry}_build");
                self.w.line(format!("{note}: each task is one {blas} {gemm}, C[K^3 x N] = M[K^3 x K^3] A[K^3 x N]"));
                self.w.line("// (column-major, lda = ldb = ldc = K^3). This kernel builds M = B^T (x) B^T (x) B^T once:");
                self.w.line("// M(beta, alpha) = B(a,i) B(b,j) B(c,k) for alpha = (a,b,c), beta = (i,j,k), at M[alpha * K3 + beta].");
                self.w.line("// Launched with the common parameter list: b is B, c receives M; a and workspace are unused.");
                let using = self.begin_kernel();
                let (tid, bid) = (self.d.thread_index(), self.d.block_index());
                self.w.block(self.kernel_signature(&entry), "", |w| {
                    w.line(using);
                    w.line("const long long total = (long long)K3 * K3;");
                    w.line("const long long stride = (long long)nblocks * THREADS;");
                    w.block(format!("for (long long e = (long long){bid} * THREADS + {tid}; e < total; e += stride)"), "", |w| {
                        w.line("const int alpha = (int)(e / K3), beta = (int)(e % K3);");
                        w.line("const int a_ = alpha / K2, b_ = (alpha / K) % K, c_ = alpha % K;");
                        w.line("const int i = beta / K2, j = (beta / K) % K, k = beta % K;");
                        w.line("c[e] = b[a_ * K + i] * b[b_ * K + j] * b[c_ * K + k];");
                    });
                });
                entry
            }
            LibraryCall::ThreeGemm => {
                self.w.line(format!("{note}: no kernel of ours. Each task is three {blas} {gemm}StridedBatched"));
                self.w.line("// calls over the N tensors, one per pass, through two per-stream batch workspaces S0, S1:");
                self.w.line("//   A -> S0 -> S1 -> C, each: out_n (K^2 x K row-major) = in_n^T B, i.e. column-major");
                self.w.line("//   X (K x K^2) = op_N(B viewed K x K, ld K) * op_T(in_n viewed K^2 x K, ld K^2),");
                self.w.line("//   m = K, n = K^2, k = K, strides: B 0, in K^3, out K^3, batch N.");
                String::new()
            }
        }
    }
}
