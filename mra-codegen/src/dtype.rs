//! Element types a kernel can be generated for.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F64,
    F32,
    /// IEEE half precision: a matrix-core input type (RDNA WMMA), accumulated in f32.
    F16,
    /// bfloat16: a matrix-core input type (RDNA WMMA), accumulated in f32.
    Bf16,
}

impl DType {
    pub const ALL: &'static [DType] = &[DType::F64, DType::F32, DType::F16, DType::Bf16];

    pub fn bytes(self) -> u32 {
        match self {
            DType::F64 => 8,
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }

    /// The C++ type of an element in memory. bf16 is kept as its raw 16 bits (`unsigned
    /// short`): the RDNA WMMA built-ins take bf16 operands as 16-bit integers.
    pub fn cpp(self) -> &'static str {
        match self {
            DType::F64 => "double",
            DType::F32 => "float",
            DType::F16 => "_Float16",
            DType::Bf16 => "unsigned short",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
        }
    }

    /// The C++ literal for zero of this type.
    pub fn zero(self) -> &'static str {
        match self {
            DType::F64 => "0.0",
            DType::F32 => "0.0f",
            DType::F16 => "(_Float16)0.0f",
            DType::Bf16 => "(unsigned short)0",
        }
    }

    /// Half-width types are matrix-core inputs only: no thread-mapped arithmetic is generated
    /// for them, and they accumulate in f32 inside the instruction.
    pub fn is_matrix_input(self) -> bool {
        matches!(self, DType::F16 | DType::Bf16)
    }

    /// Largest max-relative error (max |c - ref| / max |ref|) a correct kernel stays under,
    /// against the FP64 CPU reference on the same (rounded) inputs. FP64: the seed's bound.
    /// FP32: three rounds of K-term dot products, each rounding ~K·2^-24; 1e-4 leaves margin to
    /// K=32. f16/bf16: each pass's output is rounded to the storage type (2^-11, 2^-8 relative)
    /// and the rounding grows through the next passes; the CPU model of the tiled WMMA pass with
    /// that rounding (simulate::tests) reaches 6.8e-4 (f16) and 5.3e-3 (bf16) for K in 1..32,
    /// under a third of these bounds. Not yet confirmed on AMD hardware.
    /// The smallest positive normal number: below it a value keeps fewer significant bits, so a
    /// result that small cannot be held to `tolerance` relative to itself.
    pub fn min_normal(self) -> f64 {
        match self {
            DType::F64 => f64::MIN_POSITIVE,
            DType::F32 => f32::MIN_POSITIVE as f64,
            DType::F16 => 6.103515625e-5, // 2^-14
            DType::Bf16 => f32::MIN_POSITIVE as f64, // bf16 has f32's exponent range
        }
    }

    pub fn tolerance(self) -> f64 {
        match self {
            DType::F64 => 1e-10,
            DType::F32 => 1e-4,
            DType::F16 => 3e-3,
            DType::Bf16 => 2.5e-2,
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        match s.to_ascii_lowercase().as_str() {
            "f64" | "double" | "fp64" => Some(DType::F64),
            "f32" | "float" | "fp32" => Some(DType::F32),
            "f16" | "half" | "fp16" => Some(DType::F16),
            "bf16" | "bfloat16" => Some(DType::Bf16),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
