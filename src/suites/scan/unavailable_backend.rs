//! A backend that this machine does not have (the seed's `triton*` on a machine without a
//! CUDA device): every case it is given becomes a `not_implemented` row that says why, as the
//! seed writes a row for a backend it cannot run, and the run goes on with the others.

use super::{PreparedScan, ScanBackend, ScanError, ScanProblem, Semiring};

#[derive(Debug, Clone)]
pub struct UnavailableBackend {
    /// Why it cannot run here: the message of each of its rows.
    pub reason: String,
}

impl ScanBackend for UnavailableBackend {
    fn name(&self) -> &'static str {
        "unavailable"
    }

    fn prepare<'p>(
        &self,
        _problem: &ScanProblem<'p>,
        _semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
        Err(ScanError::NotImplemented(self.reason.clone()))
    }
}
