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
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check levels against the FP64 CPU reference for lists of K and N; exits non-zero on failure.
    Validate(ValidateArgs),
    /// List the levels: names, schedule primitives, where each can run.
    Levels(LevelsArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Transform order K (1..=32).
    #[arg(short = 'K', default_value_t = 16)]
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
    /// Element type: f64 (default) or f32.
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
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Levels: `all`, or a comma-separated list of numbers/names.
    #[arg(short = 'l', long = "level", default_value = "all")]
    pub levels: String,
    /// Comma-separated K values.
    #[arg(short = 'K', default_value = "1,5,6,7,8,10,12,13,16,20,24,32")]
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
