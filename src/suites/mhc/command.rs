//! `replay bench mhc` as a suite command ([`SuiteCommand`]): where `--device` puts the stages,
//! then each configuration's rows appended to `benchmark_results.csv` as they finish, the
//! seed's console blocks, and for a sweep the offload answer.

use std::path::PathBuf;

use replay_core::shard::{RunStart, Shard, WorkList};

use super::rows::RESULTS_CSV;
use super::run::{configurations, run, shard_settings, work_list, RunOptions, COMMAND};
use super::stages::Placement;
use crate::device::DeviceSpec;
use crate::pipeline::{Observer, ShardRecord, SuiteCommand};

/// The seed's profiler folder (`./log/mhc_benchmark`), under `--output-dir`.
pub const PROFILER_DIR: &str = "log/mhc_benchmark";

pub struct MhcCommand {
    pub options: RunOptions,
    /// Also write the Kineto trace of the torch pipeline (`--profiler`).
    pub profiler: bool,
}

/// Where `--device` puts the stages, and the GPU a sweep also measures: `cpu` becomes the
/// offload simulation when the driver reports a CUDA GPU (asked through `device::cuda`, which
/// never touches cudarc without libcuda); `cuda:N` must open.
pub fn placement(spec: DeviceSpec) -> Result<(Placement, Option<usize>), crate::Error> {
    match spec {
        DeviceSpec::Cpu => {
            let gpu = crate::device::cuda::inventory()
                .ok()
                .filter(|inv| !inv.devices.is_empty())
                .map(|_| 0);
            Ok(match gpu {
                Some(gpu) => (Placement::Offload { gpu }, Some(gpu)),
                None => (Placement::CpuOnly, None),
            })
        }
        DeviceSpec::Cuda(index) => {
            crate::device::Device::open(spec)?;
            Ok((Placement::Gpu { gpu: index }, None))
        }
    }
}

impl SuiteCommand for MhcCommand {
    fn command(&self) -> &'static str {
        COMMAND
    }

    fn unit(&self) -> &'static str {
        "configurations"
    }

    fn output_dir(&self) -> PathBuf {
        self.options.output_dir.clone()
    }

    fn identity(
        &mut self,
        _: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error> {
        Ok((work_list(&self.options), shard_settings(&self.options)))
    }

    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error> {
        self.options.shard = shard;
        if shard != Shard::WHOLE {
            observer.result(&format!(
                "shard {shard} of {} configurations\n",
                configurations(&self.options).len()
            ));
        }
        if self.options.placement == Placement::CpuOnly {
            observer.result(
                "No CUDA GPU on this machine: stages 1-3 run on the CPU; 0 (D2H) and 4 (H2D) are not applicable and reported as such.\n",
            );
        }
        let outcome = run(&self.options, start, observer)?;
        let mut text = String::new();
        if self.profiler {
            let trace = super::profile::write_trace(
                &self.options,
                &self.options.output_dir.join(PROFILER_DIR),
            )?;
            text.push_str(&format!("profiler trace: {}\n", trace.display()));
        }
        text.push_str(&format!("results appended to {}\n", outcome.csv.display()));
        if let Some((md, svg)) = outcome.answer {
            text.push_str(&format!(
                "offload answer: {} and {}\n",
                md.display(),
                svg.display()
            ));
        }
        if outcome.failed_rows > 0 {
            text.push_str(&format!(
                "{} row(s) failed; see their Status and Note\n",
                outcome.failed_rows
            ));
        }
        observer.result(&text);
        Ok(())
    }

    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
        Ok(Some(ShardRecord {
            device: self.options.placement.key(),
            work_list: work_list(&self.options),
            settings: shard_settings(&self.options),
            files: vec![RESULTS_CSV.to_string()],
        }))
    }
}
