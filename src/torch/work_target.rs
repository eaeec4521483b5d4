//! Any piece of libtorch work as a measurement-core target: a closure that issues tch ops on
//! one device, timed the way every libtorch target is (the monotonic clock on the CPU; CUDA
//! events on libtorch's current stream on a GPU, after waiting for what was queued before).
//! The suites that time libtorch compositions (`calibrate`'s matmul, copies and fusion
//! patterns) use this instead of a timing loop of their own.

use std::time::Instant;

use crate::measure::{BatchTiming, MeasureError, Target};
use crate::torch::stream_timer::RawStreamEvents;

/// `work` run `calls` times per batch on `device`, under `no_grad`.
pub struct TorchWork<F> {
    work: F,
    cuda: Option<(i64, RawStreamEvents)>,
}

impl<F> TorchWork<F>
where
    F: FnMut() -> Result<(), tch::TchError>,
{
    /// On a GPU libtorch must already have used `device` on this thread (run `work` once
    /// first, or any op), so that its context is current for the events.
    pub fn new(device: tch::Device, work: F) -> Result<Self, MeasureError> {
        let cuda = match device {
            tch::Device::Cuda(index) => {
                Some((index as i64, RawStreamEvents::on_libtorch_stream(index)?))
            }
            _ => None,
        };
        Ok(TorchWork { work, cuda })
    }

    /// What times the work, in words for reports.
    pub fn timer(&self) -> &'static str {
        if self.cuda.is_some() {
            "CUDA events on libtorch's current stream"
        } else {
            "monotonic clock"
        }
    }
}

impl<F> Target for TorchWork<F>
where
    F: FnMut() -> Result<(), tch::TchError>,
{
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let _guard = tch::no_grad_guard();
        let work = &mut self.work;
        match &self.cuda {
            Some((index, events)) => {
                tch::Cuda::synchronize(*index);
                events.time_batch(|| {
                    (0..calls).try_for_each(|_| work().map_err(MeasureError::target))
                })
            }
            None => {
                let start = Instant::now();
                for _ in 0..calls {
                    work().map_err(MeasureError::target)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure_detailed, MeasureConfig, MonotonicClock};
    use tch::{Kind, Tensor};

    #[test]
    fn times_libtorch_work_through_the_core_and_counts_every_call() {
        let a = Tensor::ones([64, 64], (Kind::Float, tch::Device::Cpu));
        let mut out = Tensor::zeros([64, 64], (Kind::Float, tch::Device::Cpu));
        let mut calls = 0u64;
        let mut target = TorchWork::new(tch::Device::Cpu, || {
            calls += 1;
            out.f_copy_(&a.f_mm(&a)?)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(target.timer(), "monotonic clock");
        let m = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(2, 5),
            &MonotonicClock::new(),
        )
        .unwrap();
        assert_eq!(m.summary.samples, 5);
        assert!(m.summary.median > 0.0);
        drop(target);
        assert!(calls >= 7, "{calls} calls for 2 warm-ups and 5 runs");
        assert_eq!(out.double_value(&[0, 0]), 64.0);
    }

    #[test]
    fn a_libtorch_error_ends_the_measurement_with_its_message() {
        let a = Tensor::ones([4, 3], (Kind::Float, tch::Device::Cpu));
        let mut target = TorchWork::new(tch::Device::Cpu, || a.f_mm(&a).map(drop)).unwrap();
        let err = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(0, 1),
            &MonotonicClock::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("mat1 and mat2"), "{err}");
    }
}
