//! The HIP backend at run time: the ROCm runtime (`libamdhip64`, loaded with libloading) with
//! the same shape as the CUDA backend in `crate::cuda` (`Gpu`, `DeviceBuffer`, `Stream`,
//! `Event`, `Function`, `LaunchArgs`), so the harness can be made generic over the two.
//! Every error names the HIP call and carries HIP's own message.
//!
//! **Which AMD GPU is it?** The arch comes from `hipDeviceProp_t::gcnArchName`
//! (`gfx90a:sramecc+:xnack-`). There is no other way to get the string: `hipDeviceGetAttribute`
//! returns an `int` (ROCm 5's `hipDeviceAttributeGcnArchName` cannot carry 256 characters, and
//! ROCm 6 retired it as `hipDeviceAttributeUnused5`; `hipDeviceAttributeGcnArch`, the old
//! integer form, went the same way), and `hipDeviceGetName` gives the marketing name. The
//! struct's layout differs between ROCm 5 and 6, so the function is picked by symbol, not by
//! guess: ROCm 6 exports `hipGetDevicePropertiesR0600` (what its header maps
//! `hipGetDeviceProperties` to) and that call fills the R0600 layout; ROCm 5 exports only
//! `hipGetDeviceProperties`, which fills the old (R0000) layout. The struct is read from a
//! buffer several times larger than either layout, and the reading is checked: the name must
//! look like a target (`gfx` + hex digits + `:feature±`), and `multiProcessorCount` in the
//! struct must equal `hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount)`; if the
//! check fails the struct is searched for the name, and the device reports that it was
//! (`Gpu::arch_from_documented_offset`). See `ffi::PROPS_R0600` / `ffi::PROPS_R0000`.
//!
//! Numeric attributes come from `hipDeviceGetAttribute`, whose enum values ROCm 5 and 6 share.
//!
//! On a machine with ROCm but no AMD GPU (or without access to /dev/kfd), `hipInit` returns
//! `hipErrorInvalidDevice` and `hipGetDeviceCount` returns `hipErrorNoDevice` with a count of 0
//! (checked with Debian's ROCm 5.2 on the Rust machine: nothing crashes, nothing is printed);
//! [`Gpu::open`] turns that into [`HipError::NoGpu`].

use super::ffi::{self, attr, HipDevicePtr, HipEvent, HipFunction, HipLib, HipModule, HipStream};
use super::{HipError, Result};
/// The common kernel parameters, shared with the CUDA backend.
pub use crate::backend::LaunchArgs;
use mra_codegen::{Arch, Vendor};
use std::ffi::{c_char, c_int, c_void, CStr, CString};

/// Is a HIP runtime installed? Returns the loaded library (`describe()` says which and which
/// ROCm) or the names looked for. Loads it; calls nothing that needs a device.
pub fn probe_runtime() -> Result<&'static HipLib> {
    HipLib::get()
}

/// The number of AMD GPUs the runtime sees, or [`HipError::NoGpu`] when it sees none.
pub fn device_count() -> Result<i32> {
    let lib = HipLib::get()?;
    // SAFETY: plain calls with valid out-pointers; neither needs a device.
    let init = unsafe { (lib.fns.init)(0) };
    let mut count: c_int = 0;
    let status = unsafe { (lib.fns.get_device_count)(&mut count) };
    if status != ffi::HIP_SUCCESS || count <= 0 {
        let mut detail = if status != ffi::HIP_SUCCESS {
            format!("hipGetDeviceCount: {}", lib.error_text(status))
        } else {
            "hipGetDeviceCount returned 0".to_string()
        };
        if init != ffi::HIP_SUCCESS && status != ffi::HIP_SUCCESS && status != ffi::HIP_ERROR_NO_DEVICE {
            detail.push_str(&format!("; hipInit: {}", lib.error_text(init)));
        }
        return Err(HipError::NoGpu { runtime: lib.describe(), detail });
    }
    Ok(count)
}

/// One AMD GPU, made current on this thread with hipSetDevice.
pub struct Gpu {
    pub ordinal: i32,
    /// `hipDeviceGetName`: `AMD Instinct MI250X`.
    pub name: String,
    /// `gcnArchName` as the runtime reports it: `gfx90a:sramecc+:xnack-`.
    pub gcn_arch_name: String,
    /// The arch table entry for the name's base (`gfx90a`).
    pub arch: &'static Arch,
    /// Compute units.
    pub multiprocessors: i32,
    pub warp_size: i32,
    /// `libamdhip64.so.6, ROCm 6.2`.
    pub runtime: String,
    /// Was gcnArchName at the documented offset of the layout (false: found by searching)?
    pub arch_from_documented_offset: bool,
    lib: &'static HipLib,
}

impl Gpu {
    /// Opens device `ordinal` and detects its arch.
    pub fn open(ordinal: i32) -> Result<Gpu> {
        let lib = HipLib::get()?;
        let count = device_count()?;
        if ordinal >= count {
            return Err(HipError::Runtime(format!("AMD GPU {ordinal} requested, {count} present")));
        }
        // SAFETY: ordinal is a valid device index.
        lib.check("hipSetDevice", unsafe { (lib.fns.set_device)(ordinal) })?;
        let attribute = |a: c_int, call: &'static str| -> Result<i32> {
            let mut v: c_int = 0;
            // SAFETY: valid out-pointer and device.
            lib.check(call, unsafe { (lib.fns.device_get_attribute)(&mut v, a, ordinal) })?;
            Ok(v)
        };
        let multiprocessors = attribute(attr::MULTIPROCESSOR_COUNT, "hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount)")?;
        let warp_size = attribute(attr::WARP_SIZE, "hipDeviceGetAttribute(hipDeviceAttributeWarpSize)")?;
        let mut name_buf = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes, as passed.
        lib.check("hipDeviceGetName", unsafe { (lib.fns.device_get_name)(name_buf.as_mut_ptr(), name_buf.len() as c_int, ordinal) })?;
        // SAFETY: hipDeviceGetName NUL-terminates within the length given.
        let name = unsafe { CStr::from_ptr(name_buf.as_ptr()) }.to_string_lossy().trim().to_string();

        let layout = lib.fns.props_layout;
        let mut props = vec![0u64; ffi::PROPS_BUFFER / 8];
        // SAFETY: the buffer is larger than any hipDeviceProp_t layout and 8-byte aligned.
        lib.check(layout.symbol, unsafe { (lib.fns.get_device_properties)(props.as_mut_ptr() as *mut c_void, ordinal) })?;
        let bytes: Vec<u8> = props.iter().flat_map(|w| w.to_le_bytes()).collect();
        let (gcn_arch_name, documented) = ffi::gcn_arch_name(&bytes, layout, Some(multiprocessors))
            .map_err(|e| HipError::Runtime(format!("cannot tell which AMD GPU device {ordinal} ({name}) is: {e}; {}", lib.describe())))?;
        let arch = arch_of(&gcn_arch_name).map_err(|e| HipError::Runtime(format!("AMD GPU {ordinal} ({name}) {e}")))?;
        Ok(Gpu {
            ordinal,
            name,
            gcn_arch_name,
            arch,
            multiprocessors,
            warp_size,
            runtime: lib.describe(),
            arch_from_documented_offset: documented,
            lib,
        })
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        self.lib.check("hipMemGetInfo", unsafe { (self.lib.fns.mem_get_info)(&mut free, &mut total) })?;
        Ok((free, total))
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: no arguments.
        self.lib.check("hipDeviceSynchronize", unsafe { (self.lib.fns.device_synchronize)() })
    }

    /// Loads a code object (an AMDGPU ELF from hiprtc or clang) and looks up `entry` in it.
    /// `dynamic_shared_bytes` of dynamic LDS are passed at each launch (as the CUDA backend
    /// does; AMD needs no opt-in below the 64 KiB per workgroup that the planner enforces).
    pub fn load(&self, code_object: &[u8], entry: &str, dynamic_shared_bytes: u32) -> Result<Function> {
        // hipModuleLoadData reads the image through a pointer: keep it alive and aligned.
        let image: Vec<u64> = code_object
            .chunks(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let mut module: HipModule = std::ptr::null_mut();
        // SAFETY: image holds a complete code object, 8-byte aligned, alive for the call.
        self.lib.check("hipModuleLoadData", unsafe { (self.lib.fns.module_load_data)(&mut module, image.as_ptr() as *const c_void) })?;
        let name = CString::new(entry).expect("entry names hold no NUL");
        let mut func: HipFunction = std::ptr::null_mut();
        // SAFETY: module is live.
        let status = unsafe { (self.lib.fns.module_get_function)(&mut func, module, name.as_ptr()) };
        if let Err(e) = self.lib.check("hipModuleGetFunction", status) {
            // SAFETY: loaded above, unloaded once.
            unsafe { (self.lib.fns.module_unload)(module) };
            return Err(e);
        }
        Ok(Function { module, func, dynamic_shared_bytes, lib: self.lib })
    }
}

/// The arch table entry for a `gcnArchName` (`gfx90a:sramecc+:xnack-` → gfx90a).
pub fn arch_of(gcn_arch_name: &str) -> std::result::Result<&'static Arch, String> {
    let base = gcn_arch_name.split(':').next().unwrap_or(gcn_arch_name);
    match mra_codegen::arch::find(base) {
        Ok(a) if a.vendor == Vendor::Amd => Ok(a),
        _ => Err(format!(
            "is {gcn_arch_name}, which has no arch table entry (known AMD archs: {})",
            mra_codegen::arch::ARCHS.iter().filter(|a| a.vendor == Vendor::Amd).map(|a| a.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A kernel in a loaded module.
pub struct Function {
    module: HipModule,
    func: HipFunction,
    dynamic_shared_bytes: u32,
    lib: &'static HipLib,
}

impl Drop for Function {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by Gpu::load and is unloaded once.
        unsafe {
            (self.lib.fns.module_unload)(self.module);
        }
    }
}

/// Device memory of `len` elements of T.
pub struct DeviceBuffer<T> {
    ptr: HipDevicePtr,
    len: usize,
    lib: &'static HipLib,
    _t: std::marker::PhantomData<T>,
}

impl<T: Copy> DeviceBuffer<T> {
    pub fn alloc(len: usize) -> Result<Self> {
        let lib = HipLib::get()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        let mut ptr: HipDevicePtr = std::ptr::null_mut();
        // SAFETY: a plain allocation; freed in Drop.
        lib.check("hipMalloc", unsafe { (lib.fns.malloc)(&mut ptr, bytes) })?;
        Ok(DeviceBuffer { ptr, len, lib, _t: std::marker::PhantomData })
    }

    pub fn from_host(data: &[T]) -> Result<Self> {
        let b = Self::alloc(data.len())?;
        b.upload(data)?;
        Ok(b)
    }

    fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Queues a copy of `bytes` bytes of `src` from byte `src_at` into this buffer at byte
    /// `at` on `stream`.
    pub fn copy_from(&self, at: usize, src: &DeviceBuffer<T>, src_at: usize, bytes: usize, stream: &Stream) -> Result<()> {
        let fits = |b: &DeviceBuffer<T>, from: usize| from.checked_add(bytes).is_some_and(|end| end <= b.bytes());
        assert!(fits(self, at) && fits(src, src_at), "a device copy within both buffers");
        // SAFETY: both ranges lie inside live allocations (checked above); the stream is live.
        self.lib.check("hipMemcpyAsync", unsafe {
            (self.lib.fns.memcpy_async)((self.ptr as *mut u8).add(at) as *mut c_void, (src.ptr as *const u8).add(src_at) as *const c_void, bytes, ffi::HIP_MEMCPY_DEVICE_TO_DEVICE, stream.raw)
        })
    }

    /// Copies `data` to the device; complete when this returns.
    pub fn upload(&self, data: &[T]) -> Result<()> {
        assert_eq!(data.len(), self.len);
        // SAFETY: the buffer holds exactly data.len() elements.
        self.lib.check("hipMemcpy", unsafe {
            (self.lib.fns.memcpy)(self.ptr, data.as_ptr() as *const c_void, self.bytes(), ffi::HIP_MEMCPY_HOST_TO_DEVICE)
        })?;
        // As on CUDA: our streams do not wait for the null stream, so make sure the copy landed.
        // SAFETY: no arguments.
        self.lib.check("hipDeviceSynchronize", unsafe { (self.lib.fns.device_synchronize)() })
    }

    pub fn download(&self) -> Result<Vec<T>>
    where
        T: Default,
    {
        let mut out = vec![T::default(); self.len];
        // SAFETY: out holds exactly len elements.
        self.lib.check("hipMemcpy", unsafe {
            (self.lib.fns.memcpy)(out.as_mut_ptr() as *mut c_void, self.ptr, self.bytes(), ffi::HIP_MEMCPY_DEVICE_TO_HOST)
        })?;
        Ok(out)
    }

    /// Fills every byte with 0xFF (a NaN in f16, f32 and f64), so an element a kernel does not
    /// write fails validation. Complete when this returns.
    pub fn poison(&self) -> Result<()> {
        // SAFETY: the range is inside the allocation.
        self.lib.check("hipMemset", unsafe { (self.lib.fns.memset)(self.ptr, 0xFF, self.bytes()) })?;
        // hipMemset runs on the null stream, which our non-blocking streams do not wait for.
        // SAFETY: no arguments.
        self.lib.check("hipDeviceSynchronize", unsafe { (self.lib.fns.device_synchronize)() })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address, as the CUDA backend gives it (`CUdeviceptr` is a u64 too).
    pub fn device_ptr(&self) -> u64 {
        self.ptr as u64
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by hipMalloc, freed once.
        unsafe {
            (self.lib.fns.free)(self.ptr);
        }
    }
}

/// A non-blocking stream (`hipStreamNonBlocking`, like the CUDA backend's).
pub struct Stream {
    pub(crate) raw: HipStream,
    lib: &'static HipLib,
}

impl Stream {
    pub fn new() -> Result<Stream> {
        let lib = HipLib::get()?;
        let mut raw: HipStream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        lib.check("hipStreamCreateWithFlags", unsafe { (lib.fns.stream_create_with_flags)(&mut raw, ffi::HIP_STREAM_NON_BLOCKING) })?;
        Ok(Stream { raw, lib })
    }

    pub fn wait(&self, e: &Event) -> Result<()> {
        // SAFETY: both handles are live; flags must be 0.
        self.lib.check("hipStreamWaitEvent", unsafe { (self.lib.fns.stream_wait_event)(self.raw, e.raw, 0) })
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: live stream.
        self.lib.check("hipStreamSynchronize", unsafe { (self.lib.fns.stream_synchronize)(self.raw) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by hipStreamCreateWithFlags, destroyed once.
        unsafe {
            (self.lib.fns.stream_destroy)(self.raw);
        }
    }
}

pub struct Event {
    raw: HipEvent,
    lib: &'static HipLib,
}

impl Event {
    pub fn new() -> Result<Event> {
        let lib = HipLib::get()?;
        let mut raw: HipEvent = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        lib.check("hipEventCreate", unsafe { (lib.fns.event_create)(&mut raw) })?;
        Ok(Event { raw, lib })
    }

    pub fn record(&self, s: &Stream) -> Result<()> {
        // SAFETY: live handles.
        self.lib.check("hipEventRecord", unsafe { (self.lib.fns.event_record)(self.raw, s.raw) })
    }

    /// Milliseconds from `self` to `end` (both recorded); waits for `end` first.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        // SAFETY: live handles; valid out-pointer.
        self.lib.check("hipEventSynchronize", unsafe { (self.lib.fns.event_synchronize)(end.raw) })?;
        let mut ms = 0f32;
        self.lib.check("hipEventElapsedTime", unsafe { (self.lib.fns.event_elapsed_time)(&mut ms, self.raw, end.raw) })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by hipEventCreate, destroyed once.
        unsafe {
            (self.lib.fns.event_destroy)(self.raw);
        }
    }
}

impl Function {
    /// Blocks of this kernel (with `threads` threads and its dynamic LDS) the device holds at
    /// once: hipModuleOccupancyMaxActiveBlocksPerMultiprocessor × `multiprocessors` CUs.
    pub fn resident_blocks(&self, threads: u32, multiprocessors: i32) -> Result<usize> {
        const SYMBOL: &str = "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor";
        let Some(occupancy) = self.lib.fns.module_occupancy_max_active_blocks else {
            return Err(HipError::RuntimeSymbol {
                library: self.lib.library.clone(),
                symbol: SYMBOL,
                message: "not exported; persistent(1) needs it to size its grid (use persistent(0))".into(),
            });
        };
        let mut per_cu = 0;
        // SAFETY: a live kernel handle; valid out-pointer.
        self.lib.check(SYMBOL, unsafe { occupancy(&mut per_cu, self.func, threads as i32, self.dynamic_shared_bytes as usize) })?;
        Ok(per_cu.max(0) as usize * multiprocessors.max(0) as usize)
    }

    /// Launches `nblocks × threads` on `stream`; errors of the launch itself are returned
    /// (errors of the running kernel surface at the next synchronization).
    pub fn launch(&self, stream: &Stream, threads: u32, args: &LaunchArgs) -> Result<()> {
        args.with_params(|params| {
            // SAFETY: the parameter list matches every generated kernel's signature
            // (mra_codegen::emit::KERNEL_PARAMS: three pointers, a workspace pointer, two ints);
            // the pointers are live device allocations.
            self.lib.check("hipModuleLaunchKernel", unsafe {
                (self.lib.fns.module_launch_kernel)(
                    self.func,
                    args.nblocks as u32,
                    1,
                    1,
                    threads,
                    1,
                    1,
                    self.dynamic_shared_bytes,
                    stream.raw,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_of_gcn_arch_names() {
        assert_eq!(arch_of("gfx90a:sramecc+:xnack-").unwrap().name, "gfx90a");
        assert_eq!(arch_of("gfx942:sramecc+:xnack-").unwrap().name, "gfx942");
        assert_eq!(arch_of("gfx1100").unwrap().name, "gfx1100");
        let e = arch_of("gfx908:sramecc+:xnack-").unwrap_err();
        assert!(e.contains("gfx908") && e.contains("gfx90a"), "{e}");
        assert!(arch_of("sm_90").is_err());
    }

    /// With ROCm installed and no AMD GPU (this project's machines), opening a device is one
    /// clean error naming the library and the ROCm version; without ROCm, one naming the
    /// files tried. Nothing here may crash or abort the test process. (With an AMD GPU the
    /// device is opened and its arch must be one of the table's, or a clean error.)
    #[test]
    fn opening_a_device_never_crashes() {
        match Gpu::open(0) {
            Ok(gpu) => {
                assert_eq!(gpu.arch.vendor, Vendor::Amd);
                println!("AMD GPU: {} ({}), {}", gpu.name, gpu.gcn_arch_name, gpu.runtime);
            }
            Err(HipError::NoGpu { runtime, detail }) => {
                assert!(runtime.starts_with("libamdhip64.so"), "{runtime}");
                assert!(detail.contains("hipGetDeviceCount"), "{detail}");
                let msg = HipError::NoGpu { runtime, detail }.to_string();
                assert!(msg.contains("reports no AMD GPU") && msg.contains("--compile-only"), "{msg}");
                println!("{msg}");
            }
            Err(e @ HipError::RuntimeNotFound { .. }) => println!("{e}"),
            Err(e) => println!("AMD GPU present but not usable here: {e}"),
        }
    }
}
