//! The measurement core: times anything that can run a batch of calls, the same way for every
//! replay tier and every later suite.
//!
//! Modelled on NVIDIA nvbench: the core is separate from what it measures.
//! - A [`Target`] only runs batches of calls, says where they run ([`Placement`]: the host, or
//!   a device stream) and can prepare each sample outside the timed region (cache flushing for
//!   cold runs).
//! - The core picks the [`Timer`] from the placement, one implementation of each kind: the
//!   monotonic clock around the batch on the host ([`ClockTimer`]); on a device stream, the
//!   stream's own timer, CUDA events on that stream with the host's dispatch time measured
//!   separately. Each batch is run inside it ([`TimedTarget`]) and reports device and host
//!   time. A target whose calls hold untimed setup (the scan's backward after its untimed
//!   forward) marks the timed part of each call as a [`segment`]; the segments add up.
//! - [`measure`] warms up, batches short calls so each sample lasts at least 20 µs (per-call
//!   times are the batch time divided by the calls), and samples until a pluggable
//!   [`StoppingRule`] says stop; by default [`StopCriteria`]: relative standard error of the
//!   median ≤ 0.5 % or a 0.5 s budget spent, with at least 10 samples, under a hard cap.
//!   [`MeasureConfig::fixed_runs`] instead takes exactly W warm-up calls and N one-call samples
//!   (`--warmup W --runs N`: the whole model is timed this way).
//! - The result is a [`Summary`] (serde, microseconds) that printers render; which rule
//!   stopped the run and whether the noise target was met are part of it.
//! - Many targets can be measured in interleaved rounds
//!   ([`interleave::measure_interleaved`], each round's configuration from
//!   [`Timing::round_configs`]) whose samples [`Measurement::add_round`] pools, so that each
//!   median spans the whole run on a machine whose speed drifts, and the targets' medians
//!   compare with each other.
//! - The CUDA-event timer lives with the CUDA code (`replay::measure::cuda_timing` in the
//!   libtorch layer, a [`DeviceStream`] that makes it): this core has no GPU dependency.
//! - A [`Clock`] is read only for the time budget, so tests run the whole loop on a
//!   [`SyntheticClock`], with fake targets on a [`SyntheticStream`] whose timer reads
//!   synthetic device and host time.

mod batch;
mod clock;
mod error;
pub mod interleave;
mod measurement;
mod placement;
mod runner;
pub mod stats;
pub mod stopping;
mod summarize;
mod synthetic_stream;
mod target;
mod timer;
pub mod timing;

pub use batch::TimedTarget;
pub use clock::{Clock, MonotonicClock, SyntheticClock};
pub use error::MeasureError;
pub use measurement::{Measurement, POOL_CAP};
pub use placement::{DeviceStream, Placement};
pub use runner::{measure, measure_detailed, MeasureConfig, Warmup};
pub use stats::{Stats, Summary};
pub use stopping::{
    Decision, HardCap, MinSamples, RelativeNoise, RunState, RunsWithin, StopCriteria, StopReason,
    StoppingRule, TimeBudget,
};
pub use synthetic_stream::SyntheticStream;
pub use target::Target;
pub use timer::{segment, BatchTiming, ClockTimer, Timer, Untimed};
pub use timing::{Sampling, Timing};
