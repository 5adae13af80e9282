//! `mra-bench transform`: your own tensors from .npy files.

use crate::cli::TransformArgs;
use crate::select::CmdResult;

pub fn run(_args: &TransformArgs) -> CmdResult {
    Err("transform: not implemented in this build".into())
}
