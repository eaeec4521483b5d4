//! A summary from samples: the statistics of the device times and the host medians, with
//! what the measurement records besides ([`SummaryContext`]). One round's samples
//! ([`super::runner`]) and pooled rounds' ([`super::Measurement`]) are summarised alike.

use super::stats::{Stats, Summary};
use super::stopping::StopReason;
use super::MeasureError;

/// What a summary records besides the statistics of its samples.
pub(super) struct SummaryContext {
    pub calls_per_sample: u64,
    pub warmup_calls: u64,
    pub noise_target: Option<f64>,
    pub stopped_by: StopReason,
    pub elapsed_us: f64,
    pub rounds: u32,
    pub timer: Option<String>,
    pub blocking_timeouts: u64,
}

pub(super) fn summarize(
    device_us: &[f64],
    host_us: &[f64],
    ctx: SummaryContext,
) -> Result<Summary, MeasureError> {
    let (Some(device), Some(host)) = (Stats::from_samples(device_us), Stats::from_samples(host_us))
    else {
        // A measurement always takes a sample before it can stop; kept as an error rather
        // than a panic so a future change to the loop cannot crash a whole run.
        return Err(MeasureError::NoSamples);
    };
    let noise_target_met =
        matches!((device.rse_median, ctx.noise_target), (Some(rse), Some(t)) if rse <= t);
    Ok(Summary {
        samples: device.n,
        statistics_from: None,
        calls_per_sample: ctx.calls_per_sample,
        warmup_calls: ctx.warmup_calls,
        min: device.min,
        p10: device.p10,
        median: device.median,
        p90: device.p90,
        max: device.max,
        mean: device.mean,
        std: device.std,
        mad: device.mad,
        rse_median: device.rse_median,
        noise_target: ctx.noise_target,
        noise_target_met,
        stopped_by: ctx.stopped_by,
        host_median: host.median,
        host_mean: host.mean,
        elapsed: ctx.elapsed_us,
        rounds: ctx.rounds,
        timer: ctx.timer,
        blocking_timeouts: ctx.blocking_timeouts,
    })
}
