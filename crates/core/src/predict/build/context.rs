//! What the builder reads of a trace: its host events by thread, its GPU activities by
//! stream, and the links between them.

use crate::signature::SignatureIds;
use crate::trace::link::Links;
use crate::trace::{Category, Event, ExecutionId, FxHashMap, Nanos, Platform, Trace};

use super::super::calls::{call_kind, CallKind};
use super::super::delays::{activity_delays, launch_shape, Delays, LaunchShape};
use super::super::event_map::EventMap;
use super::facts::StepFacts;
use crate::trace::steps::StepWindow;

/// A host thread: (process, thread).
pub(super) type ThreadKey = (ExecutionId, ExecutionId);
/// A GPU stream: (device, stream).
pub(super) type StreamKey = (ExecutionId, ExecutionId);

/// The host events of one thread, each list sorted by start.
#[derive(Default)]
pub(super) struct ThreadEvents {
    /// CUDA/HIP runtime and driver calls.
    pub(super) calls: Vec<usize>,
    /// Top-level ops (CPU-only traces).
    pub(super) top_ops: Vec<usize>,
    /// Every host event (ops and calls): where the thread's host time ends.
    pub(super) host: Vec<usize>,
    /// The start of each event of `host`, and how many of `host` before it are cpu_ops:
    /// the ops in a gap are then two searches of a flat array and a subtraction (the
    /// builder asks for every gap of every step).
    pub(super) host_starts: Vec<Nanos>,
    pub(super) ops_before: Vec<u32>,
}

impl ThreadEvents {
    /// Fills `host_starts` and `ops_before` from `host` (sorted by start).
    fn index_host(&mut self, events: &[Event]) {
        self.host_starts = self.host.iter().map(|&e| events[e].ts_ns).collect();
        self.ops_before = Vec::with_capacity(self.host.len() + 1);
        let mut ops = 0u32;
        self.ops_before.push(ops);
        for &e in &self.host {
            ops += u32::from(events[e].category == Category::CpuOp);
            self.ops_before.push(ops);
        }
    }

    /// How many cpu_ops of the thread start in `[from, until]`.
    pub(super) fn ops_starting_in(&self, from: Nanos, until: Nanos) -> u32 {
        let first = self.host_starts.partition_point(|&ts| ts < from);
        let last = self.host_starts.partition_point(|&ts| ts <= until);
        match (self.ops_before.get(last), self.ops_before.get(first)) {
            (Some(&to), Some(&from)) if last >= first => to - from,
            _ => 0,
        }
    }
}

/// What the whole trace says, computed once for all steps.
pub(super) struct TraceContext<'t> {
    pub(super) trace: &'t Trace,
    pub(super) ids: &'t SignatureIds,
    /// Activities launched by each call, by start.
    pub(super) launched: EventMap<Vec<usize>>,
    /// The launch call of each activity that has one.
    pub(super) launch_of: EventMap<usize>,
    /// The launching op of each GPU activity (the innermost op around its launch call).
    pub(super) op_of: EventMap<usize>,
    pub(super) shapes: EventMap<LaunchShape>,
    /// End of the work before each activity on its stream, over the whole trace.
    pub(super) previous_end: EventMap<Nanos>,
    pub(super) delays: EventMap<Delays>,
    /// Activities without a launch call, by start.
    pub(super) unlaunched: Vec<usize>,
    /// The (device, stream) of kineto's `cuda_sync` row for a call, by correlation id.
    pub(super) sync_rows: FxHashMap<i64, StreamKey>,
    /// For a `cudaStreamWaitEvent` whose `cuda_sync` row names its event, by the wait's
    /// correlation id: the stream the event was recorded on and its record's correlation id.
    pub(super) event_waits: FxHashMap<i64, (StreamKey, i64)>,
    /// When each `cudaEventRecord` call started, by correlation id.
    pub(super) record_starts: FxHashMap<i64, Nanos>,
    /// What kind of API call each distinct name is, by string id: a trace makes tens of
    /// thousands of calls under a few dozen names.
    call_kinds: CallKinds,
    pub(super) threads: Vec<(ThreadKey, ThreadEvents)>,
    /// The trace's median launch latency on an idle GPU.
    pub(super) typical_latency_ns: Nanos,
}

/// The kind of each distinct API call name of a trace, by string id.
struct CallKinds(Vec<Option<CallKind>>);

impl CallKinds {
    fn of_trace(trace: &Trace) -> CallKinds {
        let mut kinds = vec![None; trace.strings.len()];
        for event in trace.events.iter().filter(|e| e.category.is_launch_call()) {
            if let Some(slot) = kinds.get_mut(event.name.index()) {
                slot.get_or_insert_with(|| call_kind(trace.name(event)));
            }
        }
        CallKinds(kinds)
    }

    fn of(&self, trace: &Trace, event: &Event) -> CallKind {
        self.0
            .get(event.name.index())
            .copied()
            .flatten()
            .unwrap_or_else(|| call_kind(trace.name(event)))
    }
}

pub(super) fn stream_key(event: &Event) -> StreamKey {
    (event.pid, event.tid)
}

pub(super) fn by_start(events: &[Event], list: &mut [usize]) {
    list.sort_by_key(|&i| (events[i].ts_ns, i));
}

impl<'t> TraceContext<'t> {
    /// The context of `trace`; with `facts`, of one step's events taken from a larger trace
    /// (the streamed predict): what depends on the whole trace comes from `facts`.
    pub(super) fn new(
        trace: &'t Trace,
        links: &Links,
        ids: &'t SignatureIds,
        facts: Option<&StepFacts>,
    ) -> Self {
        let events = &trace.events;
        let mut launched: EventMap<Vec<usize>> = EventMap::new(events.len());
        let mut launch_of: EventMap<usize> = EventMap::new(events.len());
        let mut op_of: EventMap<usize> = EventMap::new(events.len());
        let mut unlaunched = Vec::new();
        for link in &links.activities {
            if let Some(op) = link.op {
                op_of.insert(link.activity, op);
            }
            match link.launch {
                Some(call) => {
                    launched.get_or_default(call).push(link.activity);
                    launch_of.insert(link.activity, call);
                }
                None => unlaunched.push(link.activity),
            }
        }
        for list in launched.values_mut() {
            by_start(events, list);
        }
        by_start(events, &mut unlaunched);

        // Stream order over the whole trace, for the work before each activity.
        let mut streams: FxHashMap<StreamKey, Vec<usize>> = FxHashMap::default();
        for (index, event) in events.iter().enumerate() {
            if event.category.is_gpu_activity() {
                streams.entry(stream_key(event)).or_default().push(index);
            }
        }
        let mut previous_end: EventMap<Nanos> = EventMap::new(events.len());
        if let Some(facts) = facts {
            // The work before each activity on its stream, over the whole trace.
            streams.clear();
            for (index, end) in facts.previous_end.iter().enumerate() {
                if let Some(end) = end {
                    previous_end.insert(index, *end);
                }
            }
        }
        for list in streams.values_mut() {
            by_start(events, list);
            let mut busy_until: Option<Nanos> = None;
            for &activity in list.iter() {
                if let Some(end) = busy_until {
                    previous_end.insert(activity, end);
                }
                let end = events[activity].end_ns();
                busy_until = Some(busy_until.map_or(end, |b| b.max(end)));
            }
        }
        let shapes = EventMap::from_pairs(
            events.len(),
            launched.iter().map(|(call, activities)| {
                (call, launch_shape(trace, call, activities, &previous_end))
            }),
        );
        let (delays, typical_latency_ns) = activity_delays(
            events,
            &launch_of,
            &shapes,
            &previous_end,
            facts.map(|f| f.typical),
        );

        let mut sync_rows = FxHashMap::default();
        let mut event_waits = FxHashMap::default();
        for event in events.iter().filter(|e| e.category == Category::CudaSync) {
            if let Some(correlation) = event.args.correlation {
                sync_rows.entry(correlation).or_insert(stream_key(event));
                if let Some(wait) = &event.args.wait_on {
                    let recorded_on = (event.pid, ExecutionId::Number(wait.stream));
                    event_waits
                        .entry(correlation)
                        .or_insert((recorded_on, wait.record_correlation));
                }
            }
        }
        let call_kinds = CallKinds::of_trace(trace);
        let record_starts: FxHashMap<i64, Nanos> = events
            .iter()
            .filter(|e| {
                e.category.is_launch_call() && call_kinds.of(trace, e) == CallKind::EventRecord
            })
            .filter_map(|e| Some((e.args.correlation?, e.ts_ns)))
            .collect();

        let top_ops = match trace.platform {
            // In a CPU-only trace the units of work with an id are the top-level ops.
            Platform::Cpu => ids.events().collect(),
            Platform::Cuda | Platform::Rocm => Vec::new(),
        };
        let mut threads: FxHashMap<ThreadKey, ThreadEvents> = FxHashMap::default();
        for (index, event) in events.iter().enumerate() {
            let is_call = event.category.is_launch_call();
            if is_call || event.category == Category::CpuOp {
                let thread = threads.entry((event.pid, event.tid)).or_default();
                thread.host.push(index);
                if is_call {
                    thread.calls.push(index);
                }
            }
        }
        for op in top_ops {
            let event = &events[op];
            threads
                .entry((event.pid, event.tid))
                .or_default()
                .top_ops
                .push(op);
        }
        if let Some(facts) = facts {
            // Every thread with host events in the trace, as the whole trace's list has it
            // (its place in the list is its place in a step).
            for key in &facts.host_threads {
                threads.entry(*key).or_default();
            }
        }
        let mut threads: Vec<(ThreadKey, ThreadEvents)> = threads.into_iter().collect();
        threads.sort_by_key(|(key, _)| *key);
        for (_, thread) in &mut threads {
            by_start(events, &mut thread.calls);
            by_start(events, &mut thread.top_ops);
            by_start(events, &mut thread.host);
            thread.index_host(events);
        }

        TraceContext {
            trace,
            ids,
            launched,
            launch_of,
            op_of,
            shapes,
            previous_end,
            delays,
            unlaunched,
            sync_rows,
            event_waits,
            record_starts,
            call_kinds,
            threads,
            typical_latency_ns,
        }
    }

    /// What kind of API call `event` is.
    pub(super) fn call_kind(&self, event: &Event) -> CallKind {
        self.call_kinds.of(self.trace, event)
    }

    pub(super) fn events(&self) -> &'t [Event] {
        &self.trace.events
    }

    /// The events of `list` (sorted by start) that start inside `window`.
    pub(super) fn in_window<'l>(&self, list: &'l [usize], window: &StepWindow) -> &'l [usize] {
        let events = self.events();
        let first = list.partition_point(|&i| events[i].ts_ns < window.start_ns);
        let last = list.partition_point(|&i| events[i].ts_ns < window.end_ns);
        list.get(first..last).unwrap_or(&[])
    }

    pub(super) fn label(&self, key: ThreadKey) -> String {
        let text = |id: ExecutionId| match id {
            ExecutionId::Number(n) => n.to_string(),
            ExecutionId::Label(label) => self.trace.text(label).to_owned(),
        };
        format!("{}/{}", text(key.0), text(key.1))
    }
}
