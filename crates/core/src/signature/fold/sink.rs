//! What a streamed classify keeps of each event as the blocks pass: a compact record of
//! every host range and GPU activity, handed to external sorters (in memory up to their
//! segment size, on disk beyond), and the few events the file's description needs whole
//! (profiler steps, compiled regions).

use super::sorter::PushSorter;

use crate::signature::compiled_code::{is_compiled_region, Interval, Thread};
use crate::trace::steps::PROFILER_STEP_PREFIX;
use crate::trace::{Category, Event, FxHashMap, Nanos, StringTable, TraceError};

use super::records::{ActivityRecord, HostKind, HostRecord};
use super::sorter::sorter;

type Order<T> = fn(&T, &T) -> std::cmp::Ordering;

fn host_order(a: &HostRecord, b: &HostRecord) -> std::cmp::Ordering {
    a.sweep_key().cmp(&b.sweep_key())
}

fn activity_order(a: &ActivityRecord, b: &ActivityRecord) -> std::cmp::Ordering {
    (a.correlation, a.index).cmp(&(b.correlation, b.index))
}

/// A profiler step's span.
#[derive(Debug, Clone, Copy)]
pub struct StepEvent {
    pub start: Nanos,
    pub end: Nanos,
}

/// The records of a trace, collected as its events stream past.
pub struct FoldSink {
    pub host: PushSorter<HostRecord, Order<HostRecord>>,
    pub activities: PushSorter<ActivityRecord, Order<ActivityRecord>>,
    /// Kept events seen so far (the next event's position).
    pub events: u64,
    /// Each (pid, tid) by the number its records carry.
    pub threads: Vec<Thread>,
    thread_ids: FxHashMap<Thread, u32>,
    pub steps: Vec<StepEvent>,
    /// Compiled regions by thread.
    pub regions: FxHashMap<Thread, Vec<Interval>>,
    /// The span of the ops, launch calls and GPU activities (the profiled window when the
    /// trace has no steps).
    pub first_start: Nanos,
    pub last_end: Nanos,
    /// The first sorter error (a full disk): the read stops there.
    pub error: Option<String>,
}

impl FoldSink {
    /// Sorters that keep up to `records_in_memory` records each before they write a sorted
    /// segment to a folder of their own in `dir`.
    pub fn new(records_in_memory: usize, dir: &std::path::Path) -> Self {
        FoldSink {
            host: sorter(records_in_memory, dir, "host").pushed_by(host_order as Order<HostRecord>),
            activities: sorter(records_in_memory, dir, "activities")
                .pushed_by(activity_order as Order<ActivityRecord>),
            events: 0,
            threads: Vec::new(),
            thread_ids: FxHashMap::default(),
            steps: Vec::new(),
            regions: FxHashMap::default(),
            first_start: Nanos::MAX,
            last_end: Nanos::MIN,
            error: None,
        }
    }

    fn thread(&mut self, thread: Thread) -> u32 {
        if let Some(&id) = self.thread_ids.get(&thread) {
            return id;
        }
        let id = u32::try_from(self.threads.len()).unwrap_or(u32::MAX);
        self.threads.push(thread);
        self.thread_ids.insert(thread, id);
        id
    }

    /// Takes one block's events (in file order).
    pub fn take(&mut self, events: &[Event], strings: &StringTable) -> Result<(), TraceError> {
        for event in events {
            let index = self.events;
            self.events += 1;
            self.take_one(index, event, strings);
            if let Some(error) = &self.error {
                return Err(TraceError::Io {
                    path: std::path::PathBuf::from("(replay's temporary sort files)"),
                    source: std::io::Error::other(error.clone()),
                });
            }
        }
        Ok(())
    }

    fn take_one(&mut self, index: u64, event: &Event, strings: &StringTable) {
        let category = event.category;
        if matches!(category, Category::CpuOp)
            || category.is_launch_call()
            || category.is_gpu_activity()
        {
            self.first_start = self.first_start.min(event.ts_ns);
            self.last_end = self.last_end.max(event.end_ns());
        }
        let thread = (event.pid, event.tid);
        let name = strings.get(event.name);
        if category == Category::UserAnnotation
            && event.dur_ns > 0
            && name.starts_with(PROFILER_STEP_PREFIX)
        {
            self.steps.push(StepEvent {
                start: event.ts_ns,
                end: event.end_ns(),
            });
        }
        if matches!(
            category,
            Category::CpuOp | Category::UserAnnotation | Category::PythonFunction
        ) && is_compiled_region(name)
        {
            self.regions
                .entry(thread)
                .or_default()
                .push((event.ts_ns, event.end_ns()));
        }
        let kind = match category {
            Category::CpuOp => Some(HostKind::Op),
            Category::PythonFunction => Some(HostKind::Module),
            Category::CudaRuntime | Category::CudaDriver => Some(HostKind::Launch),
            _ => None,
        };
        let pushed = if let Some(kind) = kind {
            let record = HostRecord {
                thread: self.thread(thread),
                ts: event.ts_ns,
                kind,
                dur: event.dur_ns,
                index,
                name: event.name,
                inputs: event.args.inputs,
                id: match kind {
                    HostKind::Launch => event.args.correlation,
                    _ => event.args.external_id.map(|id| id.value),
                },
                bytes: event.args.bytes,
            };
            self.host.push(record)
        } else if category.is_gpu_activity() {
            self.activities.push(ActivityRecord {
                index,
                category,
                name: event.name,
                correlation: event.args.correlation,
                dur: event.dur_ns,
                stream: event.args.stream,
                grid: event.args.grid,
                block: event.args.block,
                bytes: event.args.bytes,
                external_id: event.args.external_id.map(|id| id.value),
            })
        } else {
            Ok(())
        };
        if let Err(error) = pushed {
            self.error.get_or_insert_with(|| error.to_string());
        }
    }
}
