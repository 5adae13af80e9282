//! The generated HIP reaches the hardware only through the named functions of its prelude
//! (`mra_thread_id()`, `mra_block_id()`, `mra_sync_block()`, `mra_mfma_f64_16x16x4(...)`, ...):
//! after the prelude there is no AMDGPU built-in, so a CPU prelude can replace the prelude alone.

use mra_codegen::emit::{PRELUDE_BEGIN, PRELUDE_END};
use mra_codegen::{arch::ARCHS, levels, DType, Request, Vendor};

#[test]
fn the_hip_kernel_body_uses_only_prelude_functions() {
    let mut checked = 0;
    for level in levels::all() {
        for arch in ARCHS.iter().filter(|a| a.vendor == Vendor::Amd) {
            for k in [1, 5, 8, 13, 16, 32] {
                for &dtype in DType::ALL {
                    let Ok(kernel) = mra_codegen::generate(&level, Request { k, arch, dtype }) else { continue };
                    let src = &kernel.source;
                    assert_eq!(src.matches(PRELUDE_BEGIN).count(), 1, "{} {arch}", kernel.entry);
                    assert_eq!(src.matches(PRELUDE_END).count(), 1, "{} {arch}", kernel.entry);
                    let body = &src[src.find(PRELUDE_END).unwrap()..];
                    for hardware in ["__builtin_amdgcn", "__syncthreads", "threadIdx", "blockIdx", "__ockl", "__shfl"] {
                        assert!(!body.contains(hardware), "{} {arch} {dtype}: `{hardware}` after the prelude", kernel.entry);
                    }
                    if !kernel.entry.is_empty() {
                        assert!(body.contains("mra_thread_id()"), "{} {arch}", kernel.entry);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} kernels checked");
}

#[test]
fn cuda_source_has_no_prelude_markers() {
    let arch = mra_codegen::arch::find("sm_90").unwrap();
    let kernel = mra_codegen::generate(&levels::find("4").unwrap(), Request { k: 8, arch, dtype: DType::F64 }).unwrap();
    assert!(!kernel.source.contains(PRELUDE_BEGIN));
}
