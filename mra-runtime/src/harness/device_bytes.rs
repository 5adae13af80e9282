//! Host f64 values as the device element type's bytes and back, and rounded to what it holds.

use crate::error::Result;
use crate::memory::try_vec;
use mra_codegen::DType;

/// Host values converted to the device element type's bytes (allocated fallibly: one line, not
/// an abort, where a limit refuses them).
pub fn to_device_bytes(dtype: DType, v: &[f64]) -> Result<Vec<u8>> {
    let mut out = try_vec(v.len() * dtype.bytes() as usize, "the inputs in device format")?;
    match dtype {
        DType::F64 => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        DType::F32 => out.extend(v.iter().flat_map(|x| (*x as f32).to_le_bytes())),
        DType::F16 => out.extend(v.iter().flat_map(|x| half::f16::from_f64(*x).to_le_bytes())),
        DType::Bf16 => out.extend(v.iter().flat_map(|x| half::bf16::from_f64(*x).to_le_bytes())),
    }
    Ok(out)
}

/// Device bytes back to f64 values (allocated fallibly).
pub fn from_device_bytes(dtype: DType, b: &[u8]) -> Result<Vec<f64>> {
    let mut out = try_vec(b.len() / dtype.bytes() as usize, "the results as f64")?;
    match dtype {
        DType::F64 => out.extend(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap()))),
        DType::F32 => out.extend(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)),
        DType::F16 => out.extend(b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())),
        DType::Bf16 => out.extend(b.chunks_exact(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())),
    }
    Ok(out)
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
