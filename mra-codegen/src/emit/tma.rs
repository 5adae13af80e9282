//! PTX helpers for mbarriers and bulk asynchronous copies (the TMA unit of NVIDIA sm_90), shared
//! by `cluster(N)`'s slices and `bulk_copy(1)`'s pipelined tensors. Addresses are converted in
//! PTX, so the code needs no CUDA headers (the exported device code compiles with any CUDA
//! compiler).

/// `mra_smem_addr`, and an mbarrier's init, its one arrival per phase with the bytes the copies
/// will deliver, and a wait for one phase (acquire at CTA scope).
pub(super) fn mbarrier_helpers() -> String {
    let mut s = String::new();
    s += "__device__ __forceinline__ unsigned mra_smem_addr(const void* p) {\n";
    s += "    unsigned r;\n";
    s += "    asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(r) : \"l\"(p));\n";
    s += "    return r;\n}\n";
    s += "__device__ __forceinline__ void mra_mbar_init(void* bar) {\n";
    s += "    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(mra_smem_addr(bar)) : \"memory\");\n";
    s += "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n}\n";
    s += "// The one arrival of a phase, announcing the bytes the copies will deliver.\n";
    s += "__device__ __forceinline__ void mra_mbar_expect(void* bar, unsigned bytes) {\n";
    s += "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(mra_smem_addr(bar)), \"r\"(bytes) : \"memory\");\n}\n";
    s += &mbar_wait("mra_mbar_wait", "");
    s
}

/// `mra_bulk_copy` (global -> shared, completing on an mbarrier) and the proxy fence that orders a
/// thread's generic accesses of shared memory before later bulk copies.
pub(super) fn bulk_load_helpers() -> String {
    let mut s = String::new();
    s += "// `bytes` (a multiple of 16) from global `src` to shared `dst` (both 16-byte aligned).\n";
    s += "__device__ __forceinline__ void mra_bulk_copy(void* dst, const void* src, unsigned bytes, void* bar) {\n";
    s += "    asm volatile(\"{ .reg .u64 g; cvta.to.global.u64 g, %1;\\n\\t\"\n";
    s += "                 \"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [g], %2, [%3]; }\"\n";
    s += "                 :: \"r\"(mra_smem_addr(dst)), \"l\"(src), \"r\"(bytes), \"r\"(mra_smem_addr(bar)) : \"memory\");\n}\n";
    s += "// Orders this thread's generic-proxy accesses of shared memory before later bulk copies.\n";
    s += "__device__ __forceinline__ void mra_fence_proxy_async() { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }\n";
    s
}

/// `mra_prefetch_l2`: a bulk prefetch of global memory into L2 (`cp.async.bulk.prefetch.L2`, sm_90),
/// so that a later bulk copy of the same bytes reads L2.
pub(super) fn bulk_prefetch_helper() -> String {
    let mut s = String::new();
    s += "// Asks L2 for `bytes` at `p` (16-byte aligned, a multiple of 16): the bulk copy that reads it later hits.\n";
    s += "__device__ __forceinline__ void mra_prefetch_l2(const void* p, unsigned bytes) {\n";
    s += "    asm volatile(\"{ .reg .u64 g; cvta.to.global.u64 g, %0; cp.async.bulk.prefetch.L2.global [g], %1; }\" :: \"l\"(p), \"r\"(bytes) : \"memory\");\n}\n";
    s
}

/// The C++ of a function `name(bar, parity)` that spins until that phase of the mbarrier
/// completes; `sem` is the try_wait's semantics qualifier ("" for its default, acquire at CTA
/// scope).
pub(super) fn mbar_wait(name: &str, sem: &str) -> String {
    format!(
        "__device__ __forceinline__ void {name}(void* bar, unsigned parity) {{\n\
         \x20   unsigned done = 0;\n\
         \x20   while (!done) {{\n\
         \x20       asm volatile(\"{{ .reg .pred p; mbarrier.try_wait.parity{sem}.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }}\"\n\
         \x20                    : \"=r\"(done) : \"r\"(mra_smem_addr(bar)), \"r\"(parity) : \"memory\");\n\
         \x20   }}\n}}\n"
    )
}
