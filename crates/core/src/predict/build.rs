//! Making the skeleton of every step of a trace.
//!
//! Per step window ([`super::steps`]) and host thread, the thread's CUDA/HIP API calls
//! that start inside the window are walked in time order:
//! - a call that launched GPU activities (same correlation id) becomes a launch item of the
//!   call's measured duration; a copy call that returns only when its copy is done
//!   (synchronous API, or a pageable copy that ended after its GPU copy) is split into the
//!   launch and a wait for the copy;
//! - `cudaDeviceSynchronize`/`cudaStreamSynchronize`/`cudaEventSynchronize` (and `cudaFree`,
//!   which synchronises the device) become waits. A stream sync's stream is the one of the
//!   kineto `cuda_sync` row with the same correlation id when the trace has it, else the
//!   stream of the thread's last launch. `aten::item`/`_local_scalar_dense` and `.cpu()`
//!   block through exactly these calls, so they need no rule of their own;
//! - `cudaEventRecord` + `cudaStreamWaitEvent` make the next activity launched on the
//!   waiting stream depend on the last activity issued before the record: to the stream the
//!   wait's `cuda_sync` row names as the event's (newer kineto), else the thread's last;
//! - everything between those calls (framework code, other API calls) is a gap, as measured.
//!
//! In a CPU-only trace the items are the top-level ops (the units `replay classify` makes
//! signatures of) and the gaps between them.
//!
//! Each activity carries the measured delays of [`super::delays`].

use crate::signature::{self, SignatureIds};
use crate::trace::link::{self, Links};
use crate::trace::{Category, Event, ExecutionId, FxHashMap, Nanos, Platform, Trace};

use super::calls::{call_kind, is_device_wide_stream_id, CallKind};
use super::delays::{activity_delays, launch_shape, Delays, LaunchShape};
use super::error::PredictError;
use super::skeleton::{
    Activity, ActivityKind, HostItem, HostThread, LaunchRef, Skeleton, StepSkeleton, Stream,
    WaitKind,
};
use super::steps::{step_windows, StepWindow};

type ThreadKey = (ExecutionId, ExecutionId);
type StreamKey = (ExecutionId, ExecutionId);

/// Builds the skeleton of every step of `trace`.
pub fn skeleton(trace: &Trace) -> Result<Skeleton, PredictError> {
    let links = link::link(trace);
    let ids = signature::signature_ids(trace, &links);
    let (source, windows) = step_windows(trace);
    if windows.is_empty() {
        return Err(PredictError::NothingToTime {
            path: trace.source.path.clone(),
        });
    }
    let context = TraceContext::new(trace, &links, &ids);
    Ok(Skeleton {
        source,
        signature_ids: ids.ids().to_vec(),
        steps: windows.iter().map(|w| context.step(w)).collect(),
    })
}

/// The host events of one thread, each list sorted by start.
#[derive(Default)]
struct ThreadEvents {
    /// CUDA/HIP runtime and driver calls.
    calls: Vec<usize>,
    /// Top-level ops (CPU-only traces).
    top_ops: Vec<usize>,
    /// Every host event (ops and calls): where the thread's host time ends.
    host: Vec<usize>,
}

/// What the whole trace says, computed once for all steps.
struct TraceContext<'t> {
    trace: &'t Trace,
    ids: &'t SignatureIds,
    /// Activities launched by each call, by start.
    launched: FxHashMap<usize, Vec<usize>>,
    /// The launch call of each activity that has one.
    launch_of: FxHashMap<usize, usize>,
    shapes: FxHashMap<usize, LaunchShape>,
    /// End of the work before each activity on its stream, over the whole trace.
    previous_end: FxHashMap<usize, Nanos>,
    delays: FxHashMap<usize, Delays>,
    /// Activities without a launch call, by start.
    unlaunched: Vec<usize>,
    /// The (device, stream) of kineto's `cuda_sync` row for a call, by correlation id.
    sync_rows: FxHashMap<i64, StreamKey>,
    /// For a `cudaStreamWaitEvent` whose `cuda_sync` row names its event, by the wait's
    /// correlation id: the stream the event was recorded on and its record's correlation id.
    event_waits: FxHashMap<i64, (StreamKey, i64)>,
    /// When each `cudaEventRecord` call started, by correlation id.
    record_starts: FxHashMap<i64, Nanos>,
    threads: Vec<(ThreadKey, ThreadEvents)>,
    /// The trace's median launch latency on an idle GPU.
    typical_latency_ns: Nanos,
}

fn stream_key(event: &Event) -> StreamKey {
    (event.pid, event.tid)
}

fn by_start(events: &[Event], list: &mut [usize]) {
    list.sort_by_key(|&i| (events[i].ts_ns, i));
}

impl<'t> TraceContext<'t> {
    fn new(trace: &'t Trace, links: &Links, ids: &'t SignatureIds) -> Self {
        let events = &trace.events;
        let mut launched: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        let mut launch_of: FxHashMap<usize, usize> = FxHashMap::default();
        let mut unlaunched = Vec::new();
        for link in &links.activities {
            match link.launch {
                Some(call) => {
                    launched.entry(call).or_default().push(link.activity);
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
        let mut previous_end: FxHashMap<usize, Nanos> = FxHashMap::default();
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
        let shapes: FxHashMap<usize, LaunchShape> = launched
            .iter()
            .map(|(&call, activities)| (call, launch_shape(trace, call, activities, &previous_end)))
            .collect();
        let (delays, typical_latency_ns) =
            activity_delays(events, &launch_of, &shapes, &previous_end);

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
        let record_starts: FxHashMap<i64, Nanos> = events
            .iter()
            .filter(|e| {
                e.category.is_launch_call() && call_kind(trace.name(e)) == CallKind::EventRecord
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
        let mut threads: Vec<(ThreadKey, ThreadEvents)> = threads.into_iter().collect();
        threads.sort_by_key(|(key, _)| *key);
        for (_, thread) in &mut threads {
            by_start(events, &mut thread.calls);
            by_start(events, &mut thread.top_ops);
            by_start(events, &mut thread.host);
        }

        TraceContext {
            trace,
            ids,
            launched,
            launch_of,
            shapes,
            previous_end,
            delays,
            unlaunched,
            sync_rows,
            event_waits,
            record_starts,
            threads,
            typical_latency_ns,
        }
    }

    fn events(&self) -> &'t [Event] {
        &self.trace.events
    }

    /// The events of `list` (sorted by start) that start inside `window`.
    fn in_window<'l>(&self, list: &'l [usize], window: &StepWindow) -> &'l [usize] {
        let events = self.events();
        let first = list.partition_point(|&i| events[i].ts_ns < window.start_ns);
        let last = list.partition_point(|&i| events[i].ts_ns < window.end_ns);
        list.get(first..last).unwrap_or(&[])
    }

    fn label(&self, key: ThreadKey) -> String {
        let text = |id: ExecutionId| match id {
            ExecutionId::Number(n) => n.to_string(),
            ExecutionId::Label(label) => self.trace.text(label).to_owned(),
        };
        format!("{}/{}", text(key.0), text(key.1))
    }

    fn step(&self, window: &StepWindow) -> StepSkeleton {
        let events = self.events();
        let mut step = StepSkeleton::new(window.name.clone(), window.duration_ns());

        // The step's activities: launched by a call inside the window, or (no launch call
        // in the trace) starting inside it. In start order, which is stream order.
        let mut members: Vec<usize> = Vec::new();
        for (_, thread) in &self.threads {
            for call in self.in_window(&thread.calls, window) {
                if let Some(activities) = self.launched.get(call) {
                    members.extend_from_slice(activities);
                }
            }
        }
        // Work without a launch call in the trace was mostly launched before the profiling
        // window: when it runs ahead of the step's own work on its stream it is an earlier
        // step's backlog (it then counts through the stream's busy-until time, below), not
        // this step's work. Later on the stream, it is the step's, issued at its own start.
        let mut own_first_start: FxHashMap<StreamKey, Nanos> = FxHashMap::default();
        for &e in &members {
            let event = &events[e];
            own_first_start
                .entry(stream_key(event))
                .and_modify(|first| *first = (*first).min(event.ts_ns))
                .or_insert(event.ts_ns);
        }
        let unlaunched: Vec<usize> = self
            .in_window(&self.unlaunched, window)
            .iter()
            .copied()
            .filter(|&e| {
                own_first_start
                    .get(&stream_key(&events[e]))
                    .is_some_and(|&first| first <= events[e].ts_ns)
            })
            .collect();
        members.extend_from_slice(&unlaunched);
        by_start(events, &mut members);
        members.dedup();
        let local: FxHashMap<usize, usize> =
            members.iter().enumerate().map(|(l, &e)| (e, l)).collect();

        let mut stream_index: FxHashMap<StreamKey, usize> = FxHashMap::default();
        for &event_index in &members {
            let event = &events[event_index];
            let key = stream_key(event);
            let stream = *stream_index.entry(key).or_insert_with(|| {
                // The first activity of the stream in the step: whatever ran before it
                // on the stream was issued before the step and keeps the stream busy.
                let busy_until = self
                    .previous_end
                    .get(&event_index)
                    .map_or(0, |end| end.saturating_sub(window.start_ns).max(0));
                step.streams.push(Stream {
                    label: self.label(key),
                    busy_until_ns: busy_until,
                });
                step.streams.len() - 1
            });
            let delays = self.delays.get(&event_index).copied().unwrap_or_default();
            step.activities.push(Activity {
                kind: match event.category {
                    Category::GpuMemcpy => ActivityKind::Memcpy,
                    Category::GpuMemset => ActivityKind::Memset,
                    _ => ActivityKind::Kernel,
                },
                stream,
                signature: self.ids.index_of_event(event_index),
                trace_ns: event.dur_ns,
                trace_start_ns: event.ts_ns.saturating_sub(window.start_ns),
                launch: None,
                latency_ns: delays.latency_ns,
                stream_gap_ns: delays.stream_gap_ns,
                release_ns: 0,
                after: Vec::new(),
            });
        }
        for event_index in &unlaunched {
            if let Some(activity) = local
                .get(event_index)
                .and_then(|&l| step.activities.get_mut(l))
            {
                activity.release_ns = events[*event_index]
                    .ts_ns
                    .saturating_sub(window.start_ns)
                    .max(0);
                activity.stream_gap_ns = 0;
            }
        }
        step.measured_device_tail_ns = members
            .iter()
            .map(|&e| events[e].end_ns().saturating_sub(window.end_ns))
            .max()
            .unwrap_or(0)
            .max(0);

        let mut waits: Vec<WaitRequest> = Vec::new();
        // The thread that recorded the step span, even when it recorded nothing else (a
        // span opened on one thread around work done on others): its time is the step's.
        let no_events = ThreadEvents::default();
        let step_thread_missing = window
            .thread
            .filter(|key| !self.threads.iter().any(|(k, _)| k == key));
        let threads = step_thread_missing
            .map(|key| (key, &no_events))
            .into_iter()
            .chain(self.threads.iter().map(|(key, events)| (*key, events)));
        for (key, thread) in threads {
            let is_step_thread = window.thread == Some(key);
            let host_events = self.in_window(&thread.host, window);
            if host_events.is_empty() && !is_step_thread {
                continue;
            }
            let index = step.threads.len();
            let mut builder = ThreadBuilder {
                context: self,
                step: &mut step,
                local: &local,
                members: &members,
                stream_index: &stream_index,
                thread: index,
                items: Vec::new(),
                cursor: window.start_ns,
                last_launched: None,
                recorded: None,
                pending_waits: Vec::new(),
                waits: &mut waits,
                host_events: &thread.host,
            };
            match self.trace.platform {
                Platform::Cpu => builder.top_level_ops(self.in_window(&thread.top_ops, window)),
                Platform::Cuda | Platform::Rocm => {
                    builder.calls(self.in_window(&thread.calls, window))
                }
            }
            // The step's own thread runs to the span's end; any other to its last event.
            let until = if is_step_thread {
                window.end_ns
            } else {
                host_events
                    .iter()
                    .map(|&e| events[e].end_ns())
                    .max()
                    .unwrap_or(window.start_ns)
                    .min(window.end_ns)
            };
            builder.gap_until(until);
            let items = builder.items;
            step.threads.push(HostThread {
                label: self.label(key),
                items,
            });
        }
        // When each activity was issued: its launch call's start, or its own without one.
        let issued_at: Vec<Nanos> = members
            .iter()
            .map(|&e| {
                let issuer = self.launch_of.get(&e).copied().unwrap_or(e);
                events[issuer].ts_ns
            })
            .collect();
        resolve_waits(&mut step, &members, &issued_at, events, &waits);
        step
    }
}

/// A wait whose activities depend on what was issued before it, from any thread: filled in
/// once every thread is built.
struct WaitRequest {
    thread: usize,
    item: usize,
    call: usize,
    /// `None`: every stream.
    stream: Option<usize>,
}

/// Builds one thread's items.
struct ThreadBuilder<'b, 't> {
    context: &'b TraceContext<'t>,
    step: &'b mut StepSkeleton,
    local: &'b FxHashMap<usize, usize>,
    /// Trace event index of each step-local activity.
    members: &'b [usize],
    stream_index: &'b FxHashMap<StreamKey, usize>,
    thread: usize,
    items: Vec<HostItem>,
    /// End of the host time accounted for so far, on the trace's axis.
    cursor: Nanos,
    /// The last activity this thread launched (step-local index).
    last_launched: Option<usize>,
    /// What the thread's last `cudaEventRecord` captured.
    recorded: Option<usize>,
    /// Cross-stream waits not yet attached: (the awaited activity, the waiting stream if
    /// known). The awaited activity is the last one issued to the event's stream before its
    /// `cudaEventRecord` when the wait's `cuda_sync` row names both (newer kineto), else the
    /// thread's last launch before its last `cudaEventRecord` (older traces do not say
    /// which stream an event is recorded on); the waiting stream is the `cuda_sync` row's
    /// when the trace has one, else the wait applies to the thread's next launch.
    pending_waits: Vec<(usize, Option<usize>)>,
    waits: &'b mut Vec<WaitRequest>,
    /// Every host event of the thread, by start.
    host_events: &'b [usize],
}

impl ThreadBuilder<'_, '_> {
    fn gap_until(&mut self, until: Nanos) {
        let gap = until.saturating_sub(self.cursor);
        if gap > 0 {
            let profiled_ops = self.ops_starting_in(self.cursor, until);
            self.items.push(HostItem::Gap {
                ns: gap,
                profiled_ops,
            });
        }
        self.cursor = self.cursor.max(until);
    }

    /// cpu_op events of this thread that start in `[from, until]`: each one's profiler
    /// recording cost lies in the gap (the ops that are replayed carry their own inside them).
    fn ops_starting_in(&self, from: Nanos, until: Nanos) -> u32 {
        let events = self.context.events();
        let first = self
            .host_events
            .partition_point(|&i| events[i].ts_ns < from);
        let last = self
            .host_events
            .partition_point(|&i| events[i].ts_ns <= until);
        let in_gap = self.host_events.get(first..last).unwrap_or(&[]);
        in_gap
            .iter()
            .filter(|&&i| events[i].category == Category::CpuOp)
            .count() as u32
    }

    fn top_level_ops(&mut self, ops: &[usize]) {
        for &op in ops {
            let event = &self.context.events()[op];
            self.gap_until(event.ts_ns);
            self.items.push(HostItem::HostOp {
                signature: self.context.ids.index_of_event(op),
                ns: event.dur_ns,
            });
            self.cursor = self.cursor.max(event.end_ns());
        }
    }

    fn calls(&mut self, calls: &[usize]) {
        let events = self.context.events();
        for &call in calls {
            let event = &events[call];
            let launched: Vec<usize> = self
                .context
                .launched
                .get(&call)
                .map(|list| {
                    list.iter()
                        .filter_map(|e| self.local.get(e).copied())
                        .collect()
                })
                .unwrap_or_default();
            if !launched.is_empty() {
                self.launch(call, launched);
                continue;
            }
            match call_kind(self.context.trace.name(event)) {
                CallKind::DeviceSync => self.wait_for_issued(call, None),
                CallKind::StreamSync => {
                    let stream = self.synced_stream(event);
                    match stream {
                        SyncedStream::Stream(stream) => self.wait_for_issued(call, Some(stream)),
                        SyncedStream::Device => self.wait_for_issued(call, None),
                        SyncedStream::Idle => self.wait_on(call, WaitKind::Stream, Vec::new()),
                    }
                }
                CallKind::EventSync => {
                    let on = self.recorded.into_iter().collect();
                    self.wait_on(call, WaitKind::Event, on);
                }
                CallKind::EventRecord => self.recorded = self.last_launched,
                CallKind::StreamWaitEvent => {
                    let correlation = event.args.correlation;
                    let source = match correlation.and_then(|c| self.context.event_waits.get(&c)) {
                        // The trace names the event: none when nothing of the step was
                        // issued to its stream before the record.
                        Some(&(recorded_on, record)) => self.issued_before(recorded_on, record),
                        None => self.recorded,
                    };
                    if let Some(source) = source {
                        let waiting = correlation
                            .and_then(|c| self.context.sync_rows.get(&c))
                            .and_then(|key| self.stream_index.get(key).copied());
                        self.pending_waits.push((source, waiting));
                    }
                }
                // Host time like any other: it stays in the next gap.
                CallKind::Other => {}
            }
        }
    }

    fn launch(&mut self, call: usize, launched: Vec<usize>) {
        let event = &self.context.events()[call];
        let mut shape = self
            .context
            .shapes
            .get(&call)
            .copied()
            .unwrap_or(LaunchShape {
                dispatch_ns: event.dur_ns,
                blocking: false,
            });
        self.gap_until(event.ts_ns);
        let item = self.items.len();
        for &activity in &launched {
            let Some(stream) = self.step.activities.get(activity).map(|a| a.stream) else {
                continue;
            };
            // Attach the cross-stream waits this launch is the first to honour. Which
            // event and stream a wait names is not in the trace, only guessed (see
            // `pending_waits`), so a guess the trace contradicts (the activity started
            // before the awaited one ended) is dropped rather than imposed.
            let mut after = Vec::new();
            let events = self.context.events();
            let trace_end = |local: usize| self.members.get(local).map(|&e| events[e].end_ns());
            let trace_start = self.members.get(activity).map(|&e| events[e].ts_ns);
            self.pending_waits.retain(|&(source, waiting)| {
                if waiting.is_some_and(|w| w != stream) {
                    return true;
                }
                let source_stream = self.step.activities.get(source).map(|a| a.stream);
                let consistent = match (trace_end(source), trace_start) {
                    (Some(end), Some(start)) => end <= start,
                    _ => false,
                };
                if source_stream != Some(stream) && source != activity && consistent {
                    after.push(source);
                }
                false
            });
            // An activity that waited for another stream in the trace was not late because
            // of its launch: its delays are re-measured from the awaited work.
            let awaited_end = after.iter().filter_map(|&a| trace_end(a)).max();
            // A blocking copy that waited for another stream's work is like one that waited
            // for its own stream's (`launch_shape`): that wait is not host dispatch.
            if shape.blocking && awaited_end.is_some_and(|end| end > event.ts_ns) {
                shape.dispatch_ns = 0;
            }
            let released = event.ts_ns.saturating_add(shape.dispatch_ns);
            let typical_latency = self.context.typical_latency_ns;
            if let Some(a) = self.step.activities.get_mut(activity) {
                a.launch = Some(LaunchRef {
                    thread: self.thread,
                    item,
                });
                if let (Some(awaited_end), Some(start)) = (awaited_end, trace_start) {
                    if awaited_end > released.saturating_add(typical_latency) {
                        a.latency_ns = a.latency_ns.min(typical_latency);
                        a.stream_gap_ns = start.saturating_sub(awaited_end).max(0);
                    }
                }
                a.after.extend(after);
            }
        }
        let signature = launched
            .first()
            .and_then(|&a| self.step.activities.get(a))
            .and_then(|a| a.signature);
        self.last_launched = launched.iter().max().copied().or(self.last_launched);
        self.items.push(HostItem::Launch {
            signature,
            dispatch_ns: shape.dispatch_ns,
            activities: launched.clone(),
        });
        if shape.blocking {
            let copy_done = self.context.launched.get(&call).and_then(|list| {
                list.iter()
                    .map(|&e| self.context.events()[e].end_ns())
                    .max()
            });
            let returned_from = copy_done
                .unwrap_or(event.ts_ns)
                .max(event.ts_ns.saturating_add(shape.dispatch_ns));
            self.items.push(HostItem::Wait {
                kind: WaitKind::Copy,
                on: launched,
                residual_ns: event.end_ns().saturating_sub(returned_from).max(0),
            });
        }
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// The last activity of the step issued to `stream` before the `cudaEventRecord` call
    /// with correlation id `record` started (from any thread).
    fn issued_before(&self, stream: StreamKey, record: i64) -> Option<usize> {
        let record_start = *self.context.record_starts.get(&record)?;
        let stream = *self.stream_index.get(&stream)?;
        let events = self.context.events();
        self.members
            .iter()
            .enumerate()
            .filter(|&(local, &e)| {
                let issuer = self.context.launch_of.get(&e).copied().unwrap_or(e);
                events[issuer].ts_ns < record_start
                    && self.step.activities.get(local).map(|a| a.stream) == Some(stream)
            })
            .map(|(local, _)| local)
            .max()
    }

    /// A wait on a fixed set of activities (the residual is known now).
    fn wait_on(&mut self, call: usize, kind: WaitKind, on: Vec<usize>) {
        let event = &self.context.events()[call];
        self.gap_until(event.ts_ns);
        let awaited: Vec<usize> = on
            .iter()
            .filter_map(|&l| self.members.get(l).copied())
            .collect();
        let residual_ns = residual(self.context.events(), &awaited, event);
        self.items.push(HostItem::Wait {
            kind,
            on,
            residual_ns,
        });
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// A wait for what was issued before the call, on one stream or all: resolved later.
    fn wait_for_issued(&mut self, call: usize, stream: Option<usize>) {
        let event = &self.context.events()[call];
        self.gap_until(event.ts_ns);
        self.waits.push(WaitRequest {
            thread: self.thread,
            item: self.items.len(),
            call,
            stream,
        });
        self.items.push(HostItem::Wait {
            kind: if stream.is_some() {
                WaitKind::Stream
            } else {
                WaitKind::Device
            },
            on: Vec::new(),
            residual_ns: event.dur_ns,
        });
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// The stream a stream sync waits on.
    fn synced_stream(&self, event: &Event) -> SyncedStream {
        let row = event
            .args
            .correlation
            .and_then(|c| self.context.sync_rows.get(&c));
        match row {
            Some(key) => match self.stream_index.get(key) {
                Some(&stream) => SyncedStream::Stream(stream),
                None if matches!(key.1, ExecutionId::Number(n) if is_device_wide_stream_id(n)) => {
                    SyncedStream::Device
                }
                // A stream with no work in the step: nothing to wait for.
                None => SyncedStream::Idle,
            },
            None => match self.last_launched.and_then(|a| self.step.activities.get(a)) {
                Some(activity) => SyncedStream::Stream(activity.stream),
                None => SyncedStream::Device,
            },
        }
    }
}

enum SyncedStream {
    Stream(usize),
    Device,
    Idle,
}

/// The host time of a wait call beyond the wait itself: from when it could return (its
/// start, or the end of the awaited work if later) to when it did.
fn residual(events: &[Event], awaited: &[usize], call: &Event) -> Nanos {
    let finished = awaited
        .iter()
        .map(|&e| events[e].end_ns())
        .max()
        .unwrap_or(call.ts_ns);
    call.end_ns()
        .saturating_sub(finished.max(call.ts_ns))
        .max(0)
}

/// Fills in the waits for "everything issued before the call": per stream, the last
/// activity whose launch call (or, without one, whose own start) came before the wait.
fn resolve_waits(
    step: &mut StepSkeleton,
    members: &[usize],
    issued_at: &[Nanos],
    events: &[Event],
    waits: &[WaitRequest],
) {
    if waits.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..issued_at.len()).collect();
    order.sort_by_key(|&a| (issued_at[a], a));
    let mut requests: Vec<&WaitRequest> = waits.iter().collect();
    requests.sort_by_key(|w| (events[w.call].ts_ns, w.call));

    let mut last_issued: Vec<Option<usize>> = vec![None; step.streams.len()];
    let mut next = 0;
    for request in requests {
        let call = &events[request.call];
        while let Some(&activity) = order.get(next) {
            if issued_at[activity] >= call.ts_ns {
                break;
            }
            if let Some(stream) = step.activities.get(activity).map(|a| a.stream) {
                if let Some(slot) = last_issued.get_mut(stream) {
                    *slot = Some(slot.map_or(activity, |s: usize| s.max(activity)));
                }
            }
            next += 1;
        }
        let on: Vec<usize> = match request.stream {
            Some(stream) => last_issued
                .get(stream)
                .copied()
                .flatten()
                .into_iter()
                .collect(),
            None => last_issued.iter().flatten().copied().collect(),
        };
        let awaited: Vec<usize> = on.iter().filter_map(|&a| members.get(a).copied()).collect();
        let residual_ns = residual(events, &awaited, call);
        if let Some(HostItem::Wait {
            on: slot,
            residual_ns: slot_residual,
            ..
        }) = step
            .threads
            .get_mut(request.thread)
            .and_then(|t| t.items.get_mut(request.item))
        {
            *slot = on;
            *slot_residual = residual_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::predict::{simulate, Durations};

    /// A trace from `(cat, name, pid, tid, ts_us, dur_us, correlation, stream)` rows.
    fn trace(rows: &[(&str, &str, i64, i64, f64, f64, Option<i64>)]) -> Trace {
        let events: Vec<String> = rows
            .iter()
            .map(|(cat, name, pid, tid, ts, dur, correlation)| {
                let mut args = Vec::new();
                if let Some(c) = correlation {
                    args.push(format!("\"correlation\": {c}"));
                }
                if *pid == 0 {
                    args.push(format!("\"stream\": {tid}"));
                }
                format!(
                    "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \
                     \"tid\": {tid}, \"ts\": {ts}, \"dur\": {dur}, \"args\": {{{}}}}}",
                    args.join(", ")
                )
            })
            .collect();
        let json = format!("{{\"traceEvents\": [{}]}}", events.join(",\n"));
        crate::trace::load_bytes(json.into_bytes(), Path::new("synthetic.json"))
            .unwrap_or_else(|e| panic!("synthetic trace: {e}"))
    }

    const STEP: (&str, &str, i64, i64, f64, f64, Option<i64>) =
        ("user_annotation", "ProfilerStep#1", 1, 1, 0.0, 100.0, None);

    #[test]
    fn launches_copies_and_syncs_become_items() {
        let trace = trace(&[
            STEP,
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k1", 0, 7, 16.0, 30.0, Some(1)),
            // A pageable copy whose call returns after the copy: the host waits for it.
            ("cuda_runtime", "cudaMemcpyAsync", 1, 1, 20.0, 40.0, Some(2)),
            (
                "gpu_memcpy",
                "Memcpy DtoH (Device -> Pageable)",
                0,
                7,
                47.0,
                10.0,
                Some(2),
            ),
            (
                "cuda_runtime",
                "cudaStreamSynchronize",
                1,
                1,
                65.0,
                3.0,
                Some(3),
            ),
            ("cuda_sync", "Stream Sync", 0, 7, 65.5, 2.0, Some(3)),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        let step = &skeleton.steps[0];
        assert_eq!(step.measured_ns, 100_000);
        assert_eq!(step.threads.len(), 1);
        assert_eq!(
            step.threads[0].items,
            vec![
                HostItem::Gap {
                    ns: 10_000,
                    profiled_ops: 0
                },
                HostItem::Launch {
                    signature: Some(0),
                    dispatch_ns: 5_000,
                    activities: vec![0]
                },
                HostItem::Gap {
                    ns: 5_000,
                    profiled_ops: 0
                },
                // The copy started 27 us into the call, 1 us after k1 freed the stream:
                // that wait is the GPU's, not dispatch...
                HostItem::Launch {
                    signature: Some(1),
                    dispatch_ns: 0,
                    activities: vec![1]
                },
                // ...and the call returned 3 us after the copy ended.
                HostItem::Wait {
                    kind: WaitKind::Copy,
                    on: vec![1],
                    residual_ns: 3_000
                },
                HostItem::Gap {
                    ns: 5_000,
                    profiled_ops: 0
                },
                HostItem::Wait {
                    kind: WaitKind::Stream,
                    on: vec![1],
                    residual_ns: 3_000
                },
                HostItem::Gap {
                    ns: 32_000,
                    profiled_ops: 0
                },
            ]
        );
        assert_eq!(step.activities[0].latency_ns, 1_000);
        // The copy is bound by its stream: the typical latency, and its 1 us gap after k1.
        assert_eq!(step.activities[1].latency_ns, 1_000);
        assert_eq!(step.activities[1].stream_gap_ns, 1_000);

        let own = simulate(&skeleton, &Durations::trace_own());
        assert_eq!(own.steps[0].predicted_ns, 100_000);
        let starts: Vec<Nanos> = own.steps[0].activities.iter().map(|i| i.start_ns).collect();
        assert_eq!(starts, vec![16_000, 47_000]);

        // A 30 us longer copy holds the host 30 us longer: every later item shifts.
        let mut slower = Durations::trace_own();
        slower.set(skeleton.signature_ids[1].clone(), 40.0);
        let slower = simulate(&skeleton, &slower);
        assert_eq!(slower.steps[0].predicted_ns, 130_000);
        assert_eq!(slower.steps[0].overridden_invocations, 1);
    }

    #[test]
    fn a_stream_wait_event_orders_two_streams() {
        let trace = trace(&[
            ("user_annotation", "ProfilerStep#1", 1, 1, 0.0, 200.0, None),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k1", 0, 7, 16.0, 50.0, Some(1)),
            ("cuda_runtime", "cudaEventRecord", 1, 1, 20.0, 1.0, Some(2)),
            (
                "cuda_runtime",
                "cudaStreamWaitEvent",
                1,
                1,
                25.0,
                1.0,
                Some(3),
            ),
            ("cuda_sync", "Stream Wait Event", 0, 9, 25.5, 0.5, Some(3)),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 30.0, 5.0, Some(4)),
            ("kernel", "k2", 0, 9, 67.0, 10.0, Some(4)),
            (
                "cuda_runtime",
                "cudaDeviceSynchronize",
                1,
                1,
                40.0,
                40.0,
                Some(5),
            ),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        let step = &skeleton.steps[0];
        assert_eq!(step.streams.len(), 2);
        assert_eq!(step.activities[1].after, vec![0]);
        assert_eq!(step.activities[1].stream_gap_ns, 1_000);
        let sync = step.threads[0].items.iter().find_map(|item| match item {
            HostItem::Wait {
                kind,
                on,
                residual_ns,
            } => Some((*kind, on.clone(), *residual_ns)),
            _ => None,
        });
        assert_eq!(sync, Some((WaitKind::Device, vec![0, 1], 3_000)));

        let own = simulate(&skeleton, &Durations::trace_own());
        let starts: Vec<Nanos> = own.steps[0].activities.iter().map(|i| i.start_ns).collect();
        assert_eq!(starts, vec![16_000, 67_000]);
        assert_eq!(own.steps[0].predicted_ns, 200_000);

        // k1 100 us instead of 50: k2 follows it across streams, the sync waits for k2.
        let mut longer = Durations::trace_own();
        longer.set(skeleton.signature_ids[0].clone(), 100.0);
        let longer = &simulate(&skeleton, &longer).steps[0];
        assert_eq!(longer.activities[1].start_ns, 117_000);
        // Sync from 40: waits until 127, +3 residual = 130; then the measured 120 us tail.
        assert_eq!(longer.predicted_ns, 250_000);
    }

    #[test]
    fn a_cpu_only_trace_is_top_level_ops_and_gaps() {
        let trace = trace(&[
            STEP,
            ("cpu_op", "aten::linear", 1, 1, 10.0, 20.0, None),
            ("cpu_op", "aten::addmm", 1, 1, 12.0, 15.0, None),
            ("cpu_op", "aten::relu", 1, 1, 40.0, 10.0, None),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(skeleton.signature_ids.len(), 2);
        let items = &skeleton.steps[0].threads[0].items;
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[0],
            HostItem::Gap {
                ns: 10_000,
                profiled_ops: 1
            }
        );
        assert!(matches!(items[1], HostItem::HostOp { ns: 20_000, .. }));
        assert_eq!(
            items[2],
            HostItem::Gap {
                ns: 10_000,
                profiled_ops: 1
            }
        );
        assert!(matches!(items[3], HostItem::HostOp { ns: 10_000, .. }));
        assert_eq!(
            items[4],
            HostItem::Gap {
                ns: 50_000,
                profiled_ops: 0
            }
        );
        assert_eq!(
            simulate(&skeleton, &Durations::trace_own()).steps[0].predicted_ns,
            100_000
        );
        // The gap before each top-level op holds that op's profiler recording cost: with
        // 1.5 us per op calibrated, the two ops' gaps shrink by 1.5 us each.
        let mut unprofiled = Durations::trace_own();
        unprofiled.remove_profiler_overhead(1.5);
        assert_eq!(
            simulate(&skeleton, &unprofiled).steps[0].predicted_ns,
            97_000
        );
    }

    #[test]
    fn without_a_step_span_the_window_is_timed() {
        let trace = trace(&[
            ("cpu_op", "aten::add", 1, 1, 5.0, 20.0, None),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k", 0, 7, 16.0, 30.0, Some(1)),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(skeleton.source, crate::predict::StepSource::ProfiledWindow);
        // From the op's start (5) to the kernel's end (46).
        assert_eq!(skeleton.steps[0].measured_ns, 41_000);
        assert_eq!(
            simulate(&skeleton, &Durations::trace_own()).steps[0].predicted_ns,
            41_000
        );
    }

    #[test]
    fn a_trace_with_nothing_to_time_is_an_error() {
        let trace = trace(&[("cpu_instant_event", "x", 1, 1, 0.0, 0.0, None)]);
        assert!(matches!(
            skeleton(&trace),
            Err(PredictError::NothingToTime { .. })
        ));
    }
}
