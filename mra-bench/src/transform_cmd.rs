//! `mra-bench transform`: your own tensors from NumPy files. A (N x K x K x K or N x K³) and B
//! (K x K) are read with `npyz`; C is computed on the GPU found (`mra_runtime::transformer`), by
//! the level's generated HIP for `--arch` on the CPU wave emulator with `--emulate`, or on the
//! FP64 CPU reference with `--reference`, and written atomically in A's shape and dtype (the output path checked first).
//! Every way a file can be wrong for this is one line saying what to do.

use crate::cli::{NpyCompareArgs, NpyRandomArgs, TransformArgs};
use crate::select::{self, CmdResult};
use mra_codegen::DType;
use mra_runtime::transformer::{Element, Target, Transformer};
use mra_runtime::RuntimeError;
use npyz::WriterBuilder;
use std::io::Read;
use std::path::{Path, PathBuf};

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
    for (flag, input) in [("--input", &args.input), ("--matrix", &args.matrix)] {
        if same_file(&args.output, input) {
            return Err(format!(
                "--output {} is the same file as {flag} {}; writing C there would destroy the input: give another output path",
                args.output.display(),
                input.display()
            )
            .into());
        }
    }
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
    let t = match Transformer::with_options(k as u32, level, T::DTYPE, target) {
        Ok(t) => t.max_blocks(args.max_blocks),
        // No GPU: the message the other subcommands print (session::open: short, with what works
        // without a GPU; --verbose for the library names), not the runtime's long list.
        Err(RuntimeError::Invalid(m)) if target == Target::Gpu && m.starts_with("no GPU found") => {
            return Err(match crate::session::open(None, None, select::cache(false)) {
                Err(e) => e,
                Ok(_) => m.into(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    eprintln!("# transform: {} tensors of K={k} ({}) with {} on {}", a.shape[0], T::DTYPE, t.level(), t.device());
    let c = t.apply(&a.data, &b.data)?;
    write_npy("--output", &args.output, &a.shape, &c)?;
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

/// The most header bytes accepted. numpy writes a few hundred and itself refuses more than
/// 10000 by default (`max_header_size`); a wild length in a damaged file must not become an
/// allocation.
const MAX_HEADER: usize = 1 << 20;

/// Reads `path` as a C-order array of `T` (float64 or float32, little- or big-endian: npyz
/// swaps the bytes of a big-endian one), or says why not in one line.
///
/// The file is never read whole and blindly: first the magic (so that /dev/zero or a large file
/// of something else is refused at once), then the header the magic announces, then exactly the
/// data bytes its shape and dtype imply (checked against the file's size first, and against the
/// memory available, before anything is allocated).
fn read_npy<T: Element + npyz::Deserialize>(path: &Path, flag: &str) -> CmdResult<Array<T>> {
    let at = |what: String| -> Box<dyn std::error::Error> { format!("{flag} {}: {what}", path.display()).into() };
    let mut file = std::fs::File::open(path).map_err(|e| at(format!("cannot read: {e}")))?;
    let meta = file.metadata().map_err(|e| at(format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(at("is a directory, not a .npy file".into()));
    }
    let mut pre = vec![0u8; 8];
    let got = read_some(&mut file, &mut pre).map_err(|e| at(format!("cannot read: {e}")))?;
    if got < 6 || &pre[..6] != b"\x93NUMPY" {
        return Err(at("not a NumPy .npy file (no \\x93NUMPY magic at its start)".into()));
    }
    if got < 8 {
        return Err(at("the file is truncated (it ends inside the .npy preamble)".into()));
    }
    let len_bytes = match (pre[6], pre[7]) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        (major, minor) => return Err(at(format!("unsupported .npy format version {major}.{minor} (known: 1.0, 2.0, 3.0)"))),
    };
    let mut len = vec![0u8; len_bytes];
    file.read_exact(&mut len).map_err(|e| at(truncated_or(e, "the .npy preamble")))?;
    pre.extend_from_slice(&len);
    let header_len = len.iter().rev().fold(0usize, |n, &b| n << 8 | b as usize);
    if header_len > MAX_HEADER {
        return Err(at(format!("the .npy header claims {header_len} bytes (at most {MAX_HEADER} accepted); the file is damaged")));
    }
    let mut text = vec![0u8; header_len];
    file.read_exact(&mut text).map_err(|e| at(truncated_or(e, "the .npy header")))?;
    pre.extend_from_slice(&text);
    let header = npyz::NpyHeader::from_reader(&pre[..]).map_err(|e| at(header_error(&String::from_utf8_lossy(&text), &e.to_string())))?;
    let data_start = pre.len() as u64;
    let (want_char, want_size) = (npyz::TypeChar::Float, T::DTYPE.bytes() as u64);
    let want = format!("<f{want_size}");
    let other_dtype = if T::DTYPE == DType::F64 { "f32" } else { "f64" };
    match header.dtype() {
        // Either byte order: npyz converts a big-endian array on reading.
        npyz::DType::Plain(ts) if ts.type_char() == want_char && ts.size_field() == want_size => {}
        npyz::DType::Plain(ts) if ts.type_char() == want_char && ts.size_field() == 12 - want_size => {
            return Err(at(format!("the array holds '{ts}' but --dtype {} reads '{want}'; pass --dtype {other_dtype}, or convert it", T::DTYPE)));
        }
        d => return Err(at(format!("the array holds {}, not '{want}' (--dtype {}); convert it, e.g. numpy: a.astype('{want}')", describe(&d), T::DTYPE))),
    }
    if header.order() == npyz::Order::Fortran {
        return Err(at("the array is in Fortran order; save it in C order, e.g. numpy: np.ascontiguousarray(a)".into()));
    }
    let shape = header.shape().to_vec();
    let too_large = || at(format!("shape {} is too large", shape_str(&shape)));
    let need = shape.iter().try_fold(want_size, |n, &d| n.checked_mul(d)).ok_or_else(too_large)?;
    let size_error = |have: String, truncated: bool| {
        at(format!(
            "the header says shape {} ({need} bytes of data) but the file holds {have} bytes after it; the file is {}",
            shape_str(&shape),
            if truncated { "truncated" } else { "longer than its header says" }
        ))
    };
    // A regular file's size is known: a wrong one is refused before its data is read.
    if meta.is_file() {
        let have = meta.len().saturating_sub(data_start);
        if have != need {
            return Err(size_error(have.to_string(), have < need));
        }
    }
    // The raw bytes and the decoded elements are both held for a moment.
    mra_runtime::memory::check_host(&format!("the data of {flag} {}", path.display()), need.saturating_mul(2)).map_err(|e| at(e.to_string()))?;
    let need_usize = usize::try_from(need).map_err(|_| too_large())?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(need_usize).map_err(|_| at(format!("cannot allocate {need} bytes for its data")))?;
    // One byte more than needed tells a longer stream (a FIFO, a device) from an exact one.
    file.take(need + 1).read_to_end(&mut bytes).map_err(|e| at(format!("cannot read the data: {e}")))?;
    let have = bytes.len() as u64;
    if have != need {
        return Err(size_error(if have > need { format!("more than {need}") } else { have.to_string() }, have < need));
    }
    let data = npyz::NpyFile::with_header(header, &bytes[..]).into_vec::<T>().map_err(|e| at(format!("cannot read the data: {e}")))?;
    Ok(Array { shape, data })
}

/// Reads until `buf` is full or the file ends; the number of bytes read.
fn read_some(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// `the file is truncated (it ends inside the .npy header)`, or the read error.
fn truncated_or(e: std::io::Error, part: &str) -> String {
    if e.kind() == std::io::ErrorKind::UnexpectedEof { format!("the file is truncated (it ends inside {part})") } else { format!("cannot read: {e}") }
}

/// One line for a header npyz could not interpret. npyz's message for a value that is no Python
/// literal is a multi-line parser dump with a caret; the user needs the field and its value.
fn header_error(text: &str, npyz_error: &str) -> String {
    for (key, valid, expected) in [
        ("descr", valid_descr as fn(&str) -> bool, "a dtype string such as '<f8'"),
        ("fortran_order", |v: &str| v == "True" || v == "False", "True or False"),
        ("shape", valid_shape, "a tuple of integers such as (2, 5, 5, 5)"),
    ] {
        match header_value(text, key) {
            Some(v) if !valid(v) => return format!("the .npy header's '{key}' is `{}`, which is not {expected}", select::quote(v)),
            None => return format!("the .npy header has no '{key}' field"),
            Some(_) => {}
        }
    }
    let first = npyz_error.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error");
    format!("the .npy header is not valid ({})", select::quote(first))
}

/// The raw text of `key`'s value in a header dict (`{'descr': '<f8', ...}`): after `'key':`,
/// up to the next comma or closing brace outside brackets and quotes.
fn header_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let start = [format!("'{key}'"), format!("\"{key}\"")].iter().find_map(|k| text.find(k.as_str()).map(|i| i + k.len()))?;
    let rest = text[start..].trim_start().strip_prefix(':')?;
    let (mut depth, mut quote) = (0i32, None);
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',' | '}') if depth <= 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    Some(rest.trim())
}

/// A quoted string, or a list (a structured dtype, refused later with its own message).
fn valid_descr(v: &str) -> bool {
    let quoted = |q: char| v.len() >= 2 && v.starts_with(q) && v.ends_with(q);
    quoted('\'') || quoted('"') || (v.starts_with('[') && v.ends_with(']'))
}

/// `(2, 3)`, `(4,)`, `()` (also with brackets).
fn valid_shape(v: &str) -> bool {
    let inner = v.strip_prefix('(').and_then(|x| x.strip_suffix(')')).or_else(|| v.strip_prefix('[').and_then(|x| x.strip_suffix(']')));
    let Some(inner) = inner else { return false };
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let last = parts.len() - 1;
    parts.iter().enumerate().all(|(i, p)| (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) || (p.is_empty() && i == last && (i > 0 || inner.trim().is_empty())))
}

/// A dtype for messages: `'<i8'`, or `a structured dtype`.
fn describe(d: &npyz::DType) -> String {
    match d {
        npyz::DType::Plain(ts) => format!("'{ts}'"),
        npyz::DType::Record(_) => "a structured (record) dtype".into(),
        npyz::DType::Array(..) => "a sub-array dtype".into(),
    }
}

/// Refuses an `--output` that cannot be written, before any work: `-` (a .npy is binary, and
/// standard output is where the table of other commands goes), a directory, a missing
/// directory, one that takes no new file (`outfile::Target::check`, as for the sweep's files).
fn check_output(path: &Path) -> CmdResult<()> {
    if path.as_os_str() == "-" {
        return Err("--output -: .npy output goes to a file; give a path".into());
    }
    // A name that is not UTF-8 cannot be handed to the check; the write still names it on failure.
    if let Some(p) = path.to_str() {
        crate::outfile::Target::check("--output", p)?;
    }
    Ok(())
}

/// Are `a` and `b` the same file, under any names (symlinks, hard links, `./x` and `x`)? Two
/// existing regular files are compared by (device, inode); two paths that do not exist yet by
/// their absolute form (they would become one file). Devices and FIFOs are never "the same
/// file" here: writing twice to /dev/null or a terminal loses nothing.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.is_file() && y.is_file() && x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => absolute(a) == absolute(b),
        _ => false,
    }
}

/// `path` with its directory made canonical (the file itself may not exist).
fn absolute(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// Writes `data` as a C-order little-endian array of `shape`, atomically (temporary file, rename);
/// an error names `flag` and the user's path, never the temporary file.
fn write_npy<T: npyz::AutoSerialize + Copy>(flag: &str, path: &Path, shape: &[u64], data: &[T]) -> CmdResult<()> {
    let mut bytes = Vec::new();
    {
        let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut bytes).begin_nd()?;
        w.extend(data.iter().copied())?;
        w.finish()?;
    }
    crate::outfile::write_atomically(path, &bytes).map_err(|e| format!("{flag} {}: cannot write: {e}; nothing was saved there", path.display()).into())
}

/// `npy-random`: uniform values in [-1, 1) of `--shape`, for tests and the GPU check script.
pub fn npy_random(args: &NpyRandomArgs) -> CmdResult {
    use rand::{Rng, SeedableRng};
    let shape: Vec<u64> = select::numbers("--shape", &args.shape)?;
    let n: u64 = shape.iter().product();
    check_output(&args.output)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed.unwrap_or_else(rand::random));
    let values: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
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
