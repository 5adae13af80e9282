//! On-disk kernel cache: compiled code objects keyed by a hash of everything that decides
//! them (source, compiler options, compiler version, target arch).
//!
//! Directory: `$MRA_KERNEL_CACHE` if set (`off` disables the cache), else
//! `$XDG_CACHE_HOME/mra-dsl/kernels`, else `$HOME/.cache/mra-dsl/kernels`.

use crate::error::{Result, RuntimeError};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The environment variable that overrides the cache directory.
pub const CACHE_ENV: &str = "MRA_KERNEL_CACHE";

#[derive(Clone, Debug)]
pub struct KernelCache {
    dir: Option<PathBuf>,
}

impl KernelCache {
    /// The cache the environment asks for (see the module docs).
    pub fn from_env() -> KernelCache {
        match std::env::var_os(CACHE_ENV) {
            Some(v) if v == "off" => KernelCache { dir: None },
            Some(v) if !v.is_empty() => KernelCache { dir: Some(PathBuf::from(v)) },
            _ => KernelCache { dir: default_dir() },
        }
    }

    pub fn at(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache { dir: Some(dir.into()) }
    }

    pub fn disabled() -> KernelCache {
        KernelCache { dir: None }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The key for a code object: SHA-256 over the parts, each length-prefixed so that
    /// ("ab","c") and ("a","bc") differ.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str, ext: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key}.{ext}")))
    }

    /// The cached bytes, if present. A missing or unreadable entry is a miss.
    pub fn get(&self, key: &str, ext: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(key, ext)?).ok().filter(|b| !b.is_empty())
    }

    /// Stores bytes atomically (write to a temporary file, then rename), so a concurrent
    /// reader never sees half an entry.
    pub fn put(&self, key: &str, ext: &str, bytes: &[u8]) -> Result<()> {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key, ext)) else {
            return Ok(());
        };
        let io = |source| RuntimeError::Cache { path: dir.clone(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = dir.join(format!(".{key}.{ext}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("mra-dsl").join("kernels"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        c.put(&k, "cubin", b"\x7fELF...").unwrap();
        assert_eq!(c.get(&k, "cubin").unwrap(), b"\x7fELF...");
        KernelCache::disabled().put(&k, "cubin", b"x").unwrap();
        assert!(KernelCache::disabled().get(&k, "cubin").is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
