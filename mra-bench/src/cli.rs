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
    /// Auto-tune the parameters the levels declare (threads, pads, unrolling, launch bounds,
    /// ...): every candidate validated against the FP64 reference, then timed; results kept
    /// in the tuning database and used by the other commands.
    Tune(TuneArgs),
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
    /// Use the schedules' default parameters even where the tuning database has a tuned
    /// configuration for this GPU. (`-l best` picks, per K, the fastest tuned level.)
    #[arg(long)]
    pub untuned: bool,
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
    /// Use the level's default parameters even where the tuning database has a tuned
    /// configuration for this GPU (for --emit-src: for this arch). `-l best`: the fastest
    /// tuned level at this K on this GPU.
    #[arg(long)]
    pub untuned: bool,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Levels: `all`, or a comma-separated list of numbers/names.
    #[arg(short = 'l', long = "level", default_value = "all")]
    pub levels: String,
    /// Comma-separated K values.
    #[arg(short = 'K', default_value = "1,5,6,7,8,10,12,13,16,20,24,32", allow_hyphen_values = true)]
    pub ks: String,
    /// Comma-separated N values.
    #[arg(short = 'N', default_value = "1,3,2048")]
    pub ns: String,
    /// Maximum blocks per launch.
    #[arg(short = 'M', default_value_t = 512)]
    pub max_blocks: usize,
    /// Element type: f64 or f32.
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Seed of the random inputs (default: fresh each run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// One JSON object per case.
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub no_cache: bool,
    /// Validate the default parameters even where the tuning database has tuned ones.
    #[arg(long)]
    pub untuned: bool,
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

// ---- `mra-bench tune` (issue 10) ----

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Levels to tune (comma-separated numbers/names); `all` is every level that declares
    /// tunable parameters.
    #[arg(short = 'l', long = "level", default_value = "fused,L7")]
    pub levels: String,
    /// Comma-separated K values.
    #[arg(short = 'K', default_value = "6,8,10,12,16,20,24,32")]
    pub ks: String,
    /// exhaustive (every candidate), random (random order), anneal (simulated annealing).
    #[arg(long, default_value = "anneal")]
    pub strategy: String,
    /// Wall-clock budget for the whole run (`90s`, `10m`, `1h`), shared evenly over the
    /// (level, K) cases; a candidate that started finishes.
    #[arg(long)]
    pub budget: Option<String>,
    /// At most this many candidates per (level, K), counting those already in the database.
    #[arg(long)]
    pub max_configs: Option<usize>,
    /// Print the tuning space (parameters, choices, constraints, candidates per K) and exit.
    #[arg(long)]
    pub list: bool,
    /// No GPU: compile every candidate for --arch offline, reject those that spill, exceed
    /// LDS/shared memory or cannot reach their launch bounds' occupancy, and record the
    /// survivors (in the database, and in --out if given).
    #[arg(long)]
    pub compile_only: bool,
    /// Target arch: required with --compile-only; with --list it filters the space.
    #[arg(long)]
    pub arch: Option<String>,
    /// Write the compile-only survivors (or the tuning results of this run) to this JSON file.
    #[arg(long)]
    pub out: Option<String>,
    /// The tuning database (default: $MRA_TUNING_DB, else $XDG_DATA_HOME/mra-dsl/tuning.json,
    /// else ~/.local/share/mra-dsl/tuning.json).
    #[arg(long)]
    pub db: Option<String>,
    /// Best configurations printed per (level, K).
    #[arg(long, default_value_t = 3)]
    pub top: usize,
    #[arg(short = 'N', default_value_t = 2048)]
    pub nfuncs: usize,
    #[arg(short = 'M', default_value_t = 512)]
    pub max_blocks: usize,
    /// Tasks per timed repetition while tuning.
    #[arg(short = 'n', default_value_t = 100)]
    pub tasks: usize,
    /// Timed repetitions per candidate (the median is kept).
    #[arg(short = 'r', default_value_t = 3)]
    pub reps: usize,
    #[arg(short = 's', default_value_t = 4)]
    pub streams: usize,
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Seed of the search and of the validation inputs (default: fresh).
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub no_cache: bool,
    /// Compiler: hiprtc or clang (AMD), nvrtc (NVIDIA).
    #[arg(long, value_name = "hiprtc|clang|nvrtc")]
    pub compiler: Option<String>,
}
