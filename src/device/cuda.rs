//! CUDA devices through cudarc, loaded dynamically.
//!
//! cudarc panics when it cannot dlopen `libcuda.so`, so every entry point here first asks
//! [`driver_missing_reason`] and turns absence into [`Error::CudaUnavailable`]; every driver or
//! runtime failure after that becomes [`Error::Cuda`]. Nothing in this module may panic on a
//! machine without a GPU.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};
use serde::Serialize;

use super::spec::DeviceSpec;
use crate::error::{Error, Result};

/// A CUDA driver call that failed, with the driver's own error kept (its code says whether it
/// was out of memory, `replay::registry::is_out_of_memory`).
#[derive(Debug, thiserror::Error)]
#[error("{call}: {source}")]
pub struct CudaCallError {
    pub call: &'static str,
    #[source]
    pub source: cudarc::driver::DriverError,
}

impl CudaCallError {
    /// `map_err(CudaCallError::of("cuMemAlloc"))`.
    pub fn of(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> CudaCallError {
        move |source| CudaCallError { call, source }
    }
}

/// The message the user sees when no NVIDIA driver is installed.
pub const NO_DRIVER: &str = "libcuda.so not found: no NVIDIA driver on this machine";

/// Why CUDA cannot be used at all here, or `None` when the driver library loads.
pub fn driver_missing_reason() -> Option<String> {
    // SAFETY: only tries to dlopen the driver library by its usual names.
    let present = unsafe { cudarc::driver::sys::is_culib_present() };
    (!present).then(|| NO_DRIVER.to_string())
}

/// Runs a cudarc call that may panic inside the bindings (a symbol missing from an old
/// driver, say) and reports the panic as an error instead.
fn guarded<T>(call: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the CUDA bindings panicked".to_string());
            Err(Error::Cuda { call, message })
        }
    }
}

/// What `replay devices` prints for one GPU.
#[derive(Debug, Clone, Serialize)]
pub struct CudaDeviceInfo {
    pub index: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
    pub total_memory_bytes: usize,
    pub l2_cache_bytes: i32,
    pub clock_khz: i32,
    pub memory_clock_khz: i32,
    pub memory_bus_width_bits: i32,
}

/// The CUDA side of the machine: driver and runtime versions and every device.
#[derive(Debug, Clone, Serialize)]
pub struct CudaInventory {
    /// As CUDA encodes it: 13000 is 13.0.
    pub driver_version: i32,
    pub runtime_version: Option<i32>,
    pub devices: Vec<CudaDeviceInfo>,
}

/// `13020` -> `"13.2"`.
pub fn format_cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Lists the CUDA devices, or says why there are none.
pub fn inventory() -> Result<CudaInventory> {
    if let Some(reason) = driver_missing_reason() {
        return Err(Error::CudaUnavailable(reason));
    }
    guarded("cuInit/cuDeviceGetCount", || {
        cudarc::driver::result::init().map_err(|e| Error::cuda("cuInit", e))?;
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(|e| Error::cuda("cuDriverGetVersion", e))?;
        let runtime_version = runtime_version();
        let count = CudaContext::device_count().map_err(|e| Error::cuda("cuDeviceGetCount", e))?;
        let mut devices = Vec::new();
        for index in 0..count.max(0) as usize {
            devices.push(device_info(index)?);
        }
        Ok(CudaInventory {
            driver_version,
            runtime_version,
            devices,
        })
    })
}

/// The CUDA runtime (libcudart, from the torch wheels) version, when it loads.
fn runtime_version() -> Option<i32> {
    // SAFETY: only tries to dlopen libcudart.
    if !unsafe { cudarc::runtime::sys::is_culib_present() } {
        return None;
    }
    catch_unwind(cudarc::runtime::result::version::get_runtime_version)
        .ok()?
        .ok()
}

fn device_info(index: usize) -> Result<CudaDeviceInfo> {
    let dev = cudarc::driver::result::device::get(index as i32)
        .map_err(|e| Error::cuda("cuDeviceGet", e))?;
    let attr = |a: CUdevice_attribute| -> Result<i32> {
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        unsafe { cudarc::driver::result::device::get_attribute(dev, a) }
            .map_err(|e| Error::cuda("cuDeviceGetAttribute", e))
    };
    Ok(CudaDeviceInfo {
        index,
        name: cudarc::driver::result::device::get_name(dev)
            .map_err(|e| Error::cuda("cuDeviceGetName", e))?,
        compute_capability: (
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        multiprocessors: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        // SAFETY: as above.
        total_memory_bytes: unsafe { cudarc::driver::result::device::total_mem(dev) }
            .map_err(|e| Error::cuda("cuDeviceTotalMem", e))?,
        l2_cache_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
        clock_khz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        memory_clock_khz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        memory_bus_width_bits: attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        )?,
    })
}

/// Why `cuda:index` cannot be opened on a machine whose driver lists `count` devices.
pub fn missing_device_reason(index: usize, count: usize) -> String {
    match count {
        0 => "the NVIDIA driver reports no CUDA device".to_string(),
        n => format!(
            "cuda:{index} requested but this machine has {n} CUDA device(s): cuda:0..cuda:{}",
            n - 1
        ),
    }
}

/// An opened GPU: its context and the stream every replay runs on (a clone shares them).
#[derive(Clone)]
pub struct CudaDevice {
    pub info: CudaDeviceInfo,
    pub context: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// Whether replays on this device queue their timed work behind the CUDA timer's blocking
    /// kernel (`measure::blocking_kernel`); `--no-blocking-kernel` turns it off, to compare.
    pub blocking_kernel: bool,
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl CudaDevice {
    /// The matching libtorch device.
    pub fn torch(&self) -> tch::Device {
        tch::Device::Cuda(self.info.index)
    }

    /// Which GPU this is, as `--device` names it (`cuda:N`): what labels print.
    pub fn spec(&self) -> DeviceSpec {
        DeviceSpec::Cuda(self.info.index)
    }

    /// NVML's number for this GPU (`--energy nvml:N`): CUDA's ordinal, which NVML's PCI
    /// order matches unless `CUDA_VISIBLE_DEVICES` reorders the devices.
    pub fn nvml_index(&self) -> u32 {
        u32::try_from(self.info.index).unwrap_or(u32::MAX)
    }

    /// The device's free memory now, in bytes (`cuMemGetInfo` in its context).
    pub fn free_memory(&self) -> Result<u64> {
        guarded("cuMemGetInfo", || {
            let (free, _total) = self
                .context
                .mem_get_info()
                .map_err(|e| Error::cuda("cuMemGetInfo", e))?;
            Ok(free as u64)
        })
    }

    /// Opens `cuda:index`, failing with a clear message when there is no driver, no device,
    /// or fewer devices than `index + 1`.
    pub fn open(index: usize) -> Result<CudaDevice> {
        let inventory = inventory()?;
        let Some(info) = inventory.devices.get(index).cloned() else {
            return Err(Error::CudaUnavailable(missing_device_reason(
                index,
                inventory.devices.len(),
            )));
        };
        guarded("cuCtxCreate", || {
            let context =
                CudaContext::new(index).map_err(|e| Error::cuda("cuDevicePrimaryCtxRetain", e))?;
            // A dedicated stream: replays must not queue behind libtorch's work on the legacy stream.
            let stream = context
                .new_stream()
                .map_err(|e| Error::cuda("cuStreamCreate", e))?;
            Ok(CudaDevice {
                info,
                context,
                stream,
                blocking_kernel: true,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_format_like_nvidia_smi() {
        assert_eq!(format_cuda_version(13000), "13.0");
        assert_eq!(format_cuda_version(12040), "12.4");
        assert_eq!(format_cuda_version(11080), "11.8");
    }

    #[test]
    fn guarded_turns_a_panic_into_an_error() {
        let err = guarded::<()>("cuTest", || panic!("symbol cuFoo not found")).unwrap_err();
        assert!(err.to_string().contains("cuTest"));
        assert!(err.to_string().contains("symbol cuFoo not found"));
    }
}
