//! `replay bench quant` as a suite command ([`SuiteCommand`]): the grid of the seed's config
//! run case by case, rows appended to `results_<DDMMYYYY_HHMMSS>.csv` as they finish, one
//! line per case, then the seed's table.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Instant;

use replay_core::export::rows::{CsvRows, Row};
use replay_core::measure::{Measurement, MonotonicClock, Target};
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

use super::case::QuantCase;
use super::output::{open_results, table};
use super::timing::TimingMode;
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
        let mut json = serde_json::json!({
            "timing": settings.timing.describe(settings.threads),
            "threads": settings.threads,
        });
        if let TimingMode::Seed { budget, .. } = settings.timing {
            json["case_budget_s"] = budget.as_secs_f64().into();
        }
        json
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
                    "ok: baseline {}, quantized {}, speedup {}x{sqnr}{}",
                    ms("baseline_inference_time_in_ms"),
                    ms("quantized_inference_time_in_ms"),
                    number("speedup")
                        .map(|v| format!("{v:.2}"))
                        .unwrap_or("-".into()),
                    self.cut_note(row.as_ref()),
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

impl QuantCommand {
    /// `, mean of 17 calls after 17 warm-up calls (cut to the 30 s budget per case)` for a
    /// row whose seed timing did not fit the budget; empty otherwise.
    fn cut_note(&self, row: Option<&Row>) -> String {
        let TimingMode::Seed {
            warmup,
            runs,
            budget,
        } = self.suite.settings().timing
        else {
            return String::new();
        };
        let count = |c: &str| row.and_then(|r| r.get(c)).and_then(|v| v.as_u64());
        match (count("warmup_calls"), count("timed_calls")) {
            (Some(w), Some(n)) if w < warmup || n < runs as u64 => format!(
                ", mean of {n} calls after {w} warm-up calls (cut to the {} s budget per case)",
                budget.as_secs_f64()
            ),
            _ => String::new(),
        }
    }
}

/// The suite as the runner runs it, with a long case's estimate said before the case runs
/// (the suite itself has no observer: the reporter does).
struct Announced<'s, 'r, 'o> {
    suite: &'s QuantSuite,
    reporter: &'r RefCell<CaseReporter<'o>>,
}

impl Suite for Announced<'_, '_, '_> {
    type Case = QuantCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        self.suite.columns()
    }

    fn cases(&self) -> Vec<QuantCase> {
        self.suite.cases()
    }

    fn case_id(&self, case: &QuantCase) -> String {
        self.suite.case_id(case)
    }

    fn skip(&self, case: &QuantCase, done: &[(QuantCase, CaseStatus)]) -> Option<String> {
        self.suite.skip(case, done)
    }

    fn measure_case(
        &self,
        case: &QuantCase,
        _device: &(),
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        self.suite.measure_announced(case, time, &mut |text| {
            self.reporter
                .borrow_mut()
                .observer()
                .item(&format!("  {text}"))
        })
    }

    fn row(&self, case: &QuantCase, outcome: &CaseOutcome) -> Row {
        self.suite.row(case, outcome)
    }

    fn row_status(&self, row: &Row) -> CaseStatus {
        self.suite.row_status(row)
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
        let budget = match timing {
            TimingMode::Seed { budget, .. } => {
                format!(" (at most {} s a case)", budget.as_secs_f64())
            }
            TimingMode::Replay { .. } => String::new(),
        };
        let header = format!(
            "{} cases{} from {}, {}{budget}, writing {}",
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
        let reporter = RefCell::new(CaseReporter::start(observer, COMMAND, &header, names));
        for (entry, why) in self.suite.device_problems() {
            // Said even with --quiet: these rows have no numbers, and why must not be missed.
            reporter.borrow_mut().observer().result(&format!(
                "model_params[{entry}] ({}): {why}; its rows are skipped\n",
                self.suite.config().model_params[entry].device.short_name()
            ));
        }
        let started = Instant::now();
        let mut rows = resumed.clone();
        let announced = Announced {
            suite: &self.suite,
            reporter: &reporter,
        };
        let tally = replay_core::suite::run_resumed(
            &announced,
            shard,
            &resumed,
            &(),
            &timing.measure_config(),
            &MonotonicClock::new(),
            &mut csv,
            |p| {
                let (text, row) = self.outcome(p.status);
                reporter.borrow_mut().finished(p.index, &text);
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
