//! The re-run step in real time (`replay sequence`, compare's sequence stage): after the
//! per-op runs, the same rebuilt ops are called back to back as one call of the measurement
//! core ([`RealTimeStep`]: no timing between ops, no blocking kernel, replay's bookkeeping all
//! done before), with warm-up and the sequence's stopping rule; then replay's own cost per op
//! is measured by the same loop over as many no-ops and empty dispatcher calls.

use std::fmt::Write as _;
use std::time::Duration;

use crate::error::Context as _;

use crate::device::Device;
use crate::measure::{measure_detailed, MeasureConfig, MonotonicClock, Target};
use crate::replay::real_time::{empty_calls, NoOp, RealTimeStep, EMPTY_OP};
use replay_core::results::sequence::{RealTime, Spread};

use super::observer::{Observer, Stage};

/// Time budget of each loop that measures replay's own cost per op (a pass over the step's
/// count of no-ops or empty calls lasts microseconds to a few milliseconds).
const OVERHEAD_BUDGET: Duration = Duration::from_millis(250);

/// What the per-op runs tell the real-time step.
#[derive(Debug, Clone, Copy)]
pub struct PerOpRuns {
    /// The sum of the ops' median host times in their places (µs).
    pub ops_host_us: f64,
    /// The trace time of the entries that could not be rebuilt (µs).
    pub unrebuilt_trace_us: f64,
}

/// Runs `ops` (the rebuilt ops of the step, in order, each already run in place) back to
/// back on the measurement core under `config`, one run per sample, and measures replay's
/// own cost per op in that loop on `device`'s host.
pub fn measure(
    ops: Vec<Box<dyn Target>>,
    per_op: PerOpRuns,
    device: &Device,
    config: &MeasureConfig,
    observer: &mut dyn Observer,
) -> crate::Result<RealTime> {
    let count = ops.len();
    if count == 0 {
        return Err(crate::Error::Failed(
            "no rebuilt op to run in real time".into(),
        ));
    }
    observer.stage_started(
        Stage::Sequence,
        &format!(
            "running the step's {count} rebuilt ops back to back in real time, one timing \
             around the whole step"
        ),
    );
    let mut step = RealTimeStep::new(ops);
    let measured = measure_detailed(&mut step, config, &MonotonicClock::new())
        .context("running the step in real time")?;
    drop(step);
    observer.stage_finished(Stage::Sequence);
    let (Some(step_us), Some(host_us)) = (
        Spread::of(&measured.device_us),
        Spread::of(&measured.host_us),
    ) else {
        return Err(crate::Error::Failed(
            "the step in real time gave no samples".into(),
        ));
    };

    let (loop_us, empty_us) = overhead(count, device).context("measuring replay's own loop")?;
    let summary = &measured.summary;
    Ok(RealTime {
        ops: count,
        timer: summary
            .timer
            .clone()
            .unwrap_or_else(|| "monotonic clock".into()),
        step_us,
        host_us,
        step_ops_us: step_us.median_us + per_op.unrebuilt_trace_us,
        warmup_runs: summary.warmup_calls,
        stopped_by: summary.stopped_by,
        ops_host_us: per_op.ops_host_us,
        step_minus_ops_us_per_op: (host_us.median_us - per_op.ops_host_us) / count as f64,
        replay_overhead_us_per_op: empty_us,
        loop_us_per_op: loop_us,
        empty_op: EMPTY_OP.into(),
    })
}

/// Replay's loop over `count` ops, per op (µs): with every op a no-op, and with every op an
/// empty dispatcher call made as replay makes its calls (on a tensor of `device`, on the
/// host: the empty op launches nothing).
fn overhead(count: usize, device: &Device) -> crate::Result<(f64, f64)> {
    let config = MeasureConfig::with_time_budget(OVERHEAD_BUDGET);
    let per_op = |ops: Vec<Box<dyn Target>>| -> crate::Result<f64> {
        let mut step = RealTimeStep::new(ops);
        let measured = measure_detailed(&mut step, &config, &MonotonicClock::new())?;
        Ok(measured.summary.median / count as f64)
    };
    let loop_us = per_op(
        (0..count)
            .map(|_| Box::new(NoOp) as Box<dyn Target>)
            .collect(),
    )?;
    let cpu = match device {
        Device::Cpu(_) => device,
        Device::Cuda(_) => Device::host(),
    };
    let calls = empty_calls(count, device, cpu).map_err(|e| {
        crate::Error::Failed(format!("preparing {count} empty {EMPTY_OP} calls: {e:?}"))
    })?;
    let empty_us = per_op(calls)?;
    Ok((loop_us, empty_us))
}

/// The summary's lines for the step in real time, against the trace's ops (`trace_ops_us`).
pub fn summary_lines(real_time: &RealTime, trace_ops_us: f64, unrebuilt_trace_us: f64) -> String {
    let mut out = String::new();
    let step = &real_time.step_us;
    let _ = writeln!(
        out,
        "the step in real time        {:>12.1} us   (median of {} runs; p10 {:.1}, p90 {:.1}; \
         {}: one timing around the {} ops called back to back)",
        step.median_us, step.samples, step.p10_us, step.p90_us, real_time.timer, real_time.ops
    );
    if real_time.host_us != *step {
        let _ = writeln!(
            out,
            "  the host issuing it        {:>12.1} us   (median; p10 {:.1}, p90 {:.1})",
            real_time.host_us.median_us, real_time.host_us.p10_us, real_time.host_us.p90_us
        );
    }
    let _ = writeln!(
        out,
        "  the ops' own host times    {:>12.1} us   (summed, each in its place: the step is \
         {:+.3} us per op beside them)",
        real_time.ops_host_us, real_time.step_minus_ops_us_per_op
    );
    let _ = writeln!(
        out,
        "  replay's own cost per op   {:>12.3} us   (the loop with every op an empty {} call; \
         the loop alone {:.4} us)",
        real_time.replay_overhead_us_per_op, real_time.empty_op, real_time.loop_us_per_op
    );
    if unrebuilt_trace_us > 0.0 {
        let _ = writeln!(
            out,
            "the step's ops, in real time {:>12.1} us   (ops not rebuilt at their trace time; \
             trace: {:.1} us of ops, {:+.1}%)",
            real_time.step_ops_us,
            trace_ops_us,
            replay_core::predict::error_percent(real_time.step_ops_us, trace_ops_us)
        );
    } else {
        let _ = writeln!(
            out,
            "  against the trace's ops                   {:+.1}%   ({:.1} us)",
            replay_core::predict::error_percent(real_time.step_ops_us, trace_ops_us),
            trace_ops_us
        );
    }
    out
}
