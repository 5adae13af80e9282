//! `fuse_k(N)`: how a tile's k-steps are grouped into matrix instructions several steps deep.

use super::transform::TransformPlan;

impl TransformPlan {
    /// `fuse_k(N)`: a tile's `k_steps` k-steps as runs of instructions: `count` instructions
    /// `depth` steps deep from step `start` on. As many N deep as fit, then what is left at the
    /// largest power of two that fits (N = 4, 7 steps: one 4 deep, one 2, one 1), so the
    /// contraction is never padded past the shallow instruction's k.
    pub fn k_step_groups(&self, k_steps: u32) -> Vec<KStepGroup> {
        k_step_groups(k_steps, self.fuse_k)
    }
}

/// [`TransformPlan::k_step_groups`] for `fuse_k(n)`.
pub fn k_step_groups(k_steps: u32, n: u32) -> Vec<KStepGroup> {
    let n = n.max(1);
    let mut groups = Vec::new();
    if k_steps / n > 0 {
        groups.push(KStepGroup { start: 0, depth: n, count: k_steps / n });
    }
    let (mut start, mut left) = (k_steps / n * n, k_steps % n);
    let mut depth = n / 2;
    while left > 0 {
        if left >= depth {
            groups.push(KStepGroup { start, depth, count: 1 });
            start += depth;
            left -= depth;
        }
        depth = (depth / 2).max(1);
    }
    groups
}

/// See [`TransformPlan::k_step_groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KStepGroup {
    pub start: u32,
    pub depth: u32,
    pub count: u32,
}
