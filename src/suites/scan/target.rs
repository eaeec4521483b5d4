//! A prepared scan as a measurement-core target, for `replay bench scan` and `replay scan
//! --time`: placed where the backend runs it, so the core times it there (the monotonic clock
//! on the CPU, CUDA events on a GPU stream); the backend marks the timed part of each call
//! (for `backward`, only the backward part). The core warms up, batches and samples it like
//! every other target.

use replay_core::measure::{MeasureError, Placement, Target, Timer, Untimed};

use super::{Phase, PreparedScan, ScanError};

pub struct ScanTarget<'a> {
    pub scan: &'a mut dyn PreparedScan,
    pub phase: Phase,
    /// The backend's own error when a batch failed (an out-of-memory or a
    /// `not_implemented` must keep its kind through the core, which only sees a message).
    pub failure: Option<ScanError>,
}

impl<'a> ScanTarget<'a> {
    pub fn new(scan: &'a mut dyn PreparedScan, phase: Phase) -> Self {
        ScanTarget {
            scan,
            phase,
            failure: None,
        }
    }
}

impl Target for ScanTarget<'_> {
    fn placement(&self) -> Placement<'_> {
        self.scan.placement()
    }

    /// The calls with nothing timed.
    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        self.run_timed(calls, &mut Untimed)
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        self.scan.run_calls(self.phase, calls, timer).map_err(|e| {
            let message = e.to_string();
            self.failure = Some(e);
            MeasureError::target(message)
        })
    }
}
