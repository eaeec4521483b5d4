//! `replay calibrate` as a suite command ([`SuiteCommand`]): the work list measured item by
//! item into the profile (rewritten after each), then its summary, or the profile as JSON.

use std::path::PathBuf;

use replay_core::shard::{RunStart, Shard, WorkList};

use super::run::{self, CalibrateOptions, COMMAND};
use super::summary::render_summary;
use crate::device::Device;
use crate::pipeline::suite_command::folder_of;
use crate::pipeline::{Observer, ShardRecord, SuiteCommand};

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
        Ok((run::work_list(&self.device, &self.options), self.settings()))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        self.options.shard = shard;
        let profile = run::run(&self.device, &self.options, start.resumed, observer)?;
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
            work_list: run::work_list(&self.device, options),
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
