//! A calibration's journal entries: one line per finished work item beside the profile
//! (`<out>.journal.jsonl`), what `--resume` takes back instead of measuring the item again. An
//! entry is also the item's row in the suite runner ([`replay_core::suite`]): the columns
//! `item` (the label) and `results` (each profile key's result), the same JSON either way.

use std::path::{Path, PathBuf};

use replay_core::export::rows::Row;

use super::items::{ItemResults, Measured};
use super::profile::{FusionProfile, OperationProfile};
use crate::host::HostProfile;

/// The row's columns, in the journal line's order.
pub const COLUMNS: [&str; 2] = ["item", "results"];

/// The journal of a calibration writing `output`: `output` with `.journal.jsonl` added.
pub fn journal_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_os_string();
    name.push(".journal.jsonl");
    PathBuf::from(name)
}

/// One finished item as the journal keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct JournalEntry {
    pub item: String,
    results: Vec<(String, Journaled)>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Journaled {
    Operation(OperationProfile),
    Fusion(FusionProfile),
    Host(HostProfile),
    Failed(String),
}

impl JournalEntry {
    /// The entry of item `label` that measured `results`. A result the journal could not
    /// give back as it is (a figure that is not a finite number: JSON has no NaN) is kept as
    /// a failure saying so, so that the profile and a resumed run agree.
    pub fn of(label: &str, results: ItemResults) -> JournalEntry {
        JournalEntry {
            item: label.into(),
            results: results
                .into_iter()
                .map(|(key, r)| {
                    let kept = match r {
                        Ok(Measured::Operation(p)) => Journaled::Operation(p),
                        Ok(Measured::Fusion(f)) => Journaled::Fusion(f),
                        Ok(Measured::Host(h)) => Journaled::Host(h),
                        Err(e) => Journaled::Failed(e),
                    };
                    (key, kept.faithful())
                })
                .collect(),
        }
    }

    /// The entry as the runner's row.
    pub fn to_row(&self) -> Row {
        // Every part is plain data that `faithful` checked encodes: this cannot fail.
        let results = serde_json::to_value(&self.results).unwrap_or_default();
        Row::new()
            .with(COLUMNS[0], self.item.clone())
            .with(COLUMNS[1], results)
    }

    /// The entry a row or a journal line holds, or why it is not one.
    pub fn parse(value: serde_json::Value) -> Result<JournalEntry, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    /// The entry of the runner's `row`.
    pub fn from_row(row: &Row) -> Result<JournalEntry, String> {
        let object: serde_json::Map<String, serde_json::Value> = row
            .cells
            .iter()
            .map(|(column, value)| (column.to_string(), value.clone()))
            .collect();
        JournalEntry::parse(serde_json::Value::Object(object))
    }

    /// Whether a result failed.
    pub fn any_failed(&self) -> bool {
        self.results
            .iter()
            .any(|(_, kept)| matches!(kept, Journaled::Failed(_)))
    }

    /// The results, as the profile takes them.
    pub fn results(self) -> ItemResults {
        self.results
            .into_iter()
            .map(|(key, kept)| {
                let result = match kept {
                    Journaled::Operation(p) => Ok(Measured::Operation(p)),
                    Journaled::Fusion(f) => Ok(Measured::Fusion(f)),
                    Journaled::Host(h) => Ok(Measured::Host(h)),
                    Journaled::Failed(e) => Err(e),
                };
                (key, result)
            })
            .collect()
    }
}

impl Journaled {
    /// Itself when its JSON reads back as itself, else a failure saying why not.
    fn faithful(self) -> Journaled {
        let back = serde_json::to_value(&self)
            .map_err(|e| e.to_string())
            .and_then(|v| serde_json::from_value::<Journaled>(v).map_err(|e| e.to_string()));
        match back {
            Ok(_) => self,
            Err(e) => Journaled::Failed(format!(
                "the measurement holds a figure JSON cannot keep (not a finite number): {e}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation(gflops: f64) -> OperationProfile {
        serde_json::from_value(serde_json::json!({
            "operation_type": "matmul",
            "measured_gflops": gflops,
            "efficiency": null,
            "achieved_bandwidth_gbps": 1.5,
            "memory_bound": false,
            "compute_bound": true,
            "arithmetic_intensity": 170.5,
            "batch_size": 1,
            "input_shape": [1024, 1024],
            "output_shape": [1024, 1024],
            "mean_latency_ms": 1.0,
            "std_latency_ms": 0.1,
            "min_latency_ms": 0.9,
            "max_latency_ms": 1.2,
            "median_latency_ms": 1.0,
            "q1_latency_ms": 0.95,
            "q3_latency_ms": 1.05,
            "num_trials": 5,
            "extra_params": {"dtype": "float32"}
        }))
        .expect("an operation profile")
    }

    #[test]
    fn an_entry_is_the_same_as_a_row_and_as_a_journal_line() {
        let entry = JournalEntry::of(
            "matmul float32 N=1024",
            vec![
                (
                    "matmul_float32_N=1024".into(),
                    Ok(Measured::Operation(operation(218.25))),
                ),
                ("other".into(), Err("libtorch: out of memory".into())),
            ],
        );
        assert!(entry.any_failed());
        let line = serde_json::to_string(&entry).unwrap();
        assert!(
            line.starts_with(r#"{"item":"matmul float32 N=1024","results":[["matmul_float32_N=1024",{"operation":{"operation_type":"matmul","measured_gflops":218.25"#),
            "{line}"
        );
        let row = entry.to_row();
        assert_eq!(row.cells.iter().map(|c| c.0).collect::<Vec<_>>(), COLUMNS);
        let back = JournalEntry::from_row(&row).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), line);
        let read = JournalEntry::parse(serde_json::from_str(&line).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), line);
        let results = read.results();
        assert!(matches!(&results[0].1, Ok(Measured::Operation(p)) if p.measured_gflops == 218.25));
        assert_eq!(
            results[1].1.as_ref().err().unwrap(),
            "libtorch: out of memory"
        );
    }

    #[test]
    fn a_figure_json_cannot_keep_is_a_failure_not_a_lost_run() {
        let mut profile = operation(1.0);
        profile.measured_gflops = f64::NAN;
        let entry = JournalEntry::of(
            "matmul float32 N=1024",
            vec![(
                "matmul_float32_N=1024".into(),
                Ok(Measured::Operation(profile)),
            )],
        );
        assert!(entry.any_failed());
        let back = JournalEntry::from_row(&entry.to_row()).unwrap().results();
        assert!(back[0]
            .1
            .as_ref()
            .err()
            .unwrap()
            .contains("not a finite number"));
    }

    #[test]
    fn the_journal_sits_beside_the_profile() {
        assert_eq!(
            journal_path(Path::new("profiles/cpu.json")),
            Path::new("profiles/cpu.json.journal.jsonl")
        );
    }
}
