//! Element types a kernel can be generated for.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F64,
    F32,
}

impl DType {
    pub const ALL: &'static [DType] = &[DType::F64, DType::F32];

    pub fn bytes(self) -> u32 {
        match self {
            DType::F64 => 8,
            DType::F32 => 4,
        }
    }

    /// The C++ scalar type.
    pub fn cpp(self) -> &'static str {
        match self {
            DType::F64 => "double",
            DType::F32 => "float",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
        }
    }

    /// The C++ literal for zero of this type.
    pub fn zero(self) -> &'static str {
        match self {
            DType::F64 => "0.0",
            DType::F32 => "0.0f",
        }
    }

    /// Largest max-relative error (max |c - ref| / max |ref|) a correct kernel stays under,
    /// against the FP64 CPU reference. FP64: the seed's bound. FP32: K³ terms accumulated in
    /// three rounds of K-term dot products, each rounding ~K·2^-24; 1e-4 leaves margin to K=32.
    pub fn tolerance(self) -> f64 {
        match self {
            DType::F64 => 1e-10,
            DType::F32 => 1e-4,
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        match s.to_ascii_lowercase().as_str() {
            "f64" | "double" | "fp64" => Some(DType::F64),
            "f32" | "float" | "fp32" => Some(DType::F32),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
