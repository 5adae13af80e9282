//! The operations MADNESS and MRA-TTG call besides the seed's transform, on host data, through
//! a [`Transformer`] made with [`Transformer::with_operation`]: a matrix per dimension
//! (`general_transform`), one direction (`transform_dir`), the rank sum of operator application,
//! and C = α·T(A) + β·C0 for each.
//!
//! ```
//! use mra_codegen::{DType, Layout, Matrices, Operation};
//! use mra_runtime::transformer::{Target, Transformer};
//! use mra_runtime::transformer_op::OpMatrices;
//! // K = 2, one tensor, dimension 1 only: C(a, j, c) = sum_b A(a, b, c) M(b, j).
//! let a: Vec<f64> = (0..8).map(|x| x as f64).collect();
//! let m = [0.0, 1.0, 1.0, 0.0]; // swaps the two values of index b
//! let op = Operation { matrices: Matrices::PerDim, layout: Layout::Contiguous, scaled: true };
//! let t = Transformer::with_operation(2, "default", DType::F64, Target::Reference, op)?;
//! let c = t.apply_op(&a, OpMatrices::Dir(&m, 1), 1.0, 0.0, None)?;
//! assert_eq!(c, [2.0, 3.0, 0.0, 1.0, 6.0, 7.0, 4.0, 5.0]);
//! # Ok::<(), mra_runtime::RuntimeError>(())
//! ```

use crate::error::Result;
use crate::harness::op_case::{rank_sum_b, run_host};
use crate::reference_op as r;
use crate::transformer::{check_shapes, invalid, Element, Engine, Transformer};
use mra_codegen::Matrices;

/// The matrices of one application, row-major K×K each.
#[derive(Clone, Copy, Debug)]
pub enum OpMatrices<'a, T> {
    /// One matrix for all three dimensions (the seed's transform, with α and β).
    One(&'a [T]),
    /// X, Y, Z for dimensions 0, 1, 2 (MADNESS's `general_transform`).
    PerDim(&'a [T], &'a [T], &'a [T]),
    /// Dimension `dim` (0, 1, 2) only (MRA-TTG's `transform_dir`).
    Dir(&'a [T], usize),
    /// Σ_μ s_μ · A ×₁ X_μ ×₂ Y_μ ×₃ Z_μ: `x`, `y`, `z` hold R matrices each (R×K×K), `weights` R.
    RankSum { x: &'a [T], y: &'a [T], z: &'a [T], weights: &'a [T] },
}

impl<T: Element> OpMatrices<'_, T> {
    /// The kind of kernel this application needs.
    fn kind(&self) -> Matrices {
        match self {
            OpMatrices::One(_) => Matrices::One,
            OpMatrices::PerDim(..) | OpMatrices::Dir(..) => Matrices::PerDim,
            OpMatrices::RankSum { .. } => Matrices::RankSum,
        }
    }

    /// The matrices as f64, checked against K: (the kernel's `b`, the rank sum's terms).
    fn packed(&self, k: usize) -> Result<(Vec<f64>, usize)> {
        let k2 = k * k;
        let f64s = |m: &[T]| m.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        let square = |what: &str, m: &[T]| -> Result<Vec<f64>> {
            if m.len() != k2 {
                return Err(invalid(format!("{what} has {} elements; a K x K matrix for K = {k} has {k2}", m.len())));
            }
            Ok(f64s(m))
        };
        Ok(match *self {
            OpMatrices::One(m) => (square("B", m)?, 0),
            OpMatrices::PerDim(x, y, z) => ([square("X", x)?, square("Y", y)?, square("Z", z)?].concat(), 0),
            OpMatrices::Dir(m, dim) if dim < 3 => (r::dir_matrices(k, &square("M", m)?, dim), 0),
            OpMatrices::Dir(_, dim) => return Err(invalid(format!("direction {dim}: a tensor has dimensions 0, 1 and 2"))),
            OpMatrices::RankSum { x, y, z, weights } => {
                let ranks = weights.len();
                if ranks == 0 {
                    return Err(invalid("a rank sum needs at least one term (weights is empty)".into()));
                }
                for (what, m) in [("X", x), ("Y", y), ("Z", z)] {
                    if m.len() != ranks * k2 {
                        return Err(invalid(format!("{what} has {} elements; {ranks} terms (the weights) of K x K for K = {k} are {}", m.len(), ranks * k2)));
                    }
                }
                (rank_sum_b(k, &f64s(x), &f64s(y), &f64s(z), &f64s(weights)), ranks)
            }
        })
    }
}

impl Transformer {
    /// C = α·T(A) + β·`c0` for every tensor of `a` (N·K³ elements, N ≥ 1), T as `m` says; `c0`
    /// (N·K³) is needed where β ≠ 0 and not read where β = 0. The transformer must have been
    /// made for `m`'s kind of operation ([`Transformer::with_operation`]).
    pub fn apply_op<T: Element>(&self, a: &[T], m: OpMatrices<'_, T>, alpha: f64, beta: f64, c0: Option<&[T]>) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(invalid(format!("this transformer computes in {}, but the data is {}", self.dtype, T::DTYPE)));
        }
        let kind = m.kind();
        let fits = kind == self.op.matrices && (self.op.scaled || (alpha == 1.0 && beta == 0.0));
        if !fits {
            return Err(invalid(format!("this transformer computes {}; the matrices given are for another operation", self.op.describe())));
        }
        let k = self.k as usize;
        let nfuncs = check_shapes(self.k, a.len(), k * k)?;
        let (b, ranks) = m.packed(k)?;
        let c0: Option<Vec<f64>> = match c0 {
            Some(c) if beta != 0.0 && c.len() != a.len() => return Err(invalid(format!("C0 has {} elements; A has {}", c.len(), a.len()))),
            Some(c) if beta != 0.0 => Some(c.iter().map(|x| x.to_f64()).collect()),
            None if beta != 0.0 => return Err(invalid(format!("beta = {beta} accumulates into C0: give it"))),
            _ => None,
        };
        let mut a64 = crate::memory::try_vec(a.len(), "the tensors as f64")?;
        a64.extend(a.iter().map(|x| x.to_f64()));
        let c = match &self.engine {
            Engine::Reference => reference(k, &a64, &m, &b, alpha, beta, c0.as_deref()),
            Engine::Cuda(e) => run_host(&e.0.gpu, &e.1, nfuncs, &a64, &b, c0.as_deref(), alpha, beta, ranks, self.max_blocks)?,
            Engine::Hip(e) => run_host(&e.0.gpu, &e.1, nfuncs, &a64, &b, c0.as_deref(), alpha, beta, ranks, self.max_blocks)?,
            Engine::Emulate(e) => run_host(&e.0.gpu, &e.1, nfuncs, &a64, &b, c0.as_deref(), alpha, beta, ranks, self.max_blocks)?,
        };
        let mut out = crate::memory::try_vec(c.len(), "the transformed tensors")?;
        out.extend(c.into_iter().map(T::from_f64));
        Ok(out)
    }
}

/// The FP64 reference of one application, tensor by tensor from the definitions.
fn reference<T: Element>(k: usize, a: &[f64], m: &OpMatrices<'_, T>, b: &[f64], alpha: f64, beta: f64, c0: Option<&[f64]>) -> Vec<f64> {
    use rayon::prelude::*;
    let (k2, k3) = (k * k, k * k * k);
    let f = |v: &[T]| v.iter().map(|e| e.to_f64()).collect::<Vec<f64>>();
    let terms = match *m {
        OpMatrices::RankSum { x, y, z, weights } => Some((f(x), f(y), f(z), f(weights))),
        _ => None,
    };
    let one = |t: &[f64]| -> Vec<f64> {
        match (m, &terms) {
            (OpMatrices::One(_), _) => r::general_one(k, t, b, b, b),
            (OpMatrices::Dir(_, dim), _) => r::dir_one(k, t, &b[dim * k2..][..k2], *dim),
            (_, Some((x, y, z, w))) => r::ranksum_one(k, t, x, y, z, w),
            _ => r::general_one(k, t, &b[..k2], &b[k2..2 * k2], &b[2 * k2..]),
        }
    };
    let t: Vec<f64> = a.par_chunks(k3).flat_map_iter(one).collect();
    r::scale(alpha, &t, beta, c0.unwrap_or(&[]))
}
