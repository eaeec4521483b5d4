//! The scan benchmark as a [`Suite`] of the core's runner: the seed's grid and skip rules,
//! each case drawn, prepared on its backend, checked against the float64 reference, timed,
//! and its memory peak read, all within one call (the prepared scan borrows the case's
//! inputs, which live only as long as the case).

use std::cell::RefCell;
use std::time::Duration;

use replay_core::export::rows::Row;
use replay_core::measure::{Measurement, Target, Timing};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::check::{check_output, CheckOutcome};
use super::grid::{ScanCase, ScanGrid};
use super::inputs::SeededInputs;
use super::rows::{self, COLUMNS};
use super::skip_rule::skip_reason;
use crate::suites::scan::target::ScanTarget;
use crate::suites::scan::{MemoryPeak, Phase, ScanBackend, ScanError, ScanProblem};

/// How the cases are run, besides the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchSettings {
    /// `--max-memory-gb`: skip a case whose estimate is larger.
    pub max_memory_gb: f64,
    /// The largest edge tensor (values) checked against the reference.
    pub check_limit: usize,
}

/// What the last case left besides its row: its measured memory peak and what the reference
/// check did.
#[derive(Debug, Clone, Default)]
struct CaseNotes {
    peak: Option<MemoryPeak>,
    check: Option<String>,
    row: Option<Row>,
}

pub struct ScanBenchSuite {
    grid: ScanGrid,
    /// One per name of `grid.backends`, same order.
    backends: Vec<Box<dyn ScanBackend>>,
    settings: BenchSettings,
    inputs: RefCell<SeededInputs>,
    notes: RefCell<CaseNotes>,
}

impl ScanBenchSuite {
    /// `backends` are the opened `grid.backends`, in the same order; `inputs` the seeded
    /// generator the cases draw from.
    pub fn new(
        grid: ScanGrid,
        backends: Vec<Box<dyn ScanBackend>>,
        settings: BenchSettings,
        inputs: SeededInputs,
    ) -> Result<Self, ScanError> {
        if backends.len() != grid.backends.len() {
            return Err(ScanError::InvalidInput(format!(
                "{} backends opened for {} names",
                backends.len(),
                grid.backends.len()
            )));
        }
        Ok(ScanBenchSuite {
            grid,
            backends,
            settings,
            inputs: RefCell::new(inputs),
            notes: RefCell::new(CaseNotes::default()),
        })
    }

    /// What the reference check of the case that just ended did (`None` for a case that did
    /// not get as far).
    pub fn last_check(&self) -> Option<String> {
        self.notes.borrow().check.clone()
    }

    /// The row of the case that just ended.
    pub fn last_row(&self) -> Option<Row> {
        self.notes.borrow().row.clone()
    }

    fn check(
        &self,
        case: &ScanCase,
        problem: &ScanProblem,
        scan: &mut dyn crate::suites::scan::PreparedScan,
    ) -> Result<Result<String, String>, CaseError> {
        if problem.edge.len() > self.settings.check_limit {
            return Ok(Ok(format!(
                "reference check skipped: {} edge values > --check-limit {}",
                problem.edge.len(),
                self.settings.check_limit
            )));
        }
        let output = scan.run_once(case.phase).map_err(case_error)?;
        let verdict = check_output(problem, case.semiring, case.phase, &output);
        Ok(verdict.map(|CheckOutcome::Passed { grad_checked }| {
            if grad_checked {
                "checked: values and gradient match the float64 reference".into()
            } else if case.phase != Phase::Forward {
                "checked: values match the float64 reference (it has no gradient of this semiring)"
                    .into()
            } else {
                "checked: values match the float64 reference".into()
            }
        }))
    }
}

impl Suite for ScanBenchSuite {
    type Case = ScanCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<ScanCase> {
        self.grid.cases()
    }

    fn skip(&self, case: &ScanCase, done: &[(ScanCase, CaseStatus)]) -> Option<String> {
        // Every case passes here first: the notes start empty for each.
        *self.notes.borrow_mut() = CaseNotes::default();
        skip_reason(case, done, self.settings.max_memory_gb)
    }

    fn measure_case(
        &self,
        case: &ScanCase,
        _device: &(),
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        let dims = case.dims();
        let edge = self
            .inputs
            .borrow_mut()
            .next_edge(dims)
            .map_err(case_error)?;
        let problem = ScanProblem::new(dims, &edge, None).map_err(|e| case_error(e.into()))?;
        let backend = self.backends.get(case.backend).ok_or_else(|| {
            CaseError::new(
                CaseStatus::Error,
                format!("no backend {}", case.backend_name),
            )
        })?;
        let mut scan = backend
            .prepare(&problem, case.semiring)
            .map_err(case_error)?;
        // A backend error in the checking run is the row's own status, not a check result.
        let checked = self.check(case, &problem, scan.as_mut())?;
        self.notes.borrow_mut().check = Some(match &checked {
            Ok(note) => note.clone(),
            Err(wrong) => format!("reference check failed: {wrong}"),
        });
        if let Err(wrong) = checked {
            return Err(CaseError::new(
                CaseStatus::Error,
                format!("wrong result: {wrong}"),
            ));
        }
        scan.reset_peak_memory();
        let mut target = ScanTarget::new(scan.as_mut(), case.phase);
        let measured = time(&mut target);
        let failure = target.failure.take();
        match measured {
            Ok(m) => {
                self.notes.borrow_mut().peak = measured_peak(scan.peak_memory());
                Ok(m)
            }
            Err(e) => Err(failure.map(case_error).unwrap_or(e)),
        }
    }

    fn row(&self, case: &ScanCase, outcome: &CaseOutcome) -> Row {
        let row = rows::row(case, outcome, self.notes.borrow().peak);
        self.notes.borrow_mut().row = Some(row.clone());
        row
    }

    /// The seed's words (`success`, `not_tested`) read back for the skip rule.
    fn row_status(&self, row: &Row) -> CaseStatus {
        let word = row.get("status").and_then(|v| v.as_str()).unwrap_or("");
        CaseStatus::ALL
            .into_iter()
            .find(|s| crate::suites::scan::status::seed_status(*s) == word)
            .unwrap_or(CaseStatus::Error)
    }
}

/// A peak of zero bytes is no measurement (every backend holds at least its outputs): such
/// a backend does not count its memory, and its cells stay empty.
fn measured_peak(peak: MemoryPeak) -> Option<MemoryPeak> {
    (peak.allocated > 0 || peak.reserved > 0).then_some(peak)
}

/// A backend's error as the row's status, as the seed sorts them: out of memory (by kind, or
/// by "out of memory" in the message as the seed matches), not implemented, else error.
pub fn case_error(e: ScanError) -> CaseError {
    let message = e.to_string();
    let status = match e {
        ScanError::OutOfMemory(_) => CaseStatus::Oom,
        ScanError::NotImplemented(_) => CaseStatus::NotImplemented,
        _ if message.to_lowercase().contains("out of memory") => CaseStatus::Oom,
        _ => CaseStatus::Error,
    };
    CaseError::new(status, message)
}

/// The timing of one case: at least one warm-up call, at least `repeats` samples, then the
/// core's rule (relative error of the median ≤ 0.5 % or `budget` spent). There is no time cap
/// below `repeats` samples: a slow case takes its `repeats` samples whatever they cost, as
/// the seed's do.
pub fn case_timing(repeats: usize, budget: Duration) -> Timing {
    Timing::grid(repeats, budget)
}
