//! Which machine, torch and driver a host section belongs to: the device's name (`cpu` or the
//! GPU's), the CPU's model name (`/proc/cpuinfo`), the libtorch replay was built against, and
//! on a GPU the NVIDIA driver's version (`/proc/driver/nvidia/version`, else the CUDA driver
//! API's version as `CUDA 13.0`).

use crate::device::{CpuInfo, Device};
use replay_core::results::host_profile::HostMachine;

/// The machine `device` is on.
pub fn machine_of(device: &Device) -> HostMachine {
    let (name, driver) = match device {
        Device::Cpu(_) => ("cpu".to_string(), String::new()),
        Device::Cuda(dev) => (dev.info.name.clone(), driver_version()),
    };
    HostMachine {
        device: name,
        cpu: CpuInfo::detect().model,
        torch: env!("REPLAY_LIBTORCH_VERSION").to_string(),
        driver,
    }
}

/// The NVIDIA driver's version on this machine, or the CUDA driver API's, or empty.
fn driver_version() -> String {
    let module = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| nvrm_version(&text));
    module.unwrap_or_else(|| {
        crate::device::cuda::inventory()
            .map(|inv| {
                format!(
                    "CUDA {}",
                    crate::device::cuda::format_cuda_version(inv.driver_version)
                )
            })
            .unwrap_or_default()
    })
}

/// The kernel module's version from `/proc/driver/nvidia/version`: the first dotted number on
/// its `NVRM version:` line.
pub fn nvrm_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    line.split_whitespace()
        .find(|token| {
            token.contains('.')
                && token.chars().all(|c| c.is_ascii_digit() || c == '.')
                && token.starts_with(|c: char| c.is_ascii_digit())
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_version_is_read_from_both_kinds_of_kernel_module() {
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 20:33:33 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
        assert_eq!(nvrm_version(proprietary).as_deref(), Some("580.159.04"));
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n";
        assert_eq!(nvrm_version(open).as_deref(), Some("570.86.15"));
        assert_eq!(nvrm_version("GCC version: 12.2.0\n"), None);
    }

    #[test]
    fn a_cpu_host_names_the_cpu_and_torch_and_no_driver() {
        let m = machine_of(&Device::Cpu(CpuInfo::detect()));
        assert_eq!(m.device, "cpu");
        assert!(!m.cpu.is_empty());
        assert_eq!(m.torch, env!("REPLAY_LIBTORCH_VERSION"));
        assert!(m.driver.is_empty());
    }
}
