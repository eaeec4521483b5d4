//! An opened device as the shim's C ABI names it: libtorch's `c10::DeviceIndex`, `-1` for the
//! CPU and the CUDA ordinal of a GPU. The calls that load onto a device
//! (`crate::model::aoti_package`) take it from here, never from the GPU's inventory row.

use super::shim_error::ShimError;
use crate::device::Device;

/// `device`'s index as the shim's calls take it: `-1` on the CPU, the GPU's ordinal on CUDA.
pub fn shim_device_index(device: &Device) -> Result<i32, ShimError> {
    match device {
        Device::Cpu(_) => Ok(-1),
        Device::Cuda(dev) => i32::try_from(dev.info.index).map_err(|_| {
            ShimError(format!(
                "CUDA device index {} is out of range",
                dev.info.index
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_libtorchs_minus_one() {
        assert_eq!(shim_device_index(Device::host()).unwrap(), -1);
    }
}
