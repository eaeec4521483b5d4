//! The `torch` backend: the seed's streaming reference scan (`linear_scan_streaming`, the
//! baseline every ratio of the benchmark is computed against) in libtorch ops through tch, on
//! the CPU or a CUDA GPU, with autograd's backward and measured peak memory.
//!
//! - [`streaming_scan`]: the recurrence, op for op as the seed writes it;
//! - [`semiring_tensors`]: the seed's Log, Max and Entropy semirings on tensors;
//! - [`prepared`]: what each phase runs and times;
//! - [`call_device`], [`memory_peak`], [`torch_error`]: where the calls run (the CPU, or
//!   libtorch's stream, which sets the measurement core's timer), the memory counters,
//!   libtorch's errors as scan errors.
//!
//! Max's gradient on ties: the seed's ⊕ is `torch.max(xs, dim)[0]`, whose backward sends the
//! whole gradient to the index `max` returns, the first maximum (on the CPU and on CUDA alike,
//! as PyTorch documents). The scan reduces the source label first and the duration second, and
//! the final label last, so on ties the gradient is the indicator of one segmentation: at each
//! step the smallest duration, then the smallest source label, ending in the smallest label —
//! the rule [`crate::suites::scan::reference::viterbi_indicator`] uses. It is never split
//! between tied segmentations.

mod call_device;
mod memory_peak;
mod prepared;
mod semiring_tensors;
mod streaming_scan;
mod torch_error;

use std::sync::Arc;

use cudarc::driver::CudaContext;
use tch::{Kind, Tensor};

use super::{PreparedScan, ScanBackend, ScanError, ScanProblem, Semiring};
use crate::device::Device;
use call_device::CallDevice;
use memory_peak::PeakSource;
use prepared::PreparedTorchScan;
use semiring_tensors::SemiringTensors;
use torch_error::scan_error;

/// The `torch` backend on one device.
pub struct TorchBackend {
    device: tch::Device,
    /// The GPU's CUDA context (libtorch's primary one), bound before the device is used.
    cuda_context: Option<Arc<CudaContext>>,
}

impl TorchBackend {
    pub fn new(device: &Device) -> TorchBackend {
        let cuda_context = match device {
            Device::Cuda(dev) => Some(dev.context.clone()),
            Device::Cpu(_) => None,
        };
        TorchBackend {
            device: device.torch_device(),
            cuda_context,
        }
    }

    /// The CPU backend, without opening a [`Device`] (tests, tools).
    pub fn cpu() -> TorchBackend {
        TorchBackend {
            device: tch::Device::Cpu,
            cuda_context: None,
        }
    }
}

impl ScanBackend for TorchBackend {
    fn name(&self) -> &'static str {
        "torch"
    }

    fn prepare<'p>(
        &self,
        problem: &ScanProblem<'p>,
        semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
        let d = problem.dims;
        let dim = |n: usize| {
            i64::try_from(n)
                .map_err(|_| ScanError::InvalidInput(format!("dimension {n} is too large")))
        };
        let shape = [
            dim(d.batch)?,
            dim(d.positions.saturating_sub(1))?,
            dim(d.durations)?,
            dim(d.labels)?,
            dim(d.labels)?,
        ];
        let lengths = problem
            .lengths
            .iter()
            .map(|&l| dim(l))
            .collect::<Result<Vec<i64>, _>>()?;
        let edge = Tensor::f_from_slice(problem.edge)
            .and_then(|t| t.f_view_(shape))
            .and_then(|t| t.f_to(self.device))
            .map_err(scan_error)?;
        let lengths = Tensor::f_from_slice(&lengths)
            .and_then(|t| t.f_to_kind(Kind::Int64))
            .and_then(|t| t.f_to(self.device))
            .map_err(scan_error)?;

        let on = match (self.device, &self.cuda_context) {
            (tch::Device::Cuda(index), Some(context)) => CallDevice::cuda(index, context.clone())?,
            (tch::Device::Cuda(index), None) => {
                return Err(ScanError::Backend(format!(
                    "cuda:{index} was not opened through replay's device layer"
                )))
            }
            _ => CallDevice::Cpu,
        };
        let memory = PeakSource::open(self.device)?;
        memory.reset();
        Ok(Box::new(PreparedTorchScan {
            semiring: SemiringTensors(semiring),
            edge,
            lengths,
            on,
            memory,
        }))
    }
}
