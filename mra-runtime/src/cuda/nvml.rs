//! NVML, loaded at run time like the driver: the SM clock, why it is lowered, and the board
//! power, for [`crate::clocks`]. Optional: a machine without libnvidia-ml still times, it only
//! does not report clocks, and says why; a driver without the instantaneous power field still
//! reports clocks.

use crate::clocks::{ClockSample, ClockSource};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr, CString};

type Device = *mut c_void;
type Init = unsafe extern "C" fn() -> c_int;
type HandleByPci = unsafe extern "C" fn(*const c_char, *mut Device) -> c_int;
type ClockInfo = unsafe extern "C" fn(Device, c_int, *mut c_uint) -> c_int;
type Reasons = unsafe extern "C" fn(Device, *mut c_ulonglong) -> c_int;
type ErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type FieldValues = unsafe extern "C" fn(Device, c_int, *mut FieldValue) -> c_int;
type PowerLimit = unsafe extern "C" fn(Device, *mut c_uint) -> c_int;

/// nvml.h `NVML_CLOCK_SM`.
const CLOCK_SM: c_int = 1;

/// nvml.h `NVML_FI_DEV_POWER_INSTANT`: the board power now, in milliwatts (an unsigned int).
/// `nvmlDeviceGetPowerUsage` is a one-second average on recent GPUs, longer than a level is
/// timed in a sweep, so it is not used.
const FI_DEV_POWER_INSTANT: c_uint = 186;

/// nvml.h `nvmlFieldValue_t`: fieldId, scopeId, timestamp (µs), latencyUsec, valueType,
/// nvmlReturn, and the value, a union of 8 bytes (here its bits).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FieldValue {
    field_id: c_uint,
    scope_id: c_uint,
    timestamp: i64,
    latency_usec: i64,
    value_type: c_int,
    nvml_return: c_int,
    value: u64,
}

impl FieldValue {
    /// The power in milliwatts from a filled field, if NVML read it: `uiVal`, the union's low
    /// 4 bytes (x86-64 and aarch64 are little-endian).
    fn power_mw(&self) -> Option<u32> {
        const VALUE_TYPE_UNSIGNED_INT: c_int = 1;
        (self.nvml_return == 0 && self.value_type == VALUE_TYPE_UNSIGNED_INT).then_some(self.value as u32)
    }
}

/// The NVML device of one CUDA device.
pub struct Nvml {
    // Keeps the library mapped while the function pointers below are used.
    _lib: libloading::Library,
    device: Device,
    clock_info: ClockInfo,
    reasons: Reasons,
    field_values: Option<FieldValues>,
    /// nvmlDeviceGetEnforcedPowerLimit at open, in milliwatts.
    power_limit_mw: Option<u32>,
}

// SAFETY: NVML's API is thread-safe (nvml.h: "all NVML functions are thread-safe"); the device
// handle is an opaque pointer NVML owns for the life of the process.
unsafe impl Send for Nvml {}
unsafe impl Sync for Nvml {}

impl Nvml {
    /// NVML's handle of the device at `pci_bus_id` (`00000000:00:06.0`, as nvidia-smi prints
    /// it), or why there is none, in one line.
    pub fn open(pci_bus_id: &str) -> Result<Nvml, String> {
        let names = ["libnvidia-ml.so.1", "libnvidia-ml.so"];
        // SAFETY: loading libnvidia-ml runs no initialisers with preconditions.
        let lib = names
            .iter()
            .find_map(|n| unsafe { libloading::Library::new(n) }.ok())
            .ok_or_else(|| format!("NVML not found (looked for {})", names.join(", ")))?;
        // SAFETY: each symbol is looked up with the signature nvml.h declares for it.
        unsafe {
            let sym = |name: &str| format!("{name} is not in libnvidia-ml");
            let init: Init = *lib.get::<Init>(b"nvmlInit_v2").map_err(|_| sym("nvmlInit_v2"))?;
            let by_pci: HandleByPci = *lib.get::<HandleByPci>(b"nvmlDeviceGetHandleByPciBusId_v2").map_err(|_| sym("nvmlDeviceGetHandleByPciBusId_v2"))?;
            let clock_info: ClockInfo = *lib.get::<ClockInfo>(b"nvmlDeviceGetClockInfo").map_err(|_| sym("nvmlDeviceGetClockInfo"))?;
            // Renamed in CUDA 12.2's NVML; the old name stays exported for older drivers.
            let reasons: Reasons = *lib
                .get::<Reasons>(b"nvmlDeviceGetCurrentClocksEventReasons")
                .or_else(|_| lib.get::<Reasons>(b"nvmlDeviceGetCurrentClocksThrottleReasons"))
                .map_err(|_| sym("nvmlDeviceGetCurrentClocksEventReasons"))?;
            let error_string = lib.get::<ErrorString>(b"nvmlErrorString").ok().map(|f| *f);
            let field_values = lib.get::<FieldValues>(b"nvmlDeviceGetFieldValues").ok().map(|f| *f);
            let why = |call: &str, code: c_int| {
                let text = error_string.map(|f| f(code)).filter(|p| !p.is_null()).map(|p| CStr::from_ptr(p).to_string_lossy().into_owned());
                format!("{call} failed: {} (NVML error {code})", text.unwrap_or_else(|| "no message".into()))
            };
            let code = init();
            if code != 0 {
                return Err(why("nvmlInit_v2", code));
            }
            let bus = CString::new(pci_bus_id).map_err(|_| format!("PCI bus id {pci_bus_id:?} has a NUL byte"))?;
            let mut device: Device = std::ptr::null_mut();
            let code = by_pci(bus.as_ptr(), &mut device);
            if code != 0 {
                return Err(why(&format!("nvmlDeviceGetHandleByPciBusId_v2({pci_bus_id})"), code));
            }
            let limit = lib.get::<PowerLimit>(b"nvmlDeviceGetEnforcedPowerLimit").ok().map(|f| *f);
            let mut mw: c_uint = 0;
            let power_limit_mw = limit.filter(|get| get(device, &mut mw) == 0 && mw > 0).map(|_| mw);
            Ok(Nvml { _lib: lib, device, clock_info, reasons, field_values, power_limit_mw })
        }
    }

    /// The board power now, where the driver reads it (None otherwise: the sample keeps its clock).
    fn power_mw(&self) -> Option<u32> {
        let get = self.field_values?;
        let mut field = FieldValue { field_id: FI_DEV_POWER_INSTANT, ..FieldValue::default() };
        // SAFETY: a valid device handle and one field, as nvml.h's signature asks.
        let code = unsafe { get(self.device, 1, &mut field) };
        if code == 0 { field.power_mw() } else { None }
    }
}

impl ClockSource for Nvml {
    fn sample(&self) -> Option<ClockSample> {
        let (mut mhz, mut bits): (c_uint, c_ulonglong) = (0, 0);
        // SAFETY: a valid device handle and out-pointers.
        let ok = unsafe { (self.clock_info)(self.device, CLOCK_SM, &mut mhz) == 0 && (self.reasons)(self.device, &mut bits) == 0 };
        ok.then(|| ClockSample { sm_mhz: mhz, reasons: bits, power_mw: self.power_mw() })
    }

    fn power_limit_mw(&self) -> Option<u32> {
        self.power_limit_mw
    }
}

/// The PCI bus id NVML and nvidia-smi use for a CUDA device's PCI domain, bus and device.
pub fn pci_bus_id(domain: i32, bus: i32, device: i32) -> String {
    format!("{domain:08X}:{bus:02X}:{device:02X}.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_value_struct_has_nvml_h_layout() {
        // nvml.h nvmlFieldValue_t: unsigned int fieldId, unsigned int scopeId, long long timestamp,
        // long long latencyUsec, nvmlValueType_t valueType, nvmlReturn_t nvmlReturn (enums: int),
        // nvmlValue_t value (a union of 8 bytes): offsets 0, 4, 8, 16, 24, 28, 32; 40 bytes.
        assert_eq!(std::mem::size_of::<FieldValue>(), 40);
        assert_eq!(
            [
                std::mem::offset_of!(FieldValue, field_id),
                std::mem::offset_of!(FieldValue, scope_id),
                std::mem::offset_of!(FieldValue, timestamp),
                std::mem::offset_of!(FieldValue, latency_usec),
                std::mem::offset_of!(FieldValue, value_type),
                std::mem::offset_of!(FieldValue, nvml_return),
                std::mem::offset_of!(FieldValue, value),
            ],
            [0, 4, 8, 16, 24, 28, 32]
        );
    }

    #[test]
    fn a_power_field_reads_its_unsigned_int_and_nothing_on_failure() {
        // As NVML fills it: valueType NVML_VALUE_TYPE_UNSIGNED_INT (1), uiVal in the low bytes.
        let read = FieldValue { field_id: FI_DEV_POWER_INSTANT, value_type: 1, nvml_return: 0, value: 697_512, ..FieldValue::default() };
        assert_eq!(read.power_mw(), Some(697_512));
        // NVML_ERROR_NOT_SUPPORTED (3) in the field's own return, or another value type: no power.
        assert_eq!(FieldValue { nvml_return: 3, ..read }.power_mw(), None);
        assert_eq!(FieldValue { value_type: 0, ..read }.power_mw(), None);
    }

    #[test]
    fn pci_bus_id_is_written_as_nvidia_smi_writes_it() {
        // nvidia-smi --query-gpu=pci.bus_id writes domain 0, bus 0, device 6 as 00000000:00:06.0.
        assert_eq!(pci_bus_id(0, 0, 6), "00000000:00:06.0");
        assert_eq!(pci_bus_id(1, 0xc1, 0x1f), "00000001:C1:1F.0");
    }
}
