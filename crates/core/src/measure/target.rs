//! What is measured.
//!
//! A target runs batches of identical calls and reports how long each batch took by its own
//! means (CUDA events on a GPU, the monotonic clock on the CPU). The core never puts a clock
//! around the work, because only the target knows where the work really starts and ends
//! (asynchronous GPU launches finish long after the host call returns).

use std::time::Duration;

use super::MeasureError;

/// The timing of one batch of calls, as the target measured it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchTiming {
    /// Total time of the whole batch as the device measured it: CUDA events around the batch
    /// on a GPU, the monotonic clock around the batch on the CPU.
    pub device: Duration,
    /// Host time spent issuing the calls of the batch (the dispatch cost). On a synchronous
    /// CPU target this is normally equal to `device`.
    pub host: Duration,
}

/// Something the measurement core can time.
pub trait Target {
    /// Run `calls` identical calls back to back (`calls >= 1`) and report the batch's total
    /// device and host time. The core divides by `calls` to get per-call times.
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError>;

    /// Called before every sample, outside the timed region (for example to flush caches for
    /// a cold measurement). Not called during warm-up. Its time counts against the
    /// measurement's wall-clock budget but never towards the samples.
    fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        Ok(())
    }
}
