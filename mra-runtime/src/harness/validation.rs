//! The validation run: a prepared level once, on poisoned outputs, against the FP64 CPU
//! reference.

use super::buffers::Buffers;
use super::device_bytes::from_device_bytes;
use super::inputs::Inputs;
use super::prepared::Prepared;
use crate::backend::Backend;
use crate::error::Result;
use crate::validate::Comparison;

/// Runs a prepared level once on poisoned outputs and workspaces; returns C as f64.
pub fn run_once<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, stream: &B::Stream) -> Result<Vec<f64>> {
    gpu.poison(&bufs.c)?;
    for w in &bufs.workspaces {
        gpu.poison(w)?;
    }
    p.launch(gpu, stream, bufs, 0)?;
    gpu.synchronize(stream)?;
    from_device_bytes(bufs.dtype, &gpu.download(&bufs.c)?)
}

/// Validates a prepared level on `inputs` against the FP64 CPU reference (the copy level
/// against its input, which it must reproduce exactly).
pub fn validate<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, inputs: &Inputs) -> Result<Comparison> {
    bufs.upload_inputs(gpu, inputs)?;
    p.set_b(gpu, bufs)?;
    let got = run_once(gpu, p, bufs, &gpu.stream()?)?;
    let want = if p.kernel.plan.is_copy() { &inputs.a } else { &inputs.reference };
    Ok(Comparison::of_in(&got, want, bufs.dtype))
}

#[cfg(test)]
mod tests {
    use crate::harness::fake::{cfg, prepared, session, validated, Op};

    #[test]
    fn validation_poisons_the_output_so_an_unwritten_element_fails() {
        let s = session(1.0);
        let c = cfg(5, 1, 2, 1);
        for name in ["copy", "L1"] {
            let (p, bufs) = prepared(&s, name, 3, &c);
            let cmp = validated(&s, &p, &bufs, 7);
            let tol = if p.kernel.plan.is_copy() { f64::MIN_POSITIVE } else { 1e-12 };
            assert!(cmp.passes(tol), "{name}: {cmp:?}");
            // C still holds the right answer; a kernel that writes nothing must fail anyway.
            s.gpu.lazy.set(true);
            s.gpu.ops.borrow_mut().clear();
            let cmp = validated(&s, &p, &bufs, 7);
            s.gpu.lazy.set(false);
            assert_eq!(cmp.non_finite, c.nfuncs * 27, "{name}: {cmp:?}");
            let ops = s.gpu.ops.borrow();
            let at = |want: &dyn Fn(&Op) -> bool| ops.iter().position(want).unwrap();
            let poison_c = at(&|o| *o == Op::Poison(bufs.c));
            let launch = at(&|o| matches!(o, Op::Launch { .. }));
            assert!(at(&|o| *o == Op::Upload(bufs.a)) < poison_c && poison_c < launch, "{ops:?}");
            assert!(bufs.workspaces.iter().all(|w| ops[..launch].contains(&Op::Poison(*w))), "{ops:?}");
            assert!(matches!(ops[launch + 1], Op::Sync(_)), "{ops:?}");
        }
    }
}
