//! Host f64 values as the device element type's bytes and back, and rounded to what it holds.

use mra_codegen::DType;

/// Host values converted to the device element type's bytes.
pub fn to_device_bytes(dtype: DType, v: &[f64]) -> Vec<u8> {
    match dtype {
        DType::F64 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DType::F32 => v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect(),
        DType::F16 => v.iter().flat_map(|x| half::f16::from_f64(*x).to_le_bytes()).collect(),
        DType::Bf16 => v.iter().flat_map(|x| half::bf16::from_f64(*x).to_le_bytes()).collect(),
    }
}

/// Device bytes back to f64 values.
pub fn from_device_bytes(dtype: DType, b: &[u8]) -> Vec<f64> {
    match dtype {
        DType::F64 => b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        DType::F32 => b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect(),
        DType::F16 => b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64()).collect(),
        DType::Bf16 => b.chunks_exact(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64()).collect(),
    }
}

/// `x` rounded to what `dtype` holds.
pub fn round_to(dtype: DType, x: f64) -> f64 {
    match dtype {
        DType::F64 => x,
        DType::F32 => x as f32 as f64,
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::Bf16 => half::bf16::from_f64(x).to_f64(),
    }
}
