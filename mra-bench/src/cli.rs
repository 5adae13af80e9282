//! The command line: the seed's flags (-K -N -M -n -r -s -l, each with a long form) plus the
//! subcommands. Every option says what it does, its default and its possible values.

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand};

/// The main help's closing sections (`--help` only; `-h` stays short).
const AFTER_LONG_HELP: &str = "\
Examples:
  mra-bench --arch gfx90a -K 16 -l 3 --emit-src          the generated HIP (no GPU, no toolkit)
  mra-bench --arch sm_90 -K 6,8,16 -l all --emit-src -o kernels/
                                                          one .cu file per level and K
  mra-bench --arch gfx942 -K 16 -l 4 --compile-only      registers, LDS, occupancy, MFMA count
  mra-bench -K 16 -N 2048 -n 500 -r 5 -l 3               benchmark (the seed's Transform;... lines)
  mra-bench validate -l 3,L7 -K 6,16 -N 64 --seed 1      check against the FP64 CPU reference
  mra-bench sweep -K 6,8,16 --json s.json --plot s.svg   every level x K, table + chart
  mra-bench plot s.json -o s.png                         redraw a sweep's chart
  mra-bench levels --arch sm_90                          where each level can run
  mra-bench export --arch sm_90 -K 6,8,16 -o mra_export  kernels + mra_transform.h for a C++ build
  mra-bench transform --input A.npy --matrix B.npy --output C.npy
                                                          transform your own tensors (.npy)
  mra-bench transform --input A.npy --matrix B.npy --output C.npy --emulate --arch gfx942
                                                          the same, gfx942's kernel on the CPU emulator

Environment:
  MRA_KERNEL_CACHE        directory of the compiled-kernel cache, or `off` to disable it
                          (default: $XDG_CACHE_HOME/mra-dsl/kernels, else ~/.cache/mra-dsl/kernels)
  MRA_TUNING_DB           the tuning database `tune` writes and run/validate/sweep/--emit-src read
                          (default: $XDG_DATA_HOME/mra-dsl/tuning.json, else ~/.local/share/mra-dsl/tuning.json)
  MRA_HIP_RUNTIME         the ROCm HIP runtime library to load (default: libamdhip64.so.6, .so.5, ...)
  MRA_CLANG               the clang++ that compiles HIP offline (default: clang++-19, clang++, ... on PATH)
  MRA_LLVM_OBJDUMP        the llvm-objdump that counts MFMA/WMMA (default: llvm-objdump-19, ... on PATH)
  MRA_CUOBJDUMP           nvdisasm or cuobjdump that counts DMMA/HMMA for sm_XX --compile-only
                          (default: nvdisasm, else cuobjdump, on PATH)
  MRA_TOOL_TIMEOUT        seconds an external tool (clang, llvm-objdump, nvdisasm) may run before it
                          is stopped with an error (default: 600; 0 for no limit)
  MRA_EMU_KEEP            `1`: validate --emulate keeps each emulated kernel's C++ source beside its
                          executable in the kernel cache (to rebuild it by hand with -g)
  MRA_REQUIRE_TOOLCHAINS  tests only: `1` makes a missing NVRTC/clang/hiprtc fail the toolchain tests
                          (`cargo test --workspace -- --include-ignored`) instead of skipping them
  MRA_AMD_LAYOUTS         tests only: the directory of AMD's Matrix Instruction Calculator tables the
                          layout tests read (default: ../shared/reference/amd-matrix-layouts beside
                          the checkout; tests/data/amd-matrix-layouts is a copy of it)
  LD_LIBRARY_PATH         where libcuda, libnvrtc (e.g. pip's nvidia-cuda-nvrtc lib directory) and
                          ROCm's libraries are found";

#[derive(Parser, Debug)]
#[command(
    name = "mra-bench",
    // The commit too (build.rs), so a result or a log can say which binary made it.
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("MRA_COMMIT"), ")"),
    about = "Generate, check and time MRA-transform kernels (batched 3-D tensor-times-matrix).",
    long_about = "Generate, check and time MRA-transform kernels: C_n(i,j,k) = sum A_n(a,b,c) B(a,i) B(b,j) B(c,k).\n\
                  Without a subcommand: benchmark one level in the seed's harness (validated once first, the\n\
                  `copy` floor measured in the same run). --emit-src prints the generated source and\n\
                  --compile-only compiles it offline: neither needs a GPU.",
    after_help = "See `mra-bench --help` for examples and environment variables.",
    after_long_help = AFTER_LONG_HELP,
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
    /// and print one table (µs/task, useful Gflop/s, GB/s, fraction of floor, SM clock and board power while timed; best per K marked).
    Sweep(SweepArgs),
    /// Auto-tune the parameters the levels declare (threads, pads, unrolling, launch bounds,
    /// ...): every candidate validated against the FP64 reference, then timed; results kept
    /// in the tuning database and used by the other commands.
    Tune(TuneArgs),
    /// Draw a `sweep --json` file as a chart (SVG or PNG by the output's extension).
    Plot(PlotArgs),
    /// Print sweep JSON files as Markdown tables: per K the fastest level, its time, and its
    /// ratios to the copy and to the bound measured in the same run (the README's table).
    Report(ReportArgs),
    /// Print a shell completion script, e.g. `mra-bench completions bash > ~/.local/share/bash-completion/completions/mra-bench`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), e.g. `mra-bench man | man -l -`; with -o DIR, one page per subcommand.
    Man(ManArgs),
    /// Write the generated kernels for a list of K as a directory that drops into a C++ build:
    /// one self-contained source per K, `mra_transform.h` (launchers, workspace queries,
    /// `mra_transform(K, ...)`), the block-level device functions, a README. No GPU needed.
    Export(ExportArgs),
    /// Transform your own tensors: A (N x K x K x K or N x K^3) and B (K x K) from .npy files,
    /// on the GPU found (or the level's generated HIP for --arch on the CPU wave emulator with
    /// --emulate, or the CPU reference with --reference), C written to a .npy file; a matrix per
    /// dimension, one direction (--dim), a rank sum (--weights), C = alpha T(A) + beta C0.
    Transform(TransformArgs),
    /// Test helper: write a .npy file of uniform random values in [-1, 1).
    #[command(hide = true)]
    NpyRandom(NpyRandomArgs),
    /// Test helper: compare two .npy files (same shape and dtype); exit 1 if max |x-y| / max |y|
    /// exceeds the tolerance or an element is not finite.
    #[command(hide = true)]
    NpyCompare(NpyCompareArgs),
}

#[derive(Args, Debug)]
pub struct NpyRandomArgs {
    /// Comma-separated shape, e.g. 2048,8,8,8.
    #[arg(long)]
    pub shape: String,
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(short = 'o', long = "output")]
    pub output: std::path::PathBuf,
}

#[derive(Args, Debug)]
pub struct NpyCompareArgs {
    /// The array to check.
    pub got: std::path::PathBuf,
    /// The array it must match.
    pub want: std::path::PathBuf,
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Largest max |got - want| / max |want| accepted (default: the dtype's validation bound).
    #[arg(long)]
    pub tolerance: Option<f64>,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Target arch (the possible values list every arch of the table).
    #[arg(long, value_parser = arch_values(), ignore_case = true)]
    pub arch: String,
    /// Comma-separated K values.
    #[arg(short = 'K', long = "order", value_name = "K,...", default_value = "6,8,10,12,16,20,24,32")]
    pub ks: String,
    /// Level for every K (number or name), or `best` (the tuning database). Default per K: the first
    /// of fused-split, fused-pipe, fused-cluster, fused, L7-breg, L3-regblk that fits. Beside a level
    /// that spreads a tensor over several blocks (fused-split, fused-cluster) the block-level
    /// transform_block is the first of fused-pipe, fused, L7-breg, L3-regblk that fits.
    #[arg(short = 'l', long = "level")]
    pub level: Option<String>,
    /// Element type: f64 (default), f32, or f16/bf16 (RDNA matrix-core levels).
    #[arg(long, default_value = "f64", value_parser = dtype_values(), ignore_case = true)]
    pub dtype: String,
    /// The directory to write (must be absent or empty, unless --force).
    #[arg(short = 'o', long = "output")]
    pub output: std::path::PathBuf,
    /// Write into a non-empty directory, replacing the export's files (others are left alone).
    #[arg(long)]
    pub force: bool,
    /// Export each level with its default parameters even where the tuning database has a
    /// tuned configuration for this arch.
    #[arg(long)]
    pub untuned: bool,
    /// Also export these operations (comma-separated): `general` (a matrix per dimension),
    /// `dir` (one dimension), `ranksum` (operator application's rank sum), each with C = alpha
    /// T(A) + beta C over contiguous, strided and pointer-array batches: kernels, block-level
    /// device parts and mra_transform_ops.h.
    #[arg(long, value_name = "OP,...", value_delimiter = ',', value_parser = ["general", "dir", "ranksum"])]
    pub ops: Vec<String>,
}

#[derive(Args, Debug)]
pub struct TransformArgs {
    /// A: N x K x K x K or N x K^3 (C order, little- or big-endian) .npy file.
    #[arg(long)]
    pub input: std::path::PathBuf,
    /// B: K x K .npy file (row-major: C(i,j,k) = sum A(a,b,c) B(a,i) B(b,j) B(c,k)); or three
    /// files X,Y,Z, one matrix per dimension (MADNESS's general_transform); with --weights, X,
    /// Y, Z of shape (R, K, K), the terms of a rank sum.
    #[arg(long, value_delimiter = ',', num_args = 1.., required = true)]
    pub matrix: Vec<std::path::PathBuf>,
    /// Transform dimension D (0, 1 or 2) only, with the one --matrix (MRA-TTG's transform_dir):
    /// for D = 1, C(a,j,c) = sum_b A(a,b,c) M(b,j).
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(0..=2))]
    pub dim: Option<u32>,
    /// C = alpha T(A) + beta C0.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f64,
    /// C = alpha T(A) + beta C0; a beta other than 0 needs --initial.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f64,
    /// C0 (A's shape) for --beta.
    #[arg(long, value_name = "C0.npy")]
    pub initial: Option<std::path::PathBuf>,
    /// The R weights s of a rank sum, sum over mu of s_mu A x1 X_mu x2 Y_mu x3 Z_mu (MADNESS's
    /// operator application): a .npy vector of R values, with three --matrix files of (R, K, K).
    #[arg(long, value_name = "s.npy")]
    pub weights: Option<std::path::PathBuf>,
    /// C: written atomically, in A's shape and dtype (an existing file is replaced; not the
    /// --input or --matrix file); `-` or a pipe such as /dev/stdout streams it (not to a terminal).
    #[arg(long)]
    pub output: std::path::PathBuf,
    /// Level (number or name), or `best` (the tuning database). Default: the first of
    /// fused-split, fused-pipe, fused-cluster, fused, L7-breg, L3-regblk that fits.
    #[arg(short = 'l', long = "level")]
    pub level: Option<String>,
    /// Element type of the files and the computation: f64 (default) or f32.
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Compute on the CPU with the FP64 reference instead of a GPU.
    #[arg(long, conflicts_with = "emulate")]
    pub reference: bool,
    /// Run the level's generated HIP kernel for --arch on the CPU wave emulator instead of a GPU
    /// (needs clang++ with AddressSanitizer; slow: meant for small N; library levels refused).
    #[arg(long)]
    pub emulate: bool,
    /// The AMD arch whose generated kernel --emulate runs: gfx90a (default), gfx942, gfx1100,
    /// gfx1151 or gfx1201. Only with --emulate (on a GPU the arch is the GPU's).
    #[arg(long, value_parser = arch_values(), ignore_case = true)]
    pub arch: Option<String>,
    /// Maximum blocks per launch (M): `auto` (the default) launches what the GPU holds of the
    /// kernel at once (its occupancy), each block walking the batch; a number caps it.
    #[arg(short = 'M', long = "max-blocks", default_value = "auto", value_parser = max_blocks_value)]
    pub max_blocks: usize,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write mra-bench.1 and mra-bench-SUBCOMMAND.1 into this directory instead of printing mra-bench.1.
    // Not empty: `-o ""` would write the pages into the current directory.
    #[arg(short = 'o', long = "output", value_name = "DIR", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub output: Option<String>,
}

/// `--arch` values: the arch table's names, with the short forms `sm90` and `90` as aliases.
fn arch_values() -> PossibleValuesParser {
    PossibleValuesParser::new(mra_codegen::arch::names().into_iter().map(|name| {
        let value = PossibleValue::new(name);
        match name.strip_prefix("sm_") {
            // Leaked once per parse: a handful of short strings for the aliases clap keeps.
            Some(cc) => value.aliases([&*Box::leak(format!("sm{cc}").into_boxed_str()), &*Box::leak(cc.to_string().into_boxed_str())]),
            None => value,
        }
    }))
}

/// `--dtype` values, with the spellings `DType::parse` also accepts as aliases.
/// `-M`: a number of blocks, or `auto` (the grid the device holds of each kernel at once).
fn max_blocks_value(s: &str) -> Result<usize, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(mra_runtime::harness::AUTO_BLOCKS);
    }
    s.trim().parse::<usize>().map_err(|_| format!("`{s}` is neither a number of blocks nor `auto`"))
}

fn dtype_values() -> PossibleValuesParser {
    PossibleValuesParser::new([
        PossibleValue::new("f64").aliases(["double", "fp64"]).help("FP64 (every level)"),
        PossibleValue::new("f32").aliases(["float", "fp32"]).help("FP32 (thread-mapped levels)"),
        PossibleValue::new("f16").aliases(["half", "fp16"]).help("f16 inputs, f32 accumulation (RDNA3/4 matrix-core levels)"),
        PossibleValue::new("bf16").alias("bfloat16").help("bf16 inputs, f32 accumulation (RDNA3/4 matrix-core levels)"),
    ])
}

/// How the harness times (run, sweep, tune): the warm-up before the timed repetitions, and
/// what data the streams transform. Tuning records keep both in their key where they are not
/// the defaults, so results of different settings never compare.
#[derive(Args, Debug, Clone, Copy)]
pub struct TimingArgs {
    /// Untimed repetitions before the timed ones: a duration (`200ms`, `3s`), or `settle`:
    /// until the SM clock stops moving (1 s windows whose median clocks agree within 15 MHz, and
    /// where NVML reads the board power and its limit, a window within 2% of the limit; at most
    /// 30 s; 5 s where NVML cannot read the clock). A power-capped level keeps slowing for seconds
    /// and inherits the clock a compute-heavy predecessor left: `settle` times it as a long run
    /// sees it, whatever ran before it.
    #[arg(long, value_name = "DURATION|settle", default_value = "200ms", value_parser = mra_runtime::warmup::Warmup::parse)]
    pub warmup: mra_runtime::warmup::Warmup,
    /// What the streams transform: `shared` (the seed's harness: every stream the same A into
    /// the same C, so tasks running side by side can share L2 lines where the data fit it) or
    /// `private` (an A and a C per stream, as in a code whose streams transform different
    /// functions; S times the device memory for A and C). The copy floor moves with it.
    #[arg(long, value_name = "shared|private", default_value = "shared", value_parser = mra_runtime::harness::StreamData::parse)]
    pub stream_data: mra_runtime::harness::StreamData,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Comma-separated K values (transform orders, 1..=32).
    #[arg(short = 'K', long = "order", value_name = "K,...", default_value = "6,8,10,12,16,20,32", allow_hyphen_values = true)]
    pub ks: String,
    /// Levels: `all`, or a comma-separated list of numbers/names (the copy floor always runs).
    #[arg(short = 'l', long = "level", value_name = "LEVELS", default_value = "all")]
    pub levels: String,
    /// How the levels are launched: `harness` (the seed's: -n tasks of N tensors over -s streams
    /// sharing one A and C) or `api` (as a code calls the export or Transformer: one launch per
    /// repetition over a batch far larger than L2 on one stream, the grid what the GPU holds of
    /// the kernel at once, the floor a device-to-device copy of the same bytes).
    #[arg(long, value_name = "harness|api", default_value = "harness", value_parser = ["harness", "api"])]
    pub launch: String,
    /// Tensors per task (N). Default: 2048 (harness); 2 GiB of input at each K (api).
    #[arg(short = 'N', long = "nfuncs")]
    pub nfuncs: Option<usize>,
    /// Maximum blocks per launch (M); a launch uses min(N, M), rounded up to whole clusters for a
    /// thread-block-cluster level (fused-cluster). `auto`: what the GPU holds of each kernel at
    /// once. Default: 512 (harness), auto (api).
    #[arg(short = 'M', long = "max-blocks", value_parser = max_blocks_value)]
    pub max_blocks: Option<usize>,
    /// Tasks per repetition (levels slower than 10 ms per task run fewer, at least 3). Harness only.
    #[arg(short = 'n', long = "tasks", default_value_t = 100)]
    pub tasks: usize,
    /// Timed repetitions per level and K (the median is reported), after the untimed ones of
    /// --warmup.
    #[arg(short = 'r', long = "reps", default_value_t = 5)]
    pub reps: usize,
    /// --warmup and --stream-data.
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Streams the tasks are spread over, round-robin.
    #[arg(short = 's', long = "streams", default_value_t = 4)]
    pub streams: usize,
    /// Element type.
    #[arg(long, default_value = "f64", value_parser = dtype_values(), ignore_case = true)]
    pub dtype: String,
    /// Seed of the random validation inputs (default: fresh each run; printed on failure).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the results as JSON to FILE, rewritten whole after every level (atomically, with
    /// `"complete": false` until the sweep ends), so that an interrupted sweep leaves a valid
    /// file with the levels measured so far; `--json` alone (or `--json -`) prints the JSON on
    /// standard output at the end and the table on standard error. (run and validate take
    /// `--json` as a switch to JSON on standard output; sweep's table has a file form as well.)
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write the results as CSV to FILE, rewritten whole after every level as --json is (`-`:
    /// standard output, at the end).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Also draw the results as a chart to FILE (.svg or .png); `mra-bench plot` redraws it
    /// from the --json file.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<String>,
    /// Skip the FP64 GEMM peak measurement (cuBLAS/hipBLAS DGEMM 8192³).
    #[arg(long)]
    pub no_peak: bool,
    /// Compile every kernel afresh, neither reading nor writing the on-disk kernel cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Use the schedules' default parameters even where the tuning database has a tuned
    /// configuration for this GPU. (`-l best` picks, per K, the fastest tuned level.)
    #[arg(long)]
    pub untuned: bool,
    #[command(flatten)]
    pub op: crate::op_args::OpArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Transform order K (1..=32). With --emit-src (one file per K) or --compile-only (a report
    /// line per level and K), a comma-separated list.
    #[arg(short = 'K', long = "order", value_name = "K", value_delimiter = ',', default_value = "16",
          allow_hyphen_values = true, value_parser = crate::select::parse_k)]
    pub ks: Vec<u32>,
    /// The single K of a run (filled in by [`RunArgs::resolve`] from `ks`).
    #[arg(skip)]
    pub k: u32,
    /// Tensors per task (N).
    #[arg(short = 'N', long = "nfuncs", default_value_t = 2048)]
    pub nfuncs: usize,
    /// Maximum blocks per launch (M); a launch uses min(N, M), rounded up to whole clusters for a
    /// thread-block-cluster level (fused-cluster). `auto` (the default): what the GPU holds of the
    /// kernel at once (its occupancy), each block walking the batch; the seed's harness is -M 512.
    #[arg(short = 'M', long = "max-blocks", default_value = "auto", value_parser = max_blocks_value)]
    pub max_blocks: usize,
    /// Tasks (kernel submissions) per timed repetition.
    #[arg(short = 'n', long = "tasks", default_value_t = 500)]
    pub tasks: usize,
    /// Timed repetitions, after the untimed ones of --warmup.
    #[arg(short = 'r', long = "reps", default_value_t = 5)]
    pub reps: usize,
    /// --warmup and --stream-data.
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Streams the tasks are spread over, round-robin.
    #[arg(short = 's', long = "streams", default_value_t = 4)]
    pub streams: usize,
    /// Level, by number (3, L3) or name (L3-regblk, copy); with --emit-src or --compile-only
    /// also `all` or a comma-separated list. `mra-bench levels` lists them.
    #[arg(short = 'l', long = "level", default_value = "3")]
    pub level: String,
    /// Target arch. Default: detected from the GPU; required with --emit-src and --compile-only.
    #[arg(long, value_parser = arch_values(), ignore_case = true)]
    pub arch: Option<String>,
    /// Element type.
    #[arg(long, default_value = "f64", value_parser = dtype_values(), ignore_case = true)]
    pub dtype: String,
    /// Print the generated kernel source and exit (no GPU, no toolkit needed).
    #[arg(long)]
    pub emit_src: bool,
    /// With --emit-src: write the source to FILE; with several levels or K, FILE is a
    /// directory and each kernel gets its own file (e.g. L3-regblk_k16_gfx90a_f64.hip).
    #[arg(short = 'o', long = "output", value_name = "FILE|DIR", requires = "emit_src")]
    pub output: Option<String>,
    /// With --emit-src -o: replace kernel files that exist and differ from what is written
    /// (without it they are refused, so that a hand-edited kernel is never overwritten).
    #[arg(long, requires = "output")]
    pub force: bool,
    /// One JSON object per line (per repetition, or per level with --compile-only) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random validation inputs (default: fresh each run; printed on failure).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Compile afresh, neither reading nor writing the on-disk kernel cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Compile the level for --arch (no GPU needed) and print per kernel: registers, LDS /
    /// shared memory, scratch and spills, occupancy, and matrix instructions in the code.
    /// `-l all` compiles every level.
    #[arg(long, conflicts_with = "emit_src")]
    pub compile_only: bool,
    /// Compiler. Default: hiprtc where the installed ROCm's hiprtc supports the arch, else
    /// clang, for AMD archs; NVRTC for sm_XX.
    #[arg(long, value_parser = ["hiprtc", "clang", "nvrtc"])]
    pub compiler: Option<String>,
    /// Use the level's default parameters even where the tuning database has a tuned
    /// configuration for this GPU (for --emit-src: for this arch). `-l best`: the fastest
    /// tuned level at this K on this GPU.
    #[arg(long)]
    pub untuned: bool,
    /// Validate and time a hand-edited kernel in place of the level's generated one, launched
    /// as the level's plan says (threads, shared memory, grid); with --compile-only, compile
    /// and report it. FILE must define the level's kernel at this K; start from `--emit-src -o
    /// FILE` with the same level, K and tuning.
    #[arg(long, value_name = "FILE", conflicts_with = "emit_src")]
    pub source: Option<String>,
    #[command(flatten)]
    pub op: crate::op_args::OpArgs,
}

impl RunArgs {
    /// Sets `k` from the -K list: one K, except with --emit-src and --compile-only where `k` is
    /// the first (they walk `ks`).
    pub fn resolve(&mut self) -> Result<(), String> {
        if self.ks.len() > 1 && !self.emit_src && !self.compile_only {
            return Err(format!(
                "-K takes one K here (got {}); a K list is for --emit-src and --compile-only; use `mra-bench sweep -K ...` to time several",
                self.ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",")
            ));
        }
        // `--emit-src -K 6,6` would write one file and count it twice.
        crate::select::no_repeats("-K", &self.ks).map_err(|e| e.0)?;
        self.k = self.ks[0];
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Levels: `all`, or a comma-separated list of numbers/names.
    #[arg(short = 'l', long = "level", value_name = "LEVELS", default_value = "all")]
    pub levels: String,
    /// Comma-separated K values (transform orders, 1..=32).
    #[arg(short = 'K', long = "order", value_name = "K,...", default_value = "1,5,6,7,8,10,12,13,16,20,24,32", allow_hyphen_values = true)]
    pub ks: String,
    /// Comma-separated N values (tensors per launch; default 1,3,2048, with --emulate 1,3).
    #[arg(short = 'N', long = "nfuncs", value_name = "N,...")]
    pub ns: Option<String>,
    /// Maximum blocks per launch (M), rounded up to whole clusters for a thread-block-cluster level.
    #[arg(short = 'M', long = "max-blocks", default_value_t = 512)]
    pub max_blocks: usize,
    /// Element type: f64, f32, or f16/bf16 (RDNA matrix-core levels); a comma-separated list
    /// validates each.
    #[arg(long, value_name = "DTYPE,...", default_value = "f64", value_parser = dtype_values(), ignore_case = true, value_delimiter = ',')]
    pub dtype: Vec<String>,
    /// Target arch; required with --emulate (gfx90a, gfx942, gfx1100, gfx1151, gfx1201).
    /// Without --emulate it must match the GPU found.
    #[arg(long)]
    pub arch: Option<String>,
    /// Execute the generated HIP on the CPU wave emulator instead of a GPU (needs clang++ with
    /// AddressSanitizer; library levels are listed as not emulated).
    #[arg(long)]
    pub emulate: bool,
    /// With --emulate: build the emulated kernels with ThreadSanitizer instead of
    /// AddressSanitizer, so that two threads of a block touching the same LDS or tensor element
    /// without a barrier between them, one writing, fail the case (a missing or misplaced
    /// barrier, whatever the results happen to be).
    #[arg(long, requires = "emulate")]
    pub races: bool,
    /// Seed of the random inputs (default: fresh each run; printed on failure).
    #[arg(long)]
    pub seed: Option<u64>,
    /// One JSON object per case on standard output instead of text.
    #[arg(long)]
    pub json: bool,
    /// Compile every kernel afresh, neither reading nor writing the on-disk kernel cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Validate the default parameters even where the tuning database has tuned ones.
    #[arg(long)]
    pub untuned: bool,
    /// Validate a hand-edited kernel in place of the generated one (one level, one K, one
    /// dtype; on a GPU or with --emulate), launched as the level's plan says. Start from
    /// `mra-bench --emit-src -o FILE` with the same level, K and tuning.
    #[arg(long, value_name = "FILE")]
    pub source: Option<String>,
    #[command(flatten)]
    pub op: crate::op_args::OpArgs,
}

#[derive(Args, Debug)]
pub struct LevelsArgs {
    /// One level (number or name): its schedule, parameters, tuned defaults and, per arch and
    /// dtype, the K it runs at. Without it: one line per level.
    #[arg(value_name = "LEVEL")]
    pub level: Option<String>,
    /// Only this arch (default: every arch of the table).
    #[arg(long, value_parser = arch_values(), ignore_case = true)]
    pub arch: Option<String>,
    /// JSON on standard output instead of the tables (for scripts).
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
    /// Comma-separated K values (transform orders, 1..=32).
    #[arg(short = 'K', default_value = "6,8,10,12,16,20,24,32", allow_hyphen_values = true)]
    pub ks: String,
    /// exhaustive (every candidate), random (random order), anneal (simulated annealing).
    #[arg(long, default_value = "anneal")]
    pub strategy: String,
    /// Wall-clock budget for the whole run (`90s`, `10m`, `1h`), shared evenly over the
    /// (level, K) cases; a candidate that started finishes.
    #[arg(long)]
    pub budget: Option<String>,
    /// At most this many candidates per (level, K), counting those already in the database
    /// (at least 1).
    #[arg(long)]
    pub max_configs: Option<usize>,
    /// Tune only the candidates with these parameter values (`name=value,...`, e.g.
    /// `cluster=8,threads=256`): the others of the space are not tried. To compare a few
    /// configurations in one process, with the copy floor of the same run; where --fix
    /// leaves the defaults out, they are timed first as the baseline (not a candidate).
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub fix: Option<String>,
    /// Print the tuning space (parameters, choices, constraints, candidates per K) and exit;
    /// with --fix, the candidates it keeps.
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
    /// Tune nothing: write the tuning database's fastest timed configuration per level and K on
    /// --arch into this tuned-defaults file (`mra-codegen/tuned/<arch>.json`; merged, atomic),
    /// the data every command and the export read once rebuilt.
    #[arg(long, value_name = "FILE")]
    pub write_defaults: Option<String>,
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
    /// Tensors per task (N) while tuning.
    #[arg(short = 'N', default_value_t = 2048)]
    pub nfuncs: usize,
    /// Maximum blocks per launch (M); a launch uses min(N, M), rounded up to whole clusters for a
    /// thread-block-cluster level. `auto`: waves of what the GPU holds of each candidate at once
    /// (with `-N` of a batch far larger than L2, `-n 1 -s 1 --stream-data private`: the API regime).
    #[arg(short = 'M', default_value = "512", value_parser = max_blocks_value)]
    pub max_blocks: usize,
    /// Tasks per timed repetition while tuning.
    #[arg(short = 'n', default_value_t = 100)]
    pub tasks: usize,
    /// Timed repetitions per candidate (the median is kept).
    #[arg(short = 'r', default_value_t = 3)]
    pub reps: usize,
    /// --warmup and --stream-data.
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Streams the tasks are spread over, round-robin.
    #[arg(short = 's', default_value_t = 4)]
    pub streams: usize,
    /// Element type.
    #[arg(long, default_value = "f64", value_parser = dtype_values(), ignore_case = true)]
    pub dtype: String,
    /// Seed of the search and of the validation inputs (default: fresh).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Compile every candidate afresh, neither reading nor writing the on-disk kernel cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Compiler: hiprtc or clang (AMD), nvrtc (NVIDIA).
    #[arg(long, value_name = "hiprtc|clang|nvrtc")]
    pub compiler: Option<String>,
    /// `--op general|dir|ranksum` (and `--layout`, `--ranks`): tune the operation's kernels in
    /// one launch over the API regime's batch, each candidate validated first; prints the
    /// tuned-defaults entry of the best (no database record).
    #[command(flatten)]
    pub op: crate::op_args::OpArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The JSON files `mra-bench sweep --json FILE` wrote (one table each, in the order given).
    #[arg(value_name = "SWEEP_JSON", required = true)]
    pub inputs: Vec<String>,
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The JSON file `mra-bench sweep --json FILE` wrote.
    #[arg(value_name = "SWEEP_JSON")]
    pub input: String,
    /// The image to write: `.svg`, or `.png` (rendered with an embedded font, no system fonts needed).
    #[arg(short = 'o', long = "output", value_name = "FILE", default_value = "sweep.svg")]
    pub output: String,
}
