//! A calibration as a suite ([`Suite`]) of the one runner (`replay_core::suite::run_resumed`):
//! its cases are the work items ([`super::items`]), each measuring one or more profile keys,
//! and a case's row is its journal entry ([`super::journal`]), which the profile's sink
//! ([`super::sink`]) appends to the journal and merges into the rewritten profile. The runner
//! owns the shard's slice, `--resume`'s finished items, the stop between items and the tally.

use replay_core::export::rows::Row;
use replay_core::measure::{Measurement, Target};
use replay_core::shard::WorkList;
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::items::{work_items, WorkItem};
use super::journal::{JournalEntry, COLUMNS};
use super::peaks::Peaks;
use super::run::{CalibrateOptions, COMMAND};
use crate::device::Device;

/// The work list a calibration (and each of its shards) records: every item's label, in
/// order, as the runner's [`Suite::case_id`] gives it.
pub fn work_list(options: &CalibrateOptions) -> WorkList {
    WorkList::new(
        COMMAND,
        work_items(options).iter().map(WorkItem::label).collect(),
    )
}

/// The calibration `options` ask for, against the device's `peaks`.
pub struct CalibrateSuite<'o> {
    options: &'o CalibrateOptions,
    peaks: Peaks,
}

impl<'o> CalibrateSuite<'o> {
    pub fn new(options: &'o CalibrateOptions, peaks: Peaks) -> CalibrateSuite<'o> {
        CalibrateSuite { options, peaks }
    }
}

impl Suite for CalibrateSuite<'_> {
    type Case = WorkItem;
    type Device = Device;

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<WorkItem> {
        work_items(self.options)
    }

    fn case_id(&self, case: &WorkItem) -> String {
        case.label()
    }

    fn unit(&self) -> &'static str {
        "measurements"
    }

    /// Measures the item (it times its own work, with the seed's warm-ups and trials): its
    /// journal entry is its row, an error when one of its results failed.
    fn run_case(
        &self,
        case: &WorkItem,
        device: &Device,
        _: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> (CaseStatus, Row) {
        let results = case
            .measure(device, self.options, &self.peaks)
            .into_iter()
            .map(|(key, r)| (key, r.map_err(|e| e.to_string())))
            .collect();
        let entry = JournalEntry::of(&case.label(), results);
        (status(&entry), entry.to_row())
    }

    /// The row of an item the runner did not measure: its one result, under its label, is
    /// why not.
    fn row(&self, case: &WorkItem, outcome: &CaseOutcome) -> Row {
        let why = match outcome {
            CaseOutcome::Failed(e) => e.message.clone(),
            CaseOutcome::Measured(_) => "measured as one timed target, which no calibration \
                                         item is"
                .to_string(),
        };
        JournalEntry::of(&case.label(), vec![(case.label(), Err(why))]).to_row()
    }

    fn row_status(&self, row: &Row) -> CaseStatus {
        JournalEntry::from_row(row).map_or(CaseStatus::Error, |entry| status(&entry))
    }
}

/// An item is an error when one of its results failed.
fn status(entry: &JournalEntry) -> CaseStatus {
    if entry.any_failed() {
        CaseStatus::Error
    } else {
        CaseStatus::Ok
    }
}
