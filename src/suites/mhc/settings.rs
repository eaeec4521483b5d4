//! What an mHC run is: sizes, placement, implementations, worker threads, and the GPU the
//! command opened, and the rounds its stages are timed in.

use replay_core::measure::MeasureConfig;

use super::shape::MhcShape;
use super::stages::{Impl, Placement};
use super::MhcError;
use crate::device::{CudaDevice, Device, DeviceSpec};

/// What a run is: sizes, placement, implementations, worker threads.
#[derive(Debug, Clone)]
pub struct MhcSettings {
    pub shape: MhcShape,
    pub placement: Placement,
    pub impls: Vec<Impl>,
    /// Worker threads of the fused CPU kernels.
    pub threads: usize,
    /// The GPU of the placement (the offload simulation's, or `--device cuda`'s), as the
    /// command opened it; `None` on the CPU alone.
    pub gpu: Option<CudaDevice>,
    /// How each round of an implementation's interleaved stages is timed, one configuration
    /// per round (`run::Timing::round_configs`).
    pub rounds: Vec<MeasureConfig>,
}

impl MhcSettings {
    /// The opened GPU of the placement.
    pub(super) fn gpu(&self) -> Result<Device, MhcError> {
        self.gpu.clone().map(Device::Cuda).ok_or_else(|| {
            MhcError::Unavailable(format!(
                "{}: no GPU was opened for this placement",
                self.placement.key(None)
            ))
        })
    }

    /// Which GPU the placement uses, as rows name it.
    pub(super) fn gpu_spec(&self) -> Option<DeviceSpec> {
        self.gpu.as_ref().map(CudaDevice::spec)
    }

    /// Where stages 1–3 run: the GPU with `--device cuda`, else the host.
    pub(super) fn compute_device(&self) -> Result<Device, MhcError> {
        match self.placement {
            Placement::Gpu => self.gpu(),
            _ => Ok(Device::host().clone()),
        }
    }
}
