//! Why a tensorized level cannot run on (arch, dtype), worded so that it blames the right party:
//! the hardware (the arch has no matrix cores for that type) or this tool (the arch has them,
//! but the level has no lowering onto them), and always saying what runs instead.

use crate::arch::{Arch, Vendor, ARCHS};
use crate::dtype::DType;
use crate::instr::{matrix_instr, wmma_instr};
use crate::request::Request;

/// Does the hardware of `arch` have matrix cores taking `dtype` inputs, whether or not this
/// tool lowers to them? From the vendors' ISA guides: NVIDIA sm_80+ tensor cores take f64
/// (DMMA), f16 and bf16 (HMMA), but f32 only as TF32, which is not f32; AMD CDNA2/3 (gfx90a,
/// gfx942) MFMA takes f64, f32, f16 and bf16; RDNA3/4 WMMA takes f16, bf16 and integers only.
pub fn hardware_has(arch: &Arch, dtype: DType) -> bool {
    let cdna = arch.family == "CDNA";
    match (arch.vendor, dtype) {
        (Vendor::Nvidia, DType::F64 | DType::F16 | DType::Bf16) => true,
        (Vendor::Nvidia, DType::F32) => false,
        (Vendor::Amd, DType::F64 | DType::F32) => cdna,
        (Vendor::Amd, DType::F16 | DType::Bf16) => true,
    }
}

/// The message of [`crate::PlanError::NoMatrixCore`]. `wmma`: the level tensorizes onto
/// NVIDIA's `nvcuda::wmma` API rather than onto the matrix instructions directly.
pub fn explain(level: &str, arch: &'static Arch, dtype: DType, k: u32, wmma: bool) -> String {
    let lowers_to = |a: &Arch| if wmma { wmma_instr(a, dtype) } else { matrix_instr(a, dtype) };
    let archs_with_lowering: Vec<&str> = ARCHS.iter().filter(|a| lowers_to(a).is_some()).map(|a| a.name).collect();
    let onto = if wmma { "NVIDIA's nvcuda::wmma f64 fragments" } else { "f64 DMMA/MFMA and RDNA f16/bf16 WMMA instructions" };
    let reason = if archs_with_lowering.is_empty() {
        // Nowhere: the tool's limit first, whatever the hardware.
        format!("level {level} has no {dtype} lowering in this tool on any arch (it is written for {onto})")
    } else if hardware_has(arch, dtype) {
        format!(
            "{} has {dtype} matrix cores, but level {level} has no {dtype} lowering for them in this tool; it runs in {dtype} on {}",
            arch.name,
            archs_with_lowering.join(", ")
        )
    } else {
        format!("level {level} needs {dtype} matrix cores, which {} does not have; it runs in {dtype} on {}", arch.name, archs_with_lowering.join(", "))
    };
    format!("{reason}; {}", instead(arch, dtype, k))
}

/// What does run on `arch` in `dtype` at `k`: `use L1-global, L3-regblk for f32 on sm_90`.
fn instead(arch: &'static Arch, dtype: DType, k: u32) -> String {
    let runs: Vec<String> = crate::levels::all()
        .into_iter()
        .filter(|s| s.is_transform() && s.plan(Request { k, arch, dtype }).is_ok())
        .map(|s| s.name)
        .collect();
    if runs.is_empty() {
        let other: Vec<&str> = DType::ALL
            .iter()
            .filter(|&&d| crate::levels::all().iter().any(|s| s.is_transform() && s.plan(Request { k, arch, dtype: d }).is_ok()))
            .map(|d| d.name())
            .collect();
        format!("no level runs {dtype} on {} at K={k} (types that run there: {})", arch.name, other.join(", "))
    } else {
        format!("use {} for {dtype} on {}", runs.join(", "), arch.name)
    }
}

#[cfg(test)]
mod tests {
    use crate::{arch, levels, Request};

    fn refusal(level: &str, arch_name: &str, dtype: crate::DType) -> String {
        let a = arch::find(arch_name).unwrap();
        levels::find(level).unwrap().plan(Request { k: 16, arch: a, dtype }).unwrap_err().to_string()
    }

    #[test]
    fn blames_the_tool_where_the_hardware_has_the_cores() {
        let e = refusal("wmma", "gfx90a", crate::DType::F64);
        assert!(e.contains("gfx90a has f64 matrix cores, but level wmma has no f64 lowering"), "{e}");
        assert!(e.contains("use ") && e.contains("L4-mma") && e.ends_with("for f64 on gfx90a"), "{e}");
        let e = refusal("wmma", "gfx1100", crate::DType::F16);
        assert!(e.contains("level wmma has no f16 lowering in this tool on any arch") && !e.contains("does not have"), "{e}");
        assert!(e.contains("use L4-mma"), "{e}");
        // gfx90a's MFMA takes f16 (v_mfma_f32_16x16x16f16), which L4 does not lower to.
        let e = refusal("L4", "gfx90a", crate::DType::F16);
        assert!(e.contains("gfx90a has f16 matrix cores, but level L4-mma has no f16 lowering"), "{e}");
    }

    #[test]
    fn blames_the_hardware_where_it_lacks_the_cores_and_never_ends_in_an_empty_list() {
        let e = refusal("L4", "gfx1100", crate::DType::F64);
        assert!(e.contains("needs f64 matrix cores, which gfx1100 does not have"), "{e}");
        let e = refusal("L4", "sm_90", crate::DType::F32);
        assert!(e.contains("level L4-mma has no f32 lowering in this tool on any arch"), "{e}");
        assert!(e.contains("use L1-global"), "{e}");
        assert!(!e.contains(": ;") && !e.trim_end().ends_with(':'), "{e}");
    }

    #[test]
    fn no_refusal_ends_in_an_empty_list() {
        for s in levels::all() {
            for a in arch::ARCHS {
                for &dtype in crate::DType::ALL {
                    for k in [1, 7, 16, 24, 32] {
                        if let Err(e) = s.plan(Request { k, arch: a, dtype }) {
                            let e = e.to_string();
                            for empty in [": ;", ": )", "()", ", ;", "on ;", "use  for"] {
                                assert!(!e.contains(empty), "{e}");
                            }
                            assert!(!e.trim_end().ends_with(':') && !e.trim_end().ends_with("on"), "{e}");
                        }
                    }
                }
            }
        }
    }
}
