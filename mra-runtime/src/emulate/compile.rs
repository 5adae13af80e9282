//! Compiling an emulated program with the host's clang++ (AddressSanitizer on), through the
//! kernel cache: the executable is cached by a hash of the emulated source, the flags and the
//! compiler's version, so `validate` compiles each (level, arch, K, dtype) once for every N.

use crate::cache::KernelCache;
use crate::hip::clang::{CLANG_CANDIDATES, CLANG_ENV};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Why the emulator could not build a kernel.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("--emulate needs clang++ with AddressSanitizer to compile the kernels for the CPU (tried {tried}); install clang-19 and libclang-rt-19-dev (`apt-get install clang-19 libclang-rt-19-dev`) or point MRA_CLANG at a clang++")]
    NoClang { tried: String },
    #[error("{clang} could not compile the emulated kernel {entry} (exit status {status}):\n{stderr}")]
    Failed { clang: String, entry: String, status: String, stderr: String },
    #[error("emulator: {what} ({path}): {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
}

/// The flags of every emulator compile: C++20, AddressSanitizer (out-of-bounds accesses to
/// tensors and LDS stop the run), threads, optimized enough to run the waves quickly.
pub const FLAGS: &[&str] = &[
    "-x", "c++", "-std=c++20", "-O1", "-g0", "-pthread", "-fsanitize=address", "-fno-omit-frame-pointer",
    // The AMDGPU launch-bound attribute means nothing on the host.
    "-Wno-unknown-attributes", "-Wno-ignored-attributes",
    // Vector arguments passed without AVX: the ABI note does not matter inside one program.
    "-Wno-psabi",
];

/// The host C++ compiler.
#[derive(Clone, Debug)]
pub struct HostClang {
    pub path: PathBuf,
    pub version: String,
}

impl HostClang {
    /// `$MRA_CLANG` if set, else the first of the clang candidates that runs and links a
    /// program with AddressSanitizer.
    pub fn find() -> Result<HostClang, CompileError> {
        let path = crate::hip::find_tool(CLANG_ENV, CLANG_CANDIDATES, links_with_asan).map_err(|tried| CompileError::NoClang { tried })?;
        let version = Command::new(&path)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
            .unwrap_or_else(|| "unknown version".into());
        Ok(HostClang { path, version })
    }

    pub fn describe(&self) -> String {
        format!("{} ({})", self.path.display(), self.version)
    }

    /// Compiles `source` to an executable in `cache` (or in `scratch` when the cache is off).
    pub fn build(&self, source: &str, entry: &str, cache: &KernelCache, scratch: &Path) -> Result<Built, CompileError> {
        let key = KernelCache::key(&[source.as_bytes(), FLAGS.join(" ").as_bytes(), self.version.as_bytes(), b"emulate-v1"]);
        let dir = cache.dir().map(Path::to_path_buf).unwrap_or_else(|| scratch.to_path_buf());
        let exe = dir.join(format!("{key}.emu"));
        if exe.is_file() {
            return Ok(Built { exe, seconds: 0.0, cached: true });
        }
        std::fs::create_dir_all(&dir).map_err(|source| CompileError::Io { what: "creating the kernel cache directory", path: dir.clone(), source })?;
        // Unique temporary names: parallel compiles of the same kernel must not collide.
        let tmp = dir.join(format!("{key}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()).replace(['(', ')'], ""));
        let src = tmp.with_extension("cpp");
        std::fs::write(&src, source).map_err(|source| CompileError::Io { what: "writing the emulated source", path: src.clone(), source })?;
        let start = Instant::now();
        let out = Command::new(&self.path).args(FLAGS).arg("-o").arg(&tmp).arg(&src).output();
        let _ = std::fs::remove_file(&src);
        let out = out.map_err(|source| CompileError::Io { what: "running clang++", path: self.path.clone(), source })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(CompileError::Failed {
                clang: self.describe(),
                entry: entry.to_string(),
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        std::fs::rename(&tmp, &exe).map_err(|source| CompileError::Io { what: "storing the emulated executable", path: exe.clone(), source })?;
        Ok(Built { exe, seconds: start.elapsed().as_secs_f64(), cached: false })
    }
}

/// A built emulated kernel.
#[derive(Clone, Debug)]
pub struct Built {
    pub exe: PathBuf,
    pub seconds: f64,
    pub cached: bool,
}

/// Does this clang++ link a C++ program with AddressSanitizer (the runtime is a separate
/// package on Debian: libclang-rt-19-dev)?
fn links_with_asan(clang: &Path) -> bool {
    let Ok(dir) = crate::hip::ScratchDir::new("emu-probe") else { return false };
    let src = dir.path.join("probe.cpp");
    if std::fs::write(&src, "int main() { return 0; }\n").is_err() {
        return false;
    }
    Command::new(clang)
        .args(["-x", "c++", "-fsanitize=address", "-o"])
        .arg(dir.path.join("probe"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}
