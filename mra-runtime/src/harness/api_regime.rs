//! The API regime: how an MRA code calls a transform (the export's launcher, `Transformer`):
//! one launch over a batch far larger than L2, on one stream, its grid what the GPU holds of the
//! kernel at once, timed against a device-to-device copy of the same bytes in the same process.
//! The seed's harness (many tasks on four streams over one A and C that stay in L2 up to K ≈ 12)
//! measures something else; both regimes are reported.

use super::buffers::Buffers;
use super::config::{HarnessConfig, StreamData, AUTO_BLOCKS};
use crate::backend::Backend;
use crate::error::Result;
use crate::warmup::Warmup;
use mra_codegen::DType;

/// Input bytes of the API regime's batch by default: 2 GiB, far beyond any GPU's L2.
pub const DEFAULT_BATCH_BYTES: u64 = 2 << 30;

/// Tensors of order `k` in `dtype` that make `bytes` of input (at least one).
pub fn batch_for_bytes(k: u32, dtype: DType, bytes: u64) -> usize {
    let tensor = (k as u64).pow(3) * dtype.bytes() as u64;
    (bytes / tensor).max(1) as usize
}

/// The API regime's harness: `nfuncs` tensors in one launch (one task, one stream, its own A and
/// C), `max_blocks` blocks at most (`AUTO_BLOCKS`: what the GPU holds of the kernel at once).
pub fn config(nfuncs: usize, max_blocks: Option<usize>, reps: usize, warmup: Warmup) -> HarnessConfig {
    HarnessConfig { nfuncs, max_blocks: max_blocks.unwrap_or(AUTO_BLOCKS), tasks: 1, streams: 1, reps, warmup, stream_data: StreamData::Private }
}

/// Fills A's `nfuncs` tensors with copies of the first `have` tensors (already uploaded),
/// doubling on the device: the timed batch holds real data without a host upload of it all.
pub fn tile_a<B: Backend>(gpu: &B, bufs: &Buffers<B>, k: u32, have: usize, stream: &B::Stream) -> Result<()> {
    let tensor = (k as usize).pow(3) * bufs.dtype.bytes() as usize;
    tile(gpu, &bufs.a, tensor, have, bufs.nfuncs, stream)
}

/// Fills `buf`'s first `count` units of `unit` bytes with copies of its first `have` units
/// (already there), doubling on the device.
pub fn tile<B: Backend>(gpu: &B, buf: &B::Buffer, unit: usize, have: usize, count: usize, stream: &B::Stream) -> Result<()> {
    let mut filled = have.min(count);
    while filled < count {
        let n = filled.min(count - filled);
        gpu.copy_device(buf, filled * unit, buf, 0, n * unit, stream)?;
        filled += n;
    }
    gpu.synchronize(stream)
}

/// Microseconds of `reps` device-to-device copies of A's bytes into C, each timed with events
/// after warm-up copies as `warmup` asks: the floor of the API regime.
pub fn time_copy<B: Backend>(gpu: &B, bufs: &Buffers<B>, k: u32, reps: usize, warmup: Warmup, stream: &B::Stream) -> Result<Vec<f64>> {
    let bytes = bufs.nfuncs * (k as usize).pow(3) * bufs.dtype.bytes() as usize;
    let (start, end) = (gpu.event()?, gpu.event()?);
    let mut one = || -> Result<f64> {
        gpu.record(&start, stream)?;
        gpu.copy_device(&bufs.c, 0, &bufs.a, 0, bytes, stream)?;
        gpu.record(&end, stream)?;
        gpu.synchronize(stream)?;
        Ok(gpu.elapsed_ms(&start, &end)? as f64)
    };
    crate::warmup::run(warmup, None, &mut one)?;
    (0..reps).map(|_| one().map(|ms| ms * 1000.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_batch_is_two_gibibytes_of_input() {
        // 2^31 bytes over K³ · 8: K = 6 holds 1,242,756 tensors, K = 32 8,192 (by hand).
        assert_eq!(batch_for_bytes(6, DType::F64, DEFAULT_BATCH_BYTES), 1_242_756);
        assert_eq!(batch_for_bytes(32, DType::F64, DEFAULT_BATCH_BYTES), 8_192);
        assert_eq!(batch_for_bytes(32, DType::F64, 1), 1, "at least one tensor");
    }

    /// The batch is the first tensors repeated: tensor i holds tensor i mod have, whatever the
    /// counts (checked on the fake device's memory, element by element).
    #[test]
    fn tiling_repeats_the_uploaded_tensors_over_the_batch() {
        use crate::harness::fake::{cfg, level, session};
        let s = session(1.0);
        let p = s.prepare(&level("copy"), 2, DType::F64).unwrap();
        for (n, have) in [(10usize, 3usize), (7, 7), (1, 1), (33, 4)] {
            let bufs = s.allocate(&cfg(n, 1, 1, 1), &p.kernel.plan).unwrap();
            let values: Vec<f64> = (0..n * 8).map(|i| if i < have * 8 { i as f64 } else { f64::NAN }).collect();
            s.gpu.upload(&bufs.a, &crate::harness::to_device_bytes(DType::F64, &values).unwrap()).unwrap();
            let stream = s.gpu.stream().unwrap();
            tile_a(&s.gpu, &bufs, 2, have, &stream).unwrap();
            let a = crate::harness::from_device_bytes(DType::F64, &s.gpu.download(&bufs.a).unwrap()).unwrap();
            for (i, v) in a.iter().enumerate() {
                assert_eq!(*v, ((i / 8) % have * 8 + i % 8) as f64, "N={n}, have {have}: element {i}");
            }
        }
    }
}
