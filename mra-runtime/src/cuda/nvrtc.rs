//! NVRTC: run-time compilation of generated CUDA C++ to a cubin for one sm_XX, with the
//! ptxas resource report (registers, spills, shared memory) and the on-disk cache.

use crate::cache::KernelCache;
use crate::error::{Result, RuntimeError};
use cudarc::nvrtc::{result as nv, sys};
use serde::Serialize;
use std::ffi::{c_char, CStr, CString};
use std::time::Instant;

/// NVRTC functions a compile calls; a libnvrtc without one of them cannot compile.
const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcDestroyProgram",
    "nvrtcGetErrorString",
];

/// A loaded NVRTC library.
#[derive(Clone, Copy, Debug)]
pub struct Nvrtc {
    pub version: (i32, i32),
}

/// What ptxas reported for one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResourceReport {
    pub registers: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    pub shared_bytes: u32,
}

impl ResourceReport {
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }

    /// Parses `ptxas -v` output (as NVRTC returns it in the program log with
    /// `--ptxas-options=-v`). Lines of interest:
    /// `ptxas         .     64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads`
    /// `ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem, 384 bytes cmem[0]`
    pub fn parse(log: &str) -> Option<ResourceReport> {
        let mut r = ResourceReport::default();
        let mut seen = false;
        for line in log.lines() {
            for part in line.split(',') {
                let words: Vec<&str> = part.split_whitespace().collect();
                let num_before = |tail: &[&str]| -> Option<u32> {
                    let i = words.windows(tail.len()).position(|w| w == tail)?;
                    words.get(i.checked_sub(1)?)?.parse().ok()
                };
                if let Some(n) = num_before(&["registers"]) {
                    r.registers = n;
                    seen = true;
                }
                if let Some(n) = num_before(&["bytes", "stack", "frame"]) {
                    r.stack_frame_bytes = n;
                }
                if let Some(n) = num_before(&["bytes", "spill", "stores"]) {
                    r.spill_store_bytes = n;
                }
                if let Some(n) = num_before(&["bytes", "spill", "loads"]) {
                    r.spill_load_bytes = n;
                }
                if let Some(n) = num_before(&["bytes", "smem"]) {
                    r.shared_bytes = n;
                }
            }
        }
        seen.then_some(r)
    }
}

/// A compiled kernel image.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    /// The ptxas report; `None` when the image came from the cache without its log.
    pub resources: Option<ResourceReport>,
    /// NVRTC's program log (front-end warnings, then ptxas's report); from the cache, the
    /// stored one or empty.
    pub log: String,
    pub seconds: f64,
    pub from_cache: bool,
}

impl Nvrtc {
    /// Loads libnvrtc, or says which names were looked for. (cudarc itself panics when the
    /// library is missing, so it is probed here first.)
    pub fn load() -> Result<Nvrtc> {
        let tried = crate::cuda::lib_candidates("nvrtc");
        crate::cuda::probe_library(&tried, NVRTC_SYMBOLS).map_err(|e| match e {
            crate::cuda::LibraryProbe::NotFound => RuntimeError::NoNvrtc { tried: tried.join(", ") },
            crate::cuda::LibraryProbe::MissingSymbol { name, symbol, detail } => RuntimeError::BrokenLibrary { what: "NVRTC", name, symbol, detail },
        })?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the library is present (probed above); the out-pointers are valid.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map_err(|e| RuntimeError::Compile { entry: "nvrtcVersion".into(), arch: String::new(), log: format!("{e:?}") })?;
        Ok(Nvrtc { version: (major, minor) })
    }

    /// The options a kernel for `arch` is compiled with. From NVRTC 12.9 on, `--no-cache`: NVRTC
    /// otherwise keeps its ptxas results in the driver's compute cache (~/.nv/ComputeCache), and
    /// a hit there skips ptxas, so the log holds no `-v` report: `--compile-only` failed and the
    /// tuner's spill check was skipped for any kernel an earlier process had compiled. The kernel
    /// cache keeps the cubin and its log itself.
    pub fn options(&self, arch: &str) -> Vec<String> {
        let mut options = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into(), "--ptxas-options=-v".into()];
        if Self::has_its_own_cache(self.version) {
            options.push("--no-cache".into());
        }
        options
    }

    /// NVRTC caches its compiles from 12.9 on (and takes `--no-cache`); earlier versions refuse
    /// the option.
    pub fn has_its_own_cache(version: (i32, i32)) -> bool {
        version >= (12, 9)
    }

    /// Compiles `source` for `arch` (`sm_90`) to a cubin, through the cache.
    pub fn compile(&self, source: &str, entry: &str, arch: &str, cache: &KernelCache) -> Result<Compiled> {
        let start = Instant::now();
        let options = self.options(arch);
        let version = format!("nvrtc {}.{}", self.version.0, self.version.1);
        let key = KernelCache::key(&[source.as_bytes(), options.join(" ").as_bytes(), version.as_bytes(), arch.as_bytes()]);
        // The log is half of the entry: its ptxas report is the register and spill count. A cubin
        // whose log is damaged or missing is removed with it and compiled again.
        if let Some([cubin, log]) = cache.get_all(&key, &["cubin", "log"]).and_then(|all| <[Vec<u8>; 2]>::try_from(all).ok()) {
            let log = String::from_utf8_lossy(&log).into_owned();
            let resources = ResourceReport::parse(&log);
            return Ok(Compiled { cubin, resources, log, seconds: start.elapsed().as_secs_f64(), from_cache: true });
        }
        let (cubin, log) = self.compile_uncached(source, entry, arch, &options)?;
        // The log first: a reader that finds the cubin finds its log.
        cache.put(&key, "log", log.as_bytes());
        cache.put(&key, "cubin", &cubin);
        Ok(Compiled { cubin, resources: ResourceReport::parse(&log), log, seconds: start.elapsed().as_secs_f64(), from_cache: false })
    }

    fn compile_uncached(&self, source: &str, entry: &str, arch: &str, options: &[String]) -> Result<(Vec<u8>, String)> {
        let fail = |log: String| RuntimeError::Compile { entry: entry.into(), arch: arch.into(), log };
        let src = CString::new(source).map_err(|_| fail("source contains a NUL byte".into()))?;
        let name = CString::new(format!("{entry}.cu")).expect("entry names hold no NUL");
        let prog = nv::create_program(&src, Some(&name)).map_err(|e| fail(format!("{e:?}")))?;
        // SAFETY: prog is a live program from create_program; it is destroyed below on every path.
        let result = unsafe {
            let compiled = nv::compile_program(prog, options);
            let log = nv::get_program_log(prog).map(|raw| CStr::from_ptr(raw.as_ptr()).to_string_lossy().into_owned()).unwrap_or_default();
            let out = match compiled {
                Err(e) => Err(fail(format!("{e:?}\n{log}"))),
                Ok(()) => get_cubin(prog).map(|c| (c, log)).map_err(|e| fail(format!("nvrtcGetCUBIN: {e:?}"))),
            };
            let _ = nv::destroy_program(prog);
            out
        };
        result
    }
}

/// SAFETY: `prog` must be a successfully compiled, live program.
unsafe fn get_cubin(prog: sys::nvrtcProgram) -> std::result::Result<Vec<u8>, nv::NvrtcError> {
    let mut size = 0usize;
    sys::nvrtcGetCUBINSize(prog, &mut size).result()?;
    let mut buf = vec![0u8; size];
    sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char).result()?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_ptxas_report() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                   ptxas         .     64 bytes stack frame, 8 bytes spill stores, 16 bytes spill loads\n\
                   ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 384 bytes cmem[0]\n";
        let r = ResourceReport::parse(log).unwrap();
        assert_eq!(
            r,
            ResourceReport { registers: 40, stack_frame_bytes: 64, spill_store_bytes: 8, spill_load_bytes: 16, shared_bytes: 2048 }
        );
        assert!(r.spills());
        assert!(ResourceReport::parse("no report").is_none());
    }

    /// NVRTC 12.9 added its compile cache and the `--no-cache` option (NVRTC user guide,
    /// "Caching (CUDA 12.9)"); a cache hit skips ptxas and its `-v` report. Older NVRTC rejects
    /// the option, so it is passed from 12.9 on only.
    #[test]
    fn ptxas_always_runs_from_nvrtc_12_9_on() {
        let options = |version| Nvrtc { version }.options("sm_90");
        for version in [(12, 9), (13, 0), (13, 2), (14, 0)] {
            assert!(options(version).contains(&"--no-cache".to_string()), "{version:?}");
        }
        for version in [(11, 8), (12, 0), (12, 8)] {
            assert!(!options(version).contains(&"--no-cache".to_string()), "{version:?}");
        }
        assert!(options((13, 0)).contains(&"--ptxas-options=-v".to_string()));
    }
}
