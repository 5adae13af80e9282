//! The CPU prelude: what replaces the HIP prelude (between `emit::PRELUDE_BEGIN` and
//! `emit::PRELUDE_END`) when the generated kernel runs on the CPU wave emulator.
//!
//! Every function the GPU prelude defines gets a CPU definition with the same signature:
//! each GPU thread of a block is a fiber (its own stack, switched only where a GPU thread could
//! wait for others), and the ids are the current fiber's; `mra_sync_block()` is a real barrier
//! of the block's threads (and checks that every thread reached the same barrier: a barrier
//! some threads skip is reported, as is a deadlock); each matrix function
//! is a rendezvous of the wave's lanes: every lane deposits its registers, the last to arrive
//! executes the whole instruction with the layouts of [`super::layouts`] (AMD's calculator),
//! and every lane takes its own result registers back. A matrix function is called through a
//! macro that passes the call site, and lanes meeting from different calls (a divergent matrix
//! instruction) are reported. `__shared__` arrays become static
//! storage (blocks run one after another), so LDS is one real array all threads share.
//! Out-of-bounds accesses to tensors and LDS are caught by AddressSanitizer.

use super::layouts::{Instruction, Operand, Sabotage};
use mra_codegen::emit::{PRELUDE_BEGIN, PRELUDE_END};
use mra_codegen::DType;

/// Why a GPU source cannot be emulated.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("the kernel has no HIP prelude to replace (only generated HIP kernels can be emulated)")]
    NoPrelude,
    #[error("the HIP prelude defines {0}, which the CPU emulator does not know")]
    UnknownFunction(String),
}

/// The functions of the HIP prelude the emulator defines, other than the matrix ones.
const PLAIN_FUNCTIONS: [&str; 3] = ["mra_thread_id", "mra_block_id", "mra_sync_block"];

/// The matrix function `name` of the HIP prelude: which instruction and element type.
fn matrix_function(name: &str) -> Option<(Instruction, DType)> {
    Some(match name {
        "mra_mfma_f64_16x16x4" => (Instruction::MfmaF64_16x16x4, DType::F64),
        "mra_wmma_f32_16x16x16_f16_gfx11" => (Instruction::WmmaRdna3, DType::F16),
        "mra_wmma_f32_16x16x16_bf16_gfx11" => (Instruction::WmmaRdna3, DType::Bf16),
        "mra_wmma_f32_16x16x16_f16_gfx12" => (Instruction::WmmaRdna4, DType::F16),
        "mra_wmma_f32_16x16x16_bf16_gfx12" => (Instruction::WmmaRdna4, DType::Bf16),
        _ => return None,
    })
}

/// The (start, end) byte range of the prelude's body: after the begin line, up to the end line.
pub fn prelude_range(gpu_source: &str) -> Result<(usize, usize), SourceError> {
    let begin = gpu_source.find(PRELUDE_BEGIN).ok_or(SourceError::NoPrelude)?;
    let start = begin + gpu_source[begin..].find('\n').ok_or(SourceError::NoPrelude)? + 1;
    let end = gpu_source.find(PRELUDE_END).filter(|&e| e >= start).ok_or(SourceError::NoPrelude)?;
    Ok((start, end))
}

/// The names of the functions a prelude defines (`... inline TYPE mra_x(`).
fn defined_functions(prelude: &str) -> Vec<String> {
    prelude
        .lines()
        .filter(|l| l.contains(" inline ") && l.trim_end().ends_with('{'))
        .filter_map(|l| {
            let after = &l[l.find(" inline ")? + " inline ".len()..];
            let name = after[..after.find('(')?].rsplit(' ').next()?;
            name.starts_with("mra_").then(|| name.to_string())
        })
        .collect()
}

/// The CPU prelude for the GPU prelude `gpu_prelude` running on waves of `wave` lanes.
pub fn cpu_prelude(gpu_prelude: &str, wave: u32, sabotage: Sabotage) -> Result<String, SourceError> {
    let mut s = String::new();
    s += &COMMON.replace("@WAVE@", &wave.to_string());
    // The operand vector types are portable clang C++: the GPU prelude's own lines.
    for l in gpu_prelude.lines().filter(|l| l.starts_with("typedef ")) {
        s += l;
        s += "\n";
    }
    for name in defined_functions(gpu_prelude) {
        if PLAIN_FUNCTIONS.contains(&name.as_str()) {
            continue;
        }
        let (instr, dtype) = matrix_function(&name).ok_or_else(|| SourceError::UnknownFunction(name.clone()))?;
        s += &matrix_emulation(&name, instr, dtype, sabotage);
    }
    Ok(s)
}

/// `(row, col)` of every (lane, element) of `op`, as a C++ initializer.
fn table(instr: Instruction, op: Operand, sabotage: Sabotage) -> String {
    let lanes: Vec<String> = (0..instr.lanes())
        .map(|lane| {
            let regs: Vec<String> = (0..instr.regs(op))
                .map(|r| {
                    let (i, j) = sabotage.element(instr, op, lane, r);
                    format!("{{{i},{j}}}")
                })
                .collect();
            format!("{{{}}}", regs.join(","))
        })
        .collect();
    format!("{{\n    {}\n}}", lanes.join(",\n    "))
}

/// The CPU definition of one matrix function: lanes deposit, the last executes, all collect.
fn matrix_emulation(name: &str, instr: Instruction, dtype: DType, sabotage: Sabotage) -> String {
    let (m, n, k) = instr.shape();
    let (lanes, ra, rb, rd) = (instr.lanes(), instr.regs(Operand::A), instr.regs(Operand::B), instr.regs(Operand::D));
    // The CPU function takes the call site too: `{name}(...)` is a macro adding a number unique
    // to each call in the source (__COUNTER__) and its line, so lanes of one wave arriving from
    // different calls (a divergent matrix instruction, which a GPU would execute twice with some
    // lanes off) are told apart even when their totals agree.
    let site = "int mra_site, int mra_line";
    let (signature, to_double, accumulate) = match dtype {
        DType::F64 => (format!("mra_double4 {name}_at({site}, double a, double b, mra_double4 acc)"), "(double)", "double"),
        DType::F16 => (format!("mra_float8 {name}_at({site}, mra_f16x{ra} a, mra_f16x{rb} b, mra_float8 acc)"), "(double)", "float"),
        _ => (format!("mra_float8 {name}_at({site}, mra_bf16x{ra} a, mra_bf16x{rb} b, mra_float8 acc)"), "mra_emu_bf16_to_double", "float"),
    };
    let (a_elem, b_elem) = if ra == 1 { ("a", "b") } else { ("a[r]", "b[r]") };
    let acc_t = if dtype == DType::F64 { "mra_double4" } else { "mra_float8" };
    format!(
        r#"
// {name}: {instr:?} for the whole wave at once, with AMD's lane layouts (emulate/layouts.rs):
// element (row, col) of each (lane, register).
static const unsigned char {name}_A[{lanes}][{ra}][2] = {ta};
static const unsigned char {name}_B[{lanes}][{rb}][2] = {tb};
static const unsigned char {name}_D[{lanes}][{rd}][2] = {td};

MRA_EMU_UNCHECKED static void {name}_execute(MraEmuWave& w) {{
    ++mra_emu_matrix_instructions;
    double A[{m}][{k}], B[{k}][{n}], C[{m}][{n}];
    mra_emu_gather<{lanes}, {ra}, {m}, {k}>("{name}", 'A', w.a, {name}_A, A);
    mra_emu_gather<{lanes}, {rb}, {k}, {n}>("{name}", 'B', w.b, {name}_B, B);
    mra_emu_gather<{lanes}, {rd}, {m}, {n}>("{name}", 'C', w.c, {name}_D, C);
    for (int lane = 0; lane < {lanes}; ++lane) {{
        for (int r = 0; r < {rd}; ++r) {{
            const int i = {name}_D[lane][r][0], j = {name}_D[lane][r][1];
            // Products of the inputs are exact in the accumulator type; sums round in it.
            {accumulate} s = ({accumulate})C[i][j];
            for (int kk = 0; kk < {k}; ++kk) s += ({accumulate})(A[i][kk] * B[kk][j]);
            w.d[lane][r] = (double)s;
        }}
    }}
}}

MRA_EMU_UNCHECKED __device__ inline {signature} {{
    MraEmuWave& w = mra_emu_wave();
    const int lane = mra_emu_lane();
    w.op[lane] = "{name}";
    w.site[lane] = mra_site;
    w.line[lane] = mra_line;
    for (int r = 0; r < {ra}; ++r) w.a[lane][r] = {to_double}({a_elem});
    for (int r = 0; r < {rb}; ++r) w.b[lane][r] = {to_double}({b_elem});
    for (int r = 0; r < {rd}; ++r) w.c[lane][r] = (double)acc[r];
    mra_emu_meet(w.meeting, "{name}", [&] {{
        mra_emu_same_op(w);
        mra_emu_same_site(w);
        {name}_execute(w);
    }});
    {acc_t} d;
    for (int r = 0; r < {rd}; ++r) d[r] = w.d[lane][r];
    return d;
}}
#define {name}(...) {name}_at(__COUNTER__, __LINE__, __VA_ARGS__)
"#,
        ta = table(instr, Operand::A, sabotage),
        tb = table(instr, Operand::B, sabotage),
        td = table(instr, Operand::D, sabotage),
    )
}

/// What every CPU prelude holds: the attribute macros, ids, the rendezvous, the block barrier.
const COMMON: &str = r#"// CPU wave emulator prelude (mra-runtime/src/emulate/prelude.rs). The block's threads are
// fibers on one host thread, switched only where a GPU thread could wait for others: the block
// barrier and the matrix instructions (every lane of the wave meets there). Waves are
// MRA_EMU_WAVE consecutive threads.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sanitizer/common_interface_defs.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

// Built with ThreadSanitizer (`validate --emulate --races`) instead of AddressSanitizer: every
// fiber is a ThreadSanitizer fiber whose switches order nothing, and the meetings (the block
// barrier, a wave's matrix instructions) are what orders the threads, as on a GPU. The
// emulator's own bookkeeping, shared by the fibers and the scheduler, is not checked.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MRA_EMU_TSAN 1
#endif
#endif
#ifdef MRA_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#define MRA_EMU_UNCHECKED __attribute__((no_sanitize("thread")))
// No instrumentation at all, not even the function's entry and exit in ThreadSanitizer's stack
// record: for the function that ends a fiber, whose exit would run after the switch away.
#define MRA_EMU_FIBER_END __attribute__((disable_sanitizer_instrumentation))
#define MRA_EMU_RELEASE(p) __tsan_release((void*)(p))
#define MRA_EMU_ACQUIRE(p) __tsan_acquire((void*)(p))
static void* mra_emu_main_fiber = nullptr;
#else
#define MRA_EMU_UNCHECKED
#define MRA_EMU_FIBER_END
#define MRA_EMU_RELEASE(p) ((void)0)
#define MRA_EMU_ACQUIRE(p) ((void)0)
#endif

#define __global__
#define __device__
// Blocks run one after another, so a block's LDS is one static array its threads share.
#define __shared__ static
// A launch bound means nothing on the host (attribute names are macro-expanded).
#define amdgpu_flat_work_group_size(lo, hi) unused

static constexpr int MRA_EMU_WAVE = @WAVE@;

[[noreturn]] static void mra_emu_fail(const char* what) {
    std::fprintf(stderr, "emulator: %s\n", what);
    std::fflush(stderr);
    _exit(3);
}

// One GPU thread: a fiber with its own stack.
struct MraEmuFiber {
    ucontext_t context;
    int tid;
    bool done;
    const char* waiting_at;  // the barrier or instruction it waits at, if any
    char* stack;
    void* asan_fake_stack;   // AddressSanitizer's bookkeeping across stack switches
    void* tsan_fiber;        // ThreadSanitizer's fiber (race-check builds)
};
static MraEmuFiber* mra_emu_fibers = nullptr;
static MraEmuFiber* mra_emu_current = nullptr;
static ucontext_t mra_emu_scheduler;
static int mra_emu_block_id = 0;
static int mra_emu_threads = 0;
// Arrivals and releases so far: a round of the scheduler that changes nothing is a deadlock.
static unsigned long mra_emu_events = 0;
// Matrix instructions executed (each once per wave), reported by main() to the backend.
static unsigned long long mra_emu_matrix_instructions = 0;

// The scheduler's (main thread's) stack, which AddressSanitizer must be told about when a
// fiber switches back to it (its fiber annotations keep stack checks right across switches).
static const void* mra_emu_main_stack = nullptr;
static size_t mra_emu_main_stack_size = 0;

MRA_EMU_UNCHECKED static void mra_emu_yield() {
    MraEmuFiber* self = mra_emu_current;
#ifdef MRA_EMU_TSAN
    __tsan_switch_to_fiber(mra_emu_main_fiber, __tsan_switch_to_fiber_no_sync);
    if (swapcontext(&self->context, &mra_emu_scheduler) != 0) mra_emu_fail("swapcontext failed");
#else
    __sanitizer_start_switch_fiber(&self->asan_fake_stack, mra_emu_main_stack, mra_emu_main_stack_size);
    if (swapcontext(&self->context, &mra_emu_scheduler) != 0) mra_emu_fail("swapcontext failed");
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &mra_emu_main_stack, &mra_emu_main_stack_size);
#endif
}

// `expected` threads meet; the last to arrive runs `last` alone, then all go on. What each
// thread did before it arrived happens before what any of them does after (a release on
// arrival, an acquire on leaving), which is all a race check learns of the threads' order.
struct MraEmuMeeting {
    int expected = 0;
    int arrived = 0;
    unsigned long generation = 0;
};
template <class F> MRA_EMU_UNCHECKED static void mra_emu_meet(MraEmuMeeting& m, const char* site, F&& last) {
    const unsigned long g = m.generation;
    ++mra_emu_events;
    MRA_EMU_RELEASE(&m);
    if (++m.arrived == m.expected) {
        MRA_EMU_ACQUIRE(&m);
        last();
        m.arrived = 0;
        ++m.generation;
        MRA_EMU_RELEASE(&m);
        return;
    }
    mra_emu_current->waiting_at = site;
    while (m.generation == g) mra_emu_yield();
    mra_emu_current->waiting_at = nullptr;
    MRA_EMU_ACQUIRE(&m);
}

// One wave's matrix-instruction registers: each lane's operands in, results out (as doubles:
// f16, bf16 and f32 values are exact in them).
struct MraEmuWave {
    MraEmuMeeting meeting;
    const char* op[MRA_EMU_WAVE];
    int site[MRA_EMU_WAVE], line[MRA_EMU_WAVE];  // the call each lane came from, and its line
    double a[MRA_EMU_WAVE][16], b[MRA_EMU_WAVE][16], c[MRA_EMU_WAVE][16], d[MRA_EMU_WAVE][16];
};
static MraEmuWave* mra_emu_waves = nullptr;
MRA_EMU_UNCHECKED static int mra_emu_lane() { return mra_emu_current->tid % MRA_EMU_WAVE; }
MRA_EMU_UNCHECKED static MraEmuWave& mra_emu_wave() { return mra_emu_waves[mra_emu_current->tid / MRA_EMU_WAVE]; }

// Every lane of a wave must execute the same instruction (they are one instruction on a GPU).
static void mra_emu_same_op(const MraEmuWave& w) {
    for (int l = 1; l < w.meeting.expected; ++l)
        if (std::strcmp(w.op[l], w.op[0]) != 0) mra_emu_fail("lanes of one wave executed different matrix instructions");
}

// ... and from the same call in the source: lanes arriving from two calls may each have the
// right total, but on a GPU the two calls are two instructions, each with some lanes off. (A
// call is a place in the text: a function called from two places has one call of its own.)
static void mra_emu_same_site(const MraEmuWave& w) {
    for (int l = 1; l < w.meeting.expected; ++l)
        if (w.site[l] != w.site[0]) {
            char msg[200];
            std::snprintf(msg, sizeof msg, "divergent matrix instruction: lanes of one wave reached %s from different calls (source lines %d and %d)", w.op[0], w.line[0], w.line[l]);
            mra_emu_fail(msg);
        }
}

// Builds the matrix an operand holds from the lanes' registers; replicated elements (RDNA3's
// lanes 16-31) must agree bit for bit, and every element must be held by some lane.
template <int LANES, int REGS, int ROWS, int COLS>
static void mra_emu_gather(const char* instr, char operand, const double (*regs)[16], const unsigned char (*layout)[REGS][2], double (&out)[ROWS][COLS]) {
    bool seen[ROWS][COLS] = {};
    for (int lane = 0; lane < LANES; ++lane) {
        for (int r = 0; r < REGS; ++r) {
            const int i = layout[lane][r][0], j = layout[lane][r][1];
            const double v = regs[lane][r];
            if (seen[i][j] && std::memcmp(&out[i][j], &v, sizeof v) != 0) {
                char msg[256];
                std::snprintf(msg, sizeof msg, "%s: %c[%d][%d] differs between lanes that must hold the same value (lane %d: %g, before: %g)", instr, operand, i, j, lane, v, out[i][j]);
                mra_emu_fail(msg);
            }
            out[i][j] = v;
            seen[i][j] = true;
        }
    }
    for (int i = 0; i < ROWS; ++i)
        for (int j = 0; j < COLS; ++j)
            if (!seen[i][j]) mra_emu_fail("a matrix element is held by no lane");
}

static inline double mra_emu_bf16_to_double(short bits) {
    const unsigned u = (unsigned)(unsigned short)bits << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// (The scheduler sets these between a fiber's runs: its own bookkeeping, not the kernel's.)
MRA_EMU_UNCHECKED __device__ inline int mra_thread_id() { return mra_emu_current->tid; }
MRA_EMU_UNCHECKED __device__ inline int mra_block_id() { return mra_emu_block_id; }

// The block barrier. Each thread says which barrier it reached (a call of mra_sync_block, or
// the kernel's end); threads of one block meeting at different ones is a divergent barrier.
enum { MRA_EMU_AT_SYNC = 1, MRA_EMU_AT_EXIT = 2 };
static MraEmuMeeting mra_emu_block;
static int* mra_emu_at = nullptr;
MRA_EMU_UNCHECKED static void mra_emu_block_barrier(int at) {
    mra_emu_at[mra_emu_current->tid] = at;
    mra_emu_meet(mra_emu_block, at == MRA_EMU_AT_SYNC ? "mra_sync_block()" : "the end of the kernel", [] {
        for (int t = 1; t < mra_emu_threads; ++t)
            if (mra_emu_at[t] != mra_emu_at[0]) mra_emu_fail("divergent barrier: some threads of a block reached mra_sync_block() while others left the kernel");
    });
}
__device__ inline void mra_sync_block() { mra_emu_block_barrier(MRA_EMU_AT_SYNC); }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_functions_a_prelude_defines() {
        let p = "__device__ __attribute__((always_inline)) inline int mra_thread_id() {\n    return 0;\n}\n\
                 __device__ __attribute__((always_inline)) inline mra_float8 mra_wmma_f32_16x16x16_f16_gfx12(mra_f16x8 a, mra_f16x8 b, mra_float8 acc) {\n";
        assert_eq!(defined_functions(p), vec!["mra_thread_id", "mra_wmma_f32_16x16x16_f16_gfx12"]);
    }

    #[test]
    fn an_unknown_prelude_function_is_refused() {
        let p = "__device__ inline int mra_warp_shuffle(int x) {\n";
        assert!(matches!(cpu_prelude(p, 64, Sabotage::None), Err(SourceError::UnknownFunction(n)) if n == "mra_warp_shuffle"));
    }
}
