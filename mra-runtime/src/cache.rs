//! On-disk kernel cache: compiled code objects keyed by a hash of everything that decides
//! them (source, compiler options, compiler version, target arch).
//!
//! Directory: `$MRA_KERNEL_CACHE` if set (`off` disables the cache), else
//! `$XDG_CACHE_HOME/mra-dsl/kernels`, else `$HOME/.cache/mra-dsl/kernels` (absolute paths only:
//! with neither, there is no cache).
//!
//! Every kind of entry is checked before use, and a damaged one is removed together with the
//! entries of the same compile and built again, with one warning line: a code object or a
//! compile log carries its length and SHA-256 in a header ([`KernelCache::get_all`]); an
//! executable, which is run where it lies and so cannot carry a header, has them in a
//! `.sum` entry beside it and must be executable ([`KernelCache::get_file`]).

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
        self.get_all(key, &[ext]).map(|mut all| all.swap_remove(0))
    }

    /// The entries of one compile (`["cubin", "log"]`), all intact, or none. The first is the
    /// one its compile stores last ([`KernelCache::put`] the others first): where it is missing,
    /// nothing was stored and this is a plain miss. Where it is there but it or another is
    /// damaged or missing, all are removed with one warning line, so that the compile that
    /// follows stores every one again (a cubin without its log would lose the register report).
    pub fn get_all(&self, key: &str, exts: &[&str]) -> Option<Vec<Vec<u8>>> {
        let mut all = Vec::with_capacity(exts.len());
        for (i, ext) in exts.iter().enumerate() {
            match self.check(key, ext) {
                Ok(Some(payload)) => all.push(payload),
                Ok(None) if i == 0 => return None,
                Ok(None) => return self.evict(key, exts, &format!("its .{ext} is missing")),
                Err(why) if i == 0 => return self.evict(key, exts, &why),
                Err(why) => return self.evict(key, exts, &format!("its .{ext}: {why}")),
            }
        }
        Some(all)
    }

    /// The path of an entry kept as a file of its own to be used in place (an executable), if
    /// it is intact: a regular file, executable, of the length and SHA-256 its `.sum` entry
    /// gives. A missing file is a plain miss; a damaged one is removed with its `.sum`, with
    /// one warning line. Stored by [`KernelCache::store_file`].
    pub fn get_file(&self, key: &str, ext: &str) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path(key, ext)?;
        let sum_ext = format!("{ext}.sum");
        let meta = std::fs::metadata(&path).ok()?;
        let why = match self.check(key, &sum_ext) {
            Ok(None) => format!("its .{sum_ext} is missing"),
            Err(why) => format!("its .{sum_ext}: {why}"),
            Ok(Some(_)) if !meta.is_file() => "it is not a regular file".to_string(),
            Ok(Some(_)) if meta.permissions().mode() & 0o100 == 0 => "it is not executable".to_string(),
            Ok(Some(sum)) => match crate::read_file::read_bounded(&path, crate::read_file::MAX_DATA) {
                Err(e) => e.to_string(),
                Ok(bytes) => match check_sum(&sum, &bytes) {
                    Ok(()) => return Some(path),
                    Err(why) => why,
                },
            },
        };
        self.evict(key, &[ext, &sum_ext], &why)
    }

    /// Moves the finished file `built` (in the cache directory) to the entry `<key>.<ext>`, after
    /// storing its `.sum`: a reader that finds the file finds its sum. The path it now has.
    pub fn store_file(&self, key: &str, ext: &str, built: &Path) -> std::io::Result<PathBuf> {
        let path = self.path(key, ext).ok_or_else(|| std::io::Error::other("the kernel cache is off"))?;
        let bytes = crate::read_file::read_bounded(built, crate::read_file::MAX_DATA)?;
        if !self.put(key, &format!("{ext}.sum"), sum_of(&bytes).as_bytes()) {
            return Err(std::io::Error::other("its .sum entry could not be written"));
        }
        std::fs::rename(built, &path)?;
        Ok(path)
    }

    /// One entry: its payload if intact; `Ok(None)` if absent or unreadable (another user's
    /// cache, a cache path that is no directory), as before; else why it is damaged: not a
    /// regular file, too large, or failing its header's check.
    fn check(&self, key: &str, ext: &str) -> std::result::Result<Option<Vec<u8>>, String> {
        let Some(path) = self.path(key, ext) else { return Ok(None) };
        match crate::read_file::read_bounded(&path, crate::read_file::MAX_DATA) {
            Ok(file) => unwrap_entry(&file).map(|p| Some(p.to_vec())),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::FileTooLarge) => Err(e.to_string()),
            Err(_) => Ok(None),
        }
    }

    /// Removes the entries `exts` of `key` (those that exist) after one warning line naming the
    /// first and why it is damaged. Always `None`: the caller's miss.
    fn evict<T>(&self, key: &str, exts: &[&str], why: &str) -> Option<T> {
        let path = self.path(key, exts[0])?;
        let mut failed = Vec::new();
        for ext in exts {
            let p = self.path(key, ext)?;
            // A directory where an entry should be is damage too.
            let removed = std::fs::remove_file(&p).or_else(|e| if p.is_dir() { std::fs::remove_dir_all(&p) } else { Err(e) });
            match removed {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => failed.push(format!("{}: {e}", p.display())),
                _ => {}
            }
        }
        let siblings: Vec<String> = exts[1..].iter().map(|e| format!(".{e}")).collect();
        let removed = match (failed.is_empty(), siblings.is_empty()) {
            (true, true) => "removed it".to_string(),
            (true, false) => format!("removed it and its {}", siblings.join(", ")),
            (false, _) => format!("could not remove {}", failed.join(", ")),
        };
        self.warn(format!("kernel cache entry {} is damaged ({why}); {removed}, compiling again", path.display()));
        None
    }

    /// Stores bytes atomically (write to a temporary file, then rename), so a concurrent
    /// reader never sees half an entry. A cache that cannot be written is not an error: the
    /// first failure prints one warning and the cache stops trying (the kernel compiled fine).
    /// Whether it was stored.
    pub fn put(&self, key: &str, ext: &str, bytes: &[u8]) -> bool {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key, ext)) else {
            return false;
        };
        if self.state.unwritable.load(Ordering::Relaxed) {
            return false;
        }
        let tmp = dir.join(format!(".{key}.{ext}.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&tmp, wrap_entry(bytes)))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            self.give_up(&e);
            return false;
        }
        true
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
    let mut out = format!("{MAGIC} {}\n", sum_of(payload)).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// `<length> <SHA-256>`: an entry's header after the magic, and a `.sum` entry's payload.
fn sum_of(bytes: &[u8]) -> String {
    format!("{} {}", bytes.len(), hex(&Sha256::digest(bytes)))
}

/// Whether `bytes` are what the `.sum` payload `sum` describes, or why not.
fn check_sum(sum: &[u8], bytes: &[u8]) -> std::result::Result<(), String> {
    let sum = std::str::from_utf8(sum).map_err(|_| "its .sum is not text")?;
    let len: usize = sum.split_whitespace().next().and_then(|w| w.parse().ok()).ok_or("no length in its .sum")?;
    if bytes.len() != len {
        return Err(format!("{} bytes where its .sum says {len}", bytes.len()));
    }
    if sum_of(bytes) != sum {
        return Err("its SHA-256 digest does not match".into());
    }
    Ok(())
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

    /// Damages of a file: truncated, emptied, garbage of the same length, a directory in its
    /// place, and removed.
    fn damages() -> [(&'static str, fn(&Path)); 5] {
        [
            ("truncated", |p| std::fs::write(p, &std::fs::read(p).unwrap()[..std::fs::read(p).unwrap().len() - 1]).unwrap()),
            ("empty", |p| std::fs::write(p, b"").unwrap()),
            ("garbage", |p| std::fs::write(p, vec![b'#'; std::fs::read(p).unwrap().len()]).unwrap()),
            ("a directory", |p| {
                std::fs::remove_file(p).unwrap();
                std::fs::create_dir(p).unwrap()
            }),
            ("missing", |p| std::fs::remove_file(p).unwrap()),
        ]
    }

    #[test]
    fn a_damaged_or_missing_entry_of_a_compile_evicts_all_of_it_with_one_warning() {
        let dir = std::env::temp_dir().join(format!("mra-cache-siblings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let c = KernelCache::at(&dir);
        let k = KernelCache::key(&[b"siblings"]);
        let (cubin, log) = (dir.join(format!("{k}.cubin")), dir.join(format!("{k}.log")));
        let mut warned = 0;
        for (which, file) in [("log", &log), ("cubin", &cubin)] {
            for (how, damage) in damages() {
                // Stored as a compile stores them: the log, then the cubin.
                assert!(c.put(&k, "log", b"ptxas info: Used 40 registers") && c.put(&k, "cubin", b"\x7fELF..."));
                assert_eq!(c.get_all(&k, &["cubin", "log"]).unwrap(), [b"\x7fELF...".to_vec(), b"ptxas info: Used 40 registers".to_vec()]);
                damage(file);
                let got = c.get_all(&k, &["cubin", "log"]);
                if which == "cubin" && how == "missing" {
                    // Nothing stored yet (or being stored now): a plain miss.
                    assert!(got.is_none() && c.warnings().len() == warned, "{which} {how}: {:?}", c.warnings());
                    continue;
                }
                warned += 1;
                assert!(got.is_none(), "{which} {how}: used");
                assert!(!cubin.exists() && !log.exists(), "{which} {how}: both evicted");
                let w = c.warnings();
                assert_eq!(w.len(), warned, "{which} {how}: one warning: {w:?}");
                assert!(w[warned - 1].contains(&cubin.display().to_string()) && w[warned - 1].contains("its .log") && !w[warned - 1].contains('\n'), "{which} {how}: {w:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_executable_entry_is_checked_against_its_sum_and_must_be_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mra-cache-exe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let c = KernelCache::at(&dir);
        let k = KernelCache::key(&[b"exe"]);
        let (exe, sum) = (dir.join(format!("{k}.emu")), dir.join(format!("{k}.emu.sum")));
        let store = || {
            let tmp = dir.join("built.tmp");
            std::fs::write(&tmp, b"#!/bin/sh\necho emulated\n").unwrap();
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(c.store_file(&k, "emu", &tmp).unwrap(), exe);
            assert_eq!(c.get_file(&k, "emu").unwrap(), exe);
        };
        let not_executable: fn(&Path) = |p| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut warned = 0;
        for (how, damage) in damages().into_iter().chain([("not executable", not_executable)]) {
            for file in [&exe, &sum] {
                if how == "not executable" && file == &sum {
                    continue;
                }
                store();
                damage(file);
                let got = c.get_file(&k, "emu");
                if file == &exe && how == "missing" {
                    assert!(got.is_none() && c.warnings().len() == warned, "a missing executable is a plain miss: {:?}", c.warnings());
                    continue;
                }
                warned += 1;
                assert!(got.is_none(), "{} {how}: used", file.display());
                assert!(!exe.exists() && !sum.exists(), "{} {how}: both evicted", file.display());
                let w = c.warnings();
                assert_eq!(w.len(), warned, "{} {how}: one warning: {w:?}", file.display());
                assert!(w[warned - 1].contains(&exe.display().to_string()) && !w[warned - 1].contains('\n'), "{w:?}");
            }
        }
        assert!(c.warnings().iter().any(|w| w.contains("it is not executable")), "{:?}", c.warnings());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_cache_warns_once_and_is_no_error() {
        let c = KernelCache::at("/proc/mra-kernel-cache");
        assert!(!c.put("a", "cubin", b"x"));
        assert!(!c.put("b", "cubin", b"y"));
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert!(c.warnings()[0].contains("/proc/mra-kernel-cache") && c.warnings()[0].contains("going on without caching"));
    }
}
