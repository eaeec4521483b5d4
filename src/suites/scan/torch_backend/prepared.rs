//! One problem on the torch backend: the edges and lengths on the device, and the calls the
//! seed's benchmark (`benchmarks/lib/runner.py`, commit fe28273) times for each phase.
//!
//! Every call starts from a fresh copy of the edges (`edge.clone().detach()
//! .requires_grad_(phase != forward)`), made before the timed part, as the seed's loop does: the
//! copy is part of the row's memory peak there too. What is timed:
//! - forward: the scan alone. The seed times `_dp_scan_streaming` with grad enabled and the
//!   autograd graph built (it marks the edges as requiring grad itself, though its forward
//!   phase passes a copy that does not), not under `no_grad`; so do we.
//! - backward: `v.sum()` and `backward()` after an untimed forward (and a synchronisation);
//! - both: the scan, `v.sum()` and `backward()`.
//!
//! The loss is the sum of the values the scan returns (log Z, Viterbi score, or the entropy
//! H). For Entropy the seed sums both halves of its (log Z, H) pairs; summing H alone runs the
//! same backward kernels (the log Z half gets a zero gradient instead of a one) and makes the
//! gradient that of the returned values, as [`ScanOutput`] documents.

use replay_core::measure::{segment, Placement, Timer, Untimed};
use tch::{Kind, Tensor};

use super::super::{MemoryPeak, Phase, PreparedScan, ScanError, ScanOutput};
use super::memory_peak::PeakSource;
use super::semiring_tensors::SemiringTensors;
use super::streaming_scan::streaming_scan;
use super::torch_error::scan_error;

pub struct PreparedTorchScan {
    pub(super) semiring: SemiringTensors,
    /// `[B, T−1, K, C, C]` float32 on the device; never modified.
    pub(super) edge: Tensor,
    /// `[B]` int64 on the device.
    pub(super) lengths: Tensor,
    /// Where the calls run, and on a GPU libtorch's stream there (what times them).
    pub(super) device: crate::device::Device,
    pub(super) stream: Option<crate::measure::cuda_timing::CudaStreamHandle>,
    pub(super) memory: PeakSource,
}

/// One call's edges and the scan's values, kept until the call's untimed end.
struct CallState {
    edge: Tensor,
    values: Tensor,
}

impl PreparedTorchScan {
    /// Waits for the device's queued work (nothing on the CPU): the untimed part of a call
    /// must be over before the timed part starts, as the seed's `cuda.synchronize` ensures.
    fn settle(&self) -> Result<(), ScanError> {
        crate::torch::work_target::synchronize(&self.device)
            .map_err(|e| ScanError::Backend(e.to_string()))
    }

    /// The seed's `edge.clone().detach().requires_grad_(needs_grad)`.
    fn fresh_edge(&self, needs_grad: bool) -> Result<Tensor, ScanError> {
        let mut edge = self.edge.f_detach_copy().map_err(scan_error)?;
        let _ = edge.f_requires_grad_(needs_grad).map_err(scan_error)?;
        Ok(edge)
    }

    fn forward(&self, edge: Tensor) -> Result<CallState, ScanError> {
        let values = streaming_scan(self.semiring, &edge, &self.lengths).map_err(scan_error)?;
        Ok(CallState { edge, values })
    }

    fn backward(state: &CallState) -> Result<(), ScanError> {
        let loss = state.values.f_sum(None::<Kind>).map_err(scan_error)?;
        // With T = 1 no edge enters the value (there are none): the graph is empty, and the
        // seed's `backward()` would fail on it. The gradient is zero; there is nothing to run.
        if !loss.requires_grad() {
            return Ok(());
        }
        loss.f_backward().map_err(scan_error)
    }

    /// One call of `phase`, its timed part a segment of `timer` (after waiting for the
    /// device), returning the call's tensors (dropped by the caller after the timed part, as
    /// the seed's `del` comes after its clock).
    fn call(&self, phase: Phase, timer: &mut dyn Timer) -> Result<CallState, ScanError> {
        let needs_grad = phase != Phase::Forward;
        let edge = self.fresh_edge(needs_grad)?;
        match phase {
            Phase::Forward => {
                self.settle()?;
                segment(timer, || self.forward(edge))
            }
            Phase::Backward => {
                let state = self.forward(edge)?;
                self.settle()?;
                segment(timer, || Self::backward(&state))?;
                Ok(state)
            }
            Phase::Both => {
                self.settle()?;
                segment(timer, || {
                    let state = self.forward(edge)?;
                    Self::backward(&state)?;
                    Ok(state)
                })
            }
        }
    }
}

fn to_host(tensor: &Tensor) -> Result<Vec<f32>, ScanError> {
    let flat = tensor
        .f_detach()
        .and_then(|t| t.f_reshape([-1]))
        .and_then(|t| t.f_to(crate::device::Device::host().torch()))
        .map_err(scan_error)?;
    Vec::<f32>::try_from(&flat).map_err(scan_error)
}

impl PreparedScan for PreparedTorchScan {
    fn placement(&self) -> Placement<'_> {
        match &self.stream {
            None => Placement::Host,
            Some(stream) => Placement::Stream(stream),
        }
    }

    fn run_calls(
        &mut self,
        phase: Phase,
        calls: u64,
        timer: &mut dyn Timer,
    ) -> Result<(), ScanError> {
        for _ in 0..calls {
            let state = self.call(phase, timer)?;
            drop(state);
        }
        Ok(())
    }

    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
        let state = self.call(phase, &mut Untimed)?;
        let values = to_host(&state.values)?;
        let grad = match phase {
            Phase::Forward => None,
            Phase::Backward | Phase::Both => {
                let grad = state.edge.f_grad().map_err(scan_error)?;
                if grad.defined() {
                    Some(to_host(&grad)?)
                } else if state.values.requires_grad() {
                    return Err(ScanError::Backend(
                        "libtorch's backward left no gradient on the edges".into(),
                    ));
                } else {
                    // No edge entered the values (T = 1): their gradient is zero.
                    Some(vec![0.0; state.edge.numel()])
                }
            }
        };
        Ok(ScanOutput { values, grad })
    }

    fn reset_peak_memory(&mut self) {
        self.memory.reset();
    }

    fn peak_memory(&self) -> MemoryPeak {
        self.memory.peak()
    }
}
