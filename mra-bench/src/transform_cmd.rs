//! `mra-bench transform`: your own tensors from NumPy files. A (N x K x K x K or N x K³) and B
//! (K x K) are read with `npyz`; C is computed on the GPU found (`mra_runtime::transformer`), or
//! on the FP64 CPU reference with `--reference`, and written atomically in A's shape and dtype.
//! Every way a file can be wrong for this is one line saying what to do.

use crate::cli::{NpyCompareArgs, NpyRandomArgs, TransformArgs};
use crate::export_cmd::write_atomic;
use crate::select::{self, CmdResult};
use mra_codegen::DType;
use mra_runtime::transformer::{Element, Target, Transformer};
use npyz::WriterBuilder;
use std::path::Path;

pub fn run(args: &TransformArgs) -> CmdResult {
    let dtype = select::dtype(&args.dtype)?;
    let target = if args.reference {
        Target::Reference
    } else if args.emulate {
        Target::Emulator
    } else {
        Target::Gpu
    };
    match dtype {
        DType::F64 => transform::<f64>(args, target),
        DType::F32 => transform::<f32>(args, target),
        d => Err(format!("--dtype {d}: transform reads and writes f64 or f32 arrays").into()),
    }
}

fn transform<T: Element + npyz::Deserialize + npyz::AutoSerialize>(args: &TransformArgs, target: Target) -> CmdResult {
    let a = read_npy::<T>(&args.input, "--input")?;
    let b = read_npy::<T>(&args.matrix, "--matrix")?;
    let k = match b.shape[..] {
        [r, c] if r == c => r,
        _ => return Err(format!("--matrix {}: B has shape {}; it must be K x K", args.matrix.display(), shape_str(&b.shape)).into()),
    };
    if !(1..=mra_codegen::K_MAX as u64).contains(&k) {
        return Err(format!("--matrix {}: K = {k} (from B's shape); levels support 1 <= K <= {}", args.matrix.display(), mra_codegen::K_MAX).into());
    }
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
    let level = args.level.as_deref().unwrap_or("default");
    let t = Transformer::with_options(k as u32, level, T::DTYPE, target)?.max_blocks(args.max_blocks);
    eprintln!("# transform: {} tensors of K={k} ({}) with {} on {}", a.shape[0], T::DTYPE, t.level(), t.device());
    let c = t.apply(&a.data, &b.data)?;
    write_npy(&args.output, &a.shape, &c)?;
    eprintln!("# wrote {} {}", args.output.display(), shape_str(&a.shape));
    Ok(0)
}

/// An array read from a .npy file: its shape and its elements in C order.
struct Array<T> {
    shape: Vec<u64>,
    data: Vec<T>,
}

/// `(2048, 8, 8, 8)`.
fn shape_str(shape: &[u64]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if parts.len() == 1 { format!("({},)", parts[0]) } else { format!("({})", parts.join(", ")) }
}

/// Reads `path` as a C-order, little-endian array of `T` (float64 or float32), or says why not.
fn read_npy<T: Element + npyz::Deserialize>(path: &Path, flag: &str) -> CmdResult<Array<T>> {
    let at = |what: String| -> Box<dyn std::error::Error> { format!("{flag} {}: {what}", path.display()).into() };
    let bytes = std::fs::read(path).map_err(|e| at(format!("cannot read: {e}")))?;
    let mut cursor = std::io::Cursor::new(&bytes[..]);
    let header = npyz::NpyHeader::from_reader(&mut cursor).map_err(|e| at(format!("not a NumPy .npy file ({e})")))?;
    let data_start = cursor.position() as usize;
    let (want_char, want_size) = (npyz::TypeChar::Float, T::DTYPE.bytes() as u64);
    let want = format!("<f{want_size}");
    let other_dtype = if T::DTYPE == DType::F64 { "f32" } else { "f64" };
    match header.dtype() {
        npyz::DType::Plain(ts) if ts.type_char() == want_char && ts.size_field() == want_size => {
            if ts.endianness() == npyz::Endianness::Big {
                return Err(at(format!("the array is big-endian ('{ts}'); save it little-endian, e.g. numpy: a.astype('{want}')")));
            }
        }
        npyz::DType::Plain(ts) if ts.type_char() == want_char && ts.size_field() == 12 - want_size => {
            return Err(at(format!("the array holds '{ts}' but --dtype {} reads '{want}'; pass --dtype {other_dtype}, or convert it", T::DTYPE)));
        }
        d => return Err(at(format!("the array holds {}, not '{want}' (--dtype {}); convert it, e.g. numpy: a.astype('{want}')", describe(&d), T::DTYPE))),
    }
    if header.order() == npyz::Order::Fortran {
        return Err(at("the array is in Fortran order; save it in C order, e.g. numpy: np.ascontiguousarray(a)".into()));
    }
    let shape = header.shape().to_vec();
    let elems: u64 = shape.iter().product();
    let need = elems.checked_mul(want_size).ok_or_else(|| at(format!("shape {} is too large", shape_str(&shape))))?;
    let have = (bytes.len() - data_start) as u64;
    if have != need {
        return Err(at(format!(
            "the header says shape {} ({need} bytes of data) but the file holds {have} bytes after it; the file is {}",
            shape_str(&shape),
            if have < need { "truncated" } else { "longer than its header says" }
        )));
    }
    let data = npyz::NpyFile::with_header(header, &bytes[data_start..]).into_vec::<T>().map_err(|e| at(format!("cannot read the data: {e}")))?;
    Ok(Array { shape, data })
}

/// A dtype for messages: `'<i8'`, or `a structured dtype`.
fn describe(d: &npyz::DType) -> String {
    match d {
        npyz::DType::Plain(ts) => format!("'{ts}'"),
        npyz::DType::Record(_) => "a structured (record) dtype".into(),
        npyz::DType::Array(..) => "a sub-array dtype".into(),
    }
}

/// Writes `data` as a C-order little-endian array of `shape`, atomically (temporary file, rename).
fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) -> CmdResult<()> {
    let mut bytes = Vec::new();
    {
        let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut bytes).begin_nd()?;
        w.extend(data.iter().copied())?;
        w.finish()?;
    }
    write_atomic(path, &bytes).map_err(|e| format!("--output: {e}").into())
}

/// `npy-random`: uniform values in [-1, 1) of `--shape`, for tests and the GPU check script.
pub fn npy_random(args: &NpyRandomArgs) -> CmdResult {
    use rand::{Rng, SeedableRng};
    let shape: Vec<u64> = select::numbers("--shape", &args.shape)?;
    let n: u64 = shape.iter().product();
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed.unwrap_or_else(rand::random));
    let values: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    match select::dtype(&args.dtype)? {
        DType::F64 => write_npy(&args.output, &shape, &values),
        DType::F32 => write_npy(&args.output, &shape, &values.iter().map(|&x| x as f32).collect::<Vec<_>>()),
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
