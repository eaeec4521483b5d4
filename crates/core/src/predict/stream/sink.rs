//! The streamed predict's one pass over the events: every event a step's prediction may
//! read goes, whole, to an external sorter (in memory up to its segment size, on disk
//! beyond): host ranges in file order (routed once the steps are known), GPU activities by
//! stream and start (for the work before each), launch calls and `cuda_sync` rows by
//! correlation id (to meet their activities). The step spans and the threads with host
//! events are kept as they pass: a few per step and per thread.

use crate::signature::fold::sorter::PushSorter;

use crate::signature::fold::sorter::sorter;
use crate::trace::steps::StepWindow;
use crate::trace::{Category, Event, ExecutionId, FxHashMap, StringTable, TraceError};

use super::record::{by_correlation, by_index, by_stream, Order, Record};
use super::windows::{is_step_span, window_of};

pub type Sorter = PushSorter<Record, Order>;

/// A sorter of records in `order`, its segments in `dir/name`.
pub fn record_sorter(
    records_in_memory: usize,
    dir: &std::path::Path,
    name: &str,
    order: Order,
) -> Sorter {
    sorter(records_in_memory, dir, name).pushed_by(order)
}

/// Routes `record` to each step in `steps`.
pub fn route(
    routed: &mut Sorter,
    record: &Record,
    steps: impl Iterator<Item = usize>,
) -> std::io::Result<()> {
    for step in steps {
        routed.push(Record {
            step: u32::try_from(step).unwrap_or(u32::MAX),
            ..record.clone()
        })?;
    }
    Ok(())
}

/// What the pass keeps.
pub struct PredictSink {
    /// Ops, annotations, Python ranges and runtime calls, in file order.
    pub host: Sorter,
    /// GPU activities, by stream and start.
    pub activities: Sorter,
    /// Runtime calls and `cuda_sync` rows with a correlation id, by it.
    pub correlated: Sorter,
    /// Kept events seen so far (the next event's position).
    pub events: u64,
    /// The step spans, in file order.
    pub steps: Vec<StepWindow>,
    /// Each (pid, tid) with an op or a runtime call, and the first position it had one at.
    pub host_threads: FxHashMap<(ExecutionId, ExecutionId), u64>,
    /// The first sorter error (a full disk): the read stops there.
    pub error: Option<String>,
}

impl PredictSink {
    pub fn new(records_in_memory: usize, dir: &std::path::Path) -> Self {
        PredictSink {
            host: record_sorter(records_in_memory, dir, "host", by_index),
            activities: record_sorter(records_in_memory, dir, "activities", by_stream),
            correlated: record_sorter(records_in_memory, dir, "correlated", by_correlation),
            events: 0,
            steps: Vec::new(),
            host_threads: FxHashMap::default(),
            error: None,
        }
    }

    /// Takes one block's events (in file order).
    pub fn take(&mut self, events: &[Event], strings: &StringTable) -> Result<(), TraceError> {
        for event in events {
            let index = self.events;
            self.events += 1;
            if let Err(error) = self.take_one(index, event, strings) {
                self.error.get_or_insert_with(|| error.to_string());
            }
            if let Some(error) = &self.error {
                return Err(TraceError::Io {
                    path: std::path::PathBuf::from("(replay's temporary sort files)"),
                    source: std::io::Error::other(error.clone()),
                });
            }
        }
        Ok(())
    }

    fn take_one(
        &mut self,
        index: u64,
        event: &Event,
        strings: &StringTable,
    ) -> std::io::Result<()> {
        let category = event.category;
        if is_step_span(event, strings) {
            self.steps.push(window_of(event, strings));
        }
        if category == Category::CpuOp || category.is_launch_call() {
            self.host_threads
                .entry((event.pid, event.tid))
                .or_insert(index);
        }
        let record = || Record {
            index,
            step: 0,
            previous_end: None,
            event: event.clone(),
        };
        match category {
            Category::CpuOp | Category::UserAnnotation | Category::PythonFunction => {
                self.host.push(record())
            }
            Category::CudaRuntime | Category::CudaDriver => {
                if event.args.correlation.is_some() {
                    self.correlated.push(record())?;
                }
                self.host.push(record())
            }
            Category::CudaSync if event.args.correlation.is_some() => {
                self.correlated.push(record())
            }
            _ if category.is_gpu_activity() => self.activities.push(record()),
            _ => Ok(()),
        }
    }
}
