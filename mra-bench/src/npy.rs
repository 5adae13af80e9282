//! NumPy .npy files for `transform`, `npy-random` and `npy-compare`: read without trusting the
//! file (magic first, a bounded header, exactly the data its header implies, one-line errors
//! naming the flag and the field), written atomically through `outfile`.

use crate::select::{self, CmdResult};
use mra_codegen::DType;
use mra_runtime::transformer::Element;
use npyz::WriterBuilder;
use std::io::Read;
use std::path::Path;

/// An array read from a .npy file: its shape and its elements in C order.
pub struct Array<T> {
    pub shape: Vec<u64>,
    pub data: Vec<T>,
}

/// `(2048, 8, 8, 8)`.
pub fn shape_str(shape: &[u64]) -> String {
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
pub fn read_npy<T: Element + npyz::Deserialize>(path: &Path, flag: &str) -> CmdResult<Array<T>> {
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
    let elements = npyz::NpyFile::with_header(header, &bytes[..]).data::<T>().map_err(|e| at(format!("cannot read the data: {e}")))?;
    // Decoded into a vector allocated fallibly: a memory limit is one line, not an abort.
    let mut data = mra_runtime::memory::try_vec(need_usize / want_size as usize, "its data").map_err(|e| at(e.to_string()))?;
    for x in elements {
        data.push(x.map_err(|e| at(format!("cannot read the data: {e}")))?);
    }
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

/// Writes `data` as a C-order little-endian array of `shape`, atomically (temporary file, rename);
/// an error names `flag` and the user's path, never the temporary file.
pub fn write_npy<T: npyz::AutoSerialize + Copy>(flag: &str, path: &Path, shape: &[u64], data: &[T]) -> CmdResult<()> {
    // The header (at most a few hundred bytes) and the data, allocated fallibly.
    let mut bytes = mra_runtime::memory::try_vec(std::mem::size_of_val(data) + 4096, "the .npy file").map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    {
        let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut bytes).begin_nd()?;
        w.extend(data.iter().copied())?;
        w.finish()?;
    }
    if path.as_os_str() == "-" {
        return Ok(crate::out::write_bytes(&bytes)?);
    }
    crate::outfile::write_atomically(path, &bytes).map_err(|e| format!("{flag} {}: cannot write: {e}; nothing was saved there", path.display()).into())
}
