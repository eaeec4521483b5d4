//! `replay isolated`: replay every signature of a signature file alone and time it.

use std::path::PathBuf;

use clap::Args;

use crate::pipeline::isolated::IsolatedCommand;
use crate::pipeline::options::{
    DEFAULT_MAX_TIME_PER_KERNEL_S, DEFAULT_MIN_SAMPLES, DEFAULT_NOISE, DEFAULT_ROUNDS,
};
use crate::pipeline::IsolatedOptions;

use super::args::{DeviceArgs, OutputArgs, ThreadsArgs};
use super::console::ConsoleObserver;

#[derive(Debug, Args)]
pub struct IsolatedArgs {
    /// Signature file written by `replay classify`
    #[arg(long, value_name = "FILE")]
    pub kernels: PathBuf,

    #[command(flatten)]
    pub device: DeviceArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Flush the L2 (CUDA) or last-level cache (CPU) before every sample
    #[arg(long)]
    pub cold: bool,

    /// Time budget per signature, warm-up included, in seconds
    #[arg(long, default_value_t = DEFAULT_MAX_TIME_PER_KERNEL_S, value_name = "S")]
    pub max_time_per_kernel: f64,

    /// Stop sampling once the relative standard error of the median is below this
    #[arg(long, default_value_t = DEFAULT_NOISE, value_name = "FRACTION")]
    pub noise: f64,

    /// Take at least this many samples (over all rounds)
    #[arg(long, default_value_t = DEFAULT_MIN_SAMPLES, value_name = "N")]
    pub min_samples: usize,

    /// Split each signature's budget into N rounds over all signatures, in a shuffled order
    /// after the first, and pool their samples: each median then spans the whole run instead
    /// of the moment the signature happened to be measured, which keeps runs comparable on a
    /// machine whose speed drifts (shared or cloud machines). 1 measures each signature in one go
    #[arg(long, default_value_t = DEFAULT_ROUNDS, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    #[command(flatten)]
    pub energy: super::energy_args::EnergyArgs,

    #[command(flatten)]
    pub shard: replay_core::shard::ShardArgs,

    /// A calibration profile of this device (`replay calibrate`): every signature also gets a
    /// roofline estimate, max(FLOPs / GFLOPS, bytes / bandwidth), and the ones that cannot be
    /// replayed are predicted by it (status `estimated`)
    #[arg(long, value_name = "PROFILE.json")]
    pub profile: Option<PathBuf>,
}

impl From<IsolatedArgs> for IsolatedOptions {
    fn from(args: IsolatedArgs) -> Self {
        IsolatedOptions {
            kernels: args.kernels,
            device: args.device.device,
            output_dir: args.output.output_dir,
            cold: args.cold,
            max_time_per_kernel_s: args.max_time_per_kernel,
            noise: args.noise,
            min_samples: args.min_samples,
            rounds: args.rounds,
            threads: args.threads.threads,
            energy: args.energy.into(),
            profile: args.profile,
            shard: replay_core::shard::Shard::WHOLE,
        }
    }
}

pub fn run(args: IsolatedArgs) -> Result<(), crate::Error> {
    let mut console = ConsoleObserver::new(args.output.quiet);
    let shard = args.shard.clone();
    let mut command = IsolatedCommand::new(args.into());
    crate::pipeline::drive(&mut command, &shard, &mut console)
}
