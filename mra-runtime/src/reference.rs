//! The FP64 CPU reference: the same three GEMM passes the levels compute, in plain Rust.
//!
//! Layout (as the seed): a tensor is K³ contiguous values; one pass reads `input` as a K×K²
//! matrix (`input[k·K² + i]`) and writes `out[i·K + j] = Σ_k input[k·K² + i] · B[k·K + j]`.

use rayon::prelude::*;

/// One GEMM pass of order `k`.
pub fn gemm_pass(k: usize, input: &[f64], b: &[f64], out: &mut [f64]) {
    let k2 = k * k;
    debug_assert!(input.len() == k2 * k && out.len() == k2 * k && b.len() == k2);
    out.fill(0.0);
    for kk in 0..k {
        let b_row = &b[kk * k..kk * k + k];
        for i in 0..k2 {
            let a = input[kk * k2 + i];
            let o = &mut out[i * k..i * k + k];
            for (oj, bj) in o.iter_mut().zip(b_row) {
                *oj += a * bj;
            }
        }
    }
}

/// The transform of one tensor: three passes, the mode order cycling back to (i,j,k).
pub fn transform_one(k: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    let mut w0 = vec![0.0; a.len()];
    let mut w1 = vec![0.0; a.len()];
    gemm_pass(k, a, b, &mut w0);
    gemm_pass(k, &w0, b, &mut w1);
    gemm_pass(k, &w1, b, c);
}

/// The transform of a batch of tensors (`a.len() / K³` of them), in parallel over tensors. The
/// result is allocated fallibly: one line, not an abort, where a memory limit refuses it.
pub fn transform_batch(k: usize, a: &[f64], b: &[f64]) -> crate::Result<Vec<f64>> {
    let k3 = k * k * k;
    let mut c = crate::memory::try_vec(a.len(), "the FP64 reference")?;
    c.resize(a.len(), 0.0);
    c.par_chunks_mut(k3)
        .zip(a.par_chunks(k3))
        .for_each(|(c_n, a_n)| transform_one(k, a_n, b, c_n));
    Ok(c)
}

/// The definition, written out: C(i,j,l) = Σ_{a,b,c} A(a,b,c)·B(a,i)·B(b,j)·B(c,l).
/// O(K⁶): only for checking [`transform_one`] at small K.
pub fn transform_direct(k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    general_direct(k, a, b, b, b)
}

/// The definition with a matrix per dimension: C(i,j,l) = Σ_{a,b,c} A(a,b,c)·X(a,i)·Y(b,j)·Z(c,l).
/// O(K⁶): only for checking the references at small K.
pub fn general_direct(k: usize, a: &[f64], x: &[f64], y: &[f64], z: &[f64]) -> Vec<f64> {
    let at = |p: usize, q: usize, r: usize| a[(p * k + q) * k + r];
    let m = |v: &[f64], r: usize, c: usize| v[r * k + c];
    let mut c = vec![0.0; k * k * k];
    for i in 0..k {
        for j in 0..k {
            for l in 0..k {
                let mut s = 0.0;
                for p in 0..k {
                    for q in 0..k {
                        for r in 0..k {
                            s += at(p, q, r) * m(x, p, i) * m(y, q, j) * m(z, r, l);
                        }
                    }
                }
                c[(i * k + j) * k + l] = s;
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, rng: &mut impl Rng) -> Vec<f64> {
        (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
    }

    #[test]
    fn three_passes_equal_the_six_loop_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for k in [1, 2, 3, 5, 6, 8] {
            let a = random(k * k * k, &mut rng);
            let b = random(k * k, &mut rng);
            let mut c = vec![f64::NAN; a.len()];
            transform_one(k, &a, &b, &mut c);
            let d = transform_direct(k, &a, &b);
            for (x, y) in c.iter().zip(&d) {
                assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "K={k}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn identity_b_is_the_identity_transform() {
        let k = 4;
        let mut b = vec![0.0; k * k];
        for i in 0..k {
            b[i * k + i] = 1.0;
        }
        let a: Vec<f64> = (0..k * k * k).map(|x| x as f64).collect();
        assert_eq!(transform_batch(k, &a, &b).unwrap(), a);
    }

    #[test]
    fn a_non_symmetric_b_is_not_mistaken_for_its_transpose() {
        // Guards the index convention: with B ≠ Bᵀ, using B(i,a) instead of B(a,i) must differ.
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let k = 3;
        let a = random(27, &mut rng);
        let b = random(9, &mut rng);
        let bt: Vec<f64> = (0..9).map(|x| b[(x % 3) * 3 + x / 3]).collect();
        let c = transform_batch(k, &a, &b).unwrap();
        let ct = transform_batch(k, &a, &bt).unwrap();
        assert!(c.iter().zip(&ct).any(|(x, y)| (x - y).abs() > 1e-6));
    }
}
