//! Random inputs rounded to the element type, with their FP64 CPU reference.

use super::device_bytes::round_to;
use crate::error::Result;
use crate::reference;
use mra_codegen::DType;
use rand::{Rng, SeedableRng};

/// `n` uniform values in [-1, 1), rounded to what `dtype` can hold so that the FP64
/// reference sees exactly the inputs the GPU sees.
pub fn random_inputs(dtype: DType, n: usize, rng: &mut impl Rng) -> Result<Vec<f64>> {
    let mut v = crate::memory::try_vec(n, "the random inputs")?;
    v.extend((0..n).map(|_| {
        let x: f64 = rng.random_range(-1.0..1.0);
        round_to(dtype, x)
    }));
    Ok(v)
}

/// Fresh random inputs for one validation case and their FP64 CPU reference.
pub struct Inputs {
    pub k: u32,
    pub seed: u64,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// The transform of `a` by `b`, computed in FP64 on the CPU.
    pub reference: Vec<f64>,
}

impl Inputs {
    /// Host bytes a validation at (`k`, `nfuncs`) holds at its peak: A and the reference as
    /// f64, then C as downloaded and C converted to f64 (the upload copy of A is freed before):
    /// at most 4 arrays of N·K³ doubles, plus B. `None` if that does not fit in 64 bits.
    pub fn host_bytes(k: u32, nfuncs: usize) -> Option<u64> {
        let k3 = (k as u64).checked_pow(3)?;
        (nfuncs as u64).checked_mul(k3)?.checked_mul(4 * 8)?.checked_add((k as u64).pow(2) * 8)
    }

    /// Uniform values in [-1, 1) from `seed`, rounded to `dtype`; one line, not an abort, where
    /// a memory limit refuses them or their reference.
    pub fn try_random(dtype: DType, k: u32, nfuncs: usize, seed: u64) -> Result<Inputs> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let a = random_inputs(dtype, nfuncs * (k as usize).pow(3), &mut rng)?;
        let b = random_inputs(dtype, (k as usize).pow(2), &mut rng)?;
        let reference = reference::transform_batch(k as usize, &a, &b)?;
        Ok(Inputs { k, seed, a, b, reference })
    }

    /// [`Inputs::try_random`] for tests and other small cases: panics where memory is refused.
    pub fn random(dtype: DType, k: u32, nfuncs: usize, seed: u64) -> Inputs {
        Self::try_random(dtype, k, nfuncs, seed).unwrap_or_else(|e| panic!("{e}"))
    }
}
