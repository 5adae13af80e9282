//! Comparing a device result with the CPU FP64 reference.

use serde::Serialize;

/// Errors of one comparison. `max_rel` is max|c − ref| / max|ref| (a norm-wise relative error:
/// element-wise ratios blow up on entries near zero). Any NaN or infinity (an unwritten
/// element of the NaN-poisoned output, say) fails the comparison.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Comparison {
    pub max_abs: f64,
    pub max_rel: f64,
    pub non_finite: usize,
    pub elements: usize,
}

impl Comparison {
    pub fn of(got: &[f64], want: &[f64]) -> Comparison {
        Comparison::of_in(got, want, mra_codegen::DType::F64)
    }

    /// As [`Comparison::of`] for results computed in `dtype`: the error is relative to at least
    /// the dtype's smallest normal number. A result whose elements are all subnormal in `dtype`
    /// (f16 at K = 1 with a small B: C = a·b³ below 6.1e-5) has only a few significant bits;
    /// its error is judged against the dtype's normal range, not against itself.
    pub fn of_in(got: &[f64], want: &[f64], dtype: mra_codegen::DType) -> Comparison {
        assert_eq!(got.len(), want.len(), "result and reference differ in length");
        let mut max_abs = 0.0f64;
        let mut max_ref = 0.0f64;
        let mut non_finite = 0;
        for (g, w) in got.iter().zip(want) {
            if !g.is_finite() {
                non_finite += 1;
                continue;
            }
            max_abs = max_abs.max((g - w).abs());
            max_ref = max_ref.max(w.abs());
        }
        let max_rel = if max_ref > 0.0 { max_abs / max_ref.max(dtype.min_normal()) } else { max_abs };
        Comparison { max_abs, max_rel, non_finite, elements: got.len() }
    }

    pub fn passes(&self, tolerance: f64) -> bool {
        self.non_finite == 0 && self.max_rel < tolerance
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_fails_even_with_zero_error_elsewhere() {
        let c = Comparison::of(&[1.0, f64::NAN], &[1.0, 2.0]);
        assert_eq!(c.non_finite, 1);
        assert!(!c.passes(1e-10));
    }

    #[test]
    fn relative_error_is_normwise() {
        let c = Comparison::of(&[1.0, 4.0 + 4e-11], &[1.0, 4.0]);
        assert!(c.max_rel < 1.1e-11 && c.passes(1e-10), "{c:?}");
        assert!(!Comparison::of(&[1.1], &[1.0]).passes(1e-10));
    }

    /// f16 at K = 1 with all of C in the subnormal range (CI seed 6254024511530505004 on the
    /// gfx1201 emulator: max|C| 2.7e-6, error 1.9e-8, one f16 subnormal step is 6e-8).
    #[test]
    fn subnormal_results_are_judged_against_the_normal_range() {
        use mra_codegen::DType;
        let want = [2.7e-6, -1.3e-6, 0.4e-6];
        let got = [2.7e-6 + 1.9e-8, -1.3e-6, 0.4e-6];
        assert!(!Comparison::of(&got, &want).passes(DType::F16.tolerance()), "relative to itself: 0.7% > 0.3%");
        assert!(Comparison::of_in(&got, &want, DType::F16).passes(DType::F16.tolerance()));
        // In the normal range nothing changes: a 1% error still fails in f16 ...
        assert!(!Comparison::of_in(&[1.01, 0.5], &[1.0, 0.5], DType::F16).passes(DType::F16.tolerance()));
        // ... and in f64 the same tiny values are held to 1e-10.
        assert!(!Comparison::of_in(&got, &want, DType::F64).passes(DType::F64.tolerance()));
    }
}
