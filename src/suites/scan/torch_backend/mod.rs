//! The `torch` backend: the seed's streaming reference scan (`linear_scan_streaming`, the
//! baseline every ratio of the benchmark is computed against) in libtorch ops through tch, on
//! the CPU or a CUDA GPU, with autograd's backward and measured peak memory.
//!
//! - [`streaming_scan`]: the recurrence, op for op as the seed writes it;
//! - [`semiring_tensors`]: the seed's Log, Max and Entropy semirings on tensors;
//! - [`prepared`]: what each phase runs and times;
//! - [`memory_peak`], [`torch_error`]: the memory counters, libtorch's errors as scan errors.
//!
//! The calls run on the opened device the backend is given: the CPU, or libtorch's stream on
//! a GPU (`crate::torch::work_target::libtorch_stream_on`), which sets the measurement core's
//! timer.
//!
//! Max's gradient on ties: the seed's ⊕ is `torch.max(xs, dim)[0]`, whose backward sends the
//! whole gradient to the index `max` returns, the first maximum (on the CPU and on CUDA alike,
//! as PyTorch documents). The scan reduces the source label first and the duration second, and
//! the final label last, so on ties the gradient is the indicator of one segmentation: at each
//! step the smallest duration, then the smallest source label, ending in the smallest label —
//! the rule [`crate::suites::scan::reference::viterbi_indicator`] uses. It is never split
//! between tied segmentations.

mod memory_peak;
mod prepared;
mod semiring_tensors;
mod streaming_scan;
mod torch_error;

use tch::{Kind, Tensor};

use super::{PreparedScan, ScanBackend, ScanError, ScanProblem, Semiring};
use crate::device::Device;
use crate::torch::work_target::libtorch_stream_on;
use memory_peak::PeakSource;
use prepared::PreparedTorchScan;
use semiring_tensors::SemiringTensors;
use torch_error::scan_error;

/// The `torch` backend on one opened device.
pub struct TorchBackend {
    device: Device,
}

impl TorchBackend {
    pub fn new(device: &Device) -> TorchBackend {
        TorchBackend {
            device: device.clone(),
        }
    }

    /// The CPU backend, on the host (tests, tools).
    pub fn cpu() -> TorchBackend {
        TorchBackend::new(Device::host())
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
            .and_then(|t| t.f_to(self.device.torch()))
            .map_err(scan_error)?;
        let lengths = Tensor::f_from_slice(&lengths)
            .and_then(|t| t.f_to_kind(Kind::Int64))
            .and_then(|t| t.f_to(self.device.torch()))
            .map_err(scan_error)?;

        let stream =
            libtorch_stream_on(&self.device).map_err(|e| ScanError::Backend(e.to_string()))?;
        let memory = PeakSource::open(&self.device)?;
        memory.reset();
        Ok(Box::new(PreparedTorchScan {
            semiring: SemiringTensors(semiring),
            edge,
            lengths,
            device: self.device.clone(),
            stream,
            memory,
        }))
    }
}
