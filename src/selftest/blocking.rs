//! The selftest check of the CUDA timer's blocking kernel (`measure::blocking_kernel`): a
//! kernel far shorter than its launch (libtorch adding two 4-element tensors) timed by the
//! measurement core with the blocking kernel and without it. Without it the events measure the
//! host's launch rate (the first GPU run read 5-7 µs for 1-2 µs kernels); behind it the queued
//! launches run back to back, so the median must come out lower, and the blocker must not have
//! timed out. Runs only on CUDA; the judgement is plain logic, unit-tested here.

use std::time::Duration;

use tch::{Kind, Tensor};

use crate::device::cuda::CudaDevice;
use crate::device::Device;
use crate::measure::{measure, MeasureConfig, MonotonicClock, Summary};
use crate::torch::work_target::TorchWork;

/// Time budget of each of the two measurements.
const BUDGET: Duration = Duration::from_millis(400);

pub fn short_kernel_with_and_without(dev: &CudaDevice) -> Result<String, String> {
    let device = Device::Cuda(dev.clone());
    dev.context
        .bind_to_thread()
        .map_err(|e| format!("cuCtxSetCurrent: {e}"))?;
    let _guard = tch::no_grad_guard();
    let a = Tensor::ones([4], (Kind::Float, device.torch()));
    let mut out = Tensor::zeros([4], (Kind::Float, device.torch()));
    // libtorch's context, its kernel and the caching allocator, before anything is timed.
    out.f_add_(&a).map(drop).map_err(|e| e.to_string())?;
    crate::torch::work_target::synchronize(&device).map_err(|e| e.to_string())?;
    let mut time = |blocking: bool| -> Result<Summary, String> {
        let mut target = TorchWork::new(&device, || out.f_add_(&a).map(drop))
            .map_err(|e| e.to_string())?
            .with_blocking_kernel(blocking);
        measure(
            &mut target,
            &MeasureConfig::with_time_budget(BUDGET),
            &MonotonicClock::new(),
        )
        .map_err(|e| e.to_string())
    };
    let unblocked = time(false)?;
    let blocked = time(true)?;
    let sum = out.to_device(Device::host().torch()).double_value(&[0]);
    if sum.is_nan() || sum < 2.0 {
        return Err(format!("the add did not run: out[0] = {sum}"));
    }
    judge_blocking(&blocked, &unblocked)
}

/// Passes when the blocked measurement used the blocking kernel, never timed out and reads a
/// lower median than the unblocked one; the detail gives both.
pub fn judge_blocking(blocked: &Summary, unblocked: &Summary) -> Result<String, String> {
    let describe = |s: &Summary| {
        format!(
            "{:.2} us (host {:.2} us, {} calls/sample, {} samples)",
            s.median, s.host_median, s.calls_per_sample, s.samples
        )
    };
    let what = format!(
        "4-element add: {} behind the blocking kernel, {} without",
        describe(blocked),
        describe(unblocked)
    );
    let mut problems = Vec::new();
    let named = |s: &Summary| {
        s.timer
            .as_deref()
            .is_some_and(|t| t.contains("behind a blocking kernel"))
    };
    if !named(blocked) {
        problems.push(format!(
            "the blocked measurement's timer is {:?}",
            blocked.timer
        ));
    }
    if named(unblocked) {
        problems.push("the unblocked measurement used the blocking kernel".into());
    }
    if blocked.blocking_timeouts > 0 {
        problems.push(format!(
            "the blocking kernel timed out {} time(s)",
            blocked.blocking_timeouts
        ));
    }
    if blocked.median.partial_cmp(&unblocked.median) != Some(std::cmp::Ordering::Less) {
        problems.push("the blocked median is not below the unblocked one".into());
    }
    if problems.is_empty() {
        Ok(what)
    } else {
        Err(format!("{what}: {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::StopReason;

    fn summary(median: f64, timer: &str, timeouts: u64) -> Summary {
        Summary {
            samples: 40,
            statistics_from: None,
            calls_per_sample: 12,
            warmup_calls: 100,
            min: median * 0.9,
            p10: median * 0.95,
            median,
            p90: median * 1.1,
            max: median * 1.3,
            mean: median,
            std: 0.1,
            mad: 0.05,
            rse_median: Some(0.003),
            noise_target: Some(0.005),
            noise_target_met: true,
            stopped_by: StopReason::NoiseTarget,
            host_median: 5.1,
            host_mean: 5.2,
            elapsed: 400_000.0,
            rounds: 1,
            timer: Some(timer.into()),
            blocking_timeouts: timeouts,
        }
    }

    const BLOCKED: &str = "CUDA events behind a blocking kernel on libtorch's current stream";
    const UNBLOCKED: &str = "CUDA events on libtorch's current stream";

    #[test]
    fn the_blocked_median_must_be_lower_without_a_timeout() {
        // The first GPU run's figures: 1.64 us in the trace, 6.27 us timed unblocked.
        let detail =
            judge_blocking(&summary(1.7, BLOCKED, 0), &summary(6.27, UNBLOCKED, 0)).unwrap();
        assert!(
            detail.contains("1.70 us (host 5.10 us, 12 calls/sample, 40 samples) behind"),
            "{detail}"
        );
        assert!(detail.contains("6.27 us"), "{detail}");
        for (blocked, unblocked, expected) in [
            (
                summary(6.3, BLOCKED, 0),
                summary(6.27, UNBLOCKED, 0),
                "not below",
            ),
            (
                summary(1.7, BLOCKED, 1),
                summary(6.27, UNBLOCKED, 0),
                "timed out 1 time(s)",
            ),
            (
                summary(1.7, UNBLOCKED, 0),
                summary(6.27, UNBLOCKED, 0),
                "blocked measurement's timer",
            ),
            (
                summary(1.7, BLOCKED, 0),
                summary(6.27, BLOCKED, 0),
                "unblocked measurement used",
            ),
            (
                summary(f64::NAN, BLOCKED, 0),
                summary(6.27, UNBLOCKED, 0),
                "not below",
            ),
        ] {
            let err = judge_blocking(&blocked, &unblocked).unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
