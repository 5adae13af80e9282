//! hiprtc, AMD's run-time compiler, loaded with libloading (so nothing links against ROCm).
//!
//! ROCm 6 ships it as `libhiprtc.so.6`; ROCm 5.x (Debian's 5.2 among them) has it inside
//! `libamdhip64.so.5`. `hiprtcVersion` is no help in telling them apart: every ROCm release
//! hard-codes it to 9.0, so the ROCm version is read from the file name of the library that
//! was actually mapped (`libamdhip64.so.5.2.21153` → 5.2, `libhiprtc.so.6.2.60200` → 6.2).
//!
//! KNOWN TRAP: Debian's hiprtc 5.2 compiles gfx90a fine but *aborts the whole process*
//! (glibc `munmap_chunk(): invalid pointer`, SIGABRT) for gfx942, gfx1100, gfx1151 and gfx1201
//! — checked in a throwaway child process, never in this crate's tests. An abort cannot be
//! caught, so [`Hiprtc::compile`] consults [`hiprtc_supports`] and refuses such combinations
//! with an error that points at clang instead of calling hiprtc.

use super::{CodeObject, HipError, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Library names tried, in order.
pub const HIPRTC_CANDIDATES: &[&str] =
    &["libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

/// A ROCm release, `major.minor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RocmVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for RocmVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl RocmVersion {
    pub const fn new(major: u32, minor: u32) -> RocmVersion {
        RocmVersion { major, minor }
    }

    /// The version in a library file name: `libamdhip64.so.5.2.21153` → 5.2,
    /// `libhiprtc.so.6` → 6.0; `None` for an unversioned name.
    pub fn from_file_name(name: &str) -> Option<RocmVersion> {
        let (_, tail) = name.split_once(".so.")?;
        let mut parts = tail.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
        Some(RocmVersion { major, minor })
    }
}

/// Does hiprtc of ROCm `version` compile for `arch` without trouble?
///
/// - ROCm 5.x: gfx90a only. (Debian's 5.2 is checked here: gfx90a compiles; gfx942, gfx1100,
///   gfx1151 and gfx1201 abort the process.)
/// - ROCm 6.x and later: gfx90a, gfx942, gfx1100; gfx1151 from 6.2; gfx1201 from 6.3.
/// - Any arch not listed: no.
pub fn hiprtc_supports(version: RocmVersion, arch: &str) -> bool {
    if version.major < 6 {
        return arch == "gfx90a";
    }
    match arch {
        "gfx90a" | "gfx942" | "gfx1100" => true,
        "gfx1151" => version >= RocmVersion::new(6, 2),
        "gfx1201" => version >= RocmVersion::new(6, 3),
        _ => false,
    }
}

type Program = *mut c_void;
type Status = c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status;
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
type CreateFn = unsafe extern "C" fn(*mut Program, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> Status;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> Status;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> Status;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> Status;

/// A loaded hiprtc. The library stays loaded for the life of the process: unloading the ROCm
/// runtime (which registers exit handlers) is not safe.
#[derive(Clone, Debug)]
pub struct Hiprtc {
    /// The name it was loaded by (`libamdhip64.so.5`).
    pub library: String,
    /// The file actually mapped, where /proc/self/maps tells it.
    pub path: Option<PathBuf>,
    /// The ROCm release, from the mapped file's name (or the name loaded); `None` if neither
    /// carries one. [`Hiprtc::compile`] then treats it as 5.x, the conservative choice.
    pub rocm: Option<RocmVersion>,
    /// What `hiprtcVersion` returns: 9.0 in every ROCm so far, kept for reports only.
    pub api_version: (i32, i32),
    fns: Fns,
}

#[derive(Clone, Copy, Debug)]
struct Fns {
    error_string: Option<ErrorStringFn>,
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    code_size: SizeFn,
    code: GetFn,
    destroy: DestroyFn,
}

/// One compile at a time: ROCm 5.2's hiprtc (comgr underneath) does not document thread
/// safety, and the compiles are short.
static COMPILE_LOCK: Mutex<()> = Mutex::new(());
static LOADED: OnceLock<Hiprtc> = OnceLock::new();

impl Hiprtc {
    /// Loads hiprtc from the first of [`HIPRTC_CANDIDATES`] that opens and has the functions.
    pub fn load() -> Result<Hiprtc> {
        if let Some(h) = LOADED.get() {
            return Ok(h.clone());
        }
        let mut last_symbol_error = None;
        for &name in HIPRTC_CANDIDATES {
            // SAFETY: loading the ROCm runtime runs its initialisers, which have no
            // preconditions; it is never unloaded (see below).
            let Ok(lib) = (unsafe { libloading::Library::new(name) }) else { continue };
            match Self::from_library(name, &lib) {
                Ok(h) => {
                    // Keep the library mapped for the life of the process: the fn pointers in
                    // `h` point into it, and unloading the ROCm runtime is not safe.
                    std::mem::forget(lib);
                    return Ok(LOADED.get_or_init(|| h).clone());
                }
                Err(e) => last_symbol_error = Some(e),
            }
        }
        Err(last_symbol_error.unwrap_or_else(|| HipError::HiprtcNotFound { tried: HIPRTC_CANDIDATES.join(", ") }))
    }

    fn from_library(name: &str, lib: &libloading::Library) -> Result<Hiprtc> {
        fn sym<T: Copy>(lib: &libloading::Library, library: &str, symbol: &'static str) -> Result<T> {
            let c = CString::new(symbol).expect("symbol names hold no NUL");
            // SAFETY: T is the C signature of `symbol` as declared in hiprtc.h.
            unsafe { lib.get::<T>(c.as_bytes_with_nul()) }
                .map(|s| *s)
                .map_err(|e| HipError::HiprtcSymbol { library: library.to_string(), symbol, message: e.to_string() })
        }
        let version: VersionFn = sym(lib, name, "hiprtcVersion")?;
        let fns = Fns {
            error_string: sym(lib, name, "hiprtcGetErrorString").ok(),
            create: sym(lib, name, "hiprtcCreateProgram")?,
            compile: sym(lib, name, "hiprtcCompileProgram")?,
            log_size: sym(lib, name, "hiprtcGetProgramLogSize")?,
            log: sym(lib, name, "hiprtcGetProgramLog")?,
            code_size: sym(lib, name, "hiprtcGetCodeSize")?,
            code: sym(lib, name, "hiprtcGetCode")?,
            destroy: sym(lib, name, "hiprtcDestroyProgram")?,
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers.
        unsafe { version(&mut major, &mut minor) };
        let path = mapped_path(name);
        let rocm = path
            .as_ref()
            .and_then(|p| p.file_name())
            .and_then(|f| RocmVersion::from_file_name(&f.to_string_lossy()))
            .or_else(|| RocmVersion::from_file_name(name));
        Ok(Hiprtc { library: name.to_string(), path, rocm, api_version: (major, minor), fns })
    }

    /// `5.2 (libamdhip64.so.5.2.21153)`, for messages.
    pub fn version_string(&self) -> String {
        let file = self.path.as_ref().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| self.library.clone());
        match self.rocm {
            Some(v) => format!("{v} ({file})"),
            None => format!("of unknown ROCm version ({file})"),
        }
    }

    /// Does this hiprtc compile for `arch`? An unknown ROCm version counts as 5.x.
    pub fn supports(&self, arch: &str) -> bool {
        hiprtc_supports(self.rocm.unwrap_or(RocmVersion::new(5, 0)), arch)
    }

    /// The options a kernel for `arch` is compiled with.
    pub fn options(arch: &str) -> Vec<String> {
        vec![format!("--offload-arch={arch}"), "-O3".into()]
    }

    /// `None` if this hiprtc compiles for `arch`, else the error that says why it is not
    /// called (see the module docs: ROCm 5.x aborts the process for the newer archs).
    pub fn refusal(&self, arch: &str) -> Option<HipError> {
        if self.supports(arch) {
            return None;
        }
        let rocm5 = !matches!(self.rocm, Some(v) if v.major >= 6);
        let known_abort = rocm5 && super::AMD_ARCHS.contains(&arch) && arch != "gfx90a";
        Some(HipError::HiprtcUnsupported {
            version: self.version_string(),
            reason: if known_abort { "is known to abort for" } else { "is not known to support" },
            arch: arch.to_string(),
        })
    }

    /// Compiles `source` for `arch` to a code object, or refuses an arch this hiprtc is known
    /// to abort on (see the module docs). Compiles are serialised across threads.
    pub fn compile(&self, source: &str, entry: &str, arch: &str) -> Result<CodeObject> {
        if let Some(refusal) = self.refusal(arch) {
            return Err(refusal);
        }
        let fail = |call: &'static str, code: String, log: String| HipError::HiprtcFailed {
            version: self.version_string(),
            call,
            arch: arch.to_string(),
            code,
            log,
        };
        let src = CString::new(source).map_err(|_| fail("hiprtcCreateProgram", "source".into(), "the source contains a NUL byte".into()))?;
        let name = CString::new(format!("{entry}.hip")).map_err(|_| fail("hiprtcCreateProgram", "name".into(), "the entry name contains a NUL byte".into()))?;
        let options: Vec<CString> = Self::options(arch).into_iter().map(|o| CString::new(o).expect("options hold no NUL")).collect();
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();

        let _guard = COMPILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let start = Instant::now();
        let f = self.fns;
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: the pointers are valid C strings for the duration of the call; no headers.
        let status = unsafe { (f.create)(&mut prog, src.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null()) };
        if status != 0 {
            return Err(fail("hiprtcCreateProgram", self.status_name(status), String::new()));
        }
        // SAFETY: `prog` is a live program from hiprtcCreateProgram, destroyed below on every
        // path; the option array outlives the call; buffers are sized from the size calls.
        let result = unsafe {
            let status = (f.compile)(prog, option_ptrs.len() as c_int, option_ptrs.as_ptr());
            let log = self.program_log(prog);
            if status != 0 {
                Err(fail("hiprtcCompileProgram", self.status_name(status), log))
            } else {
                let mut size = 0usize;
                let s = (f.code_size)(prog, &mut size);
                if s != 0 {
                    Err(fail("hiprtcGetCodeSize", self.status_name(s), log))
                } else {
                    let mut code = vec![0u8; size];
                    let s = (f.code)(prog, code.as_mut_ptr() as *mut c_char);
                    if s != 0 {
                        Err(fail("hiprtcGetCode", self.status_name(s), log))
                    } else {
                        Ok((code, log))
                    }
                }
            }
        };
        // SAFETY: `prog` is live and not used afterwards.
        unsafe { (f.destroy)(&mut prog) };
        let (bytes, log) = result?;
        Ok(CodeObject { bytes, arch: arch.to_string(), compiler: format!("hiprtc {}", self.version_string()), log, seconds: start.elapsed().as_secs_f64() })
    }

    /// SAFETY: `prog` must be a live program.
    unsafe fn program_log(&self, prog: Program) -> String {
        let mut size = 0usize;
        if (self.fns.log_size)(prog, &mut size) != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size + 1];
        if (self.fns.log)(prog, buf.as_mut_ptr() as *mut c_char) != 0 {
            return String::new();
        }
        CStr::from_bytes_until_nul(&buf).map(|c| c.to_string_lossy().trim_end().to_string()).unwrap_or_default()
    }

    fn status_name(&self, status: Status) -> String {
        let text = self.fns.error_string.and_then(|f| {
            // SAFETY: hiprtcGetErrorString returns a static string (or NULL).
            let p = unsafe { f(status) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        match text {
            Some(t) => format!("{t}, status {status}"),
            None => format!("status {status}"),
        }
    }
}

/// The file the dynamic loader mapped for the library opened as `name`, from /proc/self/maps.
pub(crate) fn mapped_path(name: &str) -> Option<PathBuf> {
    // `libamdhip64.so.5` → files named `libamdhip64.so*`.
    let stem = match name.find(".so") {
        Some(i) => &name[..i + 3],
        None => name,
    };
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with(stem)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_support_table() {
        let rocm52 = RocmVersion::new(5, 2);
        assert!(hiprtc_supports(rocm52, "gfx90a"));
        for arch in ["gfx942", "gfx1100", "gfx1151", "gfx1201", "sm_90", "gfx950"] {
            assert!(!hiprtc_supports(rocm52, arch), "{arch}");
        }
        let rocm60 = RocmVersion::new(6, 0);
        for arch in ["gfx90a", "gfx942", "gfx1100"] {
            assert!(hiprtc_supports(rocm60, arch), "{arch}");
        }
        assert!(!hiprtc_supports(rocm60, "gfx1151"));
        assert!(hiprtc_supports(RocmVersion::new(6, 2), "gfx1151"));
        assert!(!hiprtc_supports(RocmVersion::new(6, 2), "gfx1201"));
        assert!(hiprtc_supports(RocmVersion::new(6, 3), "gfx1201"));
        assert!(hiprtc_supports(RocmVersion::new(7, 0), "gfx1201"));
        assert!(!hiprtc_supports(RocmVersion::new(7, 0), "sm_90"));
    }

    #[test]
    fn versions_come_from_library_file_names() {
        assert_eq!(RocmVersion::from_file_name("libamdhip64.so.5.2.21153"), Some(RocmVersion::new(5, 2)));
        assert_eq!(RocmVersion::from_file_name("libhiprtc.so.6.2.60200"), Some(RocmVersion::new(6, 2)));
        assert_eq!(RocmVersion::from_file_name("libhiprtc.so.6"), Some(RocmVersion::new(6, 0)));
        assert_eq!(RocmVersion::from_file_name("libhiprtc.so"), None);
        assert_eq!(RocmVersion::new(6, 3).to_string(), "6.3");
    }

    #[test]
    fn refuses_an_arch_it_would_abort_on_without_calling_it() {
        // A Hiprtc whose functions must never be reached: refusal happens before any call.
        unsafe extern "C" fn never(_: *mut Program, _: *const c_char, _: *const c_char, _: c_int, _: *const *const c_char, _: *const *const c_char) -> Status {
            panic!("hiprtc was called")
        }
        unsafe extern "C" fn never_compile(_: Program, _: c_int, _: *const *const c_char) -> Status {
            panic!("hiprtc was called")
        }
        unsafe extern "C" fn never_size(_: Program, _: *mut usize) -> Status {
            panic!("hiprtc was called")
        }
        unsafe extern "C" fn never_get(_: Program, _: *mut c_char) -> Status {
            panic!("hiprtc was called")
        }
        unsafe extern "C" fn never_destroy(_: *mut Program) -> Status {
            panic!("hiprtc was called")
        }
        let h = Hiprtc {
            library: "libamdhip64.so.5".into(),
            path: Some("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153".into()),
            rocm: Some(RocmVersion::new(5, 2)),
            api_version: (9, 0),
            fns: Fns {
                error_string: None,
                create: never,
                compile: never_compile,
                log_size: never_size,
                log: never_get,
                code_size: never_size,
                code: never_get,
                destroy: never_destroy,
            },
        };
        let err = h.compile("", "k", "gfx942").unwrap_err().to_string();
        assert_eq!(err, "hiprtc 5.2 (libamdhip64.so.5.2.21153) is known to abort for gfx942; use clang (--compiler clang)");
        let err = h.compile("", "k", "gfx950").unwrap_err().to_string();
        assert!(err.contains("is not known to support gfx950"), "{err}");
        // An unknown version counts as 5.x.
        let unknown = Hiprtc { rocm: None, ..h };
        assert!(unknown.supports("gfx90a") && !unknown.supports("gfx1100"));
    }
}
