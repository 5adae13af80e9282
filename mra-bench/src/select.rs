//! Turning command-line words into levels, archs, dtypes and lists, with one-line errors.

use mra_codegen::{arch, levels, Arch, DType, Schedule};

pub type CmdResult<T = i32> = Result<T, Box<dyn std::error::Error>>;

/// A word of the command line that names nothing valid (`-K 0`, `-l nonesuch`, `-K 6,6`): a
/// malformed command line, which exits with status 2 as clap's own usage errors do (the README's
/// exit statuses), whether clap or one of the list parsers here found it.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

pub fn usage(e: impl std::fmt::Display) -> Box<dyn std::error::Error> {
    Box::new(Usage(e.to_string()))
}

pub fn level(sel: &str) -> CmdResult<Schedule> {
    levels::find(sel).map_err(usage)
}

/// `all` or a comma-separated list.
pub fn level_list(sel: &str) -> CmdResult<Vec<Schedule>> {
    if sel.trim().eq_ignore_ascii_case("all") {
        return Ok(levels::all());
    }
    let words: Vec<&str> = sel.split(',').collect();
    let chosen: Vec<Schedule> = words.iter().map(|s| level(s)).collect::<CmdResult<_>>()?;
    // After resolving aliases (`3`, `L3`, `L3-regblk`): a level named twice would be run,
    // counted or written twice (one file claimed twice), so it is refused as export refuses a K.
    for (i, s) in chosen.iter().enumerate() {
        if let Some(j) = chosen[..i].iter().position(|t| t.name == s.name) {
            let how = if words[j].trim() == words[i].trim() { String::new() } else { format!(" (as `{}` and `{}`)", quote(words[j].trim()), quote(words[i].trim())) };
            return Err(usage(format!("-l {} is listed twice{how}", s.name)));
        }
    }
    Ok(chosen)
}

/// Refuses a value given twice in a list (`-K 6,6`, `-N 1,1`): it would do the same work
/// twice and count (or claim to write) it twice. The message is export's: `-K 6 is listed twice`.
pub fn no_repeats<T: PartialEq + std::fmt::Display>(flag: &str, list: &[T]) -> Result<(), Usage> {
    match list.iter().enumerate().find(|(i, x)| list[..*i].contains(x)) {
        Some((_, x)) => Err(Usage(format!("{flag} {x} is listed twice"))),
        None => Ok(()),
    }
}

/// Does a `-l` value name more than one level (`all`, `3,4`)?
pub fn is_list(sel: &str) -> bool {
    sel.trim().eq_ignore_ascii_case("all") || sel.contains(',')
}

/// `-K` of the run mode: an integer in 1..=K_MAX (a negative one gets the range too, not
/// clap's "unexpected argument").
pub fn parse_k(s: &str) -> Result<u32, String> {
    let k: i64 = s.trim().parse().map_err(|_| format!("`{}` is not an integer; levels support 1 <= K <= {}", quote(s), mra_codegen::K_MAX))?;
    match u32::try_from(k) {
        Ok(k) if (1..=mra_codegen::K_MAX).contains(&k) => Ok(k),
        _ => Err(format!("K={k} is out of range: levels support 1 <= K <= {}", mra_codegen::K_MAX)),
    }
}

/// A comma-separated `-K` list, each in range, none twice.
pub fn k_list(list: &str) -> CmdResult<Vec<u32>> {
    let ks: Vec<u32> = list.split(',').map(|s| parse_k(s).map_err(|e| usage(format!("-K: {e}")))).collect::<Result<_, _>>()?;
    no_repeats("-K", &ks)?;
    Ok(ks)
}

/// `--compiler`, checked in every mode (also where it would not be used): a known name, and
/// one of `arch`'s vendor where the arch is known.
pub fn compiler(given: Option<&str>, arch: Option<&Arch>) -> CmdResult<()> {
    let Some(c) = given else { return Ok(()) };
    let vendor = match c {
        "hiprtc" | "clang" => mra_codegen::Vendor::Amd,
        "nvrtc" => mra_codegen::Vendor::Nvidia,
        _ => return Err(usage(format!("unknown --compiler `{}`; known: hiprtc, clang (AMD), nvrtc (NVIDIA)", quote(c)))),
    };
    match arch {
        Some(a) if a.vendor != vendor && vendor == mra_codegen::Vendor::Amd => {
            Err(usage(format!("--compiler {c} compiles HIP for AMD archs, and {} is NVIDIA; use --compiler nvrtc", a.name)))
        }
        Some(a) if a.vendor != vendor => Err(usage(format!("--compiler nvrtc compiles CUDA for NVIDIA archs, and {} is AMD; use --compiler hiprtc or clang", a.name))),
        _ => Ok(()),
    }
}

static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--verbose` was given.
pub fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed)
}

pub fn arch(name: &str) -> CmdResult<&'static Arch> {
    arch::find(name).map_err(usage)
}

pub fn dtype(name: &str) -> CmdResult<DType> {
    DType::parse(name).ok_or_else(|| usage(format!("unknown dtype `{}`; known: f64, f32, f16, bf16", quote(name))))
}

/// A comma-separated list of numbers, e.g. `1,5,6`.
pub fn numbers<T: std::str::FromStr>(flag: &str, list: &str) -> CmdResult<Vec<T>> {
    list.split(',')
        .map(|s| s.trim().parse::<T>().map_err(|_| usage(format!("{flag}: `{}` is not a non-negative integer", quote(s)))))
        .collect()
}

/// Where the kernel cache is, honouring --no-cache.
pub fn cache(no_cache: bool) -> mra_runtime::KernelCache {
    if no_cache { mra_runtime::KernelCache::disabled() } else { mra_runtime::KernelCache::from_env() }
}

/// Refuses a validation at (`k`, `nfuncs`) whose host arrays (inputs, FP64 reference, results)
/// would not fit in the memory available, before anything is allocated.
pub fn check_host_memory(k: u32, nfuncs: usize) -> CmdResult<()> {
    let what = format!("N={nfuncs} tensors of K={k} (inputs, FP64 reference and results on the host)");
    let need = mra_runtime::harness::Inputs::host_bytes(k, nfuncs).unwrap_or(u64::MAX);
    Ok(mra_runtime::memory::check_host(&what, need)?)
}

/// A command-line value as it may appear in a message: its first line, at most 40 characters,
/// so that a huge or multi-line argument does not flood the terminal.
pub fn quote(value: &str) -> String {
    mra_codegen::quote(value)
}
