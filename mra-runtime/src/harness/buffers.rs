//! The device buffers of one harness configuration (A, B, C, one workspace per stream, and
//! with `--stream-data private` an A and a C per stream) and the uploads into them.

use super::device_bytes::to_device_bytes;
use super::inputs::Inputs;
use crate::backend::{Backend, LaunchArgs};
use crate::error::Result;
use mra_codegen::DType;

/// Device buffers for one harness configuration, in the kernel's element type.
pub struct Buffers<B: Backend> {
    /// Stream 0's A and C (every stream's, unless `--stream-data private`).
    pub a: B::Buffer,
    pub b: B::Buffer,
    pub c: B::Buffer,
    /// With `--stream-data private`: the A and C of streams 1, 2, ... (empty otherwise).
    pub private: Vec<(B::Buffer, B::Buffer)>,
    /// One per stream (may be empty allocations for levels without a workspace).
    pub workspaces: Vec<B::Buffer>,
    pub dtype: DType,
    pub nfuncs: usize,
    pub nblocks: usize,
}

impl<B: Backend> Buffers<B> {
    /// The A that stream `s` reads.
    pub fn a_of(&self, s: usize) -> &B::Buffer {
        if s == 0 || self.private.is_empty() { &self.a } else { &self.private[s - 1].0 }
    }

    /// The C that stream `s` writes.
    pub fn c_of(&self, s: usize) -> &B::Buffer {
        if s == 0 || self.private.is_empty() { &self.c } else { &self.private[s - 1].1 }
    }

    #[inline]
    pub(super) fn args(&self, stream: usize) -> LaunchArgs {
        LaunchArgs {
            a: B::device_ptr(self.a_of(stream)),
            b: B::device_ptr(&self.b),
            c: B::device_ptr(self.c_of(stream)),
            workspace: B::device_ptr(&self.workspaces[stream]),
            nfuncs: self.nfuncs as i32,
            nblocks: self.nblocks as i32,
            op: None,
        }
    }

    /// Uploads A and B.
    pub fn upload_inputs(&self, gpu: &B, inputs: &Inputs) -> Result<()> {
        self.upload_a(gpu, &to_device_bytes(self.dtype, &inputs.a)?)?;
        gpu.upload(&self.b, &to_device_bytes(self.dtype, &inputs.b)?)
    }

    /// Uploads `bytes` as A, into every stream's A where the streams have their own.
    pub fn upload_a(&self, gpu: &B, bytes: &[u8]) -> Result<()> {
        gpu.upload(&self.a, bytes)?;
        self.private.iter().try_for_each(|(a, _)| gpu.upload(a, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fake::{cfg, prepared, session, Fake};
    use crate::harness::{from_device_bytes, time_reps, HarnessConfig, StreamData};
    use crate::validate::Comparison;

    #[test]
    fn private_stream_data_gives_each_stream_its_own_a_and_c_and_each_c_its_transform() {
        // Three streams, three tasks per rep: stream s runs task s. With private data each
        // stream reads its own A (every one holding the uploaded values) and writes its own
        // C, which must then hold the FP64 reference transform of A; shared data keeps one of
        // each. vendor-3gemm goes through the fake's column-major GEMMs (not the reference),
        // fused-pipe through its launch.
        for name in ["fused-pipe", "vendor-3gemm"] {
            for data in [StreamData::Shared, StreamData::Private] {
                let s = session(300.0);
                let c = HarnessConfig { stream_data: data, ..cfg(7, 3, 3, 1) };
                let (p, bufs) = prepared(&s, name, 5, &c);
                assert_eq!(bufs.private.len(), if data == StreamData::Private { 2 } else { 0 }, "{name} {data:?}");
                let inputs = Inputs::random(DType::F64, 5, 7, 11);
                bufs.upload_inputs(&s.gpu, &inputs).unwrap();
                for st in 0..3 {
                    s.gpu.poison(bufs.c_of(st)).unwrap();
                }
                let streams = s.streams(c.streams).unwrap();
                time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
                let a: Vec<u64> = (0..3).map(|st| Fake::device_ptr(bufs.a_of(st))).collect();
                let distinct = a.iter().collect::<std::collections::BTreeSet<_>>().len();
                assert_eq!(distinct, if data == StreamData::Private { 3 } else { 1 }, "{name} {data:?}: the streams' A");
                for (stream, args) in s.gpu.launches() {
                    let st = streams.iter().position(|x| *x == stream).unwrap();
                    if name == "fused-pipe" {
                        assert_eq!((args.a, args.c), (a[st], Fake::device_ptr(bufs.c_of(st))), "{data:?}: stream {st}'s launch");
                    }
                }
                for st in 0..3 {
                    let got = from_device_bytes(DType::F64, &s.gpu.download(bufs.c_of(st)).unwrap()).unwrap();
                    let cmp = Comparison::of_in(&got, &inputs.reference, DType::F64);
                    assert!(cmp.passes(1e-12), "{name} {data:?}: stream {st}'s C: {cmp:?}");
                }
            }
        }
    }
}
