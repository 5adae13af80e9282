//! Turning command-line words into levels, archs, dtypes and lists, with one-line errors.

use mra_codegen::{arch, levels, Arch, DType, Schedule};

pub type CmdResult<T = i32> = Result<T, Box<dyn std::error::Error>>;

pub fn level(sel: &str) -> CmdResult<Schedule> {
    Ok(levels::find(sel)?)
}

/// `all` or a comma-separated list.
pub fn level_list(sel: &str) -> CmdResult<Vec<Schedule>> {
    if sel.trim().eq_ignore_ascii_case("all") {
        return Ok(levels::all());
    }
    sel.split(',').map(|s| level(s)).collect()
}

pub fn arch(name: &str) -> CmdResult<&'static Arch> {
    Ok(arch::find(name)?)
}

pub fn dtype(name: &str) -> CmdResult<DType> {
    DType::parse(name).ok_or_else(|| format!("unknown dtype `{name}`; known: f64, f32, f16, bf16").into())
}

/// A comma-separated list of numbers, e.g. `1,5,6`.
pub fn numbers<T: std::str::FromStr>(flag: &str, list: &str) -> CmdResult<Vec<T>> {
    list.split(',')
        .map(|s| s.trim().parse::<T>().map_err(|_| format!("{flag}: `{s}` is not a non-negative integer").into()))
        .collect()
}

/// Where the kernel cache is, honouring --no-cache.
pub fn cache(no_cache: bool) -> mra_runtime::KernelCache {
    if no_cache { mra_runtime::KernelCache::disabled() } else { mra_runtime::KernelCache::from_env() }
}
