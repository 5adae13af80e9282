//! .npy files written byte by byte for the transform tests: the format as numpy's documentation
//! states it, independent of the npy reader under test. Included by `#[path]` from each test
//! crate that needs it (not every one uses both functions).
#![allow(dead_code)]

/// A .npy file (format 1.0) whose header dict is `dict`, padded as numpy pads it, then `data`.
pub fn npy_raw(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.to_string();
    // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A .npy file (format 1.0) of `descr` (`<f8`), `shape`, C or Fortran order, with `data` bytes.
pub fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    npy_raw(&format!("{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}", if fortran { "True" } else { "False" }), data)
}
