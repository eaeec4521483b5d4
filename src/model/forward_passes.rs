//! Forward passes of a whole model as a measurement-core target, so that the model is timed by
//! the same core as every kernel (`replay full`, and `replay compare`'s model side).

use super::whole_model::WholeModel;
use crate::device::CudaDevice;
use crate::error::{Error, Result};
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{segment, MeasureError, Placement, Target, Timer};
use crate::torch::work_target::{libtorch_stream, synchronize_gpu};

/// Forward passes of `model` (TorchScript or an AOTInductor package) on one fixed input,
/// placed where libtorch runs them: on a GPU
/// libtorch's current stream (timed by the core with CUDA events there), on the CPU the host
/// (the monotonic clock).
///
/// Without the CUDA timer's blocking kernel: a whole model's time is compared with the
/// trace's step, which includes the gaps where the GPU waits for the host's launches, so those
/// gaps belong in the measurement; and an eager model's hundreds to thousands of launches per
/// pass would overflow the launch queue behind the blocker (it would time out every pass).
pub struct ForwardPasses<'m> {
    model: &'m dyn WholeModel,
    input: Vec<tch::Tensor>,
    /// The model's opened GPU and libtorch's stream on it.
    cuda: Option<(&'m CudaDevice, CudaStreamHandle)>,
}

impl<'m> ForwardPasses<'m> {
    /// The model must already have run on its device (libtorch's context is then current on
    /// this thread, which the events need).
    pub fn new(model: &'m dyn WholeModel, input: Vec<tch::Tensor>) -> Result<Self> {
        let cuda = match model.device() {
            crate::device::Device::Cuda(dev) => {
                let stream = libtorch_stream(dev).map_err(|e| Error::Model(e.to_string()))?;
                Some((dev, stream.with_blocking_kernel(false)))
            }
            crate::device::Device::Cpu(_) => None,
        };
        Ok(ForwardPasses { model, input, cuda })
    }

    /// What times the passes, in words for the timing file.
    pub fn timer(&self) -> String {
        self.placement().timer_name()
    }

    fn forward(&self) -> Result<(), MeasureError> {
        self.model
            .forward_dropped(&self.input)
            .map_err(MeasureError::target)
    }
}

impl Target for ForwardPasses<'_> {
    fn placement(&self) -> Placement<'_> {
        match &self.cuda {
            Some((_, stream)) => Placement::Stream(stream),
            None => Placement::Host,
        }
    }

    /// The outputs are dropped inside the timed region, as a caller's would be.
    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        (0..calls).try_for_each(|_| self.forward())
    }

    /// On a GPU: from before the first kernel's launch to after the last kernel's end, with
    /// the host's own work in between. `no_grad` is entered, and work still queued from before
    /// (a warm-up) is waited for, before the timed part, so that neither is counted.
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        if let Some((gpu, _)) = &self.cuda {
            synchronize_gpu(gpu)?;
        }
        segment(timer, || (0..calls).try_for_each(|_| self.forward()))
    }
}

/// The model's own error when a forward pass failed; anything else the core says, as a model
/// error in its words.
pub fn model_error(e: MeasureError) -> Error {
    match e {
        MeasureError::Target(inner) => match inner.downcast::<Error>() {
            Ok(error) => *error,
            Err(other) => Error::Model(other.to_string()),
        },
        other => Error::Model(other.to_string()),
    }
}
