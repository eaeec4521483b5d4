//! What is measured.
//!
//! A target runs batches of identical calls and says where they run ([`Placement`]); the core
//! picks the timer from that (the monotonic clock on the host, CUDA events on the target's
//! stream) and times the batch around the calls. A target never reads a clock: at most, one
//! whose calls hold untimed setup marks which part of each call is timed.

use super::placement::Placement;
use super::timer::{segment, Timer};
use super::MeasureError;

/// Something the measurement core can time.
pub trait Target {
    /// Where the calls run: the core times them there. Wrappers must pass on the placement
    /// of what they wrap.
    fn placement(&self) -> Placement<'_>;

    /// Run `calls` identical calls back to back (`calls >= 1`). The core divides the batch's
    /// time by `calls` to get per-call times.
    fn run(&mut self, calls: u64) -> Result<(), MeasureError>;

    /// Run `calls` calls under `timer`. By default the whole batch is one timed segment
    /// around [`Target::run`]. A target whose calls hold untimed setup (the scan's backward
    /// runs an untimed forward first) or that must wait for earlier work before the timed part
    /// overrides this, and times each call's timed part as a segment ([`segment`]); the
    /// segments add up. It never chooses the timer.
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        segment(timer, || self.run(calls))
    }

    /// Called before every sample, outside the timed region (for example to flush caches for
    /// a cold measurement). Not called during warm-up. Its time counts against the
    /// measurement's wall-clock budget but never towards the samples.
    fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        Ok(())
    }
}
