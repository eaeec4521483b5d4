//! `replay sequence`: re-run a trace's step in order and time every op in its place.

use std::path::PathBuf;

use clap::Args;

use replay::pipeline::options::{DEFAULT_MIN_SAMPLES, DEFAULT_NOISE, DEFAULT_SEQUENCE_MAX_TIME_S};
use replay::pipeline::SequenceOptions;

use super::args::{DeviceArgs, OutputArgs, ThreadsArgs};
use super::console::ConsoleObserver;
use super::timing_args::TimingArgs;

/// The timing flags are the shared group's, with the whole step as the measured item.
#[derive(Debug, Args)]
#[command(mut_arg("max_time", |a| a
    .default_value("10")
    .help("Time budget of the runs of the whole step, warm-up included, in seconds: once for the runs timing each op in its place, once for the runs in real time")))]
#[command(mut_arg("noise", |a| a.default_value("0.005")))]
#[command(mut_arg("min_samples", |a| a.default_value("10")
    .help("Run the whole step at least this many times")))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("warmup", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
#[command(mut_arg("device", |a| a
    .help("Device to re-run the step on: cpu, cuda (device 0) or cuda:N (a trace recorded on one device can be re-run on any)")))]
#[command(mut_arg("output_dir", |a| a
    .help("Where sequence.json and sequence.csv go")))]
pub struct SequenceArgs {
    /// PyTorch profiler (Kineto) trace whose last profiled step is re-run, plain JSON or
    /// gzipped
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Its signature file (`replay classify`); by default the trace is classified
    #[arg(long, value_name = "FILE")]
    pub kernels: Option<PathBuf>,

    #[command(flatten)]
    pub device: DeviceArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// The Inductor cache `replay capture --compile` kept (the `inductor/` folder holding
    /// kernels.json) that generated kernels (tier 4) are rebuilt from
    #[arg(long, value_name = "DIR")]
    pub inductor_cache: Option<PathBuf>,

    /// On a GPU, time each op without the blocking kernel
    #[arg(long)]
    pub no_blocking_kernel: bool,

    /// The Execution Trace recorded in the same step (`replay capture --execution-trace`
    /// writes one beside the trace): each op calls its exact overload, outputs flow into the
    /// ops that consume them, views alias their base, and parameters and model inputs are
    /// allocated once per tensor (the model's working set)
    #[arg(long, value_name = "FILE")]
    pub execution_trace: Option<PathBuf>,

    /// The most memory the step's rebuilt ops may hold (a size: 8G, 512M, 1.5GiB): the memory
    /// plan shares inputs of one size and dtype across ops, and more when over it; a step
    /// that does not fit is refused before anything is allocated [default: 80 % of the
    /// device's free memory]
    #[arg(long, value_name = "SIZE", value_parser = replay_core::memory_size::parse_size)]
    pub memory_budget: Option<u64>,
}

impl From<SequenceArgs> for SequenceOptions {
    fn from(args: SequenceArgs) -> Self {
        SequenceOptions {
            trace: args.trace,
            kernels: args.kernels,
            device: args.device.device,
            output_dir: args.output.output_dir,
            max_time_s: args.timing.max_time.unwrap_or(DEFAULT_SEQUENCE_MAX_TIME_S),
            noise: args.timing.noise.unwrap_or(DEFAULT_NOISE),
            min_samples: args.timing.min_samples.unwrap_or(DEFAULT_MIN_SAMPLES),
            threads: args.threads.threads,
            inductor_cache: args.inductor_cache,
            blocking_kernel: !args.no_blocking_kernel,
            execution_trace: args.execution_trace,
            memory_budget: args.memory_budget,
        }
    }
}

pub fn run(args: SequenceArgs) -> anyhow::Result<()> {
    args.timing
        .refuse("sequence", &["warmup", "rounds", "cold"])?;
    let mut console = ConsoleObserver::new(args.output.quiet);
    replay::pipeline::sequence::run(&args.into(), &mut console)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        sequence: SequenceArgs,
    }

    /// The defaults written as text for clap are the library's constants.
    #[test]
    fn the_timing_defaults_are_the_pipelines() {
        let cli = Cli::try_parse_from(["sequence", "--trace", "t.json"]).unwrap();
        let options: SequenceOptions = cli.sequence.into();
        let defaults = SequenceOptions::default();
        assert_eq!(options.max_time_s, defaults.max_time_s);
        assert_eq!(options.noise, defaults.noise);
        assert_eq!(options.min_samples, defaults.min_samples);
        assert_eq!(options.trace, PathBuf::from("t.json"));
    }
}
