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
        let max_rel = if max_ref > 0.0 { max_abs / max_ref } else { max_abs };
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
}
