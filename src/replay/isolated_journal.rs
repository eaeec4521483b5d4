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
        /// The round's share of its unit's pool ([`Measurement::share_for`]): samples
        /// taken, and which of them are kept (journals without these hold all of them).
        #[serde(default)]
        taken: Option<usize>,
        #[serde(default = "one")]
        stride: usize,
        #[serde(default)]
        offset: usize,
        method: String,
    },
    Unsupported(String),
    Failed(String),
    Oom(String),
}

fn one() -> usize {
    1
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
    /// A window of a windowed run (`replay isolated` on a file of many signatures): its rows are
    /// built once the window is done, not after every unit.
    pub windowed: bool,
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
            windowed: false,
        })
    }

    /// Starts the journal afresh, forgetting what it found: a windowed run's journal holds
    /// the window in progress only (the windows before it are in its rows file).
    pub fn restart(&mut self) -> replay_core::Result<()> {
        let (journal, _) = Journal::open(&self.path, false)?;
        self.journal = journal;
        self.found.clear();
        Ok(())
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
                taken,
                stride,
                offset,
                method,
            } => Ok((
                Measurement {
                    summary: *summary,
                    taken: taken.unwrap_or(device_us.len()),
                    stride,
                    offset,
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
                taken: Some(m.taken),
                stride: m.stride,
                offset: m.offset,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure_detailed, MeasureConfig, SyntheticClock, SyntheticStream};
    use crate::measure::{MeasureError, Placement, Target, POOL_CAP};
    use std::time::Duration;

    struct Steps(SyntheticStream, u64);

    impl Target for Steps {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.0)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                self.1 += 1;
                self.0
                    .device()
                    .advance(Duration::from_nanos(1000 + self.1 % 7));
            }
            Ok(())
        }
    }

    #[test]
    fn a_pooled_rounds_share_comes_back_from_the_journal_as_it_was_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let clock = SyntheticClock::new();
        let mut target = Steps(SyntheticStream::on(&clock), 0);
        let mut pool = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(0, POOL_CAP + 3),
            &clock,
        )
        .unwrap();
        pool.bound_pool();
        let round =
            measure_detailed(&mut target, &MeasureConfig::fixed_runs(0, 1001), &clock).unwrap();
        let share = pool.share_for(round).unwrap();
        assert_eq!(
            (share.stride, share.offset, share.taken),
            (2, POOL_CAP + 3, 1001)
        );

        let mut journal = IsolatedJournal::open(dir.path(), false).unwrap();
        journal.record(0, "u0", &(Ok((pool.clone(), "m".into())), None));
        journal.record(1, "u0", &(Ok((share.clone(), "m".into())), None));
        drop(journal);

        let mut resumed = IsolatedJournal::open(dir.path(), true).unwrap();
        assert_eq!(resumed.found(), 2);
        let Some((Ok((first, _)), None)) = resumed.take(0, "u0") else {
            panic!("round 0 not journaled")
        };
        let Some((Ok((second, _)), None)) = resumed.take(1, "u0") else {
            panic!("round 1 not journaled")
        };
        assert_eq!((first, second.clone()), (pool.clone(), share.clone()));
        let mut live = pool.clone();
        live.add_round(share).unwrap();
        let mut back = pool;
        back.add_round(second).unwrap();
        assert_eq!(back, live);
    }
}
