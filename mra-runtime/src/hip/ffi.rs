//! The HIP runtime library (`libamdhip64`), loaded with libloading: the C signatures and
//! constants the runtime backend uses, and where `gcnArchName` sits in `hipDeviceProp_t`.
//!
//! Nothing here links against ROCm; the library is opened once per process and never closed
//! (the ROCm runtime registers exit handlers, so unloading it is not safe).

use super::{HipError, Result};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Library names tried, in order: the versioned names first (their struct layouts are known;
/// ROCm 6 before 5 where both are installed), then the development symlink.
pub const HIP_CANDIDATES: &[&str] = &["libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"];

/// The environment variable naming the libamdhip64 to load instead (a path or a file name).
pub const HIP_RUNTIME_ENV: &str = "MRA_HIP_RUNTIME";

pub type HipStatus = c_int;
pub type HipStream = *mut c_void;
pub type HipEvent = *mut c_void;
pub type HipModule = *mut c_void;
pub type HipFunction = *mut c_void;
pub type HipDevicePtr = *mut c_void;

pub const HIP_SUCCESS: HipStatus = 0;
pub const HIP_ERROR_NO_DEVICE: HipStatus = 100;
/// `hipMemcpyKind`.
pub const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
/// `hipStreamNonBlocking`: the stream does not synchronise with the null stream.
pub const HIP_STREAM_NON_BLOCKING: c_uint = 0x01;

/// `hipDeviceAttribute_t` values used here. They are the same in ROCm 5.x and 6.x: ROCm 6 kept
/// the numbering when it retired attributes (it renamed them `hipDeviceAttributeUnused1..5`
/// instead of removing them); checked against Debian's ROCm 5.2 `hip_runtime_api.h` (compiled
/// with clang) and ROCm 6's header.
pub mod attr {
    use std::ffi::c_int;
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 23;
    pub const MAX_THREADS_PER_BLOCK: c_int = 56;
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 61;
    pub const MULTIPROCESSOR_COUNT: c_int = 63;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 74;
    pub const WARP_SIZE: c_int = 87;
    /// AMD-specific block starts at 10000.
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: c_int = 10002;
}

/// Where `gcnArchName` (and `multiProcessorCount`, used to check the layout) sit in the
/// `hipDeviceProp_t` that a `hipGetDeviceProperties*` symbol fills.
///
/// - `hipGetDevicePropertiesR0600` (ROCm 6.0 and later; the header `#define`s
///   `hipGetDeviceProperties` to it): `hipDeviceProp_tR0600`, 1472 bytes, `gcnArchName` at
///   1160 (after the CUDA-compatible block and `reserved[63]`, `hipReserved[32]`),
///   `multiProcessorCount` at 388.
/// - `hipGetDeviceProperties` of ROCm 5.x (the only one libamdhip64.so.5 exports): the old
///   layout (`hipDeviceProp_tR0000` in ROCm 6's `hip_deprecated.h`), 792 bytes in ROCm 5.2,
///   `gcnArchName` at 396 right after `int gcnArch`, `multiProcessorCount` at 336.
///
/// The offsets were computed with clang from Debian's ROCm 5.2 `hip_runtime_api.h` (R0000) and
/// from a transcription of ROCm 6's `hipDeviceProp_tR0600` (x86-64 SysV layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropLayout {
    pub symbol: &'static str,
    pub size: usize,
    pub gcn_arch_name: usize,
    pub multi_processor_count: usize,
}

pub const PROPS_R0600: PropLayout =
    PropLayout { symbol: "hipGetDevicePropertiesR0600", size: 1472, gcn_arch_name: 1160, multi_processor_count: 388 };
pub const PROPS_R0000: PropLayout =
    PropLayout { symbol: "hipGetDeviceProperties", size: 792, gcn_arch_name: 396, multi_processor_count: 336 };

/// Bytes handed to `hipGetDeviceProperties*`: far more than either layout, so a runtime whose
/// struct grew at the end still writes inside the buffer.
pub const PROPS_BUFFER: usize = 8192;

type Fn0 = unsafe extern "C" fn() -> HipStatus;
type FnI = unsafe extern "C" fn(c_int) -> HipStatus;
type FnU = unsafe extern "C" fn(c_uint) -> HipStatus;
type FnPI = unsafe extern "C" fn(*mut c_int) -> HipStatus;
type FnP = unsafe extern "C" fn(*mut c_void) -> HipStatus;

/// The runtime's entry points.
#[derive(Clone, Copy, Debug)]
pub struct Fns {
    pub init: FnU,
    pub get_device_count: FnPI,
    pub runtime_get_version: FnPI,
    pub driver_get_version: FnPI,
    pub get_error_string: unsafe extern "C" fn(HipStatus) -> *const c_char,
    pub get_error_name: Option<unsafe extern "C" fn(HipStatus) -> *const c_char>,
    pub get_device_properties: unsafe extern "C" fn(*mut c_void, c_int) -> HipStatus,
    pub props_layout: PropLayout,
    pub device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipStatus,
    pub device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> HipStatus,
    pub set_device: FnI,
    pub device_synchronize: Fn0,
    pub mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> HipStatus,
    pub malloc: unsafe extern "C" fn(*mut HipDevicePtr, usize) -> HipStatus,
    pub free: FnP,
    pub memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipStatus,
    pub memcpy_async: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, HipStream) -> HipStatus,
    pub memset: unsafe extern "C" fn(HipDevicePtr, c_int, usize) -> HipStatus,
    pub module_load_data: unsafe extern "C" fn(*mut HipModule, *const c_void) -> HipStatus,
    pub module_unload: unsafe extern "C" fn(HipModule) -> HipStatus,
    pub module_get_function: unsafe extern "C" fn(*mut HipFunction, HipModule, *const c_char) -> HipStatus,
    #[allow(clippy::type_complexity)]
    pub module_launch_kernel: unsafe extern "C" fn(
        HipFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        HipStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipStatus,
    pub stream_create_with_flags: unsafe extern "C" fn(*mut HipStream, c_uint) -> HipStatus,
    pub stream_destroy: unsafe extern "C" fn(HipStream) -> HipStatus,
    pub stream_wait_event: unsafe extern "C" fn(HipStream, HipEvent, c_uint) -> HipStatus,
    pub stream_synchronize: unsafe extern "C" fn(HipStream) -> HipStatus,
    pub event_create: unsafe extern "C" fn(*mut HipEvent) -> HipStatus,
    pub event_record: unsafe extern "C" fn(HipEvent, HipStream) -> HipStatus,
    pub event_synchronize: unsafe extern "C" fn(HipEvent) -> HipStatus,
    pub event_elapsed_time: unsafe extern "C" fn(*mut f32, HipEvent, HipEvent) -> HipStatus,
    pub event_destroy: unsafe extern "C" fn(HipEvent) -> HipStatus,
    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor` (only `persistent(1)` needs it:
    /// optional, so a runtime without it still runs everything else).
    pub module_occupancy_max_active_blocks: Option<unsafe extern "C" fn(*mut c_int, HipFunction, c_int, usize) -> HipStatus>,
}

/// The loaded HIP runtime.
#[derive(Debug)]
pub struct HipLib {
    /// The name it was opened by (`libamdhip64.so.5`).
    pub library: String,
    /// The file the loader mapped, where /proc/self/maps tells it.
    pub path: Option<PathBuf>,
    /// `hipRuntimeGetVersion`: HIP_VERSION = major * 10^7 + minor * 10^5 + patch
    /// (50221153 for ROCm 5.2.3's HIP 5.2.21153); `None` if the call failed.
    pub runtime_version: Option<i32>,
    pub fns: Fns,
    _lib: libloading::Library,
}

static LOADED: OnceLock<std::result::Result<HipLib, HipError>> = OnceLock::new();

impl HipLib {
    /// The process-wide HIP runtime, loaded on first use (a failure is remembered too).
    pub fn get() -> Result<&'static HipLib> {
        LOADED.get_or_init(Self::load).as_ref().map_err(|e| match e {
            HipError::RuntimeNotFound { tried } => HipError::RuntimeNotFound { tried: tried.clone() },
            HipError::RuntimeSymbol { library, symbol, message } => {
                HipError::RuntimeSymbol { library: library.clone(), symbol, message: message.clone() }
            }
            other => HipError::Runtime(other.to_string()),
        })
    }

    fn load() -> Result<HipLib> {
        let given = std::env::var(HIP_RUNTIME_ENV).ok().filter(|v| !v.is_empty());
        let candidates: Vec<&str> = match &given {
            Some(g) => vec![g.as_str()],
            None => HIP_CANDIDATES.to_vec(),
        };
        let mut symbol_error = None;
        for name in candidates.iter().copied() {
            // SAFETY: opening the ROCm runtime runs its static initialisers, which have no
            // preconditions (checked on a machine without an AMD GPU: they do nothing visible).
            let Ok(lib) = (unsafe { libloading::Library::new(name) }) else { continue };
            match Self::resolve(name, &lib) {
                Ok(fns) => {
                    let mut v: c_int = 0;
                    // SAFETY: valid out-pointer; hipRuntimeGetVersion needs no device.
                    let runtime_version = (unsafe { (fns.runtime_get_version)(&mut v) } == HIP_SUCCESS).then_some(v);
                    return Ok(HipLib { library: name.to_string(), path: super::hiprtc::mapped_path(name), runtime_version, fns, _lib: lib });
                }
                Err(e) => symbol_error = Some(e),
            }
        }
        Err(symbol_error.unwrap_or_else(|| HipError::RuntimeNotFound { tried: candidates.join(", ") }))
    }

    fn resolve(name: &str, lib: &libloading::Library) -> Result<Fns> {
        fn sym<T: Copy>(lib: &libloading::Library, library: &str, symbol: &'static str) -> Result<T> {
            let c = CString::new(symbol).expect("symbol names hold no NUL");
            // SAFETY: T is the C signature of `symbol` as declared in hip_runtime_api.h.
            unsafe { lib.get::<T>(c.as_bytes_with_nul()) }.map(|s| *s).map_err(|e| HipError::RuntimeSymbol {
                library: library.to_string(),
                symbol,
                message: e.to_string(),
            })
        }
        // Prefer the ROCm 6 versioned properties call; ROCm 5 has only the unversioned one.
        let (get_device_properties, props_layout) = match sym(lib, name, PROPS_R0600.symbol) {
            Ok(f) => (f, PROPS_R0600),
            Err(_) => (sym(lib, name, PROPS_R0000.symbol)?, PROPS_R0000),
        };
        Ok(Fns {
            init: sym(lib, name, "hipInit")?,
            get_device_count: sym(lib, name, "hipGetDeviceCount")?,
            runtime_get_version: sym(lib, name, "hipRuntimeGetVersion")?,
            driver_get_version: sym(lib, name, "hipDriverGetVersion")?,
            get_error_string: sym(lib, name, "hipGetErrorString")?,
            get_error_name: sym(lib, name, "hipGetErrorName").ok(),
            get_device_properties,
            props_layout,
            device_get_name: sym(lib, name, "hipDeviceGetName")?,
            device_get_attribute: sym(lib, name, "hipDeviceGetAttribute")?,
            set_device: sym(lib, name, "hipSetDevice")?,
            device_synchronize: sym(lib, name, "hipDeviceSynchronize")?,
            mem_get_info: sym(lib, name, "hipMemGetInfo")?,
            malloc: sym(lib, name, "hipMalloc")?,
            free: sym(lib, name, "hipFree")?,
            memcpy: sym(lib, name, "hipMemcpy")?,
            memcpy_async: sym(lib, name, "hipMemcpyAsync")?,
            memset: sym(lib, name, "hipMemset")?,
            module_load_data: sym(lib, name, "hipModuleLoadData")?,
            module_unload: sym(lib, name, "hipModuleUnload")?,
            module_get_function: sym(lib, name, "hipModuleGetFunction")?,
            module_launch_kernel: sym(lib, name, "hipModuleLaunchKernel")?,
            stream_create_with_flags: sym(lib, name, "hipStreamCreateWithFlags")?,
            stream_destroy: sym(lib, name, "hipStreamDestroy")?,
            stream_wait_event: sym(lib, name, "hipStreamWaitEvent")?,
            stream_synchronize: sym(lib, name, "hipStreamSynchronize")?,
            event_create: sym(lib, name, "hipEventCreate")?,
            event_record: sym(lib, name, "hipEventRecord")?,
            event_synchronize: sym(lib, name, "hipEventSynchronize")?,
            event_elapsed_time: sym(lib, name, "hipEventElapsedTime")?,
            event_destroy: sym(lib, name, "hipEventDestroy")?,
            module_occupancy_max_active_blocks: sym(lib, name, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor").ok(),
        })
    }

    /// `(major, minor)` of the HIP runtime, from `hipRuntimeGetVersion`, else from the file name.
    pub fn rocm_version(&self) -> Option<(u32, u32)> {
        if let Some(v) = self.runtime_version.filter(|v| *v > 0) {
            return Some(((v / 10_000_000) as u32, ((v / 100_000) % 100) as u32));
        }
        let file = self.path.as_ref()?.file_name()?.to_string_lossy().into_owned();
        super::hiprtc::RocmVersion::from_file_name(&file).map(|v| (v.major, v.minor))
    }

    /// `libamdhip64.so.5, ROCm 5.2`, for messages.
    pub fn describe(&self) -> String {
        match self.rocm_version() {
            Some((major, minor)) => format!("{}, ROCm {major}.{minor}", self.library),
            None => format!("{}, ROCm version unknown", self.library),
        }
    }

    /// `hipErrorNoDevice` or, where the runtime has a longer text, `hipErrorNoDevice: no
    /// ROCm-capable device is detected`. (ROCm 5.2's hipGetErrorString returns the name.)
    pub fn error_text(&self, code: HipStatus) -> String {
        // SAFETY: both return static strings (or NULL).
        let text = |f: unsafe extern "C" fn(HipStatus) -> *const c_char| {
            let p = unsafe { f(code) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        let name = self.fns.get_error_name.and_then(text);
        let string = text(self.fns.get_error_string);
        match (name, string) {
            (Some(n), Some(s)) if n != s && !s.is_empty() => format!("{n}: {s}"),
            (Some(n), _) => n,
            (None, Some(s)) => format!("{s} ({code})"),
            (None, None) => format!("error {code}"),
        }
    }

    /// Turns a status into a `Result` whose error names the call and carries HIP's message.
    pub fn check(&self, call: &'static str, status: HipStatus) -> Result<()> {
        if status == HIP_SUCCESS {
            Ok(())
        } else {
            Err(HipError::Call { call, code: status, message: self.error_text(status) })
        }
    }
}

/// Reads `gcnArchName` (`gfx90a:sramecc+:xnack-`) from a `hipDeviceProp_t` filled by the call
/// that `layout` describes, and checks the layout: the name must look like an AMD target and,
/// where `multiprocessors` (from hipDeviceGetAttribute) is given, `multiProcessorCount` in the
/// struct must agree with it. Falls back to the first `gfx…` string after the device name when
/// the documented offset holds none (a layout this code does not know), saying so.
pub fn gcn_arch_name(props: &[u8], layout: PropLayout, multiprocessors: Option<i32>) -> std::result::Result<(String, bool), String> {
    let at = |off: usize| -> Option<String> {
        let bytes = props.get(off..off + 256)?;
        let s = CStr::from_bytes_until_nul(bytes).ok()?.to_str().ok()?;
        looks_like_target(s).then(|| s.to_string())
    };
    let layout_ok = match multiprocessors {
        None => true,
        Some(m) => {
            props.get(layout.multi_processor_count..layout.multi_processor_count + 4).map(|b| i32::from_le_bytes(b.try_into().unwrap())) == Some(m)
        }
    };
    if layout_ok {
        if let Some(name) = at(layout.gcn_arch_name) {
            return Ok((name, true));
        }
    }
    // Unknown layout: search past `name[256]` for a NUL-terminated target name.
    let mut i = 256;
    while i + 3 <= props.len() {
        if props[i..].starts_with(b"gfx") && (i == 0 || props[i - 1] == 0) {
            if let Some(name) = at(i) {
                return Ok((name, false));
            }
        }
        i += 1;
    }
    Err(format!(
        "no gcnArchName in hipDeviceProp_t ({} layout: {} bytes, gcnArchName at {}{})",
        layout.symbol,
        layout.size,
        layout.gcn_arch_name,
        if layout_ok { "" } else { "; multiProcessorCount disagrees with hipDeviceGetAttribute" }
    ))
}

/// `gfx90a`, `gfx942:sramecc+:xnack-`, `gfx1100`: `gfx`, then hex digits, then optional
/// `:feature±` parts.
pub fn looks_like_target(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("gfx") else { return false };
    let mut parts = rest.split(':');
    let id = parts.next().unwrap_or("");
    !id.is_empty()
        && id.len() <= 6
        && id.chars().all(|c| c.is_ascii_hexdigit())
        && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props_with(layout: PropLayout, name: &str, mpc: i32) -> Vec<u8> {
        let mut p = vec![0u8; PROPS_BUFFER];
        p[..19].copy_from_slice(b"AMD Instinct MI250X");
        p[layout.gcn_arch_name..layout.gcn_arch_name + name.len()].copy_from_slice(name.as_bytes());
        p[layout.multi_processor_count..layout.multi_processor_count + 4].copy_from_slice(&mpc.to_le_bytes());
        p
    }

    #[test]
    fn reads_gcn_arch_name_from_both_layouts() {
        for layout in [PROPS_R0000, PROPS_R0600] {
            let p = props_with(layout, "gfx90a:sramecc+:xnack-", 110);
            assert_eq!(gcn_arch_name(&p, layout, Some(110)).unwrap(), ("gfx90a:sramecc+:xnack-".to_string(), true));
            assert_eq!(gcn_arch_name(&p, layout, None).unwrap().0, "gfx90a:sramecc+:xnack-");
        }
    }

    #[test]
    fn a_wrong_layout_is_noticed_and_searched() {
        // Filled as R0600 but read as R0000: the multiprocessor count does not match, the
        // search finds the name at its real place and says it was a search.
        let p = props_with(PROPS_R0600, "gfx1100", 48);
        assert_eq!(gcn_arch_name(&p, PROPS_R0000, Some(48)).unwrap(), ("gfx1100".to_string(), false));
        let empty = vec![0u8; PROPS_BUFFER];
        let err = gcn_arch_name(&empty, PROPS_R0600, Some(48)).unwrap_err();
        assert!(err.contains("hipGetDevicePropertiesR0600") && err.contains("disagrees"), "{err}");
    }

    #[test]
    fn target_names() {
        for ok in ["gfx90a", "gfx942:sramecc+:xnack-", "gfx1100", "gfx1201", "gfx1151"] {
            assert!(looks_like_target(ok), "{ok}");
        }
        for bad in ["", "gfx", "sm_90", "gfx90a:", "gfxzz", "AMD Instinct"] {
            assert!(!looks_like_target(bad), "{bad}");
        }
    }
}
