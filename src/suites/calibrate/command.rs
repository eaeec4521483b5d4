//! `replay calibrate` as a suite command ([`SuiteCommand`]): the work list run item by item
//! through the one suite runner into the profile (rewritten after each), one line per item,
//! then its summary, or the profile as JSON.

use std::path::PathBuf;

use replay_core::measure::{MeasureConfig, MonotonicClock};
use replay_core::shard::{RunStart, Shard, WorkList};
use replay_core::suite::Suite;

use super::items::WorkItem;
use super::run::{self, CalibrateOptions, COMMAND};
use super::sink::{write_profile, Failures, ProfileSink};
use super::suite::{work_list, CalibrateSuite};
use super::summary::render_summary;
use crate::device::Device;
use crate::pipeline::suite_command::folder_of;
use crate::pipeline::{CaseReporter, Observer, ShardRecord, SuiteCommand};

pub struct CalibrateCommand {
    pub device: Device,
    pub options: CalibrateOptions,
    /// Print the profile as JSON instead of the summary.
    pub json: bool,
}

impl CalibrateCommand {
    /// What every shard (and every resumed part) of one calibration shares.
    fn settings(&self) -> serde_json::Value {
        let options = &self.options;
        serde_json::json!({
            "hardware": options.hardware,
            "peak_gflops": options.peak_gflops,
            "peak_bandwidth_gbps": options.peak_bandwidth_gbps,
            "quick": options.quick,
            "threads": options.threads,
        })
    }
}

impl CalibrateCommand {
    /// Runs `shard`'s items into the profile, rewritten after each, and returns it. Resumed,
    /// the journal's items are taken back first (a line each, as when measured) and the
    /// runner measures the rest.
    fn calibrate(
        &self,
        shard: Shard,
        resume: bool,
        observer: &mut dyn Observer,
    ) -> Result<super::profile::Profile, crate::Error> {
        let options = &self.options;
        let peaks = run::peaks_of(&self.device, options);
        let profile = run::empty_profile(&self.device, options, &peaks);
        // Fail on an unwritable output before spending minutes measuring.
        write_profile(&options.output, &profile)?;
        let suite = CalibrateSuite::new(options, peaks);
        let cases = shard.slice(&suite.cases());
        let header = format!(
            "{} measurements on {}",
            cases.len(),
            profile.metadata.device
        );
        let labels = cases.iter().map(WorkItem::label).collect();
        let failed = Failures::default();
        let (mut sink, mut found) = ProfileSink::open(&options.output, profile, resume, &failed)?;
        // A journal longer than the slice holds nothing this run needs.
        found.truncate(cases.len());
        let mut reporter = CaseReporter::start(observer, COMMAND, &header, labels);
        let mut resumed = Vec::with_capacity(found.len());
        for (index, (case, entry)) in cases.iter().zip(found).enumerate() {
            resumed.push(sink.resume(entry, &case.label())?);
            report(&mut reporter, index, &failed);
        }
        let ran = replay_core::suite::run_resumed(
            &suite,
            shard,
            &resumed,
            &self.device,
            &MeasureConfig::default(),
            &MonotonicClock::new(),
            &mut sink,
            |p| report(&mut reporter, p.index, &failed),
        );
        if let Err(e) = ran {
            // A profile or journal the sink could not write is said in the suite's words.
            return Err(sink.take_error().map_or_else(|| e.into(), Into::into));
        }
        Ok(sink.into_profile())
    }
}

/// Item `index`'s line: `ok` or how many of its results failed, then each failure.
fn report(reporter: &mut CaseReporter<'_>, index: usize, failed: &Failures) {
    let failed = failed.borrow();
    let verdict = if failed.is_empty() {
        "ok".to_string()
    } else {
        format!("{} failed", failed.len())
    };
    reporter.finished(index, &verdict);
    for (key, why) in failed.iter() {
        reporter.observer().item(&format!("    {key}: {why}"));
    }
}

impl SuiteCommand for CalibrateCommand {
    fn command(&self) -> &'static str {
        COMMAND
    }

    fn unit(&self) -> &'static str {
        "measurements"
    }

    /// The shard's manifest goes beside its profile.
    fn output_dir(&self) -> PathBuf {
        folder_of(&self.options.output)
    }

    fn identity(
        &mut self,
        _: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error> {
        // The run's record goes into the profile's folder before anything else: a folder that
        // cannot be made is reported as the --output the user gave, before measuring.
        let output = &self.options.output;
        if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| super::CalibrateError::File {
                path: output.clone(),
                problem: format!("cannot create its folder: {e}"),
            })?;
        }
        Ok((work_list(&self.options), self.settings()))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        let profile = self.calibrate(shard, start.resumed, observer)?;
        if self.json {
            let text = serde_json::to_string_pretty(&profile).map_err(|e| {
                crate::Error::from(super::CalibrateError::Measure(format!(
                    "cannot render the profile as JSON: {e}"
                )))
            })?;
            observer.result(&format!("{text}\n"));
        } else {
            observer.result(&format!(
                "{}profile: {}\n",
                render_summary(&profile),
                self.options.output.display()
            ));
        }
        Ok(())
    }

    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
        let options = &self.options;
        Ok(Some(ShardRecord {
            device: self.device.describe(),
            work_list: work_list(options),
            settings: self.settings(),
            files: options
                .output
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .into_iter()
                .collect(),
        }))
    }

    fn result_is_json(&self) -> bool {
        self.json
    }
}
