//! `replay bench mhc` as a suite command ([`SuiteCommand`]): where `--device` puts the stages,
//! then each configuration's rows appended to `benchmark_results.csv` as they finish, the
//! seed's console blocks, and for a sweep the offload answer.

use std::path::PathBuf;

use replay_core::shard::{RunStart, Shard, WorkList};

use super::rows::RESULTS_CSV;
use super::run::{configurations, run, shard_settings, work_list, RunOptions, COMMAND};
use super::stages::Placement;
use crate::device::{CudaDevice, Device};
use crate::pipeline::{Observer, ShardRecord, SuiteCommand};

/// The seed's profiler folder (`./log/mhc_benchmark`), under `--output-dir`.
pub const PROFILER_DIR: &str = "log/mhc_benchmark";

pub struct MhcCommand {
    pub options: RunOptions,
    /// Also write the Kineto trace of the torch pipeline (`--profiler`).
    pub profiler: bool,
}

/// Where `--device` (the opened `device`) puts the stages, and the GPU they use: `cpu`
/// becomes the offload simulation when a CUDA GPU opens (`device::cuda` asks the driver
/// first, and never touches cudarc without libcuda), its GPU cuda:0; `cuda:N` is `device`.
pub fn placement(device: &Device) -> (Placement, Option<CudaDevice>) {
    match device {
        Device::Cpu(_) => match CudaDevice::open(0) {
            Ok(gpu) => (Placement::Offload, Some(gpu)),
            Err(_) => (Placement::CpuOnly, None),
        },
        Device::Cuda(dev) => (Placement::Gpu, Some(dev.clone())),
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
            device: self.options.placement.key(self.options.gpu_spec),
            work_list: work_list(&self.options),
            settings: shard_settings(&self.options),
            files: vec![RESULTS_CSV.to_string()],
        }))
    }
}
