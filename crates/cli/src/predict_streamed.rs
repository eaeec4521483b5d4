//! `replay predict --memory-budget`: whether a trace is predicted streamed
//! ([`predict::stream`]), by the same rule as `classify`'s, and the options a streamed
//! predict cannot honour, refused rather than ignored.

use std::path::Path;

use replay_core::predict::stream::{self, StreamError, StreamOptions};
use replay_core::predict::Prediction;
use replay_core::signature::fold::budget::{in_memory_estimate, MemoryBudget};
use replay_core::trace;

/// The streamed prediction of `trace_path` when the budget's rule streams it
/// ([`MemoryBudget::streams`]: its in-memory predict would take more than the budget, or,
/// without `--memory-budget`, it is large enough that streaming is faster; standard input:
/// when `--memory-budget` is given); `None` when it is predicted in memory (small enough,
/// or not streamable: then a note says so). `in_memory_only`: the options given that need
/// the whole trace, by flag: the trace is then held where it fits the budget, and the
/// options are refused where it does not.
pub fn predict_streamed(
    memory_budget: Option<u64>,
    in_memory_only: &[(&str, bool)],
    trace_path: &Path,
) -> Result<Option<Prediction>, replay_core::Error> {
    let budget = MemoryBudget::from_option(memory_budget);
    if !budget.streams(trace_path) {
        return Ok(None);
    }
    if in_memory_only.iter().any(|(_, given)| *given) && !budget.must_stream(trace_path) {
        return Ok(None);
    }
    refuse_in_memory_options(in_memory_only, trace_path, &budget)?;
    if let Some(note) = budget.floor_note() {
        eprintln!("{note}");
    }
    match stream::predict_streamed(trace_path, &StreamOptions::for_budget(&budget)) {
        Ok(prediction) => Ok(Some(prediction)),
        Err(StreamError::Trace(e)) => Err(e.into()),
        Err(StreamError::NotStreamable { path, reason })
            if path.as_os_str() != trace::STDIN_PATH =>
        {
            eprintln!(
                "note: {}: {reason}: predicting it in memory",
                path.display()
            );
            Ok(None)
        }
        Err(StreamError::NotStreamable { path, reason }) => Err(replay_core::Error::BadInput {
            path,
            message: format!(
                "{reason}: such a trace is predicted in memory, which standard input is not \
                 with --memory-budget, beyond 64 MiB, or a gzip of 256 MiB of JSON or more \
                 (give the file)"
            ),
        }),
        Err(StreamError::Spill(e)) => Err(replay_core::Error::Io {
            context: "the streamed predict".into(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

/// The options that need the whole trace in memory, refused for a streamed predict.
fn refuse_in_memory_options(
    in_memory_only: &[(&str, bool)],
    trace_path: &Path,
    budget: &MemoryBudget,
) -> Result<(), replay_core::Error> {
    let Some((flag, _)) = in_memory_only.iter().find(|(_, given)| *given) else {
        return Ok(());
    };
    let why = match in_memory_estimate(trace_path) {
        Some(need) => format!(
            "its in-memory predict would need about {} MB, more than the memory budget of {} MB",
            need >> 20,
            budget.bytes >> 20
        ),
        None => "standard input with --memory-budget is streamed".to_owned(),
    };
    Err(replay_core::Error::BadInput {
        path: trace_path.to_path_buf(),
        message: format!(
            "{flag} needs the whole trace in memory, and this trace would be predicted streamed \
             ({why}): run without --memory-budget, or give a larger one (or the file rather \
             than standard input)"
        ),
    })
}
