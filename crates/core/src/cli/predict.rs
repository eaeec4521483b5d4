//! `replay predict`: a trace's step time predicted by the timeline model from the trace's
//! own durations, against the measured step time and the naive kernel sum; with
//! `--isolated`, also from replayed durations ([`predict::with_replayed_durations`]).

use std::path::PathBuf;

use clap::Args;

use crate::export;
use crate::predict::{self, Prediction};
use crate::results::isolated::{IsolatedResults, Status};
use crate::trace::{self, Trace};

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Also predict the step with the kernel durations of this `isolated.json` (a replay of
    /// this trace's signatures, on any device), matched by signature id; the trace's own
    /// durations stay where a signature did not replay
    #[arg(long, value_name = "FILE")]
    pub isolated: Option<PathBuf>,

    /// Print the prediction as JSON instead of the summary
    #[arg(long)]
    pub json: bool,
}

/// `replay predict --isolated`: both timelines of the trace, side by side.
#[derive(Debug, serde::Serialize)]
struct ReplayedPrediction<'a> {
    /// The trace's own durations through the timeline (the self-check).
    self_check: &'a Prediction,
    /// The isolated file, as given.
    isolated: String,
    /// The device the isolated durations were measured on.
    isolated_device: &'a str,
    /// Signatures of the file whose replayed durations replaced the trace's.
    replayed_signatures: usize,
    /// The timeline with the replayed durations (the model call, as in `replay compare`).
    predicted_us: f64,
    /// The trace's measured step.
    measured_us: f64,
    error_percent: f64,
}

pub fn run(args: PredictArgs) -> anyhow::Result<()> {
    let loaded = trace::load(&args.trace).map_err(crate::Error::from)?;
    let prediction = self_check(&loaded)?;
    if let Some(path) = &args.isolated {
        let results = IsolatedResults::read(path)?;
        let timeline =
            predict::with_replayed_durations(&loaded, &results).map_err(crate::Error::from)?;
        let replayed = ReplayedPrediction {
            self_check: &prediction,
            isolated: path.display().to_string(),
            isolated_device: &results.device,
            replayed_signatures: results
                .results
                .iter()
                .filter(|r| matches!(r.status, Status::Ok | Status::Included))
                .count(),
            predicted_us: timeline.predicted_us,
            measured_us: prediction.measured_us,
            error_percent: predict::error_percent(timeline.predicted_us, prediction.measured_us),
        };
        if args.json {
            print!(
                "{}",
                String::from_utf8_lossy(&export::json::to_bytes(&replayed))
            );
        } else {
            print!("{}", prediction.summary());
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
        print!(
            "{}",
            String::from_utf8_lossy(&export::json::to_bytes(&prediction))
        );
    } else {
        print!("{}", prediction.summary());
    }
    Ok(())
}

/// The self-check; a trace with nothing to time is a usage error (`From<PredictError>`).
fn self_check(trace: &Trace) -> Result<Prediction, crate::Error> {
    Ok(predict::self_check(trace)?)
}
