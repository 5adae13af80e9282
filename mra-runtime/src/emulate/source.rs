//! The emulated program: the generated kernel's text with its prelude replaced by the CPU
//! prelude (nothing else changed), followed by a driver `main()` that runs the grid.

use super::layouts::Sabotage;
use super::prelude::{cpu_prelude, prelude_range, SourceError};

/// The emulated source of `gpu_source` (a generated HIP kernel with entry `entry`) on waves of
/// `wave` lanes: the GPU text up to the prelude, the CPU prelude, the GPU text from the
/// prelude's end marker on (byte for byte), then the driver.
///
/// `#line` directives name the GPU text's lines as the kernel source's own (`<entry>.hip`,
/// as `--emit-src` wrote it): a compile error, and the source line a divergent matrix
/// instruction reports (`__LINE__`), point at the line of the kernel the user has, not at a
/// line of the emulated C++ (a temporary file, removed after the compile).
pub fn emulated_source(gpu_source: &str, entry: &str, wave: u32, sabotage: Sabotage) -> Result<String, SourceError> {
    let (start, end) = prelude_range(gpu_source)?;
    let name = source_name(entry);
    let end_line = gpu_source[..end].matches('\n').count() + 1;
    let mut s = String::with_capacity(gpu_source.len() + 16 * 1024);
    s += &format!("#line 1 \"{name}\"\n");
    s += &gpu_source[..start];
    s += "#line 1 \"CPU prelude of the emulator (mra-runtime/src/emulate/prelude.rs)\"\n";
    s += &cpu_prelude(&gpu_source[start..end], wave, sabotage)?;
    end_the_line(&mut s);
    s += &format!("#line {end_line} \"{name}\"\n");
    s += &gpu_source[end..];
    end_the_line(&mut s);
    s += "#line 1 \"CPU driver of the emulator (mra-runtime/src/emulate/source.rs)\"\n";
    s += &DRIVER.replace("@ENTRY@", entry);
    Ok(s)
}

/// A directive must start a line: a text without a final newline gets one.
fn end_the_line(s: &mut String) {
    if !s.ends_with('\n') {
        s.push('\n');
    }
}

/// The name the emulated source gives the kernel's own lines: `mra_l3_regblk_k5_f64.hip`.
pub fn source_name(entry: &str) -> String {
    format!("{entry}.hip")
}

/// `main(threads, nblocks, nfuncs, a, b, c, workspace)`: reads the four buffers from files (each into a
/// heap block of exactly its size, so AddressSanitizer sees any access past it), runs the
/// grid block after block, each block's THREADS threads as fibers, writes c and workspace back.
const DRIVER: &str = r#"
// ---- CPU emulator driver (mra-runtime/src/emulate/source.rs) ----
struct MraEmuBuffer {
    unsigned char* data = nullptr;
    long size = 0;
};

static MraEmuBuffer mra_emu_read(const char* path) {
    std::FILE* f = std::fopen(path, "rb");
    if (!f) mra_emu_fail("cannot open an input buffer file");
    std::fseek(f, 0, SEEK_END);
    MraEmuBuffer b;
    b.size = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    b.data = new unsigned char[b.size > 0 ? b.size : 1];
    if (b.size > 0 && std::fread(b.data, 1, b.size, f) != (size_t)b.size) mra_emu_fail("cannot read an input buffer file");
    std::fclose(f);
    return b;
}

static void mra_emu_write(const char* path, const MraEmuBuffer& b) {
    std::FILE* f = std::fopen(path, "wb");
    if (!f || (b.size > 0 && std::fwrite(b.data, 1, b.size, f) != (size_t)b.size)) mra_emu_fail("cannot write an output buffer file");
    std::fclose(f);
}

// Calls the kernel with its own parameter types (the element type is deduced).
template <class T>
static void mra_emu_launch(void (*kernel)(const T*, const T*, T*, T*, int, int), MraEmuBuffer* buf, int nfuncs, int nblocks) {
    kernel((const T*)buf[0].data, (const T*)buf[1].data, (T*)buf[2].data, (T*)buf[3].data, nfuncs, nblocks);
}

// An operation's kernel (mra_codegen::Operation): four more parameters; with tensor pointers,
// a and c are arrays of pointers into the A and C pools (made from byte offsets in main).
static long long mra_emu_a_stride = 0, mra_emu_c_stride = 0;
static double mra_emu_alpha = 1, mra_emu_beta = 0;
template <class T>
static void mra_emu_launch(void (*kernel)(const T*, const T*, T*, T*, int, int, long long, long long, double, double), MraEmuBuffer* buf, int nfuncs, int nblocks) {
    kernel((const T*)buf[0].data, (const T*)buf[1].data, (T*)buf[2].data, (T*)buf[3].data, nfuncs, nblocks, mra_emu_a_stride, mra_emu_c_stride, mra_emu_alpha, mra_emu_beta);
}
template <class T>
static void mra_emu_launch(void (*kernel)(const T* const*, const T*, T* const*, T*, int, int, long long, long long, double, double), MraEmuBuffer* buf, int nfuncs, int nblocks) {
    kernel((const T* const*)buf[0].data, (const T*)buf[1].data, (T* const*)buf[2].data, (T*)buf[3].data, nfuncs, nblocks, mra_emu_a_stride, mra_emu_c_stride, mra_emu_alpha, mra_emu_beta);
}
// A rank sum's kernel: its terms after the four ("ranks=R" on the command line).
static int mra_emu_ranks = 0;
template <class T>
static void mra_emu_launch(void (*kernel)(const T*, const T*, T*, T*, int, int, long long, long long, double, double, int), MraEmuBuffer* buf, int nfuncs, int nblocks) {
    kernel((const T*)buf[0].data, (const T*)buf[1].data, (T*)buf[2].data, (T*)buf[3].data, nfuncs, nblocks, mra_emu_a_stride, mra_emu_c_stride, mra_emu_alpha, mra_emu_beta, mra_emu_ranks);
}
template <class T>
static void mra_emu_launch(void (*kernel)(const T* const*, const T*, T* const*, T*, int, int, long long, long long, double, double, int), MraEmuBuffer* buf, int nfuncs, int nblocks) {
    kernel((const T* const*)buf[0].data, (const T*)buf[1].data, (T* const*)buf[2].data, (T*)buf[3].data, nfuncs, nblocks, mra_emu_a_stride, mra_emu_c_stride, mra_emu_alpha, mra_emu_beta, mra_emu_ranks);
}

static MraEmuBuffer mra_emu_buf[4];
static MraEmuBuffer mra_emu_pool[2];  // with tensor pointers: the buffers they point into
static int mra_emu_nfuncs = 0, mra_emu_nblocks = 0;

// A fiber's life: the kernel, then the end-of-kernel barrier, then back to the scheduler.
MRA_EMU_FIBER_END static void mra_emu_fiber_main() {
#ifndef MRA_EMU_TSAN
    __sanitizer_finish_switch_fiber(nullptr, &mra_emu_main_stack, &mra_emu_main_stack_size);
#endif
    mra_emu_launch(@ENTRY@, mra_emu_buf, mra_emu_nfuncs, mra_emu_nblocks);
    mra_emu_block_barrier(MRA_EMU_AT_EXIT);
    mra_emu_current->done = true;
#ifdef MRA_EMU_TSAN
    // Past the kernel's end barrier: the scheduler may see all this fiber did (it reads C).
    __tsan_switch_to_fiber(mra_emu_main_fiber, 0);
#else
    __sanitizer_start_switch_fiber(nullptr, mra_emu_main_stack, mra_emu_main_stack_size);  // this fiber ends
#endif
}

// 256 KiB of stack per GPU thread, below a guard page.
static constexpr size_t MRA_EMU_STACK = 256 * 1024, MRA_EMU_GUARD = 4096;

int main(int argc, char** argv) {
    // A rank sum's "ranks=R" follows the four operation arguments.
    if (argc >= 13 && std::strncmp(argv[12], "ranks=", 6) == 0) {
        mra_emu_ranks = std::atoi(argv[12] + 6);
        for (int i = 12; i + 1 < argc; ++i) argv[i] = argv[i + 1];
        --argc;
    }
    if (argc != 8 && argc != 12 && argc != 14) mra_emu_fail("usage: kernel THREADS NBLOCKS NFUNCS A B C WORKSPACE [A_STRIDE C_STRIDE ALPHA_BITS BETA_BITS [ranks=R] [A_POOL C_POOL]]");
#ifdef MRA_EMU_TSAN
    mra_emu_main_fiber = __tsan_get_current_fiber();
#endif
    const int THREADS = std::atoi(argv[1]);  // the block size the launch asks for
    mra_emu_nblocks = std::atoi(argv[2]);
    mra_emu_nfuncs = std::atoi(argv[3]);
    if (THREADS < 1 || mra_emu_nblocks < 1) mra_emu_fail("THREADS and NBLOCKS must be at least 1");
    for (int i = 0; i < 4; ++i) mra_emu_buf[i] = mra_emu_read(argv[4 + i]);
    if (argc >= 12) {
        mra_emu_a_stride = std::atoll(argv[8]);
        mra_emu_c_stride = std::atoll(argv[9]);
        const unsigned long long bits[2] = {std::strtoull(argv[10], nullptr, 10), std::strtoull(argv[11], nullptr, 10)};
        std::memcpy(&mra_emu_alpha, &bits[0], 8);
        std::memcpy(&mra_emu_beta, &bits[1], 8);
    }
    if (argc == 14) {
        // A and C hold byte offsets into the pools; each becomes the pointer it stands for.
        for (int i = 0; i < 2; ++i) {
            mra_emu_pool[i] = mra_emu_read(argv[12 + i]);
            MraEmuBuffer& ptrs = mra_emu_buf[2 * i];
            for (long e = 0; e + 8 <= ptrs.size; e += 8) {
                unsigned long long off;
                std::memcpy(&off, ptrs.data + e, 8);
                if ((long)off >= mra_emu_pool[i].size) mra_emu_fail("a tensor pointer lies outside its pool");
                unsigned char* p = mra_emu_pool[i].data + off;
                std::memcpy(ptrs.data + e, &p, 8);
            }
        }
    }
    mra_emu_threads = THREADS;
    mra_emu_at = new int[THREADS];
    mra_emu_block.expected = THREADS;
    const int waves = (THREADS + MRA_EMU_WAVE - 1) / MRA_EMU_WAVE;
    mra_emu_waves = new MraEmuWave[waves];
    for (int w = 0; w < waves; ++w) mra_emu_waves[w].meeting.expected = (w + 1) * MRA_EMU_WAVE <= THREADS ? MRA_EMU_WAVE : THREADS - w * MRA_EMU_WAVE;
    mra_emu_fibers = new MraEmuFiber[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        void* m = mmap(nullptr, MRA_EMU_STACK + MRA_EMU_GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) mra_emu_fail("cannot map a fiber stack");
        mprotect(m, MRA_EMU_GUARD, PROT_NONE);
        mra_emu_fibers[t].stack = (char*)m + MRA_EMU_GUARD;
#ifdef MRA_EMU_TSAN
        mra_emu_fibers[t].tsan_fiber = __tsan_create_fiber(0);
#endif
    }
    for (int block = 0; block < mra_emu_nblocks; ++block) {
        mra_emu_block_id = block;
        for (int t = 0; t < THREADS; ++t) {
            MraEmuFiber& f = mra_emu_fibers[t];
            f.tid = t;
            f.done = false;
            f.waiting_at = nullptr;
            f.asan_fake_stack = nullptr;
            if (getcontext(&f.context) != 0) mra_emu_fail("getcontext failed");
            f.context.uc_stack.ss_sp = f.stack;
            f.context.uc_stack.ss_size = MRA_EMU_STACK;
            f.context.uc_link = &mra_emu_scheduler;
            makecontext(&f.context, mra_emu_fiber_main, 0);
        }
        // Round robin until every thread has left the kernel; a round in which no thread
        // arrives anywhere while some still wait is a deadlock.
        for (int live = THREADS; live > 0;) {
            const unsigned long before = mra_emu_events;
            live = 0;
            for (int t = 0; t < THREADS; ++t) {
                MraEmuFiber& f = mra_emu_fibers[t];
                if (f.done) continue;
                mra_emu_current = &f;
#ifdef MRA_EMU_TSAN
                // What the scheduler did (the inputs read, ids set) happens before the fiber
                // goes on; the fibers' own switches to the scheduler order nothing.
                __tsan_switch_to_fiber(f.tsan_fiber, 0);
                if (swapcontext(&mra_emu_scheduler, &f.context) != 0) mra_emu_fail("swapcontext failed");
#else
                void* fake_stack = nullptr;
                __sanitizer_start_switch_fiber(&fake_stack, f.stack, MRA_EMU_STACK);
                if (swapcontext(&mra_emu_scheduler, &f.context) != 0) mra_emu_fail("swapcontext failed");
                __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
                live += !f.done;
            }
            if (live > 0 && mra_emu_events == before) {
                // Where the threads wait: one line per run of threads waiting at the same place.
                for (int t = 0; t < THREADS;) {
                    const char* at = mra_emu_fibers[t].done ? "(left the kernel)" : mra_emu_fibers[t].waiting_at ? mra_emu_fibers[t].waiting_at : "(nothing)";
                    int u = t + 1;
                    while (u < THREADS && (mra_emu_fibers[u].done ? "(left the kernel)" : mra_emu_fibers[u].waiting_at ? mra_emu_fibers[u].waiting_at : "(nothing)") == at) ++u;
                    std::fprintf(stderr, "emulator: block %d threads %d-%d: %s\n", block, t, u - 1, at);
                    t = u;
                }
                mra_emu_fail("deadlock: the threads above wait for others that never arrive");
            }
        }
    }
    mra_emu_write(argv[6], mra_emu_buf[2]);
    mra_emu_write(argv[7], mra_emu_buf[3]);
    if (argc == 14) mra_emu_write(argv[13], mra_emu_pool[1]);
    std::printf("matrix instructions %llu\n", mra_emu_matrix_instructions);
    return 0;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of the GPU text keeps its own number and name in the emulated source: what
    /// `#line` says for each line of the emulated text, replayed, is the GPU text's line.
    #[test]
    fn the_kernels_lines_keep_their_numbers() {
        let a = mra_codegen::arch::find("gfx90a").unwrap();
        let kernel = mra_codegen::generate(&mra_codegen::levels::find("L3").unwrap(), mra_codegen::Request { k: 5, arch: a, dtype: mra_codegen::DType::F64 }).unwrap();
        let emu = emulated_source(&kernel.source, &kernel.entry, 64, Sabotage::None).unwrap();
        let gpu: Vec<&str> = kernel.source.lines().collect();
        let (mut file, mut line, mut checked) = (String::new(), 0usize, 0);
        for text in emu.lines() {
            if let Some(rest) = text.strip_prefix("#line ") {
                let (n, f) = rest.split_once(' ').unwrap();
                (line, file) = (n.parse().unwrap(), f.trim_matches('"').to_string());
                continue;
            }
            if file == "mra_l3_regblk_k5_f64.hip" {
                assert_eq!(text, gpu[line - 1], "emulated line named {file}:{line}");
                checked += 1;
            }
            line += 1;
        }
        // Every GPU line outside the replaced prelude body.
        let (start, end) = prelude_range(&kernel.source).unwrap();
        let replaced = kernel.source[start..end].lines().count();
        assert_eq!(checked, gpu.len() - replaced);
    }
}
