//! The command line: the seed's flags (-K -N -M -n -r -s -l) plus the subcommands.

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "mra-bench",
    version,
    about = "Generate, check and time MRA-transform kernels (batched 3-D tensor-times-matrix).",
    long_about = "Generate, check and time MRA-transform kernels: C_n(i,j,k) = sum A_n(a,b,c) B(a,i) B(b,j) B(c,k).\n\
                  Without a subcommand: benchmark one level in the seed's harness (validated once first, the\n\
                  `copy` floor measured in the same run). --emit-src prints the generated source, no GPU needed.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Say more where something is missing (e.g. every library file looked for).
    #[arg(long, global = true)]
    pub verbose: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check levels against the FP64 CPU reference for lists of K and N; exits non-zero on failure.
    Validate(ValidateArgs),
    /// List the levels: names, schedule primitives, where each can run.
    Levels(LevelsArgs),
    /// Run every level that can run for a list of K, with the copy floor and an FP64 GEMM peak,
    /// and print one table (µs/task, useful Gflop/s, GB/s, fraction of floor; best per K marked).
    Sweep(SweepArgs),
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Comma-separated K values.
    #[arg(short = 'K', default_value = "6,8,10,12,16,20,32", allow_hyphen_values = true)]
    pub ks: String,
    /// Levels: `all`, or a comma-separated list of numbers/names (the copy floor always runs).
    #[arg(short = 'l', long = "level", default_value = "all")]
    pub levels: String,
    #[arg(short = 'N', default_value_t = 2048)]
    pub nfuncs: usize,
    #[arg(short = 'M', default_value_t = 512)]
    pub max_blocks: usize,
    /// Tasks per repetition (levels slower than 10 ms per task run fewer, at least 3).
    #[arg(short = 'n', default_value_t = 100)]
    pub tasks: usize,
    #[arg(short = 'r', default_value_t = 5)]
    pub reps: usize,
    #[arg(short = 's', default_value_t = 4)]
    pub streams: usize,
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the results as JSON to this file (`-` for standard output).
    #[arg(long)]
    pub json: Option<String>,
    /// Write the results as CSV to this file (`-` for standard output).
    #[arg(long)]
    pub csv: Option<String>,
    /// Skip the FP64 GEMM peak measurement.
    #[arg(long)]
    pub no_peak: bool,
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Transform order K (1..=32).
    #[arg(short = 'K', default_value_t = 16, allow_negative_numbers = true, value_parser = crate::select::parse_k)]
    pub k: u32,
    /// Tensors per task (N).
    #[arg(short = 'N', default_value_t = 2048)]
    pub nfuncs: usize,
    /// Maximum blocks per launch (M); a launch uses min(N, M).
    #[arg(short = 'M', default_value_t = 512)]
    pub max_blocks: usize,
    /// Tasks (kernel submissions) per timed repetition.
    #[arg(short = 'n', default_value_t = 500)]
    pub tasks: usize,
    /// Timed repetitions, after one untimed warm-up.
    #[arg(short = 'r', default_value_t = 5)]
    pub reps: usize,
    /// Streams the tasks are spread over, round-robin.
    #[arg(short = 's', default_value_t = 4)]
    pub streams: usize,
    /// Level, by number (3, L3) or name (L3-regblk, copy).
    #[arg(short = 'l', long = "level", default_value = "3")]
    pub level: String,
    /// Target arch (sm_80, sm_86, sm_89, sm_90, gfx90a, gfx942, gfx1100, gfx1151, gfx1201).
    /// Detected from the GPU when omitted; required with --emit-src.
    #[arg(long)]
    pub arch: Option<String>,
    /// Element type: f64 (default), f32, or f16/bf16 (RDNA matrix-core levels).
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Print the generated kernel source and exit (no GPU, no toolkit needed).
    #[arg(long)]
    pub emit_src: bool,
    /// One JSON object per repetition instead of the seed's Transform lines.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random validation inputs (default: fresh each run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Compile without the on-disk kernel cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Compile the level for --arch (no GPU needed) and print per kernel: registers, LDS /
    /// shared memory, scratch and spills, occupancy, and matrix instructions in the code.
    /// `-l all` compiles every level.
    #[arg(long, conflicts_with = "emit_src")]
    pub compile_only: bool,
    /// Compiler: hiprtc or clang (AMD), nvrtc (NVIDIA). Default: hiprtc where the installed
    /// ROCm's hiprtc supports the arch, else clang; NVRTC for sm_XX.
    #[arg(long, value_name = "hiprtc|clang|nvrtc")]
    pub compiler: Option<String>,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Levels: `all`, or a comma-separated list of numbers/names.
    #[arg(short = 'l', long = "level", default_value = "all")]
    pub levels: String,
    /// Comma-separated K values.
    #[arg(short = 'K', default_value = "1,5,6,7,8,10,12,13,16,20,24,32", allow_hyphen_values = true)]
    pub ks: String,
    /// Comma-separated N values (default 1,3,2048; with --emulate 1,3).
    #[arg(short = 'N')]
    pub ns: Option<String>,
    /// Maximum blocks per launch.
    #[arg(short = 'M', default_value_t = 512)]
    pub max_blocks: usize,
    /// Element type: f64, f32, or f16/bf16 (RDNA matrix-core levels); a comma-separated list
    /// validates each.
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Target arch; required with --emulate (gfx90a, gfx942, gfx1100, gfx1151, gfx1201).
    /// Without --emulate it must match the GPU found.
    #[arg(long)]
    pub arch: Option<String>,
    /// Execute the generated HIP on the CPU wave emulator instead of a GPU (needs clang++ with
    /// AddressSanitizer; library levels are listed as not emulated).
    #[arg(long)]
    pub emulate: bool,
    /// Seed of the random inputs (default: fresh each run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// One JSON object per case.
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Args, Debug)]
pub struct LevelsArgs {
    /// Only this arch.
    #[arg(long)]
    pub arch: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}
