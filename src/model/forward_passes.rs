//! Forward passes of a whole model as a measurement-core target, so that the model is timed by
//! the same core as every kernel (`replay full`, and `replay compare`'s model side).

use std::time::Instant;

use super::torchscript::TorchScriptModel;
use crate::error::{Error, Result};
use crate::measure::cuda_timing::RawStreamEvents;
use crate::measure::{BatchTiming, MeasureError, Target};

/// Forward passes of `model` on one fixed input: on a GPU timed by CUDA events on libtorch's
/// current stream (the one stream timer), on the CPU by the monotonic clock.
pub struct ForwardPasses<'m> {
    model: &'m TorchScriptModel,
    input: Vec<tch::Tensor>,
    cuda: Option<(i64, RawStreamEvents)>,
}

impl<'m> ForwardPasses<'m> {
    /// The model must already have run on its device (libtorch's context is then current on
    /// this thread, which the events need).
    pub fn new(model: &'m TorchScriptModel, input: Vec<tch::Tensor>) -> Result<Self> {
        let cuda = match model.device {
            tch::Device::Cuda(i) => {
                let events = RawStreamEvents::on_libtorch_stream(i)
                    .map_err(|e| Error::Model(e.to_string()))?;
                Some((i as i64, events))
            }
            _ => None,
        };
        Ok(ForwardPasses { model, input, cuda })
    }

    /// What times the passes, in words for the timing file.
    pub fn timer(&self) -> &'static str {
        if self.cuda.is_some() {
            "CUDA events on libtorch's current stream"
        } else {
            "monotonic clock"
        }
    }

    fn forward(&self) -> Result<(), MeasureError> {
        self.model
            .forward_all(&self.input)
            .map(drop)
            .map_err(MeasureError::target)
    }
}

impl Target for ForwardPasses<'_> {
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let _guard = tch::no_grad_guard();
        match &self.cuda {
            // From before the first kernel's launch to after the last kernel's end, with the
            // host's own work in between. Work still queued from before (a warm-up) is waited
            // for first, so that it is not counted in this batch.
            Some((index, events)) => {
                tch::Cuda::synchronize(*index);
                events.time_batch(|| (0..calls).try_for_each(|_| self.forward()))
            }
            // The outputs are dropped inside the timed region, as a caller's would be.
            None => {
                let start = Instant::now();
                for _ in 0..calls {
                    self.forward()?;
                }
                let elapsed = start.elapsed();
                Ok(BatchTiming {
                    device: elapsed,
                    host: elapsed,
                })
            }
        }
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
