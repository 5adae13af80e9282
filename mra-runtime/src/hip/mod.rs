//! The AMD backend, offline: compile generated HIP C++ to an AMDGPU code object without an AMD
//! GPU, and read what the compiler made of it.
//!
//! - [`clang`]: a clang with the AMDGPU target (`clang++ -x hip --cuda-device-only -nogpulib
//!   -nogpuinc`), for every AMD arch in the table (gfx90a, gfx942, gfx1100, gfx1151, gfx1201).
//! - [`hiprtc`]: AMD's run-time compiler, loaded with libloading. Debian's ROCm 5.2 hiprtc
//!   compiles gfx90a but aborts the whole process for the newer archs, so it is only called
//!   where [`hiprtc::hiprtc_supports`] says it works.
//! - [`report`]: per-kernel resources from the code object's `NT_AMDGPU_METADATA` note
//!   (VGPRs, AGPRs, SGPRs, LDS, scratch, spills, wavefront size) and the matrix instructions
//!   (`v_mfma*`, `v_wmma*`) counted in the `llvm-objdump` disassembly.
//! - [`occupancy`]: waves per SIMD / CU that those resources allow on each AMD arch.
//!
//! And the AMD backend at run time, for a machine with ROCm and an AMD GPU:
//!
//! - [`runtime`]: the HIP runtime (`libamdhip64`) loaded with libloading, with the same shape
//!   as the CUDA backend (`Gpu`, `DeviceBuffer`, `Stream`, `Event`, `Function`, `LaunchArgs`);
//!   `runtime::Gpu` implements `crate::backend::Backend`, so the harness runs on it as on CUDA.
//! - [`hipblas`]: hipBLAS, loaded lazily (present or not), for the GEMM-based levels.
//! - [`compile`]: picks hiprtc or clang for an arch and returns the code object the runtime
//!   loads (through the kernel cache for runs).

mod backend;
pub mod clang;
pub mod compile;
pub mod ffi;
pub mod hipblas;
pub mod hiprtc;
pub mod occupancy;
pub mod report;
pub mod runtime;

use crate::error::RuntimeError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The AMD archs the offline compile covers (the AMD entries of the codegen arch table).
pub const AMD_ARCHS: &[&str] = &["gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201"];

/// A compiled AMDGPU code object (an ELF shared object, not an offload bundle).
#[derive(Clone, Debug)]
pub struct CodeObject {
    pub bytes: Vec<u8>,
    pub arch: String,
    /// What compiled it: `clang++-19 (Debian clang version 19.1.7 ...)`, `hiprtc (ROCm 5.2)`.
    pub compiler: String,
    /// The compiler's diagnostics (clang's stderr, the hiprtc program log); usually empty.
    pub log: String,
    /// Wall time of the compile.
    pub seconds: f64,
}

impl CodeObject {
    /// Is this an ELF file for the AMDGPU machine (EM_AMDGPU = 224)?
    pub fn is_amdgpu_elf(&self) -> bool {
        is_amdgpu_elf(&self.bytes)
    }
}

/// Is `bytes` a 64-bit little-endian ELF for EM_AMDGPU (224)?
pub fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    // e_ident: magic, EI_CLASS = 2 (64-bit), EI_DATA = 1 (LSB); e_machine at offset 18.
    bytes.len() >= 20 && bytes.starts_with(b"\x7fELF") && bytes[4] == 2 && bytes[5] == 1 && u16::from_le_bytes([bytes[18], bytes[19]]) == 224
}

/// Errors of the AMD offline toolchain: each one says what to install or use instead.
#[derive(Debug, thiserror::Error)]
pub enum HipError {
    #[error("no clang with the AMDGPU target found (tried {tried}); install one with `apt-get install clang-19 lld-19` or point MRA_CLANG at a clang++")]
    ClangNotFound { tried: String },
    #[error("{tool} not found (tried {tried}); install it with `apt-get install llvm-19`{hint}")]
    ToolNotFound { tool: &'static str, tried: String, hint: &'static str },
    #[error("{compiler} could not link the code object for {arch}: the AMDGPU link step needs ld.lld, which is missing; install it with `apt-get install lld-19`\n{stderr}")]
    LldMissing { compiler: String, arch: String, stderr: String },
    /// `status` as the standard library prints it (`exit status: 1`, `signal: 9 (SIGKILL)`); the
    /// first line ends with the compiler's first error, the whole message follows.
    #[error("{compiler} could not compile the HIP source for {arch} ({status}): {}\n{stderr}", crate::error::first_error(.stderr))]
    ClangFailed { compiler: String, arch: String, status: String, stderr: String },
    #[error("hiprtc not found: could not load any of {tried} (Debian: `apt-get install libamdhip64-dev libhiprtc-builtins5 rocm-device-libs`; ROCm: put /opt/rocm/lib on LD_LIBRARY_PATH)")]
    HiprtcNotFound { tried: String },
    #[error("hiprtc ({library}) lacks the function {symbol}: {message}")]
    HiprtcSymbol { library: String, symbol: &'static str, message: String },
    /// `reason`: "is known to abort for" (ROCm 5.x and a newer arch) or "is not known to support".
    #[error("hiprtc {version} {reason} {arch}; use clang (--compiler clang)")]
    HiprtcUnsupported { version: String, reason: &'static str, arch: String },
    #[error("hiprtc {version}: {call} failed for {arch} ({code}): {}\n{log}", crate::error::first_error(.log))]
    HiprtcFailed { version: String, call: &'static str, arch: String, code: String, log: String },
    #[error("the code object is not readable as an AMDGPU ELF: {0}")]
    BadCodeObject(String),
    /// The disassembler itself failed (a wrong or broken MRA_LLVM_OBJDUMP): not the code
    /// object's fault, which the compiler just wrote.
    #[error("the disassembler {tool} failed on the code object for {arch} ({status}): {message}; point MRA_LLVM_OBJDUMP at a working llvm-objdump (`apt-get install llvm-19`)")]
    DisassemblerFailed { tool: String, arch: String, status: String, message: String },
    #[error("ROCm HIP runtime not found: could not load any of {tried} (install ROCm's libamdhip64, put /opt/rocm/lib on LD_LIBRARY_PATH, or name the library in MRA_HIP_RUNTIME); --compile-only and --emit-src work without it")]
    RuntimeNotFound { tried: String },
    #[error("ROCm HIP runtime ({library}) lacks the function {symbol}: {message}")]
    RuntimeSymbol { library: String, symbol: &'static str, message: String },
    /// The library loaded but the runtime sees no device: ROCm installed, no AMD GPU (or no
    /// access to /dev/kfd).
    #[error("ROCm HIP runtime loaded ({runtime}) but it reports no AMD GPU ({detail}); --compile-only and --emit-src work without one")]
    NoGpu { runtime: String, detail: String },
    #[error("HIP call {call} failed: {message}")]
    Call { call: &'static str, code: i32, message: String },
    #[error("hipBLAS not found: could not load any of {tried} (install ROCm's hipBLAS, or put /opt/rocm/lib on LD_LIBRARY_PATH)")]
    BlasNotFound { tried: String },
    #[error("hipBLAS ({library}) lacks the function {symbol}: {message}")]
    BlasSymbol { library: String, symbol: &'static str, message: String },
    #[error("hipBLAS call {call} failed: {message}")]
    BlasCall { call: &'static str, code: i32, message: String },
    #[error("{0}")]
    Runtime(String),
    #[error("{what} ({path}): {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
}

impl From<HipError> for RuntimeError {
    fn from(e: HipError) -> RuntimeError {
        RuntimeError::Invalid(e.to_string())
    }
}

pub type Result<T, E = HipError> = std::result::Result<T, E>;

/// A directory of its own for one compile or disassembly, removed when dropped. Unique per
/// call (process id, a counter, the clock), so parallel test threads never share files.
pub(crate) struct ScratchDir {
    pub path: PathBuf,
}

impl ScratchDir {
    pub fn new(purpose: &str) -> Result<ScratchDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
            let path = base.join(format!("mra-{purpose}-{}-{n}-{nanos}", std::process::id()));
            match crate::scratch::create(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(HipError::Io { what: "creating a temporary directory", path, source }),
            }
        }
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.path.join(name);
        std::fs::write(&path, bytes).map_err(|source| HipError::Io { what: "writing a temporary file", path: path.clone(), source })?;
        Ok(path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        crate::scratch::unregister(&self.path);
    }
}

/// Finds an executable: `$env_var` if set (it must exist), else the first of `names` that is
/// an absolute path that exists or a bare name found on PATH. `accept` may reject a candidate
/// (e.g. a clang without the AMDGPU target), and the search goes on. Returns the path, or the
/// list of what was tried.
pub(crate) fn find_tool(env_var: &str, names: &[&str], accept: impl Fn(&Path) -> bool) -> std::result::Result<PathBuf, String> {
    let mut tried = Vec::new();
    if let Some(given) = std::env::var_os(env_var).filter(|v| !v.is_empty()) {
        let given = PathBuf::from(given);
        let resolved = if given.components().count() > 1 { Some(given.clone()).filter(|p| p.is_file()) } else { on_path(&given) };
        match resolved {
            Some(p) if accept(&p) => return Ok(p),
            Some(p) => tried.push(format!("${env_var}={} (rejected)", p.display())),
            None => tried.push(format!("${env_var}={} (not found)", given.display())),
        }
        return Err(tried.join(", "));
    }
    for name in names {
        let p = Path::new(name);
        let found = if p.is_absolute() { Some(p.to_path_buf()).filter(|p| p.is_file()) } else { on_path(p) };
        match found {
            Some(path) if accept(&path) => return Ok(path),
            Some(path) => tried.push(format!("{} (rejected)", path.display())),
            None => tried.push(name.to_string()),
        }
    }
    Err(tried.join(", "))
}

fn on_path(name: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_an_amdgpu_elf_header() {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[18..20].copy_from_slice(&224u16.to_le_bytes());
        assert!(is_amdgpu_elf(&h));
        h[18] = 62; // EM_X86_64
        assert!(!is_amdgpu_elf(&h));
        assert!(!is_amdgpu_elf(b"__CLANG_OFFLOAD_BUNDLE__"));
    }

    #[test]
    fn scratch_dirs_are_unique_and_removed() {
        let a = ScratchDir::new("test").unwrap();
        let b = ScratchDir::new("test").unwrap();
        assert_ne!(a.path, b.path);
        let f = a.write("x.txt", b"hi").unwrap();
        assert!(f.is_file());
        let dir = a.path.clone();
        drop(a);
        assert!(!dir.exists());
    }

    #[test]
    fn find_tool_reports_what_it_tried() {
        // An env var that nobody sets, so the names are searched.
        let err = find_tool("MRA_TEST_TOOL_THAT_IS_NOT_SET", &["mra-no-such-tool-1", "/no/such/tool"], |_| true).unwrap_err();
        assert_eq!(err, "mra-no-such-tool-1, /no/such/tool");
        assert!(find_tool("MRA_TEST_TOOL_THAT_IS_NOT_SET", &["sh"], |_| true).is_ok());
        assert!(find_tool("MRA_TEST_TOOL_THAT_IS_NOT_SET", &["sh"], |_| false).unwrap_err().contains("(rejected)"));
    }
}
