//! Argument groups that several commands share (`#[command(flatten)]`), so a flag reads and
//! defaults the same everywhere it appears.

use std::path::PathBuf;

use clap::Args;

use replay::device::{Device, DeviceSpec};
use replay::pipeline::options::{DEFAULT_DEVICE, DEFAULT_OUTPUT_DIR};

/// `--device`, the one declaration of it for every command that runs on a device (a command
/// words its help with `mut_arg("device", ...)`); [`OptionalDeviceArgs`] is the same flag
/// for the two commands where it may be left out.
#[derive(Debug, Args, Clone)]
pub struct DeviceArgs {
    /// Device to run on: cpu, cuda (device 0) or cuda:N
    #[arg(long, default_value_t = DEFAULT_DEVICE, value_parser = super::parse_device)]
    pub device: DeviceSpec,
}

impl DeviceArgs {
    /// Opens the device, once per command: what runs on it is handed this [`Device`].
    pub fn open(&self) -> Result<Device, replay::Error> {
        Device::open(self.device)
    }
}

/// `--device` where it may be left out (`replay devices`: every device is listed; `replay
/// export`: the script's own default), parsed as [`DeviceArgs`]' is; each command words its
/// help with `mut_arg("device", ...)`.
#[derive(Debug, Args, Clone)]
pub struct OptionalDeviceArgs {
    /// Device: cpu, cuda (device 0) or cuda:N
    #[arg(long, value_parser = super::parse_device)]
    pub device: Option<DeviceSpec>,
}

/// `--threads`.
#[derive(Debug, Args, Clone)]
pub struct ThreadsArgs {
    /// libtorch intra-op threads (default: libtorch's own choice); use the same value for
    /// capture, isolated and full so their times are comparable
    #[arg(long, value_parser = crate::cli::value_parsers::positive::<i32>)]
    pub threads: Option<i32>,
}

/// `--output-dir` and `--quiet`.
#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Where the command's files go (each command's --help names them)
    #[arg(long, default_value = DEFAULT_OUTPUT_DIR, value_name = "DIR")]
    pub output_dir: PathBuf,

    /// No progress bar or stage lines (the results are still printed)
    #[arg(long, short)]
    pub quiet: bool,
}
