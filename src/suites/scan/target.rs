//! A prepared scan as a measurement-core target, for `replay bench scan` and `replay scan
//! --time`: the backend times its own calls (the monotonic clock on the CPU, CUDA events on a
//! GPU), so the core never puts a clock around them; for `backward` only the backward part of
//! each call is timed. The core warms up, batches and samples it like every other target.

use replay_core::measure::{BatchTiming, MeasureError, Target};

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
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        match self.scan.run_timed(self.phase, calls) {
            Ok(time) => Ok(BatchTiming {
                device: time,
                host: time,
            }),
            Err(e) => {
                let message = e.to_string();
                self.failure = Some(e);
                Err(MeasureError::target(message))
            }
        }
    }
}
