//! Errors of the runtime: each one a sentence a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no NVIDIA driver found: could not load libcuda (looked for {tried}); without a GPU, use --emit-src to print the generated source")]
    NoDriver { tried: String },
    #[error("NVRTC not found: could not load libnvrtc (looked for {tried}; install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and put its lib directory on LD_LIBRARY_PATH); --emit-src prints the source without compiling")]
    NoNvrtc { tried: String },
    /// A library that loads but lacks a function we call (cudarc would panic on it).
    #[error("the {what} library {name} is incomplete: it lacks {symbol} ({detail}); point LD_LIBRARY_PATH at a complete installation")]
    BrokenLibrary { what: &'static str, name: String, symbol: &'static str, detail: String },
    #[error("the NVIDIA driver found no CUDA device ({0})")]
    NoDevice(String),
    #[error("CUDA call {call} failed: {message}")]
    Driver { call: &'static str, message: String },
    /// The first line says what went wrong (the compiler's first error): one-line reports
    /// (`validate`'s ERROR lines, `--json`) show only it; the whole log follows.
    #[error("NVRTC could not compile {entry} for {arch}: {}\n{log}", first_error(.log))]
    Compile { entry: String, arch: String, log: String },
    #[error("{what} needs {need_mib:.1} MiB of device memory but only {free_mib:.1} MiB are free; lower -N, -M or -s")]
    OutOfMemory { what: String, need_mib: f64, free_mib: f64 },
    #[error("{what} needs {need_gib:.1} GiB of host memory but only {available_gib:.1} GiB are available ({bound}); lower -N or -K")]
    HostOutOfMemory { what: String, need_gib: f64, available_gib: f64, bound: String },
    #[error("cannot allocate {need_gib:.1} GiB of host memory for {what} (a memory limit or the system refused it)")]
    HostAllocation { what: String, need_gib: f64 },
    #[error("kernel cache at {path}: {source}")]
    Cache { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Plan(#[from] mra_codegen::PlanError),
    #[error("{what}: no block of {threads} threads fits a multiprocessor ({resources}), so every launch would fail; a configuration with fewer threads or less shared memory runs (`mra-bench tune` tries them)")]
    BlockDoesNotFit { what: String, threads: u32, resources: String },
    #[error("{what}: not one cluster of {cluster_blocks} blocks ({threads} threads, {resources} each) fits the device at once (a cluster's blocks must share one GPC), so every launch would fail; a smaller cluster runs (`mra-bench tune` tries them) or another level")]
    ClusterDoesNotFit { what: String, cluster_blocks: u32, threads: u32, resources: String },
    #[error("{0}")]
    Invalid(String),
    /// A signal asked the process to stop (`interrupt`); `main` says so and exits 128 + it.
    #[error("interrupted")]
    Interrupted,
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// The line of a compiler's log that says what went wrong first: the first line holding
/// `error:` (NVRTC's `k.cu(76): error: ...`, clang's `k.hip:76:55: error: ...`), else the first
/// line that is not empty; `no message` for an empty log. A one-line report of a failed compile
/// ends with it rather than with the colon before the log.
pub fn first_error(log: &str) -> &str {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next();
    lines.find(|l| l.contains("error:")).or(first).unwrap_or("no message")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC's log of a syntax error (as NVRTC 13.0 prints it, after the status cudarc names):
    /// the report's first line ends with the compiler's first error, not with a colon.
    #[test]
    fn a_failed_compile_says_its_first_error_on_its_first_line() {
        let log = "NvrtcError(NVRTC_ERROR_COMPILATION)\nmra_l3_regblk_k8_f64.cu(38): error: expected an expression\n            for (int j = 0; j < K; ++j) acc[j] = 0.0 +;\n                                                      ^\n\n1 error detected in the compilation of \"mra_l3_regblk_k8_f64.cu\".\n";
        let e = RuntimeError::Compile { entry: "mra_l3_regblk_k8_f64".into(), arch: "sm_90".into(), log: log.into() }.to_string();
        let first = e.lines().next().unwrap();
        assert_eq!(first, "NVRTC could not compile mra_l3_regblk_k8_f64 for sm_90: mra_l3_regblk_k8_f64.cu(38): error: expected an expression");
        assert!(e.ends_with(log), "the whole log follows: {e}");
        assert_eq!(first_error("clang: warning: x\nk.hip:3:1: error: unknown type name 'y'\n"), "k.hip:3:1: error: unknown type name 'y'");
        assert_eq!(first_error("\n  source contains a NUL byte\n"), "source contains a NUL byte");
        assert_eq!(first_error(""), "no message");
    }
}
