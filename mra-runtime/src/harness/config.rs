//! The harness parameters (the seed's -N, -M, -n, -s, -r, with --warmup and --stream-data)
//! and their bounds.

use crate::error::{Result, RuntimeError};
use crate::warmup::Warmup;

/// `-M auto`: a launch's grid is what the device holds of the kernel at once (the driver's
/// resident blocks per SM/CU × SMs/CUs, whole clusters), at most the blocks there is work for:
/// a persistent grid walking the batch. Resolved per kernel by [`HarnessConfig::with_grid`].
pub const AUTO_BLOCKS: usize = usize::MAX;

/// Upper bounds of -n, -s and -r (see [`HarnessConfig::check`]).
pub const MAX_TASKS: usize = 1_000_000_000;
pub const MAX_STREAMS: usize = 1024;
pub const MAX_REPS: usize = 1_000_000;

/// The harness parameters (the seed's -N, -M, -n, -s, -r, and our --warmup).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct HarnessConfig {
    pub nfuncs: usize,
    pub max_blocks: usize,
    pub tasks: usize,
    pub streams: usize,
    pub reps: usize,
    /// The untimed repetitions before the timed ones (`--warmup`).
    #[serde(skip)]
    pub warmup: Warmup,
    /// Whether the streams share one A and C (the seed's harness) or each has its own
    /// (`--stream-data`).
    #[serde(skip)]
    pub stream_data: StreamData,
}

/// The data the harness's streams transform. The seed's harness gives every stream the same
/// A and C, so tasks running side by side read (and write) the same lines and can hit in L2
/// where N·K³ values in and out fit in or near it: the copy floor then runs above the DRAM
/// rate. A code whose streams transform different functions never sees that; `Private` gives
/// each stream its own A and C to measure what it does see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamData {
    /// One A and one C for every stream (the seed's harness).
    #[default]
    Shared,
    /// An A and a C per stream, each stream's A holding the same values.
    Private,
}

impl StreamData {
    /// `shared` or `private` (the command line's spelling).
    pub fn parse(s: &str) -> std::result::Result<StreamData, String> {
        match s {
            "shared" => Ok(StreamData::Shared),
            "private" => Ok(StreamData::Private),
            _ => Err(format!("'{s}' is not shared or private (shared: every stream transforms the same A into the same C, the seed's harness; private: each stream has its own)")),
        }
    }

    /// How many copies of A and of C a configuration with `streams` streams holds.
    pub fn copies(self, streams: usize) -> usize {
        match self {
            StreamData::Shared => 1,
            StreamData::Private => streams,
        }
    }
}

impl HarnessConfig {
    /// Blocks per launch: min(N, M) (with `-M auto`, N until [`HarnessConfig::with_grid`]).
    pub fn nblocks(&self) -> usize {
        self.nfuncs.min(self.max_blocks)
    }

    /// Whether `-M auto` is still to be resolved for a kernel.
    pub fn auto_grid(&self) -> bool {
        self.max_blocks == AUTO_BLOCKS
    }

    /// This configuration with `-M auto` replaced by `resident` blocks (what the device holds of
    /// the kernel at once; `None`: the backend cannot tell, and `fallback` blocks are used).
    pub fn with_grid(&self, resident: Option<usize>, fallback: usize) -> HarnessConfig {
        if !self.auto_grid() {
            return *self;
        }
        HarnessConfig { max_blocks: resident.unwrap_or(fallback).max(1), ..*self }
    }

    /// `-M` as the user reads it: a number, or `auto`.
    pub fn describe_max_blocks(&self) -> String {
        if self.auto_grid() { "auto".into() } else { self.max_blocks.to_string() }
    }

    pub fn check(&self) -> Result<()> {
        let bad = |what: &str| Err(RuntimeError::Invalid(what.to_string()));
        if self.nfuncs == 0 {
            return bad("-N must be at least 1 (the number of tensors per task)");
        }
        if self.nfuncs > i32::MAX as usize {
            return bad("-N must fit in a 32-bit int");
        }
        if self.max_blocks == 0 {
            return bad("-M must be at least 1 (the maximum number of blocks per launch)");
        }
        if self.tasks == 0 {
            return bad("-n must be at least 1 (tasks per timed repetition)");
        }
        if self.streams == 0 {
            return bad("-s must be at least 1 (streams)");
        }
        if self.reps == 0 {
            return bad("-r must be at least 1 (timed repetitions)");
        }
        // Upper bounds far above any real run, so that no size or count computed from them wraps.
        if self.max_blocks > i32::MAX as usize && !self.auto_grid() {
            return bad("-M must fit in a 32-bit int (it is a launch's grid size)");
        }
        if self.tasks > MAX_TASKS {
            return Err(RuntimeError::Invalid(format!("-n must be at most {MAX_TASKS} (tasks per timed repetition)")));
        }
        if self.streams > MAX_STREAMS {
            return Err(RuntimeError::Invalid(format!("-s must be at most {MAX_STREAMS} (streams)")));
        }
        if self.reps > MAX_REPS {
            return Err(RuntimeError::Invalid(format!("-r must be at most {MAX_REPS} (timed repetitions)")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_data_parses_its_two_names_and_refuses_others() {
        assert_eq!(StreamData::parse("shared"), Ok(StreamData::Shared));
        assert_eq!(StreamData::parse("private"), Ok(StreamData::Private));
        assert!(StreamData::parse("own").unwrap_err().contains("not shared or private"));
        assert_eq!(StreamData::default(), StreamData::Shared, "the seed's harness by default");
    }
}
