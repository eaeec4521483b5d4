//! One device interface for the CPU and CUDA GPUs.
//!
//! Commands take a [`DeviceSpec`] from `--device` and [`Device::open`] it, once; what runs on
//! the device is handed the opened [`Device`], and libtorch's device is [`Device::torch`] of
//! it (libtorch's stream and memory counters are `crate::torch`'s accessors of it): no code
//! outside this module and `crate::torch` names `tch::Device` (a layout test checks). Work on
//! the host whatever the command's device (references, host copies) goes on [`Device::host`].
//! Opening CUDA on a machine without one is an error that says why; replay never falls back to
//! the CPU silently, because a number measured on the wrong device is worse than no number.

pub mod cache_flush;
pub mod cpu;
pub mod cuda;
pub mod spec;

pub use cpu::CpuInfo;
pub use cuda::{CudaDevice, CudaDeviceInfo, CudaInventory};
pub use spec::DeviceSpec;

use std::sync::OnceLock;

use crate::error::Result;

/// An opened device that work can be replayed and timed on.
#[derive(Debug, Clone)]
pub enum Device {
    Cpu(CpuInfo),
    Cuda(CudaDevice),
}

impl Device {
    pub fn open(spec: DeviceSpec) -> Result<Device> {
        match spec {
            DeviceSpec::Cpu => Ok(Device::Cpu(CpuInfo::detect())),
            DeviceSpec::Cuda(index) => Ok(Device::Cuda(CudaDevice::open(index)?)),
        }
    }

    /// This device with replays timed behind the CUDA timer's blocking kernel (`true`, how a
    /// GPU is opened) or not (`--no-blocking-kernel`); the CPU has no launch queue to block.
    pub fn with_blocking_kernel(self, blocking: bool) -> Device {
        match self {
            Device::Cuda(dev) => Device::Cuda(CudaDevice {
                blocking_kernel: blocking,
                ..dev
            }),
            cpu => cpu,
        }
    }

    pub fn spec(&self) -> DeviceSpec {
        match self {
            Device::Cpu(_) => DeviceSpec::Cpu,
            Device::Cuda(dev) => dev.spec(),
        }
    }

    /// A one-line description for reports: `cpu (AMD EPYC, 2 cores)` or `cuda:0 (NVIDIA H100, sm_90)`.
    pub fn describe(&self) -> String {
        match self {
            Device::Cpu(info) => format!("cpu ({}, {} cores)", info.model, info.logical_cores),
            Device::Cuda(dev) => {
                let (major, minor) = dev.info.compute_capability;
                format!(
                    "cuda:{} ({}, sm_{major}{minor})",
                    dev.info.index, dev.info.name
                )
            }
        }
    }

    /// The host, opened once per process: where work goes that runs on the CPU whatever the
    /// command's device (the references a GPU's results are checked against, host copies,
    /// inputs made on the CPU first).
    pub fn host() -> &'static Device {
        static HOST: OnceLock<Device> = OnceLock::new();
        HOST.get_or_init(|| Device::Cpu(CpuInfo::detect()))
    }

    /// The matching libtorch device, for work replayed through tch.
    pub fn torch(&self) -> tch::Device {
        match self {
            Device::Cpu(_) => tch::Device::Cpu,
            Device::Cuda(dev) => dev.torch(),
        }
    }

    /// Whether this is a GPU.
    pub fn is_cuda(&self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    /// The opened GPU, when this is one.
    pub fn cuda(&self) -> Option<&CudaDevice> {
        match self {
            Device::Cuda(dev) => Some(dev),
            Device::Cpu(_) => None,
        }
    }
}
