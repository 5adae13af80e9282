mra_dsl::schedule! {
    /// The vendor baseline: the three passes as three strided-batched GEMMs over the N tensors
    /// (cuBLAS / hipBLAS), what PyTorch's einsum/bmm comes down to.
    level vendor_3gemm "vendor-3gemm" {
        threads(128);
        library(three_gemm);
    }
}
