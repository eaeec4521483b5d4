//! The journal of `replay isolated`: one line per replay unit per round, with the round's
//! raw samples (or the unit's error) and, in the last round, its energy. `isolated.json` is
//! rewritten whole after every unit, so it cannot say which (round, unit) pairs are done; the
//! journal can. `--resume` takes each journaled pair back instead of measuring it again and
//! pools the rounds as the first run would have, so a unit whose rounds were all journaled
//! gets the very numbers the killed run had.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::energy::EnergySummary;
use crate::measure::{Measurement, Summary};
use replay_core::shard::journal::Journal;

use super::registry::SetupError;

/// The journal's name in the output folder.
pub const JOURNAL_FILE: &str = "isolated.journal.jsonl";

/// What one round of one unit gave.
pub type UnitRound = (
    Result<(Measurement, String), SetupError>,
    Option<Result<EnergySummary, String>>,
);

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kept {
    Measured {
        summary: Box<Summary>,
        device_us: Vec<f64>,
        host_us: Vec<f64>,
        method: String,
    },
    Unsupported(String),
    Failed(String),
    Oom(String),
}

#[derive(Serialize, Deserialize)]
struct Entry {
    round: u32,
    /// The unit's lead signature id (its id in the work list).
    unit: String,
    outcome: Kept,
    #[serde(default)]
    energy: Option<Result<EnergySummary, String>>,
}

/// An open journal and what a resumed run found in it.
pub struct IsolatedJournal {
    path: PathBuf,
    journal: Journal,
    found: HashMap<(u32, String), Entry>,
    /// The first write that failed (a full disk): the run stops at the next unit.
    pub error: Option<replay_core::Error>,
    /// `--op-timeout`: armed while each unit is measured.
    pub watchdog: Option<super::op_watchdog::OpWatchdog>,
}

impl IsolatedJournal {
    /// Opens `dir`'s journal: resuming, its whole entries are kept for [`Self::take`];
    /// otherwise it starts empty.
    pub fn open(dir: &Path, resume: bool) -> replay_core::Result<IsolatedJournal> {
        let path = dir.join(JOURNAL_FILE);
        let (journal, entries) = Journal::open(&path, resume)?;
        let mut found = HashMap::new();
        for value in entries {
            let entry: Entry =
                serde_json::from_value(value).map_err(|e| replay_core::Error::BadInput {
                    path: path.clone(),
                    message: format!("--resume: not an entry of replay isolated's journal: {e}"),
                })?;
            found.insert((entry.round, entry.unit.clone()), entry);
        }
        Ok(IsolatedJournal {
            path,
            journal,
            found,
            error: None,
            watchdog: None,
        })
    }

    /// How many (round, unit) pairs the resumed run found.
    pub fn found(&self) -> usize {
        self.found.len()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Round `round` of `unit`, if the run being resumed journaled it.
    pub fn take(&mut self, round: u32, unit: &str) -> Option<UnitRound> {
        let entry = self.found.remove(&(round, unit.to_string()))?;
        let result = match entry.outcome {
            Kept::Measured {
                summary,
                device_us,
                host_us,
                method,
            } => Ok((
                Measurement {
                    summary: *summary,
                    device_us,
                    host_us,
                },
                method,
            )),
            Kept::Unsupported(m) => Err(SetupError::Unsupported(m)),
            Kept::Failed(m) => Err(SetupError::Failed(m)),
            Kept::Oom(m) => Err(SetupError::Oom(m)),
        };
        Some((result, entry.energy))
    }

    /// Journals round `round` of `unit`; a write that fails is kept in [`Self::error`].
    pub fn record(&mut self, round: u32, unit: &str, outcome: &UnitRound) {
        if self.error.is_some() {
            return;
        }
        let kept = match &outcome.0 {
            Ok((m, method)) => Kept::Measured {
                summary: Box::new(m.summary.clone()),
                device_us: m.device_us.clone(),
                host_us: m.host_us.clone(),
                method: method.clone(),
            },
            Err(SetupError::Unsupported(m)) => Kept::Unsupported(m.clone()),
            Err(SetupError::Failed(m)) => Kept::Failed(m.clone()),
            Err(SetupError::Oom(m)) => Kept::Oom(m.clone()),
        };
        let entry = Entry {
            round,
            unit: unit.into(),
            outcome: kept,
            energy: outcome.1.clone(),
        };
        if let Err(e) = self.journal.append(&entry) {
            self.error = Some(e);
        }
    }
}
