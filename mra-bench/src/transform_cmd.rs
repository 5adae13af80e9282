//! `mra-bench transform`: your own tensors from NumPy files. A (N x K x K x K or N x K³) and B
//! (K x K; or X, Y, Z, one per dimension; one matrix with `--dim`; three (R, K, K) stacks and
//! `--weights` for a rank sum; C0 with `--beta`) are read with `npyz`; C is computed on the GPU
//! found (`mra_runtime::transformer`, `transformer_op` for the operations), by
//! the level's generated HIP for `--arch` on the CPU wave emulator with `--emulate`, or on the
//! FP64 CPU reference with `--reference`, and written atomically in A's shape and dtype (the
//! output path checked first). Reading and writing the files is `npy`'s job.

use crate::cli::{NpyCompareArgs, NpyRandomArgs, TransformArgs};
use crate::npy::{read_npy, shape_str, write_npy, Array};
use crate::select::{self, CmdResult};
use mra_codegen::DType;
use mra_codegen::{Layout, Matrices, Operation};
use mra_runtime::transformer::{Element, Target, Transformer};
use mra_runtime::transformer_op::OpMatrices;
use mra_runtime::RuntimeError;
use std::path::Path;

pub fn run(args: &TransformArgs) -> CmdResult {
    let dtype = select::dtype(&args.dtype)?;
    if args.arch.is_some() && !args.emulate {
        return Err("--arch picks the arch whose kernel --emulate runs; without --emulate the level runs for the GPU found (or the CPU reference): drop --arch or add --emulate".into());
    }
    // As every other subcommand (HarnessConfig::check): 0 blocks per launch is no setting.
    if args.max_blocks == 0 {
        return Err("-M must be at least 1 (the maximum number of blocks per launch)".into());
    }
    // The output is checked before anything is read or computed: an emulated or GPU run must
    // not be wasted on a path that cannot be written, nor overwrite one of its own inputs.
    check_output(&args.output)?;
    let inputs = std::iter::once(("--input", &args.input))
        .chain(args.matrix.iter().map(|m| ("--matrix", m)))
        .chain(args.initial.iter().map(|c| ("--initial", c)))
        .chain(args.weights.iter().map(|w| ("--weights", w)));
    for (flag, input) in inputs {
        if crate::outfile::same_file(&args.output, input) {
            return Err(format!(
                "--output {} is the same file as {flag} {}; writing C there would destroy the input: give another output path",
                args.output.display(),
                input.display()
            )
            .into());
        }
    }
    operation(args)?;
    let target = if args.reference {
        Target::Reference
    } else if args.emulate {
        Target::Emulate { arch: select::arch(args.arch.as_deref().unwrap_or("gfx90a"))? }
    } else {
        Target::Gpu
    };
    match dtype {
        DType::F64 => transform::<f64>(args, target),
        DType::F32 => transform::<f32>(args, target),
        d => Err(format!("--dtype {d}: transform reads and writes f64 or f32 arrays").into()),
    }
}

/// The operation the flags ask for, or why they do not fit together.
fn operation(args: &TransformArgs) -> CmdResult<Operation> {
    let scaled = args.alpha != 1.0 || args.beta != 0.0;
    if args.beta != 0.0 && args.initial.is_none() {
        return Err(format!("--beta {} accumulates into C0: give it with --initial C0.npy", args.beta).into());
    }
    if args.beta == 0.0 && args.initial.is_some() {
        return Err("--initial is read only with a --beta other than 0 (C = alpha T(A) + beta C0)".into());
    }
    let matrices = match (args.matrix.len(), args.dim, &args.weights) {
        (1, None, None) => Matrices::One,
        (1, Some(_), None) => Matrices::PerDim,
        (3, None, None) => Matrices::PerDim,
        (3, None, Some(_)) => Matrices::RankSum,
        (_, Some(_), _) => return Err("--dim transforms one dimension with one --matrix file".into()),
        (_, _, Some(_)) => return Err("--weights sums the terms of three --matrix files X,Y,Z of shape (R, K, K)".into()),
        (n, ..) => return Err(format!("--matrix takes one file (B) or three (X,Y,Z), not {n}").into()),
    };
    let op = Operation { matrices, layout: Layout::Contiguous, scaled: scaled || matrices != Matrices::One };
    Ok(if op == (Operation { scaled: false, ..Operation::SEED }) { Operation::SEED } else { op })
}

fn transform<T: Element + npyz::Deserialize + npyz::AutoSerialize>(args: &TransformArgs, target: Target) -> CmdResult {
    let op = operation(args)?;
    let a = read_npy::<T>(&args.input, "--input")?;
    let mats: Vec<Array<T>> = args.matrix.iter().map(|m| read_npy::<T>(m, "--matrix")).collect::<CmdResult<_>>()?;
    let path0 = &args.matrix[0];
    // K from the first matrix's last two dimensions; a rank sum's hold R of them.
    let (ranks, k) = match (op.matrices, &mats[0].shape[..]) {
        (Matrices::RankSum, [r, x, y]) if x == y => (*r, *x),
        (Matrices::RankSum, _) => return Err(format!("--matrix {}: X has shape {}; a rank sum's X, Y, Z are (R, K, K)", path0.display(), shape_str(&mats[0].shape)).into()),
        (_, [x, y]) if x == y => (1, *x),
        _ => return Err(format!("--matrix {}: B has shape {}; it must be K x K", path0.display(), shape_str(&mats[0].shape)).into()),
    };
    if !(1..=mra_codegen::K_MAX as u64).contains(&k) {
        return Err(format!("--matrix {}: K = {k} (from B's shape); levels support 1 <= K <= {}", path0.display(), mra_codegen::K_MAX).into());
    }
    for (m, path) in mats.iter().zip(&args.matrix).skip(1) {
        if m.shape != mats[0].shape {
            return Err(format!("--matrix {}: shape {}; the first matrix, {}, is {}: they must match", path.display(), shape_str(&m.shape), path0.display(), shape_str(&mats[0].shape)).into());
        }
    }
    let weights = match &args.weights {
        Some(w) => {
            let s = read_npy::<T>(w, "--weights")?;
            if s.shape != [ranks] {
                return Err(format!("--weights {}: shape {}; the matrices hold R = {ranks} terms, so it must be ({ranks},)", w.display(), shape_str(&s.shape)).into());
            }
            s.data
        }
        None => Vec::new(),
    };
    let k3 = k * k * k;
    let fits = match a.shape[..] {
        [n, x, y, z] => n >= 1 && x == k && y == k && z == k,
        [n, e] => n >= 1 && e == k3,
        _ => false,
    };
    if !fits {
        return Err(format!(
            "--input {}: A has shape {}; with K = {k} (from B) it must be (N, {k}, {k}, {k}) or (N, {k3}) with N >= 1",
            args.input.display(),
            shape_str(&a.shape)
        )
        .into());
    }
    let initial = match &args.initial {
        Some(path) => {
            let c0 = read_npy::<T>(path, "--initial")?;
            if c0.shape != a.shape {
                return Err(format!("--initial {}: C0 has shape {}; it must be A's, {}", path.display(), shape_str(&c0.shape), shape_str(&a.shape)).into());
            }
            Some(c0.data)
        }
        None => None,
    };
    let level = args.level.as_deref().unwrap_or("default");
    let t = match Transformer::with_operation(k as u32, level, T::DTYPE, target, op) {
        Ok(t) => t.max_blocks(args.max_blocks),
        // No GPU: the message the other subcommands print (session::open: short, with what works
        // without a GPU; --verbose for the library names), not the runtime's long list.
        Err(RuntimeError::Invalid(m)) if target == Target::Gpu && m.starts_with("no GPU found") => {
            return Err(match crate::session::open(None, None, select::cache(false), crate::session::GpuFree::Transform) {
                Err(e) => e,
                Ok(_) => m.into(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let what = if op.is_seed() { String::new() } else { format!(", {}", describe(args, op)) };
    eprintln!("# transform: {} tensors of K={k} ({}{what}) with {} on {}", a.shape[0], T::DTYPE, t.level(), t.device());
    let c = if op.is_seed() {
        t.apply(&a.data, &mats[0].data)?
    } else {
        let m = match (op.matrices, args.dim) {
            (Matrices::One, _) => OpMatrices::One(&mats[0].data),
            (Matrices::PerDim, Some(d)) => OpMatrices::Dir(&mats[0].data, d as usize),
            (Matrices::PerDim, None) => OpMatrices::PerDim(&mats[0].data, &mats[1].data, &mats[2].data),
            (Matrices::RankSum, _) => OpMatrices::RankSum { x: &mats[0].data, y: &mats[1].data, z: &mats[2].data, weights: &weights },
        };
        t.apply_op(&a.data, m, args.alpha, args.beta, initial.as_deref())?
    };
    write_npy("--output", &args.output, &a.shape, &c)?;
    let to = if args.output.as_os_str() == "-" { "standard output".to_string() } else { args.output.display().to_string() };
    eprintln!("# wrote {to} {}", shape_str(&a.shape));
    Ok(0)
}

/// `dimension 1 only, C = 2 T(A) + 0.5 C0`: what the flags compute, for the log line.
fn describe(args: &TransformArgs, op: Operation) -> String {
    let mut s = match (op.matrices, args.dim) {
        (Matrices::PerDim, Some(d)) => format!("dimension {d} only"),
        (Matrices::RankSum, _) => "a rank sum".to_string(),
        (Matrices::PerDim, None) => "a matrix per dimension".to_string(),
        (Matrices::One, _) => "one matrix".to_string(),
    };
    if args.alpha != 1.0 || args.beta != 0.0 {
        s += &format!(", C = {} T(A) + {} C0", args.alpha, args.beta);
    }
    s
}

/// Refuses an `--output` that cannot be written, before any work: `-` on a terminal (a .npy is
/// binary; into a pipe or a file it streams, as /dev/stdout does), a directory, a missing
/// directory, one that takes no new file (`outfile::Target::check`, as for the sweep's files).
fn check_output(path: &Path) -> CmdResult<()> {
    if path.as_os_str() == "-" {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            return Err("--output -: standard output is a terminal, and a .npy file is binary; redirect it (> C.npy), pipe it, or give a path".into());
        }
        return Ok(());
    }
    // A name that is not UTF-8 cannot be handed to the check; the write still names it on failure.
    if let Some(p) = path.to_str() {
        crate::outfile::Target::check("--output", p)?;
    }
    Ok(())
}


/// `npy-random`: uniform values in [-1, 1) of `--shape`, for tests and the GPU check script.
pub fn npy_random(args: &NpyRandomArgs) -> CmdResult {
    use rand::{Rng, SeedableRng};
    let shape: Vec<u64> = select::numbers("--shape", &args.shape)?;
    let n: u64 = shape.iter().product();
    check_output(&args.output)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed.unwrap_or_else(rand::random));
    let mut values = mra_runtime::memory::try_vec(usize::try_from(n).unwrap_or(usize::MAX), "the random values")?;
    values.extend((0..n).map(|_| rng.random_range(-1.0..1.0)));
    match select::dtype(&args.dtype)? {
        DType::F64 => write_npy("--output", &args.output, &shape, &values),
        DType::F32 => write_npy("--output", &args.output, &shape, &values.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        d => Err(format!("--dtype {d}: f64 or f32").into()),
    }?;
    Ok(0)
}

/// `npy-compare`: max |got - want| / max |want| against a tolerance, as validation does.
pub fn npy_compare(args: &NpyCompareArgs) -> CmdResult {
    let dtype = select::dtype(&args.dtype)?;
    let (got, want) = match dtype {
        DType::F64 => (read_f64::<f64>(&args.got)?, read_f64::<f64>(&args.want)?),
        DType::F32 => (read_f64::<f32>(&args.got)?, read_f64::<f32>(&args.want)?),
        d => return Err(format!("--dtype {d}: f64 or f32").into()),
    };
    if got.shape != want.shape {
        return Err(format!("shapes differ: {} is {}, {} is {}", args.got.display(), shape_str(&got.shape), args.want.display(), shape_str(&want.shape)).into());
    }
    let cmp = mra_runtime::validate::Comparison::of(&got.data, &want.data);
    let tol = args.tolerance.unwrap_or(dtype.tolerance());
    let pass = cmp.passes(tol);
    outln!(
        "{} vs {}: {} elements, max_abs_err={:.3e} max_rel_err={:.3e} non_finite={} tolerance={tol:.1e} {}",
        args.got.display(),
        args.want.display(),
        got.data.len(),
        cmp.max_abs,
        cmp.max_rel,
        cmp.non_finite,
        if pass { "PASS" } else { "FAIL" }
    )?;
    Ok(if pass { 0 } else { 1 })
}

fn read_f64<T: Element + npyz::Deserialize>(path: &Path) -> CmdResult<Array<f64>> {
    let a = read_npy::<T>(path, "npy-compare")?;
    Ok(Array { shape: a.shape, data: a.data.into_iter().map(|x| x.to_f64()).collect() })
}
