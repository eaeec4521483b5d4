//! `replay compare`: the tool's main job (see [`replay::pipeline::compare`]); this module only
//! reads its command line.

use std::path::PathBuf;

use clap::Args;

use replay::pipeline::options::{
    DEFAULT_COMPARE_SEQUENCE_MAX_TIME_S, DEFAULT_MAX_TIME_PER_KERNEL_S, DEFAULT_ROUNDS,
};
use replay::pipeline::{CompareOptions, CompileMode, ExecutionTraceChoice};

use super::console::ConsoleObserver;
use super::full::FullArgs;

#[derive(Debug, Args)]
#[command(mut_arg("model", |a| a
    .required(false)
    .required_unless_present("zoo")
    .help("TorchScript model (write one with `replay export`); with --compile a torch.export \
           ExportedProgram (.pt2, `replay export --format pt2`)")))]
#[command(mut_arg("output_dir", |a| a.help("Where every file of the run goes: trace.json, \
    signatures.json, host.json, isolated.json, sequence.json, full_model_timing.json, \
    comparison_report.json and report.html (with --compile also inductor/)")))]
#[command(mut_arg("max_time", |a| a
    .hide(false)
    .visible_alias("max-time-per-kernel")
    .default_value("0.5")
    .help("Time budget per signature, warm-up included, in seconds")))]
#[command(mut_arg("rounds", |a| a
    .hide(false)
    .default_value("5")
    .help("Interleaved rounds per signature in the isolated replay (see `replay isolated --help`)")))]
#[command(mut_arg("cold", |a| a
    .hide(false)
    .help("Flush caches before every isolated sample")))]
pub struct CompareArgs {
    /// The model, its input, the device and the full-model timing (as `replay full`); every
    /// file of the run goes to --output-dir
    #[command(flatten)]
    pub run: FullArgs,

    /// Use this profiler trace instead of capturing one
    #[arg(long, value_name = "FILE", conflicts_with = "kernels")]
    pub trace: Option<PathBuf>,

    /// Use this signature file instead of capturing and classifying (the original tool's mode)
    #[arg(long, value_name = "FILE")]
    pub kernels: Option<PathBuf>,

    /// Also write the trace's own timeline and the one with the replayed durations as a Chrome
    /// trace that ui.perfetto.dev and chrome://tracing open (as `replay predict --perfetto`)
    #[arg(long, value_name = "OUT.json", conflicts_with = "kernels")]
    pub perfetto: Option<PathBuf>,

    /// A calibration profile of this device: roofline estimates for every signature, and the
    /// prediction of those that cannot be replayed (as `replay isolated --profile`)
    #[arg(long, value_name = "PROFILE.json")]
    pub profile: Option<PathBuf>,

    /// The Inductor cache `replay capture --compile` kept (the `inductor/` folder holding
    /// kernels.json) that generated kernels are found in and replayed from [default:
    /// inductor/ beside the trace]
    #[arg(long, value_name = "DIR")]
    pub inductor_cache: Option<PathBuf>,

    /// Capture the model compiled with torch.compile in this mode (as `replay capture
    /// --compile`); Inductor's cache and kernels.json go to `inductor/` in --output-dir
    #[arg(long, value_name = "MODE", value_parser = crate::cli::value_parsers::compile_mode(), num_args = 0..=1, default_missing_value = "default", conflicts_with_all = ["trace", "kernels"])]
    pub compile: Option<CompileMode>,

    /// Time the isolated replay on a GPU without the blocking kernel (as `replay isolated
    /// --no-blocking-kernel`); the full model is timed without it either way
    #[arg(long)]
    pub no_blocking_kernel: bool,
    /// A model of the zoo instead of --model, built eagerly with random weights (as `replay
    /// capture --zoo`), with --compile: the model torch.compile compiles and the capture times
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "model",
        requires = "compile"
    )]
    pub zoo: Option<String>,

    /// Leave out the third prediction: the trace's step re-run in order (`replay sequence`),
    /// every op timed in its place, through the timeline model
    #[arg(long)]
    pub no_sequence: bool,

    /// Time budget of the step's re-run in order, warm-up included, in seconds: once for
    /// the runs timing each op in its place, once for the runs in real time
    #[arg(long, value_name = "S", default_value_t = DEFAULT_COMPARE_SEQUENCE_MAX_TIME_S, value_parser = crate::cli::value_parsers::positive_seconds)]
    pub sequence_max_time: f64,

    /// Classify and replay with a PyTorch Execution Trace (exact overloads, recorded index
    /// ranges; see `replay classify --execution-trace`). Alone: the one compare's own capture
    /// records with its trace (or, with --trace T, the one beside T as `replay capture
    /// --execution-trace` names it: T.et.json). With ET: the Execution Trace of --trace
    #[arg(long, value_name = "ET", num_args = 0..=1, conflicts_with = "kernels")]
    pub execution_trace: Option<Option<PathBuf>>,

    /// A calibration profile whose `host` section (the host's costs measured without the
    /// profiler, `replay calibrate --host-only`) drives the host-model prediction [default:
    /// --profile's when it has one, else measured on this machine before the replay]
    #[arg(long, value_name = "PROFILE.json")]
    pub host_profile: Option<PathBuf>,

    /// Whose host durations the host-model prediction runs with: trace (as profiled),
    /// corrected (less the profiler's cost per event) or model [default: model]
    #[arg(long, value_name = "trace|corrected|model", value_parser = parse_host_times)]
    pub host_times: Option<replay::predict::HostTimes>,
}

fn parse_host_times(value: &str) -> Result<replay::predict::HostTimes, String> {
    value.parse()
}

impl From<CompareArgs> for CompareOptions {
    fn from(args: CompareArgs) -> Self {
        let timing = args.run.timing.clone();
        CompareOptions {
            run: args.run.into(),
            trace: args.trace,
            kernels: args.kernels,
            max_time_per_kernel_s: timing.max_time.unwrap_or(DEFAULT_MAX_TIME_PER_KERNEL_S),
            rounds: timing.rounds.unwrap_or(DEFAULT_ROUNDS),
            cold: timing.cold,
            perfetto: args.perfetto,
            profile: args.profile,
            inductor_cache: args.inductor_cache,
            compile: args.compile,
            blocking_kernel: !args.no_blocking_kernel,
            zoo: args.zoo,
            sequence: !args.no_sequence,
            sequence_max_time_s: args.sequence_max_time,
            execution_trace: args.execution_trace.map(|et| match et {
                Some(et) => ExecutionTraceChoice::File(et),
                None => ExecutionTraceChoice::Captured,
            }),
            host_profile: args.host_profile,
            host_times: args.host_times,
        }
    }
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    args.run.timing.refuse("compare", &["noise"])?;
    let mut console = ConsoleObserver::new(args.run.output.quiet);
    replay::pipeline::compare::run(&args.into(), &mut console)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        compare: CompareArgs,
    }

    fn options(args: &[&str]) -> Result<CompareOptions, clap::Error> {
        let argv = ["compare", "--model", "m.pt"].iter().chain(args);
        Cli::try_parse_from(argv).map(|cli| cli.compare.into())
    }

    #[test]
    fn the_execution_trace_is_captured_or_given_with_its_trace() {
        assert_eq!(options(&[]).unwrap().execution_trace, None);
        assert_eq!(
            options(&["--execution-trace"]).unwrap().execution_trace,
            Some(ExecutionTraceChoice::Captured)
        );
        let given = options(&["--trace", "t.json", "--execution-trace", "t.et.json"]).unwrap();
        assert_eq!(
            given.execution_trace,
            Some(ExecutionTraceChoice::File("t.et.json".into()))
        );
        assert_eq!(given.trace, Some(PathBuf::from("t.json")));
        // A signature file is classified already: there is nothing to attach an ET to.
        let error = options(&["--kernels", "k.json", "--execution-trace"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
}
