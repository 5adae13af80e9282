//! On-disk kernel cache: compiled code objects keyed by a hash of everything that decides
//! them (source, compiler options, compiler version, target arch).
//!
//! Directory: `$MRA_KERNEL_CACHE` if set (`off` disables the cache), else
//! `$XDG_CACHE_HOME/mra-dsl/kernels`, else `$HOME/.cache/mra-dsl/kernels` (absolute paths only:
//! with neither, there is no cache).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The environment variable that overrides the cache directory.
pub const CACHE_ENV: &str = "MRA_KERNEL_CACHE";

/// First line of every entry: `mra-kernel-cache v1 <payload length> <SHA-256 of the payload>`.
/// A truncated, corrupted or foreign file fails the check and is evicted, never loaded.
const MAGIC: &str = "mra-kernel-cache v1";

#[derive(Clone, Debug)]
pub struct KernelCache {
    dir: Option<PathBuf>,
    state: Arc<State>,
}

/// Shared by the clones of one cache: whether writing has been given up, and the warnings
/// printed (kept for the tests and for callers that want to show them again).
#[derive(Debug, Default)]
struct State {
    unwritable: AtomicBool,
    warnings: Mutex<Vec<String>>,
}

impl KernelCache {
    /// The cache the environment asks for (see the module docs).
    pub fn from_env() -> KernelCache {
        match std::env::var_os(CACHE_ENV) {
            Some(v) if v == "off" => KernelCache::disabled(),
            Some(v) if !v.is_empty() => KernelCache::at(PathBuf::from(v)),
            _ => KernelCache { dir: default_dir(), state: Arc::default() },
        }
    }

    pub fn at(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache { dir: Some(dir.into()), state: Arc::default() }
    }

    pub fn disabled() -> KernelCache {
        KernelCache { dir: None, state: Arc::default() }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The warnings this cache printed so far (one line each).
    pub fn warnings(&self) -> Vec<String> {
        self.state.warnings.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn warn(&self, text: String) {
        eprintln!("warning: {text}");
        self.state.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    }

    /// The key for a code object: SHA-256 over the parts, each length-prefixed so that
    /// ("ab","c") and ("a","bc") differ.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        hex(&h.finalize())
    }

    fn path(&self, key: &str, ext: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.{ext}")))
    }

    /// The cached bytes, if present and intact. A missing or unreadable entry is a miss; an
    /// entry that fails its length or digest check is a miss too, with one warning line, and
    /// is removed so that the compile that follows replaces it.
    pub fn get(&self, key: &str, ext: &str) -> Option<Vec<u8>> {
        let path = self.path(key, ext)?;
        let file = std::fs::read(&path).ok()?;
        match unwrap_entry(&file) {
            Ok(payload) => Some(payload.to_vec()),
            Err(why) => {
                let removed = match std::fs::remove_file(&path) {
                    Ok(()) => "removed it".to_string(),
                    Err(e) => format!("could not remove it: {e}"),
                };
                self.warn(format!("kernel cache entry {} is damaged ({why}); {removed}, compiling again", path.display()));
                None
            }
        }
    }

    /// Stores bytes atomically (write to a temporary file, then rename), so a concurrent
    /// reader never sees half an entry. A cache that cannot be written is not an error: the
    /// first failure prints one warning and the cache stops trying (the kernel compiled fine).
    pub fn put(&self, key: &str, ext: &str, bytes: &[u8]) {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key, ext)) else {
            return;
        };
        if self.state.unwritable.load(Ordering::Relaxed) {
            return;
        }
        let tmp = dir.join(format!(".{key}.{ext}.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&tmp, wrap_entry(bytes)))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            self.give_up(&e);
        }
    }

    /// False once writing has been given up (see [`KernelCache::give_up`]).
    pub fn writable(&self) -> bool {
        self.dir.is_some() && !self.state.unwritable.load(Ordering::Relaxed)
    }

    /// Stops writing to this cache (and its clones) after `error`, with one warning line for all
    /// of them: a cache that cannot be written costs the caching, never the compile. For
    /// callers that write into [`KernelCache::dir`] themselves (the emulator's executables).
    pub fn give_up(&self, error: &dyn std::fmt::Display) {
        let Some(dir) = self.dir.as_ref() else { return };
        if !self.state.unwritable.swap(true, Ordering::Relaxed) {
            self.warn(format!(
                "kernel cache at {} cannot be written ({error}); going on without caching (set {CACHE_ENV} to a writable directory, or off)",
                dir.display()
            ));
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn wrap_entry(payload: &[u8]) -> Vec<u8> {
    let mut out = format!("{MAGIC} {} {}\n", payload.len(), hex(&Sha256::digest(payload))).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The payload of an entry, or why the entry is not one.
fn unwrap_entry(file: &[u8]) -> std::result::Result<&[u8], String> {
    let nl = file.iter().position(|&b| b == b'\n').ok_or("no header")?;
    let header = std::str::from_utf8(&file[..nl]).map_err(|_| "no header")?;
    let rest = header.strip_prefix(MAGIC).ok_or("no header")?;
    let mut words = rest.split_whitespace();
    let len: usize = words.next().and_then(|w| w.parse().ok()).ok_or("no length in the header")?;
    let digest = words.next().ok_or("no digest in the header")?;
    let payload = &file[nl + 1..];
    if payload.len() != len {
        return Err(format!("{} bytes where the header says {len}", payload.len()));
    }
    if hex(&Sha256::digest(payload)) != digest {
        return Err("its SHA-256 digest does not match".into());
    }
    Ok(payload)
}

/// `$XDG_CACHE_HOME/mra-dsl/kernels`, else `$HOME/.cache/mra-dsl/kernels`; `None` (no cache)
/// where neither is an absolute path: an empty or relative one (`HOME=`) would put the cache
/// in whatever directory the command runs in (the XDG spec ignores relative paths too).
fn default_dir() -> Option<PathBuf> {
    default_dir_in(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

fn default_dir_in(xdg_cache_home: Option<std::ffi::OsString>, home: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let base = xdg_cache_home.and_then(absolute).or_else(|| home.and_then(absolute).map(|h| h.join(".cache")))?;
    Some(base.join("mra-dsl").join("kernels"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_relative_home_is_no_cache_location() {
        let some = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(default_dir_in(None, some("")), None, "HOME= would put the cache in ./.cache");
        assert_eq!(default_dir_in(some(""), some(".")), None);
        assert_eq!(default_dir_in(some("cache"), some("/home/u")), Some(PathBuf::from("/home/u/.cache/mra-dsl/kernels")));
        assert_eq!(default_dir_in(some("/xdg"), some("/home/u")), Some(PathBuf::from("/xdg/mra-dsl/kernels")));
        assert_eq!(default_dir_in(None, None), None);
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(KernelCache::key(&[b"ab", b"c"]), KernelCache::key(&[b"a", b"bc"]));
        assert_eq!(KernelCache::key(&[b"x"]).len(), 64);
    }

    #[test]
    fn put_then_get_round_trips_and_disabled_misses() {
        let dir = std::env::temp_dir().join(format!("mra-cache-test-{}", std::process::id()));
        let c = KernelCache::at(&dir);
        let k = KernelCache::key(&[b"src", b"opts"]);
        assert!(c.get(&k, "cubin").is_none());
        c.put(&k, "cubin", b"\x7fELF...");
        assert_eq!(c.get(&k, "cubin").unwrap(), b"\x7fELF...");
        KernelCache::disabled().put(&k, "cubin", b"x");
        assert!(KernelCache::disabled().get(&k, "cubin").is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_damaged_entry_is_a_warned_miss_and_is_removed() {
        let dir = std::env::temp_dir().join(format!("mra-cache-damage-{}", std::process::id()));
        let c = KernelCache::at(&dir);
        let k = KernelCache::key(&[b"damage"]);
        let file = dir.join(format!("{k}.cubin"));
        let damages: [fn(&mut Vec<u8>); 3] = [
            |b| b.truncate(b.len() - 1),
            |b| *b.last_mut().unwrap() ^= 1,
            |b| *b = b"\x7fELF raw, no header".to_vec(),
        ];
        for damage in damages {
            c.put(&k, "cubin", b"payload bytes");
            let mut bytes = std::fs::read(&file).unwrap();
            damage(&mut bytes);
            std::fs::write(&file, bytes).unwrap();
            assert!(c.get(&k, "cubin").is_none());
            assert!(!file.exists(), "the damaged entry is evicted");
        }
        assert_eq!(c.warnings().len(), 3);
        assert!(c.warnings().iter().all(|w| w.contains(&file.display().to_string()) && !w.contains('\n')));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unwritable_cache_warns_once_and_is_no_error() {
        let c = KernelCache::at("/proc/mra-kernel-cache");
        c.put("a", "cubin", b"x");
        c.put("b", "cubin", b"y");
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert!(c.warnings()[0].contains("/proc/mra-kernel-cache") && c.warnings()[0].contains("going on without caching"));
    }
}
