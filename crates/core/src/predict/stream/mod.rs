//! `predict` in one streaming pass whose memory does not grow with the trace or its number
//! of steps (issue 33).
//!
//! The in-memory predict holds every event of the trace ([`crate::predict::predict_trace`]).
//! Here the events pass a block at a time ([`crate::trace::stream_events`]) into external
//! sorters ([`sink`]), which keep a bounded number in memory and write sorted segments to
//! a temporary folder beyond it. Then:
//! 1. the GPU activities, by stream and start, get the end of the work before each
//!    ([`join::sweep_streams`]);
//! 2. launch calls, activities and `cuda_sync` rows meet by correlation id
//!    ([`join::join_correlations`]): each activity is routed to the step of its launch
//!    call, and its delays are sampled for the trace's typical delays ([`medians`]);
//!    The `cudaEventRecord` calls that a step's stream waits name go to that step as well
//!    ([`event_records`]);
//! 3. the host events are routed to every step their interval touches (the ops and calls
//!    a step walks, and those around it: the ops that enclose its ops, the compiled regions
//!    and what covers them);
//! 4. the routed events, by step, become one small trace per step, predicted by the
//!    in-memory builder and simulation ([`step`]) with the few facts that depend on the
//!    whole trace (the work before each activity on its stream, the typical delays, the
//!    threads); the step's numbers are kept, its events dropped.
//!
//! A step's skeleton is then the one the in-memory predict builds (every event it reads is
//! in its small trace, and what it measures over the whole trace is given), so the
//! prediction is the same, byte for byte (tested on every shared trace).
//!
//! Not streamed: a trace without a `ProfilerStep` span (its one step, the profiled window,
//! is the whole trace) and a CPU-only trace (its units of work are top-level ops); both
//! are predicted in memory ([`StreamError::NotStreamable`]).

mod event_records;
mod join;
mod medians;
mod record;
mod sink;
mod step;
mod windows;

use std::path::{Path, PathBuf};

use crate::signature::fold::ahead::read_ahead;
use crate::signature::fold::budget::MemoryBudget;
use crate::trace::{Platform, TraceError};

use super::build::StepFacts;
use super::prediction::Prediction;
use super::skeleton::Skeleton;
use crate::trace::steps::StepSource;

use record::{by_correlation, by_step, Record};
use sink::{record_sorter, PredictSink};
use windows::Windows;

/// Why a streamed predict failed, or cannot stream the trace.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{path}: {reason}: it is predicted in memory (run without --memory-budget, or with a larger one)")]
    NotStreamable { path: PathBuf, reason: &'static str },
    #[error(transparent)]
    Spill(#[from] crate::spill::SpillError),
}

/// How much a streamed predict may keep in memory.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Records each sorter keeps before it writes a segment (three fill at once).
    pub records_in_memory: usize,
    /// Where the segments go (a temporary folder inside it, removed at the end).
    pub spill_dir: PathBuf,
    /// JSON bytes the trace is read in at a time (`None`: the default).
    pub block_bytes: Option<usize>,
}

impl StreamOptions {
    /// Options for `budget`: an eighth of it per sorter, the segments in `TMPDIR`.
    pub fn for_budget(budget: &MemoryBudget) -> StreamOptions {
        let per_record = std::mem::size_of::<Record>() as u64 + 16;
        StreamOptions {
            records_in_memory: usize::try_from(budget.bytes / 8 / per_record).unwrap_or(usize::MAX),
            spill_dir: std::env::temp_dir(),
            block_bytes: Some(budget.block_bytes()),
        }
    }
}

/// Predicts the trace at `path` (`-`: standard input) in one streaming pass, with the
/// trace's own durations (what `replay predict` prints without what-ifs).
pub fn predict_streamed(path: &Path, options: &StreamOptions) -> Result<Prediction, StreamError> {
    predict_streamed_with(path, options, &mut |_| {})
}

/// [`predict_streamed`], showing `on_step` each step's skeleton (a one-step [`Skeleton`]
/// with the step's own signature ids) before it is dropped.
pub fn predict_streamed_with(
    path: &Path,
    options: &StreamOptions,
    on_step: &mut dyn FnMut(&Skeleton),
) -> Result<Prediction, StreamError> {
    let work = tempfile::Builder::new()
        .prefix("replay-predict-")
        .tempdir_in(&options.spill_dir)
        .map_err(|e| spill_error(path, &options.spill_dir, e))?;
    let dir = work.path();
    let spill = |e: std::io::Error| spill_error(path, dir, e);

    let mut sink = PredictSink::new(options.records_in_memory, dir);
    let mut trace = crate::trace::stream_events_in_blocks(
        path,
        options.block_bytes,
        &mut |events, strings| sink.take(events, strings),
    )?;
    let not_streamable = |reason| StreamError::NotStreamable {
        path: path.to_path_buf(),
        reason,
    };
    if trace.platform == Platform::Cpu {
        return Err(not_streamable(
            "a CPU-only trace (its units of work are top-level ops)",
        ));
    }
    let PredictSink {
        host,
        activities,
        mut correlated,
        steps,
        host_threads,
        ..
    } = sink;
    if steps.is_empty() {
        return Err(not_streamable(
            "no ProfilerStep span (its step is the whole profiled window)",
        ));
    }
    let windows = Windows::new(steps);

    let memory = options.records_in_memory;
    // Each sorter's merge is read on a thread of its own, beside the code that takes it.
    let results = std::thread::scope(|scope| -> std::io::Result<_> {
        let mut routed = record_sorter(memory, dir, "routed", by_step);
        join::sweep_streams(
            read_ahead(scope, activities.done()?),
            &mut correlated,
            &mut routed,
            &windows,
        )?;
        for record in read_ahead(scope, host.done()?) {
            let record = record?;
            let touching = windows.touching(record.event.ts_ns, record.event.end_ns());
            sink::route(&mut routed, &record, touching)?;
        }
        let mut samples = medians::SampleSink::new(memory, dir);
        let mut requests = record_sorter(memory, dir, "event_records", by_correlation);
        join::join_correlations(
            read_ahead(scope, correlated.done()?),
            &trace.strings,
            &windows,
            &mut routed,
            &mut requests,
            &mut samples,
        )?;
        event_records::route_records(read_ahead(scope, requests.done()?), &mut routed)?;
        let mut threads: Vec<_> = host_threads.into_keys().collect();
        threads.sort_unstable();
        let facts = StepFacts {
            previous_end: Vec::new(),
            typical: samples.typical()?,
            host_threads: threads,
        };
        step::predict_steps(
            read_ahead(scope, routed.done()?),
            &windows,
            &mut trace,
            facts,
            on_step,
        )
    })
    .map_err(spill)?;
    drop(work);
    Ok(
        Prediction::from_steps(StepSource::ProfilerStep, results.numbers).named(
            &trace.source.path,
            trace.platform,
            results.compiled,
        ),
    )
}

fn spill_error(path: &Path, dir: &Path, error: impl std::fmt::Display) -> StreamError {
    crate::spill::SpillError::new(path, dir, error).into()
}
