//! `replay predict`: a trace's step time predicted by the timeline model from the trace's
//! own durations, against the measured step time and the naive kernel sum; with
//! `--isolated`, also from replayed durations ([`predict::with_replayed_durations`]); with
//! `--what-if`, the same timeline with changed durations ([`predict::what_if`]); with
//! `--perfetto`, the timelines as a Chrome trace ([`export::perfetto`]).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use replay_core::export;
use replay_core::predict::request::{PredictRequest, ReplayedNumbers};
use replay_core::predict::step_stats::StepStatistics;
use replay_core::predict::what_if::{WhatIfOutcome, ACCEPTED};
use replay_core::predict::{self, Prediction, Timeline, WhatIf};
use replay_core::ranks;
use replay_core::trace;

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped (one member or many);
    /// `-` reads standard input, and large traces are streamed (never in memory whole). Several files or a
    /// glob (`'rank*.json.gz'`, expanded by replay) are the ranks of one job: each rank's step
    /// time, the slowest rank and how far it trails the median (the straggler), and the
    /// collectives matched across the ranks by process group and sequence number
    #[arg(long, value_name = "FILE|GLOB", num_args = 1.., required = true)]
    pub trace: Vec<PathBuf>,

    /// `all`: every ProfilerStep#N of the trace predicted and summarised: the median step,
    /// the spread, and the outlying steps by number [default: the steps' mean and each step]
    #[arg(long, value_name = "all")]
    pub steps: Option<StepsArg>,

    /// Also predict the step with the kernel durations of this `isolated.json` (a replay of
    /// this trace's signatures, on any device), matched by signature id; the trace's own
    /// durations stay where a signature did not replay
    #[arg(long, value_name = "FILE")]
    pub isolated: Option<PathBuf>,

    /// With --isolated: whose host durations the prediction runs with. `trace`: as the
    /// trace recorded them (the profiler's cost included: with the trace's own per-signature
    /// times this gives the trace's own model call back); `corrected`: the trace's less the
    /// profiler's measured cost per recorded event; `model`: the host model (each op's host
    /// cost measured without the profiler, by the replay and the profile's host section)
    /// [default: model when --host-profile or --profile has a host section, else corrected]
    #[arg(long, value_name = "trace|corrected|model", value_parser = parse_host_times, requires = "isolated")]
    pub host_times: Option<predict::HostTimes>,

    /// A calibration profile whose `host` section (the host's costs measured without the
    /// profiler by `replay calibrate`) drives the host model of --isolated [default:
    /// --profile's, when it has one]
    #[arg(long, value_name = "PROFILE.json", requires = "isolated")]
    pub host_profile: Option<PathBuf>,

    /// Ask the timeline "what if": tier1|tier2|tier3*F, kernel:REGEX*F, op:REGEX*F, host*F,
    /// launch*F, launch=US (launch=0: no host cost per launch, as with CUDA Graphs),
    /// durations=FILE (an isolated.json, by signature id). Repeatable: each applies on top
    /// of the ones before it, and each answer is printed beside the original
    #[arg(long = "what-if", value_name = "EXPR", help_heading = "What-if", long_help = what_if_help())]
    pub what_if: Vec<WhatIf>,

    /// Write the predicted timelines (the original and each what-if, one process each) as a
    /// Chrome trace that ui.perfetto.dev and chrome://tracing open
    #[arg(long, value_name = "OUT.json")]
    pub perfetto: Option<PathBuf>,

    /// Predict the trace on other hardware: re-time its kernels from the trace's device to
    /// this calibration profile's (`replay calibrate`, or a datasheet profile in profiles/) —
    /// GEMMs by GFLOPS at their size and dtype, everything else by memory bandwidth — and run
    /// the timeline again; host time is kept. Printed and exported like a what-if (first,
    /// before any --what-if)
    #[arg(long, value_name = "TARGET.json", help_heading = "Other hardware")]
    pub profile: Option<PathBuf>,

    /// The profile of the device the trace was captured on [default: the profile in
    /// profiles/ whose hardware name or device names match the trace's deviceProperties name]
    #[arg(
        long,
        value_name = "SOURCE.json",
        help_heading = "Other hardware",
        requires = "profile"
    )]
    pub source_profile: Option<PathBuf>,

    /// Print the prediction as JSON instead of the summary
    #[arg(long)]
    pub json: bool,

    /// Memory the predict may use (bytes, or with K, M, G, T). A trace whose in-memory
    /// predict would need more (about 2 bytes per byte of JSON) is predicted streamed: its
    /// events sorted on disk (in TMPDIR) beyond the budget and predicted one step at a
    /// time, memory independent of the trace's size and number of steps, the same
    /// prediction. Without this, a trace of 256 MiB of JSON or more streams too (it is
    /// faster so) unless an option below needs it held; with it, a trace that fits is held.
    /// Standard input streams when this is given, or else when it runs past 64 MiB (its
    /// first 64 MiB are read ahead to see). Streamed, only the trace's own prediction
    /// is made (no --what-if, --profile, --isolated, --perfetto); a large trace takes 60-180 MB
    /// by the budget: one under about 96 MB may not be met [default: half the memory
    /// available]
    #[arg(long, value_name = "SIZE", value_parser = replay_core::memory_size::parse_size)]
    pub memory_budget: Option<u64>,
}

fn parse_host_times(value: &str) -> Result<predict::HostTimes, String> {
    value.parse()
}

/// The values of `--steps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StepsArg {
    /// Every ProfilerStep: median, spread, outliers.
    All,
}

fn what_if_help() -> String {
    format!(
        "Ask the timeline \"what if\": re-run it with changed durations and print the new step \
         time beside the original. Accepted: {ACCEPTED}. tierN: the tier's signatures (1 \
         copies and memsets, 2 GEMMs, 3 everything else); kernel:REGEX the signatures whose \
         kernel name REGEX finds; op:REGEX those launched inside an op REGEX finds; host the \
         host's own time (framework time, launch calls, a wait's own cost); launch=0 no host \
         cost per launch (the effect of CUDA Graphs). Repeatable: applied in order, each on \
         top of the ones before it."
    )
}

/// `replay predict --isolated`: both timelines of the trace, side by side.
#[derive(Debug, Serialize)]
struct ReplayedPrediction<'a> {
    /// The trace's own durations through the timeline (the self-check).
    self_check: &'a Prediction,
    /// The isolated file, its device, and the prediction with its durations.
    #[serde(flatten)]
    numbers: &'a ReplayedNumbers,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    what_ifs: &'a [WhatIfOutcome],
    #[serde(skip_serializing_if = "Option::is_none")]
    step_statistics: Option<&'a StepStatistics>,
}

/// `replay predict --json` without `--isolated`: the prediction's own fields, and the
/// what-ifs' answers when some were asked.
#[derive(Debug, Serialize)]
struct PredictionWithWhatIfs<'a> {
    #[serde(flatten)]
    prediction: &'a Prediction,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    what_ifs: &'a [WhatIfOutcome],
    #[serde(skip_serializing_if = "Option::is_none")]
    step_statistics: Option<&'a StepStatistics>,
}

pub fn run(args: PredictArgs) -> anyhow::Result<()> {
    let paths = ranks::expand(&args.trace).map_err(replay_core::Error::from)?;
    match paths.as_slice() {
        [trace] => run_one(&args, trace),
        _ => {
            refuse_single_trace_flags(&args, &paths)?;
            super::predict_ranks::run(&paths, args.steps.is_some(), args.json)
        }
    }
}

/// The flags that work on one trace, refused for several.
fn refuse_single_trace_flags(args: &PredictArgs, paths: &[PathBuf]) -> anyhow::Result<()> {
    let single_trace_only = [
        ("--isolated", args.isolated.is_some()),
        ("--what-if", !args.what_if.is_empty()),
        ("--perfetto", args.perfetto.is_some()),
        ("--profile", args.profile.is_some()),
        ("--memory-budget", args.memory_budget.is_some()),
    ];
    match single_trace_only.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(replay_core::Error::BadInput {
            path: paths[0].clone(),
            message: format!(
                "{flag} works on one trace; {} rank traces were given (run it on one rank)",
                paths.len()
            ),
        }
        .into()),
        None => Ok(()),
    }
}

fn run_one(args: &PredictArgs, trace_path: &std::path::Path) -> anyhow::Result<()> {
    let in_memory_only = [
        ("--what-if", !args.what_if.is_empty()),
        ("--profile", args.profile.is_some()),
        ("--isolated", args.isolated.is_some()),
        ("--perfetto", args.perfetto.is_some()),
    ];
    let streamed =
        super::predict_streamed::predict_streamed(args.memory_budget, &in_memory_only, trace_path)?;
    if let Some(prediction) = streamed {
        print_prediction(args, &prediction, &[], "");
        return Ok(());
    }
    let loaded = trace::load(trace_path).map_err(replay_core::Error::from)?;
    let request = PredictRequest {
        what_ifs: args.what_if.clone(),
        profile: args.profile.clone(),
        source_profile: args.source_profile.clone(),
        isolated: args.isolated.clone(),
        want_catalog: args.perfetto.is_some(),
        host_times: args.host_times,
        host_profile: args.host_profile.clone(),
    };
    let out = predict::predict_trace(&loaded, trace_path, &request)?;
    let prediction = &out.prediction;
    let outcomes = &out.outcomes;
    let note = &out.hardware_note;
    let statistics = args.steps.map(|_| StepStatistics::of(prediction));
    if let Some(path) = &args.perfetto {
        let mut timelines: Vec<&Timeline> = vec![&out.original];
        timelines.extend(out.answers.iter().map(|a| &a.timeline));
        export::perfetto::write(path, &timelines, &out.catalog)?;
        // On stderr: --json's standard output stays one JSON document.
        eprintln!(
            "wrote {} ({} timeline{}; open it in ui.perfetto.dev or chrome://tracing)",
            path.display(),
            timelines.len(),
            if timelines.len() == 1 { "" } else { "s" }
        );
    }

    if let Some(replayed) = &out.replayed {
        if args.json {
            let printed = ReplayedPrediction {
                self_check: prediction,
                numbers: replayed,
                what_ifs: outcomes,
                step_statistics: statistics.as_ref(),
            };
            print!(
                "{}",
                String::from_utf8_lossy(&export::json::to_bytes(&printed))
            );
        } else {
            print!("{}", prediction.summary());
            if let Some(statistics) = &statistics {
                print!("{}", statistics.summary());
            }
            print!("{}", WhatIfOutcome::summary(outcomes, prediction));
            print!("{note}");
            println!(
                "with the durations of {} ({}, {} signatures replayed), host times '{}': {:.1} us predicted against {:.1} us measured in the trace ({:+.1} %), the model call",
                replayed.isolated,
                replayed.isolated_device,
                replayed.replayed_signatures,
                replayed.host.host_times.name(),
                replayed.predicted_us,
                replayed.measured_us,
                replayed.error_percent
            );
            println!(
                "  host {:.1} us, device {:.1} us: {}-bound; host: {}",
                replayed.host_us, replayed.device_us, replayed.bound, replayed.host.host_model
            );
            if replayed.host.host_times != predict::HostTimes::Trace {
                println!(
                    "  (the trace's model call keeps the profiler's cost: host times '{}' predict \
                     an unprofiled run, to be compared with `replay full`'s timing of the model)",
                    replayed.host.host_times.name()
                );
            }
            for note in &replayed.host.notes {
                println!("  note: {note}");
            }
        }
        return Ok(());
    }
    print_prediction(args, prediction, outcomes, note);
    Ok(())
}

/// Prints the prediction (and the what-ifs' answers) as `replay predict` does without
/// `--isolated`.
fn print_prediction(
    args: &PredictArgs,
    prediction: &Prediction,
    outcomes: &[WhatIfOutcome],
    note: &str,
) {
    let statistics = args.steps.map(|_| StepStatistics::of(prediction));
    if args.json {
        let printed = PredictionWithWhatIfs {
            prediction,
            what_ifs: outcomes,
            step_statistics: statistics.as_ref(),
        };
        print!(
            "{}",
            String::from_utf8_lossy(&export::json::to_bytes(&printed))
        );
    } else {
        print!("{}", prediction.summary());
        if let Some(statistics) = &statistics {
            print!("{}", statistics.summary());
        }
        print!("{}", WhatIfOutcome::summary(outcomes, prediction));
        print!("{note}");
    }
}
