//! The operation a kernel computes. The seed's is C_n = A_n ×₁ B ×₂ B ×₃ B over contiguous
//! tensors; MADNESS and MRA-TTG also call a matrix per dimension (`general_transform`), one
//! dimension only (`transform_dir`, which the runtime runs as a matrix per dimension with the
//! identity in the two others), C = α·T(A) + β·C, and batches that are strided or arrays of
//! pointers. The operation belongs to the algorithm, not the schedule: a level's schedule
//! lowers every operation its structure allows ([`crate::Plan`] refuses the others).

use serde::Serialize;

/// The matrices the three passes contract with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matrices {
    /// One K×K matrix B for all three dimensions (`b` holds K² values).
    #[default]
    One,
    /// X, Y, Z for dimensions 0, 1, 2 (`b` holds 3·K² values: X, then Y, then Z).
    PerDim,
    /// The rank sum of operator application: C = Σ_μ s_μ · A ×₁ X_μ ×₂ Y_μ ×₃ Z_μ over
    /// μ < R (`ranks`, a kernel parameter). `b` holds, for μ = 0 .. R - 1, X_μ, Y_μ, Z_μ
    /// (3·K² values each), then the R weights s_μ.
    RankSum,
}

/// Where tensor n of a batch lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// At n·K³ elements from the batch's start.
    #[default]
    Contiguous,
    /// At n·stride elements (stride ≥ K³; `a_stride` and `c_stride` are kernel parameters).
    Strided,
    /// At the address held in element n of a device array of pointers (one for A, one for C).
    Pointers,
}

/// What a kernel computes; [`Operation::SEED`] is the seed benchmark's operation and its
/// kernels are exactly those emitted before operations existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Operation {
    pub matrices: Matrices,
    pub layout: Layout,
    /// C = α·T(A) + β·C (`alpha`, `beta` are kernel parameters; β = 0 does not read C).
    pub scaled: bool,
}

impl Operation {
    /// The seed's operation: one B, contiguous tensors, C = T(A).
    pub const SEED: Operation = Operation { matrices: Matrices::One, layout: Layout::Contiguous, scaled: false };

    pub fn is_seed(&self) -> bool {
        *self == Self::SEED
    }

    /// Elements of `b` a launch reads: K², 3·K², or for a rank sum of `ranks` terms
    /// `ranks`·(3·K² + 1).
    pub fn b_elems(&self, k: u32, ranks: usize) -> usize {
        let k2 = (k * k) as usize;
        match self.matrices {
            Matrices::One => k2,
            Matrices::PerDim => 3 * k2,
            Matrices::RankSum => ranks * (3 * k2 + 1),
        }
    }

    /// The part of a kernel's name that says its operation: empty for the seed's, else
    /// `_op` and one letter per feature (`x`: per-dimension matrices, `s`/`p`: strided /
    /// pointer batch, `ab`: α and β), so kernels of different operations share a module.
    pub fn suffix(&self) -> String {
        if self.is_seed() {
            return String::new();
        }
        let mut s = "_op".to_string();
        match self.matrices {
            Matrices::One => {}
            Matrices::PerDim => s.push('x'),
            Matrices::RankSum => s.push('r'),
        }
        match self.layout {
            Layout::Contiguous => {}
            Layout::Strided => s.push('s'),
            Layout::Pointers => s.push('p'),
        }
        if self.scaled {
            s += "ab";
        }
        s
    }

    /// The operation's name in the tuned defaults, where entries of its own take precedence
    /// over the transform's (`ranksum`, `general` for a matrix per dimension and `dir`); empty
    /// for one matrix, whose kernels are the transform's with α and β.
    pub fn tuned_as(&self) -> &'static str {
        match self.matrices {
            Matrices::RankSum => "ranksum",
            Matrices::PerDim => "general",
            Matrices::One => "",
        }
    }

    /// One line for humans: `per-dimension matrices, strided, C = αT(A) + βC`.
    pub fn describe(&self) -> String {
        let mut parts = vec![match self.matrices {
            Matrices::One => "one matrix",
            Matrices::PerDim => "a matrix per dimension",
            Matrices::RankSum => "a rank sum of matrix triples",
        }];
        parts.push(match self.layout {
            Layout::Contiguous => "contiguous tensors",
            Layout::Strided => "strided tensors",
            Layout::Pointers => "arrays of tensor pointers",
        });
        if self.scaled {
            parts.push("C = alpha T(A) + beta C");
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_has_no_suffix_and_every_other_operation_a_distinct_one() {
        assert_eq!(Operation::SEED.suffix(), "");
        let mut seen = std::collections::BTreeSet::new();
        for matrices in [Matrices::One, Matrices::PerDim, Matrices::RankSum] {
            for layout in [Layout::Contiguous, Layout::Strided, Layout::Pointers] {
                for scaled in [false, true] {
                    assert!(seen.insert(Operation { matrices, layout, scaled }.suffix()));
                }
            }
        }
        assert_eq!(Operation { matrices: Matrices::PerDim, layout: Layout::Pointers, scaled: true }.suffix(), "_opxpab");
    }
}
