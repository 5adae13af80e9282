//! The emulated program: the generated kernel's text with its prelude replaced by the CPU
//! prelude (nothing else changed), followed by a driver `main()` that runs the grid.

use super::layouts::Sabotage;
use super::prelude::{cpu_prelude, prelude_range, SourceError};

/// The emulated source of `gpu_source` (a generated HIP kernel with entry `entry`) on waves of
/// `wave` lanes: the GPU text up to the prelude, the CPU prelude, the GPU text from the
/// prelude's end marker on (byte for byte), then the driver.
pub fn emulated_source(gpu_source: &str, entry: &str, wave: u32, sabotage: Sabotage) -> Result<String, SourceError> {
    let (start, end) = prelude_range(gpu_source)?;
    let mut s = String::with_capacity(gpu_source.len() + 16 * 1024);
    s += &gpu_source[..start];
    s += &cpu_prelude(&gpu_source[start..end], wave, sabotage)?;
    s += &gpu_source[end..];
    s += &DRIVER.replace("@ENTRY@", entry);
    Ok(s)
}

/// `main(nblocks, nfuncs, a, b, c, workspace)`: reads the four buffers from files (each into a
/// heap block of exactly its size, so AddressSanitizer sees any access past it), runs the
/// grid block after block with THREADS host threads, writes c and workspace back.
const DRIVER: &str = r#"
// ---- CPU emulator driver (mra-runtime/src/emulate/source.rs) ----
#include <thread>
#include <vector>

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

int main(int argc, char** argv) {
    if (argc != 7) mra_emu_fail("usage: kernel NBLOCKS NFUNCS A B C WORKSPACE");
    const int nblocks = std::atoi(argv[1]), nfuncs = std::atoi(argv[2]);
    MraEmuBuffer buf[4];
    for (int i = 0; i < 4; ++i) buf[i] = mra_emu_read(argv[3 + i]);
    mra_emu_threads = THREADS;
    mra_emu_at = new int[THREADS];
    mra_emu_block.expected = THREADS;
    const int waves = (THREADS + MRA_EMU_WAVE - 1) / MRA_EMU_WAVE;
    mra_emu_waves = new MraEmuWave[waves];
    for (int w = 0; w < waves; ++w) mra_emu_waves[w].rv.expected = (w + 1) * MRA_EMU_WAVE <= THREADS ? MRA_EMU_WAVE : THREADS - w * MRA_EMU_WAVE;
    std::vector<std::thread> threads;
    for (int t = 0; t < THREADS; ++t) {
        threads.emplace_back([&, t] {
            mra_emu_tid = t;
            for (int block = 0; block < nblocks; ++block) {
                mra_emu_bid = block;
                mra_emu_launch(@ENTRY@, buf, nfuncs, nblocks);
                mra_emu_block_barrier(MRA_EMU_AT_EXIT);  // the block is done before the next starts
            }
        });
    }
    for (auto& t : threads) t.join();
    mra_emu_write(argv[5], buf[2]);
    mra_emu_write(argv[6], buf[3]);
    return 0;
}
"#;
