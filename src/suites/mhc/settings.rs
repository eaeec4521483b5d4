//! What an mHC run is: sizes, placement, implementations, worker threads.

use tch::Device;

use super::shape::MhcShape;
use super::stages::{Impl, Placement};

/// What a run is: sizes, placement, implementations, worker threads.
#[derive(Debug, Clone)]
pub struct MhcSettings {
    pub shape: MhcShape,
    pub placement: Placement,
    pub impls: Vec<Impl>,
    /// Worker threads of the fused CPU kernels.
    pub threads: usize,
}

impl MhcSettings {
    /// Where stages 1–3 run: the GPU with `--device cuda`, else the CPU.
    pub(super) fn compute_device(&self) -> Device {
        match self.placement {
            Placement::Gpu { gpu } => Device::Cuda(gpu),
            _ => Device::Cpu,
        }
    }
}
