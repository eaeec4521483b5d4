//! `replay bench quant` as a suite command ([`SuiteCommand`]): the grid of the seed's config
//! run case by case, rows appended to `results_<DDMMYYYY_HHMMSS>.csv` as they finish, one
//! line per case, then the seed's table.

use std::path::PathBuf;
use std::time::Instant;

use replay_core::export::rows::CsvRows;
use replay_core::measure::MonotonicClock;
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite::{CaseStatus, Suite};

use super::output::{open_results, table};
use super::{QuantSuite, COMMAND};
use crate::pipeline::{CaseReporter, Observer, ShardRecord, SuiteCommand};

pub struct QuantCommand {
    pub suite: QuantSuite,
    /// The config file, for the header.
    pub config_path: PathBuf,
    /// The CSV this run wrote (set by the run).
    csv_name: Option<String>,
}

impl QuantCommand {
    pub fn new(suite: QuantSuite, config_path: PathBuf) -> QuantCommand {
        QuantCommand {
            suite,
            config_path,
            csv_name: None,
        }
    }

    /// The devices of the config's `model_params` entries, in order, once each ("cpu",
    /// "cpu,cuda"): what every shard of a run must have run on.
    fn config_devices(&self) -> String {
        let mut devices: Vec<String> = Vec::new();
        for entry in &self.suite.config().model_params {
            let device = entry.device.short_name();
            if !devices.contains(&device) {
                devices.push(device);
            }
        }
        devices.join(",")
    }

    /// What every shard (and every resumed part) of one run shares, besides the work list
    /// (which holds the config's shapes, model types, recipes and devices).
    fn settings_json(&self) -> serde_json::Value {
        let settings = self.suite.settings();
        serde_json::json!({
            "timing": settings.timing.describe(settings.threads),
            "threads": settings.threads,
        })
    }

    /// The line of one finished case: its times and SQNR, or why it has none.
    fn outcome(&self, status: CaseStatus) -> (String, Option<replay_core::export::rows::Row>) {
        let row = self.suite.last_row();
        let text = match status {
            CaseStatus::Ok => {
                let number = |c: &str| row.as_ref().and_then(|r| r.get(c)).and_then(|v| v.as_f64());
                let ms = |c: &str| {
                    number(c)
                        .map(|v| format!("{v:.3} ms"))
                        .unwrap_or("-".into())
                };
                let sqnr = match row.as_ref().and_then(|r| r.get("sqnr_db")) {
                    Some(serde_json::Value::Null) | None => String::new(),
                    Some(v) => format!(
                        ", SQNR {} dB",
                        v.as_str().map(str::to_owned).unwrap_or(v.to_string())
                    ),
                };
                format!(
                    "ok: baseline {}, quantized {}, speedup {}x{sqnr}",
                    ms("baseline_inference_time_in_ms"),
                    ms("quantized_inference_time_in_ms"),
                    number("speedup")
                        .map(|v| format!("{v:.2}"))
                        .unwrap_or("-".into()),
                )
            }
            status => format!(
                "{}: {}",
                status.as_str(),
                row.as_ref()
                    .and_then(|r| r.get("error_msg"))
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
            ),
        };
        (text, row)
    }
}

impl SuiteCommand for QuantCommand {
    fn command(&self) -> &'static str {
        COMMAND
    }

    fn unit(&self) -> &'static str {
        "cases"
    }

    fn output_dir(&self) -> PathBuf {
        self.suite.settings().output_dir.clone()
    }

    fn identity(
        &mut self,
        _: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error> {
        Ok((
            replay_core::suite::work_list(&self.suite, COMMAND),
            self.settings_json(),
        ))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        let timing = self.suite.settings().timing;
        let threads = self.suite.settings().threads;
        let columns = self.suite.columns();
        let (mut csv, csv_path, resumed) = match (start.resumed, &start.record.rows) {
            (true, Some(rows)) => {
                let path = self.output_dir().join(&rows.file);
                let recovered =
                    replay_core::shard::recover::recover_rows(&path, rows.start, &columns, 1)?;
                observer.info(&format!(
                    "==> bench quant: {} cases already in {}, running the rest\n",
                    recovered.rows.len(),
                    path.display()
                ));
                (CsvRows::open(&path, &columns)?, path, recovered.rows)
            }
            _ => {
                let (csv, path) = open_results(&self.output_dir(), &columns)?;
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                start.remember_rows(&name, csv.end()?)?;
                (csv, path, Vec::new())
            }
        };
        self.csv_name = csv_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let all = self.suite.cases();
        let cases = shard.slice(&all);
        let header = format!(
            "{} cases{} from {}, {}, writing {}",
            cases.len(),
            if shard == Shard::WHOLE {
                String::new()
            } else {
                format!(" (shard {shard} of the grid's {})", all.len())
            },
            self.config_path.display(),
            timing.describe(threads),
            csv_path.display()
        );
        let names = cases.iter().map(|c| c.describe()).collect();
        let mut reporter = CaseReporter::start(observer, COMMAND, &header, names);
        for (entry, why) in self.suite.device_problems() {
            // Said even with --quiet: these rows have no numbers, and why must not be missed.
            reporter.observer().result(&format!(
                "model_params[{entry}] ({}): {why}; its rows are skipped\n",
                self.suite.config().model_params[entry].device.short_name()
            ));
        }
        let started = Instant::now();
        let mut rows = resumed.clone();
        let tally = replay_core::suite::run_resumed(
            &self.suite,
            shard,
            &resumed,
            &(),
            &timing.measure_config(),
            &MonotonicClock::new(),
            &mut csv,
            |p| {
                let (text, row) = self.outcome(p.status);
                reporter.finished(p.index, &text);
                rows.extend(row);
            },
        )?;
        drop(reporter);
        observer.result(&format!(
            "\nBenchmark Results:\n{}\n\nbench quant: {} cases in {:.1} s: {} ok, {} not implemented, {} skipped, {} error, {} oom\nResults saved to {}\n",
            table(&rows),
            cases.len(),
            started.elapsed().as_secs_f64(),
            tally.ok,
            tally.not_implemented,
            tally.skipped,
            tally.error,
            tally.oom,
            csv_path.display()
        ));
        Ok(())
    }

    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
        Ok(Some(ShardRecord {
            device: self.config_devices(),
            work_list: replay_core::suite::work_list(&self.suite, COMMAND),
            settings: self.settings_json(),
            files: self.csv_name.clone().into_iter().collect(),
        }))
    }
}
