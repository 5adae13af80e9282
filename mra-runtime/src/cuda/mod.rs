//! The CUDA backend: a thin layer over cudarc's driver API (loaded dynamically, so the binary
//! starts on machines without CUDA). Raw driver calls keep the launch path as lean as the
//! seed's C++ (no per-launch bookkeeping), and every error carries the driver's message.

mod backend;
pub mod blas;
pub mod nvml;
pub mod nvrtc;
pub mod occupancy;

pub use crate::backend::LaunchArgs;
use crate::error::{Result, RuntimeError};
use cudarc::driver::{result as drv, sys};
use mra_codegen::Arch;
use std::ffi::{c_void, CString};

/// Turns a driver error into one that names the call and carries the driver's message.
pub(crate) fn check<T>(call: &'static str, r: std::result::Result<T, drv::DriverError>) -> Result<T> {
    r.map_err(|e| {
        let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
        let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        RuntimeError::Driver { call, message: format!("{name}: {text}") }
    })
}

/// The library file names cudarc tries for `lib`, without repeats.
pub(crate) fn lib_candidates(lib: &str) -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates(lib);
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// Driver functions every run calls; a libcuda without one of them is not a usable driver.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuMemGetInfo_v2",
    "cuMemAlloc_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    // Persistent and cluster levels size their grids with it (Gpu::resident_blocks): a driver
    // without it would end in cudarc's panic at the first such level, not in this probe's line.
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// Is a CUDA driver present, with the functions we call? Probed with libloading first because
/// cudarc panics when the library or one of its functions is missing. The library checked is
/// the one cudarc will use: the first of its candidate names that loads.
pub fn probe_driver() -> Result<()> {
    let tried = crate::cuda::lib_candidates("cuda");
    probe_library(&tried, DRIVER_SYMBOLS)
        .map_err(|e| match e {
            LibraryProbe::NotFound => RuntimeError::NoDriver { tried: tried.join(", ") },
            LibraryProbe::MissingSymbol { name, symbol, detail } => RuntimeError::BrokenLibrary { what: "NVIDIA driver", name, symbol, detail },
        })
}

/// Why [`probe_library`] refused.
pub(crate) enum LibraryProbe {
    NotFound,
    /// `name` loaded, `symbol` is not in it; `detail` is the loader's message (it names the file).
    MissingSymbol { name: String, symbol: &'static str, detail: String },
}

/// Loads the first of `names` that loads (as cudarc does) and checks it has every one of `symbols`.
pub(crate) fn probe_library(names: &[String], symbols: &[&'static str]) -> std::result::Result<(), LibraryProbe> {
    // SAFETY: loading libcuda / libnvrtc runs no initialisers with preconditions.
    let Some((name, lib)) = names.iter().find_map(|n| unsafe { libloading::Library::new(n) }.ok().map(|l| (n, l))) else {
        return Err(LibraryProbe::NotFound);
    };
    for &symbol in symbols {
        // SAFETY: the symbol is only looked up, never called through this type.
        if let Err(e) = unsafe { lib.get::<unsafe extern "C" fn()>(symbol.as_bytes()) } {
            return Err(LibraryProbe::MissingSymbol { name: name.clone(), symbol, detail: e.to_string() });
        }
    }
    Ok(())
}

/// One CUDA device with its primary context current on this thread.
pub struct Gpu {
    pub ordinal: i32,
    pub name: String,
    pub arch: &'static Arch,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
    pub driver_version: i32,
    /// `00000000:00:06.0`: how NVML (and nvidia-smi) name this device.
    pub pci_bus_id: String,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

impl Gpu {
    /// Opens device `ordinal` and detects its arch.
    pub fn open(ordinal: i32) -> Result<Gpu> {
        probe_driver()?;
        check("cuInit", drv::init())?;
        let count = check("cuDeviceGetCount", drv::device::get_count())?;
        if count == 0 {
            return Err(RuntimeError::NoDevice("cuDeviceGetCount returned 0".into()));
        }
        if ordinal >= count {
            return Err(RuntimeError::Invalid(format!("device {ordinal} requested, {count} present")));
        }
        let dev = check("cuDeviceGet", drv::device::get(ordinal))?;
        // SAFETY: dev is a valid device handle from cuDeviceGet.
        let ctx = check("cuDevicePrimaryCtxRetain", unsafe { drv::primary_ctx::retain(dev) })?;
        // SAFETY: ctx was just retained.
        check("cuCtxSetCurrent", unsafe { drv::ctx::set_current(ctx) })?;
        let attr = |a| check("cuDeviceGetAttribute", unsafe { drv::device::get_attribute(dev, a) });
        use sys::CUdevice_attribute::*;
        let cc = (attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?, attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?);
        let arch = mra_codegen::arch::from_compute_capability(cc.0, cc.1).map_err(|_| {
            RuntimeError::Invalid(format!(
                "the GPU has compute capability {}.{}, which has no arch table entry (known: {})",
                cc.0,
                cc.1,
                mra_codegen::arch::names().join(", ")
            ))
        })?;
        let mut driver_version = 0;
        // SAFETY: valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) };
        Ok(Gpu {
            ordinal,
            name: check("cuDeviceGetName", drv::device::get_name(dev))?,
            arch,
            compute_capability: cc,
            multiprocessors: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            driver_version,
            pci_bus_id: nvml::pci_bus_id(attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?, attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?, attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?),
            dev,
            ctx,
        })
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        check("cuMemGetInfo", drv::mem_get_info())
    }

    pub fn synchronize(&self) -> Result<()> {
        check("cuCtxSynchronize", drv::ctx::synchronize())
    }

    /// Loads a cubin and looks up `entry` in it. A kernel with `dynamic_shared_bytes` above
    /// the default 48 KiB gets its limit raised (cuFuncSetAttribute) and launches with them.
    pub fn load(&self, cubin: &[u8], entry: &str, dynamic_shared_bytes: u32) -> Result<Function> {
        // cuModuleLoadData reads the image through a pointer; keep it alive and aligned.
        let image: Vec<u64> = cubin.chunks(8).map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        }).collect();
        // SAFETY: image holds a complete cubin (ELF), 8-byte aligned.
        let module = check("cuModuleLoadData", unsafe { drv::module::load_data(image.as_ptr() as *const c_void) })?;
        let name = CString::new(entry).expect("entry names hold no NUL");
        // SAFETY: module is live.
        let func = check("cuModuleGetFunction", unsafe { drv::module::get_function(module, name) })?;
        let f = Function { module, func, dynamic_shared_bytes };
        if dynamic_shared_bytes > 0 {
            // SAFETY: func is a live kernel handle.
            check("cuFuncSetAttribute", unsafe {
                drv::function::set_function_attribute(
                    func,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic_shared_bytes as i32,
                )
            })?;
        }
        Ok(f)
    }

    /// Blocks of `f` (with `threads` threads and its dynamic shared memory) the device holds at
    /// once: cuOccupancyMaxActiveBlocksPerMultiprocessor × multiprocessors.
    pub fn resident_blocks(&self, f: &Function, threads: u32) -> Result<usize> {
        // SAFETY: f.func is a live kernel handle of a module loaded in this context.
        let per_sm = check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            drv::occupancy::max_active_block_per_multiprocessor(f.func, threads as i32, f.dynamic_shared_bytes as usize)
        })?;
        Ok(per_sm.max(0) as usize * self.multiprocessors.max(0) as usize)
    }

    /// Clusters of `f` (compiled with `__cluster_dims__(cluster_blocks, 1, 1)`, `threads` threads
    /// a block, its dynamic shared memory) the device holds at once: cuOccupancyMaxActiveClusters.
    /// A cluster's blocks must share one GPC, so this can be fewer than resident blocks /
    /// `cluster_blocks` (30 clusters of 8, not 33, at fused-cluster K = 32 on a 132-SM sm_90 GPU).
    /// `None` for a driver without the call (before CUDA 12.0, which runs no clusters either).
    pub fn resident_clusters(&self, f: &Function, threads: u32, cluster_blocks: u32) -> Result<Option<usize>> {
        if probe_library(&lib_candidates("cuda"), &["cuOccupancyMaxActiveClusters"]).is_err() {
            return Ok(None);
        }
        // The kernel carries its cluster size, so the configuration names none (the driver's
        // rule: a required cluster size is either unspecified here or equal); the grid is one
        // cluster, which the query only needs to be a multiple of it.
        let config = sys::CUlaunchConfig {
            gridDimX: cluster_blocks.max(1),
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: f.dynamic_shared_bytes,
            hStream: std::ptr::null_mut(),
            attrs: std::ptr::null_mut(),
            numAttrs: 0,
        };
        let mut clusters: std::ffi::c_int = 0;
        // SAFETY: f.func is a live kernel handle; config is a complete launch configuration
        // without attributes; clusters is written once.
        let r = unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, f.func, &config) };
        check("cuOccupancyMaxActiveClusters", r.result())?;
        Ok(Some(clusters.max(0) as usize))
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: the context was retained in open(); release it once.
        unsafe {
            let _ = drv::primary_ctx::release(self.dev);
        }
        let _ = self.ctx;
    }
}

/// A kernel in a loaded module.
pub struct Function {
    module: sys::CUmodule,
    func: sys::CUfunction,
    dynamic_shared_bytes: u32,
}

impl Drop for Function {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by Gpu::load and is unloaded once.
        unsafe {
            let _ = drv::module::unload(self.module);
        }
    }
}

/// Device memory of `len` elements of T.
pub struct DeviceBuffer<T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Copy> DeviceBuffer<T> {
    pub fn alloc(len: usize) -> Result<Self> {
        let bytes = (len.max(1)) * std::mem::size_of::<T>();
        // SAFETY: a plain allocation; freed in Drop.
        let ptr = check("cuMemAlloc", unsafe { drv::malloc_sync(bytes) })?;
        Ok(DeviceBuffer { ptr, len, _t: std::marker::PhantomData })
    }

    pub fn from_host(data: &[T]) -> Result<Self> {
        let b = Self::alloc(data.len())?;
        b.upload(data)?;
        Ok(b)
    }

    /// Copies `data` to the device; complete when this returns.
    pub fn upload(&self, data: &[T]) -> Result<()> {
        assert_eq!(data.len(), self.len);
        // SAFETY: the buffer holds exactly data.len() elements.
        check("cuMemcpyHtoD", unsafe { drv::memcpy_htod_sync(self.ptr, data) })?;
        // From pageable memory cuMemcpyHtoD may return before the DMA lands, and our streams
        // are non-blocking (they do not wait for the legacy stream): wait here.
        check("cuCtxSynchronize", drv::ctx::synchronize())
    }

    pub fn download(&self) -> Result<Vec<T>>
    where
        T: Default,
    {
        let mut out = vec![T::default(); self.len];
        // SAFETY: out holds exactly len elements.
        check("cuMemcpyDtoH", unsafe { drv::memcpy_dtoh_sync(&mut out, self.ptr) })?;
        Ok(out)
    }

    /// Fills every byte with 0xFF: a NaN in both f32 and f64, so an element a kernel does
    /// not write fails validation. Complete when this returns.
    pub fn poison(&self) -> Result<()> {
        // SAFETY: the range is inside the allocation.
        check("cuMemsetD8", unsafe { drv::memset_d8_sync(self.ptr, 0xFF, self.len * std::mem::size_of::<T>()) })?;
        // cuMemsetD8 on device memory is asynchronous to the host and runs on the legacy
        // stream, which our non-blocking streams do not wait for: without this, the poison
        // could land after the kernel's writes (it did, at K >= 20 with N = 2048).
        check("cuCtxSynchronize", drv::ctx::synchronize())
    }

    /// Queues a copy of `bytes` bytes of `src` from byte `src_at` into this buffer at byte
    /// `at` on `stream`.
    pub fn copy_from(&self, at: usize, src: &DeviceBuffer<T>, src_at: usize, bytes: usize, stream: &Stream) -> Result<()> {
        let fits = |b: &DeviceBuffer<T>, from: usize| from.checked_add(bytes).is_some_and(|end| end <= b.len * std::mem::size_of::<T>());
        assert!(fits(self, at) && fits(src, src_at), "a device copy within both buffers");
        // SAFETY: both ranges lie inside live allocations (checked above); the stream is live.
        check("cuMemcpyDtoDAsync", unsafe { drv::memcpy_dtod_async(self.ptr + at as u64, src.ptr + src_at as u64, bytes, stream.0) })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        unsafe {
            let _ = drv::free_sync(self.ptr);
        }
    }
}

pub struct Stream(pub(crate) sys::CUstream);

impl Stream {
    pub fn new() -> Result<Stream> {
        check("cuStreamCreate", drv::stream::create(drv::stream::StreamKind::NonBlocking)).map(Stream)
    }

    pub fn wait(&self, e: &Event) -> Result<()> {
        // SAFETY: both handles are live.
        check("cuStreamWaitEvent", unsafe { drv::stream::wait_event(self.0, e.0, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) })
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: live stream.
        check("cuStreamSynchronize", unsafe { drv::stream::synchronize(self.0) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate, destroyed once.
        unsafe {
            let _ = drv::stream::destroy(self.0);
        }
    }
}

pub struct Event(sys::CUevent);

impl Event {
    pub fn new() -> Result<Event> {
        check("cuEventCreate", drv::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)).map(Event)
    }

    pub fn record(&self, s: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check("cuEventRecord", unsafe { drv::event::record(self.0, s.0) })
    }

    /// Milliseconds from `self` to `end` (both recorded and complete).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        // SAFETY: live handles; end is synchronized first.
        unsafe {
            check("cuEventSynchronize", drv::event::synchronize(end.0))?;
            check("cuEventElapsedTime", drv::event::elapsed(self.0, end.0))
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        unsafe {
            let _ = drv::event::destroy(self.0);
        }
    }
}

impl Function {
    /// Launches `nblocks × threads` on `stream`; errors of the launch itself are returned
    /// (errors of the running kernel surface at the next synchronization).
    pub fn launch(&self, stream: &Stream, threads: u32, args: &LaunchArgs) -> Result<()> {
        args.with_params(|params| {
            // SAFETY: the parameter list matches every generated kernel's signature
            // (mra_codegen::emit::KERNEL_PARAMS); pointers are live device allocations.
            check("cuLaunchKernel", unsafe {
                drv::launch_kernel(self.func, (args.nblocks as u32, 1, 1), (threads, 1, 1), self.dynamic_shared_bytes, stream.0, params)
            })
        })
    }
}
