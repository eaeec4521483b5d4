//! `replay calibrate`: maps the flags to the suite's command
//! (`crate::suites::calibrate::command`), which measures the device into a calibration profile
//! (the seed's JSON) under the suite driver.

use std::path::PathBuf;

use clap::Args;

use crate::device::Device;
use crate::pipeline::drive;
use crate::suites::calibrate::command::CalibrateCommand;
use crate::suites::calibrate::fusion::FusionFamily;
use crate::suites::calibrate::matmul::MatmulDtype;
use crate::suites::calibrate::run::{CalibrateOptions, Operation};
use crate::suites::calibrate::CalibrateError;

use super::args::{DeviceArgs, ThreadsArgs};
use super::console::ConsoleObserver;

#[derive(Debug, Args, Clone)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub device: DeviceArgs,

    /// Name of the hardware in the profile (default: the device's own name)
    #[arg(long, value_name = "NAME")]
    pub hardware: Option<String>,

    /// fp32 compute peak in GFLOPS, replacing the one computed from the device (every dtype's)
    #[arg(long, value_name = "X")]
    pub peak_gflops: Option<f64>,

    /// Memory bandwidth peak in GB/s (the CPU's cannot be read inside a VM: without this it
    /// is null and no bandwidth efficiency is given)
    #[arg(long, value_name = "Y")]
    pub peak_bandwidth: Option<f64>,

    /// The seed's quick mode: fewer sizes and trials (matmul N = 1024, 2048; 5 trials)
    #[arg(long)]
    pub quick: bool,

    /// Operations, comma-separated: matmul (square products through libtorch), memory (copy
    /// bandwidth), host (the host's costs without the profiler: one dispatcher call of each op
    /// that launches nothing, TorchScript's interpreter per op, on a GPU a launch, a sync and
    /// 4-byte copies, and the profiler's own cost per event with capture's settings; the
    /// profile's `host` section, a few seconds)
    #[arg(long, value_delimiter = ',', default_value = "matmul,memory,host", value_parser = parse_operation)]
    pub operations: Vec<Operation>,

    /// Measure only the host section (`--operations host`, no fusion patterns): a few seconds,
    /// into a profile whose other measurements are empty
    #[arg(long, conflicts_with_all = ["operations", "fusion_patterns", "dtypes"])]
    pub host_only: bool,

    /// Fusion patterns to measure, comma-separated: linear (Linear+Bias, +ReLU, +GELU), conv
    /// (Conv2d+ReLU, +BatchNorm folded, +BatchNorm+ReLU), attention (Q·Kᵀ, +softmax, full
    /// attention against SDPA) or all [default: none, as the seed]
    #[arg(long, value_name = "LIST")]
    pub fusion_patterns: Option<String>,

    /// Matmul dtypes, comma-separated: float32, bfloat16, float16
    #[arg(long, value_delimiter = ',', default_value = "float32", value_parser = parse_dtype)]
    pub dtypes: Vec<MatmulDtype>,

    /// Where the profile goes (rewritten after every measurement) [default:
    /// profiles/<hardware>.json]
    #[arg(long = "out", alias = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// No progress bar or per-item lines (the summary is still printed)
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the profile as JSON instead of the summary
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub shard: replay_cli::ShardFlags,
}

fn parse_operation(text: &str) -> Result<Operation, String> {
    text.parse().map_err(|e: CalibrateError| e.to_string())
}

fn parse_dtype(text: &str) -> Result<MatmulDtype, String> {
    text.parse().map_err(|e: CalibrateError| e.to_string())
}

/// A file name from a hardware name: `AMD EPYC` → `amd_epyc`.
fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let s = s
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() {
        "device".into()
    } else {
        s
    }
}

fn check_peak(value: Option<f64>, flag: &str) -> Result<(), CalibrateError> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(CalibrateError::Usage(format!(
            "{flag} must be a positive number, not {v}"
        ))),
        _ => Ok(()),
    }
}

pub fn run(args: CalibrateArgs) -> Result<(), crate::Error> {
    check_peak(args.peak_gflops, "--peak-gflops")?;
    check_peak(args.peak_bandwidth, "--peak-bandwidth")?;
    if let Some(n) = args.threads.threads {
        if n < 1 {
            return Err(
                CalibrateError::Usage(format!("--threads must be at least 1, not {n}")).into(),
            );
        }
        tch::set_num_threads(n);
    }
    let operations = if args.host_only {
        vec![Operation::Host]
    } else {
        args.operations.clone()
    };
    let fusion = match &args.fusion_patterns {
        Some(list) => FusionFamily::parse_list(list)?,
        None => Vec::new(),
    };
    let device = Device::open(args.device.device)?;
    let hardware = args.hardware.clone().unwrap_or_else(|| match &device {
        Device::Cpu(info) => info.model.clone(),
        Device::Cuda(dev) => dev.info.name.clone(),
    });
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("profiles").join(format!("{}.json", slug(&hardware))));
    let options = CalibrateOptions {
        hardware: Some(hardware),
        peak_gflops: args.peak_gflops,
        peak_bandwidth_gbps: args.peak_bandwidth,
        quick: args.quick,
        operations,
        dtypes: args.dtypes.clone(),
        fusion,
        threads: args.threads.threads.map(|n| n.max(1) as usize),
        output,
    };
    let mut command = CalibrateCommand {
        device,
        options,
        json: args.json,
    };
    drive(
        &mut command,
        &args.shard.args(),
        &mut ConsoleObserver::new(args.quiet),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("AMD EPYC"), "amd_epyc");
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
        assert_eq!(slug("--"), "device");
    }

    #[test]
    fn peaks_must_be_positive() {
        assert!(check_peak(Some(-1.0), "--peak-gflops")
            .unwrap_err()
            .is_usage_error());
        assert!(check_peak(Some(f64::NAN), "--peak-gflops").is_err());
        assert!(check_peak(Some(10.0), "--peak-gflops").is_ok());
        assert!(check_peak(None, "--peak-gflops").is_ok());
    }
}
