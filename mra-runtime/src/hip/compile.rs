//! Which compiler turns generated HIP into a code object for an AMD arch: hiprtc from the
//! installed ROCm where that hiprtc supports the arch (see [`super::hiprtc::hiprtc_supports`]),
//! else a clang with the AMDGPU target. Both produce an AMDGPU ELF code object that
//! `hipModuleLoadData` loads. A forced choice that cannot do the arch is an error, never a call
//! (ROCm 5's hiprtc aborts the process for the archs it does not know).

use super::clang::Clang;
use super::hiprtc::Hiprtc;
use super::report::{read_metadata, KernelResources};
use super::{CodeObject, HipError, Result};
use crate::cache::KernelCache;
use std::path::Path;
use std::time::Instant;

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// hiprtc if it supports the arch, else clang.
    Auto,
    Hiprtc,
    Clang,
}

/// A compiler ready to compile for one arch.
#[derive(Clone, Debug)]
pub enum AmdCompiler {
    Hiprtc(Hiprtc),
    Clang(Clang),
}

impl AmdCompiler {
    /// Picks the compiler for `arch` (`gfx90a`, ...).
    pub fn choose(arch: &str, choice: Choice) -> Result<AmdCompiler> {
        match choice {
            Choice::Hiprtc => {
                let h = Hiprtc::load()?;
                match h.refusal(arch) {
                    Some(refusal) => Err(refusal),
                    None => Ok(AmdCompiler::Hiprtc(h)),
                }
            }
            Choice::Clang => Ok(AmdCompiler::Clang(Clang::find()?)),
            Choice::Auto => {
                let hiprtc = Hiprtc::load();
                if let Ok(h) = &hiprtc {
                    if h.supports(arch) {
                        return Ok(AmdCompiler::Hiprtc(h.clone()));
                    }
                }
                Clang::find().map(AmdCompiler::Clang).map_err(|clang_err| {
                    let why_not_hiprtc = match hiprtc {
                        Ok(h) => h.refusal(arch).map(|e| e.to_string()).unwrap_or_default(),
                        Err(e) => e.to_string(),
                    };
                    HipError::Runtime(format!("no compiler for {arch}: {why_not_hiprtc}; and {clang_err}"))
                })
            }
        }
    }

    /// `hiprtc 5.2 (libamdhip64.so.5.2.21153)` or `clang++-19 (Debian clang version 19.1.7 ...)`.
    pub fn describe(&self) -> String {
        match self {
            AmdCompiler::Hiprtc(h) => format!("hiprtc {}", h.version_string()),
            AmdCompiler::Clang(c) => c.describe(),
        }
    }

    /// `hiprtc` or `clang`.
    pub fn kind(&self) -> &'static str {
        match self {
            AmdCompiler::Hiprtc(_) => "hiprtc",
            AmdCompiler::Clang(_) => "clang",
        }
    }

    pub fn compile(&self, source: &str, entry: &str, arch: &str) -> Result<CodeObject> {
        match self {
            AmdCompiler::Hiprtc(h) => h.compile(source, entry, arch),
            AmdCompiler::Clang(c) => c.compile(source, arch),
        }
    }
}

/// A code object for the run: compiled now or read back from the kernel cache, with the
/// resources its metadata records for the kernel.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub code_object: Vec<u8>,
    /// [`AmdCompiler::describe`] of the compiler that made it (this one, on a cache hit).
    pub compiler: String,
    pub resources: Option<KernelResources>,
    pub seconds: f64,
    pub from_cache: bool,
}

impl AmdCompiler {
    /// What decides the code object besides the source: compiler, version and options.
    fn cache_identity(&self, arch: &str) -> String {
        let options = match self {
            AmdCompiler::Hiprtc(_) => Hiprtc::options(arch),
            AmdCompiler::Clang(_) => Clang::args(arch, Path::new("kernel.hip"), Path::new("kernel.co")).iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        };
        format!("{}\n{}", self.describe(), options.join(" "))
    }

    /// [`AmdCompiler::compile`] through the kernel cache (entries `<key>.hsaco`).
    pub fn compile_cached(&self, source: &str, entry: &str, arch: &str, cache: &KernelCache) -> crate::error::Result<Compiled> {
        let start = Instant::now();
        let key = KernelCache::key(&[source.as_bytes(), entry.as_bytes(), self.cache_identity(arch).as_bytes(), arch.as_bytes()]);
        let (code_object, from_cache) = match cache.get(&key, "hsaco") {
            Some(bytes) => (bytes, true),
            None => {
                let co = self.compile(source, entry, arch)?;
                cache.put(&key, "hsaco", &co.bytes);
                (co.bytes, false)
            }
        };
        let resources = read_metadata(&code_object).ok().and_then(|m| m.kernel(entry).cloned());
        Ok(Compiled { code_object, compiler: self.describe(), resources, seconds: start.elapsed().as_secs_f64(), from_cache })
    }
}
