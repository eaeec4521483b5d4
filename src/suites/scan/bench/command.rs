//! `replay bench scan` as a suite command ([`SuiteCommand`]): the grid case by case, each row
//! written to the seed's three files as it ends, one line per case, then the tally.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use replay_core::measure::MonotonicClock;
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite::{CaseStatus, RunTally, Suite};

use super::outputs::{FULL_CSV, HEATMAP_JSON, MEMORY_BREAKDOWN_CSV};
use super::{ScanBenchSuite, ScanOutputs, COMMAND};
use crate::pipeline::{CaseReporter, Observer, ShardRecord, SuiteCommand};
use crate::suites::scan::status::{seed_status, SUCCESS};
use replay_core::measure::MeasureConfig;

pub struct ScanCommand {
    pub suite: ScanBenchSuite,
    pub config: MeasureConfig,
    /// The device the backends opened on, as shard.json and the header name it.
    pub device: String,
    pub output_dir: PathBuf,
    /// What every shard of one run shares, besides the grid (the work list).
    pub settings: serde_json::Value,
}

impl ScanCommand {
    /// The line of one finished case: its median and its check, or why it has none.
    fn outcome(&self, status: CaseStatus) -> String {
        let row = self.suite.last_row();
        let outcome = match status {
            CaseStatus::Ok => row
                .as_ref()
                .and_then(|r| r.get("time_ms_median"))
                .map(|t| format!("success {t} ms"))
                .unwrap_or_else(|| SUCCESS.into()),
            status => {
                let reason = row
                    .as_ref()
                    .and_then(|r| r.get("error_msg"))
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
                    .to_string();
                format!("{}: {reason}", seed_status(status))
            }
        };
        let check = self
            .suite
            .last_check()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        format!("{outcome}{check}")
    }
}

impl SuiteCommand for ScanCommand {
    fn command(&self) -> &'static str {
        COMMAND
    }

    fn unit(&self) -> &'static str {
        "cases"
    }

    fn output_dir(&self) -> PathBuf {
        self.output_dir.clone()
    }

    fn identity(
        &mut self,
        _: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error> {
        Ok((
            replay_core::suite::work_list(&self.suite, COMMAND),
            self.settings.clone(),
        ))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        let (mut outputs, resumed) = if start.resumed {
            let from = start.record.rows.as_ref().map_or(0, |r| r.start);
            ScanOutputs::resume(&self.output_dir, from)?
        } else {
            let outputs = ScanOutputs::create(&self.output_dir)?;
            start.remember_rows(FULL_CSV, outputs.rows_start()?)?;
            (outputs, Vec::new())
        };
        let all = self.suite.cases();
        let cases = shard.slice(&all);
        if start.resumed {
            observer.info(&format!(
                "==> bench scan: {} of {} cases already in {}, running the rest\n",
                resumed.len(),
                cases.len(),
                self.output_dir.join(FULL_CSV).display()
            ));
        }
        let header = format!(
            "{} cases{} on {}, writing to {}",
            cases.len(),
            if shard == Shard::WHOLE {
                String::new()
            } else {
                format!(" (shard {shard} of the grid's {})", all.len())
            },
            self.device,
            outputs.dir().display()
        );
        let names = cases.iter().map(|c| c.describe()).collect();
        let mut reporter = CaseReporter::start(observer, COMMAND, &header, names);
        let started = Instant::now();
        let tally = replay_core::suite::run_resumed(
            &self.suite,
            shard,
            &resumed,
            &(),
            &self.config,
            &MonotonicClock::new(),
            &mut outputs,
            |p| reporter.finished(p.index, &self.outcome(p.status)),
        )?;
        drop(reporter);
        observer.result(&summary(&tally, started.elapsed(), &outputs));
        Ok(())
    }

    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
        Ok(Some(ShardRecord {
            device: self.device.clone(),
            work_list: replay_core::suite::work_list(&self.suite, COMMAND),
            settings: self.settings.clone(),
            files: [FULL_CSV, HEATMAP_JSON, MEMORY_BREAKDOWN_CSV]
                .map(String::from)
                .to_vec(),
        }))
    }
}

/// One line per status, then where the files are.
fn summary(tally: &RunTally, elapsed: Duration, outputs: &ScanOutputs) -> String {
    let total = tally.ok + tally.oom + tally.error + tally.not_implemented + tally.skipped;
    let mut text = format!(
        "bench scan: {total} cases in {:.1} s\n",
        elapsed.as_secs_f64()
    );
    for (status, count) in [
        (CaseStatus::Ok, tally.ok),
        (CaseStatus::Oom, tally.oom),
        (CaseStatus::Error, tally.error),
        (CaseStatus::NotImplemented, tally.not_implemented),
        (CaseStatus::Skipped, tally.skipped),
    ] {
        text.push_str(&format!("  {:<16}{count}\n", seed_status(status)));
    }
    text.push_str(&format!(
        "results: {}/{{{FULL_CSV}, {HEATMAP_JSON}, {MEMORY_BREAKDOWN_CSV}}}\n",
        outputs.dir().display(),
    ));
    text
}
