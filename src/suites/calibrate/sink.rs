//! Where a calibration's rows go ([`RowSink`]): each finished item's entry appended to the
//! journal, its results merged into the profile, the profile's summary recomputed and the
//! JSON rewritten whole, so a stopped run keeps what it measured. `--resume` feeds the
//! journal's entries back through the same merge.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use replay_core::export::rows::Row;
use replay_core::shard::journal::Journal;
use replay_core::suite::RowSink;

use super::items::Measured;
use super::journal::{journal_path, JournalEntry};
use super::profile::Profile;
use super::CalibrateError;

/// `(profile key, why)` of each result of the last item taken that failed.
pub type Failures = RefCell<Vec<(String, String)>>;

/// The profile being measured, its file and its journal.
pub struct ProfileSink<'f> {
    output: PathBuf,
    profile: Profile,
    journal: Journal,
    journal_path: PathBuf,
    /// The last item's failures, for the line that reports it.
    failed: &'f Failures,
    /// Why the last push failed, in the suite's words (the runner carries the core's).
    error: Option<CalibrateError>,
}

impl<'f> ProfileSink<'f> {
    /// The sink of `profile`, written to `output`, with its journal opened afresh or, when
    /// `resume`, kept: the journal's entries come back, in order, to be taken again with
    /// [`ProfileSink::resume`].
    pub fn open(
        output: &Path,
        profile: Profile,
        resume: bool,
        failed: &'f Failures,
    ) -> Result<(ProfileSink<'f>, Vec<serde_json::Value>), CalibrateError> {
        let journal_path = journal_path(output);
        let (journal, found) =
            Journal::open(&journal_path, resume).map_err(|e| CalibrateError::File {
                path: journal_path.clone(),
                problem: e.to_string(),
            })?;
        let sink = ProfileSink {
            output: output.to_path_buf(),
            profile,
            journal,
            journal_path,
            failed,
            error: None,
        };
        Ok((sink, found))
    }

    /// Takes back the journal's `entry` of the item `label` (not measured again): into the
    /// profile, as when it was measured; its row for the runner's resumed rows. An entry of
    /// another item means the journal is not this run's.
    pub fn resume(&mut self, entry: serde_json::Value, label: &str) -> Result<Row, CalibrateError> {
        let bad = |problem: String| CalibrateError::File {
            path: self.journal_path.clone(),
            problem,
        };
        let entry = JournalEntry::parse(entry)
            .map_err(|e| bad(format!("--resume: not a calibration journal entry: {e}")))?;
        if entry.item != label {
            return Err(bad(format!(
                "--resume: the journal's next item is '{}', this run's is '{label}'",
                entry.item
            )));
        }
        let row = entry.to_row();
        self.take(entry)?;
        Ok(row)
    }

    /// Why the last push failed, in the suite's words.
    pub fn take_error(&mut self) -> Option<CalibrateError> {
        self.error.take()
    }

    /// The profile as it stands.
    pub fn into_profile(self) -> Profile {
        self.profile
    }

    /// A measured item's row: journaled first, then into the profile.
    fn record(&mut self, row: &Row) -> Result<(), CalibrateError> {
        let entry = JournalEntry::from_row(row).map_err(|e| {
            CalibrateError::Measure(format!("a row that is no calibration journal entry: {e}"))
        })?;
        self.journal
            .append(&entry)
            .map_err(|e| CalibrateError::File {
                path: self.journal_path.clone(),
                problem: e.to_string(),
            })?;
        self.take(entry)
    }

    /// Merges `entry`'s results into the profile and rewrites it.
    fn take(&mut self, entry: JournalEntry) -> Result<(), CalibrateError> {
        let profile = &mut self.profile;
        let mut failed = Vec::new();
        for (key, result) in entry.results() {
            match result {
                Ok(Measured::Operation(p)) => {
                    profile.failures.remove(&key);
                    profile.operation_profiles.insert(key, p);
                }
                Ok(Measured::Fusion(f)) => {
                    profile
                        .fusion_profiles
                        .entry(f.fusion_pattern.clone())
                        .or_default()
                        .push(f);
                }
                Ok(Measured::Host(h)) => {
                    profile.failures.remove(&key);
                    profile.host = Some(h);
                }
                Err(e) => {
                    failed.push((key.clone(), e.clone()));
                    profile.failures.insert(key, e);
                }
            }
        }
        *self.failed.borrow_mut() = failed;
        profile.summarise();
        write_profile(&self.output, profile)
    }
}

impl RowSink for ProfileSink<'_> {
    fn push(&mut self, row: &Row) -> replay_core::Result<()> {
        self.record(row).map_err(|e| {
            let core = replay_core::Error::Io {
                context: e.to_string(),
                source: std::io::Error::other("the calibration's profile or journal"),
            };
            self.error = Some(e);
            core
        })
    }
}

/// Writes the profile atomically (a reader never sees half a file).
pub fn write_profile(path: &Path, profile: &Profile) -> Result<(), CalibrateError> {
    let file_error = |problem: String| CalibrateError::File {
        path: path.to_path_buf(),
        problem,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| file_error(format!("cannot create its folder: {e}")))?;
    }
    let bytes = crate::export::json::to_bytes(profile);
    crate::export::write_atomic(path, &bytes).map_err(|e| file_error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CpuInfo, Device};
    use crate::suites::calibrate::items::ItemResults;
    use crate::suites::calibrate::peaks::{Peak, Peaks};
    use crate::suites::calibrate::run::{empty_profile, CalibrateOptions, Operation};

    fn fresh_profile(output: &Path) -> Profile {
        let options = CalibrateOptions {
            hardware: Some("test".into()),
            peak_gflops: None,
            peak_bandwidth_gbps: None,
            quick: true,
            operations: vec![Operation::Matmul],
            dtypes: vec![],
            fusion: vec![],
            threads: None,
            output: output.to_path_buf(),
        };
        let peaks = Peaks {
            gflops: Default::default(),
            bandwidth_gbps: Peak::unknown("a test"),
        };
        empty_profile(&Device::Cpu(CpuInfo::detect()), &options, &peaks)
    }

    fn matmul_result(gflops: f64) -> ItemResults {
        let profile = serde_json::from_value(serde_json::json!({
            "operation_type": "matmul", "measured_gflops": gflops, "efficiency": null,
            "achieved_bandwidth_gbps": 1.5, "memory_bound": false, "compute_bound": true,
            "arithmetic_intensity": 170.5, "batch_size": 1, "input_shape": [1024, 1024],
            "output_shape": [1024, 1024], "mean_latency_ms": 1.0, "std_latency_ms": 0.1,
            "min_latency_ms": 0.9, "max_latency_ms": 1.2, "median_latency_ms": 1.0,
            "q1_latency_ms": 0.95, "q3_latency_ms": 1.05, "num_trials": 5,
            "extra_params": {"dtype": "float32"}
        }))
        .unwrap();
        vec![
            (
                "matmul_float32_N=1024".into(),
                Ok(Measured::Operation(profile)),
            ),
            (
                "matmul_float32_N=1024 extra".into(),
                Err("libtorch: no".into()),
            ),
        ]
    }

    #[test]
    fn a_row_is_journaled_and_rewrites_the_profile_and_resume_takes_it_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("cpu.json");
        let failed = Failures::default();
        let (mut sink, found) =
            ProfileSink::open(&output, fresh_profile(&output), false, &failed).unwrap();
        assert!(found.is_empty());
        let row = JournalEntry::of("matmul float32 N=1024", matmul_result(218.25)).to_row();
        sink.push(&row).unwrap();
        assert_eq!(
            failed.borrow().len(),
            1,
            "the failed result, for the item's line"
        );
        let measured = sink.into_profile();
        assert_eq!(
            measured.operation_profiles["matmul_float32_N=1024"].measured_gflops,
            218.25
        );
        assert_eq!(
            measured.failures["matmul_float32_N=1024 extra"],
            "libtorch: no"
        );
        assert_eq!(
            Profile::read(&output).unwrap(),
            measured,
            "rewritten after the item"
        );
        let journal = std::fs::read_to_string(journal_path(&output)).unwrap();
        assert_eq!(journal.lines().count(), 1);
        assert!(journal.starts_with(r#"{"item":"matmul float32 N=1024","results":[["#));

        // Resumed, the entry comes back and gives the same profile without measuring.
        let (mut sink, found) =
            ProfileSink::open(&output, fresh_profile(&output), true, &failed).unwrap();
        assert_eq!(found.len(), 1);
        let wrong = sink.resume(found[0].clone(), "matmul float32 N=2048");
        let message = wrong.unwrap_err().to_string();
        assert!(
            message.contains("the journal's next item is 'matmul float32 N=1024', this run's is 'matmul float32 N=2048'"),
            "{message}"
        );
        let back = sink
            .resume(found[0].clone(), "matmul float32 N=1024")
            .unwrap();
        assert_eq!(back, row);
        let resumed = sink.into_profile();
        assert_eq!(resumed.operation_profiles, measured.operation_profiles);
        assert_eq!(resumed.failures, measured.failures);
        assert_eq!(
            std::fs::read_to_string(journal_path(&output)).unwrap(),
            journal
        );
    }

    #[test]
    fn a_profile_that_cannot_be_written_is_the_suites_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("cpu.json");
        let failed = Failures::default();
        let (mut sink, _) =
            ProfileSink::open(&output, fresh_profile(&output), false, &failed).unwrap();
        // A folder where the profile goes: the rewrite fails after the journal line.
        std::fs::create_dir(&output).unwrap();
        let row = JournalEntry::of("matmul float32 N=1024", matmul_result(1.0)).to_row();
        assert!(sink.push(&row).is_err());
        let error = sink.take_error().expect("the suite's own error");
        assert!(error.is_usage_error());
        assert!(
            error.to_string().starts_with(&output.display().to_string()),
            "{error}"
        );
    }
}
