//! The FP64 CPU reference of the operations MADNESS and MRA-TTG call
//! ([`mra_codegen::Operation`], plus the rank sum): written from their definitions, not from
//! the kernels' pass structure, so that it checks that structure. Tensors are K³ values
//! `t[(x·K + y)·K + z]`; a matrix M is K×K row-major, M(r, c) = `m[r·K + c]`.

/// C(i,j,l) = Σ_{a,b,c} A(a,b,c) X(a,i) Y(b,j) Z(c,l), one dimension at a time (O(K⁴)).
pub fn general_one(k: usize, a: &[f64], x: &[f64], y: &[f64], z: &[f64]) -> Vec<f64> {
    let t = dir_one(k, a, x, 0);
    let t = dir_one(k, &t, y, 1);
    dir_one(k, &t, z, 2)
}

/// Dimension `d` only: for d = 1, C(a, j, c) = Σ_b A(a, b, c) M(b, j) (MRA-TTG's transform_dir).
pub fn dir_one(k: usize, a: &[f64], m: &[f64], d: usize) -> Vec<f64> {
    assert!(d < 3 && a.len() == k * k * k && m.len() == k * k);
    let at = |i: [usize; 3]| (i[0] * k + i[1]) * k + i[2];
    let mut c = vec![0.0; a.len()];
    for x in 0..k {
        for y in 0..k {
            for z in 0..k {
                let out = [x, y, z];
                let mut s = 0.0;
                for b in 0..k {
                    let mut inp = out;
                    inp[d] = b;
                    s += a[at(inp)] * m[b * k + out[d]];
                }
                c[at(out)] = s;
            }
        }
    }
    c
}

/// Σ_μ s_μ · A ×₁ X_μ ×₂ Y_μ ×₃ Z_μ (MADNESS's operator application for one tensor): `xs`,
/// `ys`, `zs` hold R matrices each, `s` R weights.
pub fn ranksum_one(k: usize, a: &[f64], xs: &[f64], ys: &[f64], zs: &[f64], s: &[f64]) -> Vec<f64> {
    let k2 = k * k;
    let mut c = vec![0.0; a.len()];
    for (mu, w) in s.iter().enumerate() {
        let m = |v: &[f64]| v[mu * k2..(mu + 1) * k2].to_vec();
        let t = general_one(k, a, &m(xs), &m(ys), &m(zs));
        for (ci, ti) in c.iter_mut().zip(&t) {
            *ci += w * ti;
        }
    }
    c
}

/// α·t + β·c0, element by element; β = 0 ignores c0 (NaN there included).
pub fn scale(alpha: f64, t: &[f64], beta: f64, c0: &[f64]) -> Vec<f64> {
    if beta == 0.0 {
        return t.iter().map(|v| alpha * v).collect();
    }
    t.iter().zip(c0).map(|(v, c)| alpha * v + beta * c).collect()
}

/// The K×K identity, row-major.
pub fn identity(k: usize) -> Vec<f64> {
    let mut m = vec![0.0; k * k];
    for i in 0..k {
        m[i * k + i] = 1.0;
    }
    m
}

/// The three matrices a per-dimension kernel takes for `transform_dir(d, m)`: `m` in
/// dimension d, the identity in the others (products by 1 and 0 are exact, so the two others
/// pass the tensor through unchanged).
pub fn dir_matrices(k: usize, m: &[f64], d: usize) -> Vec<f64> {
    let id = identity(k);
    (0..3).flat_map(|p| if p == d { m.to_vec() } else { id.clone() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::general_direct;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, rng: &mut impl Rng) -> Vec<f64> {
        (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
    }

    fn close(x: &[f64], y: &[f64]) -> bool {
        x.iter().zip(y).all(|(p, q)| (p - q).abs() <= 1e-12 * (1.0 + q.abs()))
    }

    #[test]
    fn general_is_the_six_loop_definition_and_the_seed_with_one_matrix() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for k in [1, 2, 3, 5] {
            let a = random(k * k * k, &mut rng);
            let (x, y, z) = (random(k * k, &mut rng), random(k * k, &mut rng), random(k * k, &mut rng));
            assert!(close(&general_one(k, &a, &x, &y, &z), &general_direct(k, &a, &x, &y, &z)), "K={k}");
            // Distinct matrices matter: Y and Z swapped is another result.
            if k > 1 {
                assert!(!close(&general_one(k, &a, &x, &z, &y), &general_direct(k, &a, &x, &y, &z)), "K={k}");
            }
            let mut seed = vec![0.0; a.len()];
            crate::reference::transform_one(k, &a, &x, &mut seed);
            assert!(close(&general_one(k, &a, &x, &x, &x), &seed), "K={k}");
        }
    }

    #[test]
    fn one_direction_changes_only_its_index_and_equals_the_identity_elsewhere() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let k = 4;
        let a = random(k * k * k, &mut rng);
        let m = random(k * k, &mut rng);
        for d in 0..3 {
            let c = dir_one(k, &a, &m, d);
            let mats = dir_matrices(k, &m, d);
            let (x, y, z) = (&mats[..16], &mats[16..32], &mats[32..]);
            assert!(close(&c, &general_direct(k, &a, x, y, z)), "d={d}");
        }
        // d = 1 written out: C(a, j, c) = Σ_b A(a, b, c) M(b, j).
        let c = dir_one(k, &a, &m, 1);
        let want: f64 = (0..k).map(|b| a[(2 * k + b) * k + 3] * m[b * k + 1]).sum();
        assert!((c[(2 * k + 1) * k + 3] - want).abs() < 1e-14);
    }

    #[test]
    fn the_rank_sum_is_the_weighted_sum_of_its_terms_and_beta_zero_ignores_c() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(8);
        let (k, r) = (3, 4);
        let a = random(27, &mut rng);
        let (xs, ys, zs, s) = (random(r * 9, &mut rng), random(r * 9, &mut rng), random(r * 9, &mut rng), random(r, &mut rng));
        let mut want = vec![0.0; 27];
        for mu in 0..r {
            let t = general_direct(k, &a, &xs[mu * 9..][..9], &ys[mu * 9..][..9], &zs[mu * 9..][..9]);
            want.iter_mut().zip(&t).for_each(|(w, v)| *w += s[mu] * v);
        }
        assert!(close(&ranksum_one(k, &a, &xs, &ys, &zs, &s), &want));
        let nan = vec![f64::NAN; 27];
        assert!(scale(2.0, &want, 0.0, &nan).iter().all(|v| v.is_finite()));
        assert_eq!(scale(1.0, &[1.0], 0.5, &[4.0]), vec![3.0]);
    }
}
