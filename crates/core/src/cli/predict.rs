//! `replay predict`: a trace's step time predicted by the timeline model from the trace's
//! own durations, against the measured step time and the naive kernel sum; with
//! `--isolated`, also from replayed durations ([`predict::with_replayed_durations`]); with
//! `--what-if`, the same timeline with changed durations ([`predict::what_if`]); with
//! `--perfetto`, the timelines as a Chrome trace ([`export::perfetto`]).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::export;
use crate::predict::request::{PredictRequest, ReplayedNumbers};
use crate::predict::what_if::{WhatIfOutcome, ACCEPTED};
use crate::predict::{self, Prediction, Timeline, WhatIf};
use crate::trace;

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped (one member or many);
    /// `-` reads standard input. Large traces are streamed: the JSON is never in memory whole
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Also predict the step with the kernel durations of this `isolated.json` (a replay of
    /// this trace's signatures, on any device), matched by signature id; the trace's own
    /// durations stay where a signature did not replay
    #[arg(long, value_name = "FILE")]
    pub isolated: Option<PathBuf>,

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
}

/// `replay predict --json` without `--isolated`: the prediction's own fields, and the
/// what-ifs' answers when some were asked.
#[derive(Debug, Serialize)]
struct PredictionWithWhatIfs<'a> {
    #[serde(flatten)]
    prediction: &'a Prediction,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    what_ifs: &'a [WhatIfOutcome],
}

pub fn run(args: PredictArgs) -> anyhow::Result<()> {
    let loaded = trace::load(&args.trace).map_err(crate::Error::from)?;
    let request = PredictRequest {
        what_ifs: args.what_if.clone(),
        profile: args.profile.clone(),
        source_profile: args.source_profile.clone(),
        isolated: args.isolated.clone(),
        want_catalog: args.perfetto.is_some(),
    };
    let out = predict::predict_trace(&loaded, &args.trace, &request)?;
    let prediction = &out.prediction;
    let outcomes = &out.outcomes;
    let note = &out.hardware_note;
    if let Some(path) = &args.perfetto {
        let mut timelines: Vec<&Timeline> = vec![&out.original];
        timelines.extend(out.answers.iter().map(|a| &a.timeline));
        export::perfetto::write(path, &timelines, &out.catalog)?;
    }

    if let Some(replayed) = &out.replayed {
        if args.json {
            let printed = ReplayedPrediction {
                self_check: prediction,
                numbers: replayed,
                what_ifs: outcomes,
            };
            print!(
                "{}",
                String::from_utf8_lossy(&export::json::to_bytes(&printed))
            );
        } else {
            print!("{}", prediction.summary());
            print!("{}", WhatIfOutcome::summary(outcomes, prediction));
            print!("{note}");
            println!(
                "with the durations of {} ({}, {} signatures replayed): {:.1} us predicted against {:.1} us measured ({:+.1} %)",
                replayed.isolated,
                replayed.isolated_device,
                replayed.replayed_signatures,
                replayed.predicted_us,
                replayed.measured_us,
                replayed.error_percent
            );
        }
        return Ok(());
    }
    if args.json {
        let printed = PredictionWithWhatIfs {
            prediction,
            what_ifs: outcomes,
        };
        print!(
            "{}",
            String::from_utf8_lossy(&export::json::to_bytes(&printed))
        );
    } else {
        print!("{}", prediction.summary());
        print!("{}", WhatIfOutcome::summary(outcomes, prediction));
        print!("{note}");
    }
    Ok(())
}
