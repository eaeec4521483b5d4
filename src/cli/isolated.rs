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
use super::timing_args::TimingArgs;

/// The timing flags are the shared group's (`--max-time` also under its former name
/// `--max-time-per-kernel`), with isolated's defaults.
#[derive(Debug, Args)]
#[command(mut_arg("max_time", |a| a
    .visible_alias("max-time-per-kernel")
    .default_value("0.5")
    .help("Time budget per signature, warm-up included, in seconds")))]
#[command(mut_arg("noise", |a| a.default_value("0.005")))]
#[command(mut_arg("min_samples", |a| a.default_value("10")))]
#[command(mut_arg("rounds", |a| a.default_value("5")))]
#[command(mut_arg("warmup", |a| a.hide(true)))]
#[command(mut_arg("device", |a| a
    .help("Device to replay on: cpu, cuda (device 0) or cuda:N (a trace from one GPU can be replayed on any device)")))]
#[command(mut_arg("output_dir", |a| a
    .help("Where isolated.json and isolated.csv go (rewritten after every signature)")))]
pub struct IsolatedArgs {
    /// Signature file written by `replay classify`
    #[arg(long, value_name = "FILE", required_unless_present = "trace")]
    pub kernels: Option<PathBuf>,

    /// A profiler trace to classify and replay instead of a signature file (its signatures go
    /// to signatures.json in --output-dir)
    #[arg(long, value_name = "FILE", conflicts_with = "kernels")]
    pub trace: Option<PathBuf>,

    /// The trace's Execution Trace (`replay capture --execution-trace` writes one beside it),
    /// attached as `replay classify --execution-trace` does: the exact overloads, and index
    /// tensors drawn from the value ranges it recorded
    #[arg(
        long,
        value_name = "FILE",
        requires = "trace",
        conflicts_with = "kernels"
    )]
    pub execution_trace: Option<PathBuf>,

    #[command(flatten)]
    pub device: DeviceArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    #[command(flatten)]
    pub energy: super::energy_args::EnergyArgs,

    #[command(flatten)]
    pub shard: replay_cli::ShardFlags,

    /// A calibration profile of this device (`replay calibrate`): every signature also gets a
    /// roofline estimate, max(FLOPs / GFLOPS, bytes / bandwidth), and the ones that cannot be
    /// replayed are predicted by it (status `estimated`)
    #[arg(long, value_name = "PROFILE.json")]
    pub profile: Option<PathBuf>,

    /// The Inductor cache `replay capture --compile` kept (the `inductor/` folder holding
    /// kernels.json) that generated kernels (tier 4) are replayed from
    #[arg(long, value_name = "DIR")]
    pub inductor_cache: Option<PathBuf>,

    /// A watchdog per op: a signature whose measurement (one round) runs longer than this
    /// many seconds ends `failed: timed out` and the run goes on (in a fresh process, resumed
    /// from its journal: a libtorch op cannot be cancelled in its thread)
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub op_timeout: Option<f64>,

    /// The host memory one replay may allocate (bytes, or with K, M, G, T), checked before
    /// allocating: a signature asking for more ends `oom` and the run goes on. Default: three
    /// quarters of the memory available at the start
    #[arg(long, value_name = "SIZE", value_parser = crate::replay::memory_limit::parse_size)]
    pub max_memory: Option<u64>,

    /// On a GPU, time without the blocking kernel (by default each sample's launches queue up
    /// behind a kernel that holds the stream until they are all issued, so kernels shorter
    /// than their launch are timed on the device alone); to compare the two
    #[arg(long)]
    pub no_blocking_kernel: bool,
}

impl From<IsolatedArgs> for IsolatedOptions {
    fn from(args: IsolatedArgs) -> Self {
        let output_dir = args.output.output_dir;
        IsolatedOptions {
            kernels: args
                .kernels
                .unwrap_or_else(|| output_dir.join(crate::export::OutputFile::Signatures.name())),
            trace: args.trace,
            execution_trace: args.execution_trace,
            device: args.device.device,
            output_dir,
            cold: args.timing.cold,
            max_time_per_kernel_s: args
                .timing
                .max_time
                .unwrap_or(DEFAULT_MAX_TIME_PER_KERNEL_S),
            noise: args.timing.noise.unwrap_or(DEFAULT_NOISE),
            min_samples: args.timing.min_samples.unwrap_or(DEFAULT_MIN_SAMPLES),
            rounds: args.timing.rounds.unwrap_or(DEFAULT_ROUNDS),
            threads: args.threads.threads,
            energy: args.energy.into(),
            profile: args.profile,
            shard: replay_core::shard::Shard::WHOLE,
            inductor_cache: args.inductor_cache,
            blocking_kernel: !args.no_blocking_kernel,
        }
    }
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(s),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

pub fn run(args: IsolatedArgs) -> Result<(), crate::Error> {
    args.timing.refuse("isolated", &["warmup"])?;
    if let Some(bytes) = args.max_memory {
        crate::replay::memory_limit::set(bytes);
    }
    let mut console = ConsoleObserver::new(args.output.quiet);
    let shard = args.shard.args();
    let op_timeout = args.op_timeout.map(std::time::Duration::from_secs_f64);
    let mut command = IsolatedCommand::new(args.into());
    command.op_timeout = op_timeout;
    crate::pipeline::drive(&mut command, &shard, &mut console)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        isolated: IsolatedArgs,
    }

    /// The defaults written as text for clap are the library's constants.
    #[test]
    fn the_timing_defaults_are_the_pipelines() {
        let cli = Cli::try_parse_from(["isolated", "--kernels", "k.json"]).unwrap();
        let options: IsolatedOptions = cli.isolated.into();
        let defaults = IsolatedOptions::default();
        assert_eq!(
            options.max_time_per_kernel_s,
            defaults.max_time_per_kernel_s
        );
        assert_eq!(options.noise, defaults.noise);
        assert_eq!(options.min_samples, defaults.min_samples);
        assert_eq!(options.rounds, defaults.rounds);
        assert!(!options.cold);
        assert!(options.blocking_kernel && defaults.blocking_kernel);
        let off =
            Cli::try_parse_from(["isolated", "--kernels", "k", "--no-blocking-kernel"]).unwrap();
        assert!(!IsolatedOptions::from(off.isolated).blocking_kernel);
        let old = Cli::try_parse_from(["isolated", "--kernels", "k", "--max-time-per-kernel", "2"])
            .unwrap();
        assert_eq!(old.isolated.timing.max_time, Some(2.0));
    }

    #[test]
    fn a_trace_is_classified_into_the_output_folder_with_its_execution_trace() {
        let cli = Cli::try_parse_from([
            "isolated",
            "--trace",
            "t.json",
            "--execution-trace",
            "t.et.json",
            "--output-dir",
            "out",
        ])
        .unwrap();
        let options: IsolatedOptions = cli.isolated.into();
        assert_eq!(options.kernels, PathBuf::from("out/signatures.json"));
        assert_eq!(options.trace, Some(PathBuf::from("t.json")));
        assert_eq!(options.execution_trace, Some(PathBuf::from("t.et.json")));
        // An ET belongs to a trace; a signature file is classified already.
        for argv in [
            &[
                "isolated",
                "--kernels",
                "k.json",
                "--execution-trace",
                "e.json",
            ][..],
            &["isolated", "--kernels", "k.json", "--trace", "t.json"],
            &["isolated"],
        ] {
            assert!(Cli::try_parse_from(argv).is_err(), "{argv:?}");
        }
    }
}
