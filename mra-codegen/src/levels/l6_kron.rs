mra_dsl::schedule! {
    /// Kronecker: one vendor GEMM per task with the K³×K³ matrix Bᵀ⊗Bᵀ⊗Bᵀ, built once on the
    /// GPU. Does 2·K⁶·N flops (K²/3 times the useful work) and needs K⁶ values of memory.
    level L6 "L6-kron" {
        threads(256);
        library(kronecker);
    }
}
