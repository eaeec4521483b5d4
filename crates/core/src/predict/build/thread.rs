//! One host thread of one step: its calls walked in time order into launches, waits and
//! the gaps between them.

use crate::trace::{Event, ExecutionId, FxHashMap, Nanos};

use super::super::calls::{is_device_wide_stream_id, CallKind};
use super::super::delays::LaunchShape;
use super::super::skeleton::{HostItem, LaunchRef, StepSkeleton, WaitKind};

use super::context::{StreamKey, ThreadEvents, TraceContext};
use super::waits::{residual, SyncedStream, WaitRequest};

/// Builds one thread's items.
pub(super) struct ThreadBuilder<'b, 't> {
    pub(super) context: &'b TraceContext<'t>,
    pub(super) step: &'b mut StepSkeleton,
    pub(super) local: &'b FxHashMap<usize, usize>,
    /// Trace event index of each step-local activity.
    pub(super) members: &'b [usize],
    pub(super) stream_index: &'b FxHashMap<StreamKey, usize>,
    pub(super) thread: usize,
    pub(super) items: Vec<HostItem>,
    /// The trace event of each `HostOp` item pushed, in order.
    pub(super) op_events: Vec<usize>,
    /// Each item's start on the trace's axis, in order.
    pub(super) item_starts: Vec<Nanos>,
    /// End of the host time accounted for so far, on the trace's axis.
    pub(super) cursor: Nanos,
    /// The last activity this thread launched (step-local index).
    pub(super) last_launched: Option<usize>,
    /// What the thread's last `cudaEventRecord` captured.
    pub(super) recorded: Option<usize>,
    /// Cross-stream waits not yet attached: (the awaited activity, the waiting stream if
    /// known). The awaited activity is the last one issued to the event's stream before its
    /// `cudaEventRecord` when the wait's `cuda_sync` row names both (newer kineto), else the
    /// thread's last launch before its last `cudaEventRecord` (older traces do not say
    /// which stream an event is recorded on); the waiting stream is the `cuda_sync` row's
    /// when the trace has one, else the wait applies to the thread's next launch.
    pub(super) pending_waits: Vec<(usize, Option<usize>)>,
    pub(super) waits: &'b mut Vec<WaitRequest>,
    /// The thread's host events, by start.
    pub(super) host: &'b ThreadEvents,
}

impl ThreadBuilder<'_, '_> {
    /// Appends `item`, which starts at `start_ns` on the trace's axis.
    fn push(&mut self, start_ns: Nanos, item: HostItem) {
        self.items.push(item);
        self.item_starts.push(start_ns);
    }

    pub(super) fn gap_until(&mut self, until: Nanos) {
        let gap = until.saturating_sub(self.cursor);
        if gap > 0 {
            let profiled_ops = self.ops_starting_in(self.cursor, until);
            self.push(
                self.cursor,
                HostItem::Gap {
                    ns: gap,
                    profiled_ops,
                },
            );
        }
        self.cursor = self.cursor.max(until);
    }

    /// cpu_op events of this thread that start in `[from, until]`: each one's profiler
    /// recording cost lies in the gap (the ops that are replayed carry their own inside them).
    pub(super) fn ops_starting_in(&self, from: Nanos, until: Nanos) -> u32 {
        self.host.ops_starting_in(from, until)
    }

    pub(super) fn top_level_ops(&mut self, ops: &[usize]) {
        for &op in ops {
            let event = &self.context.events()[op];
            self.gap_until(event.ts_ns);
            self.push(
                event.ts_ns,
                HostItem::HostOp {
                    signature: self.context.ids.index_of_event(op),
                    ns: event.dur_ns,
                },
            );
            self.op_events.push(op);
            self.cursor = self.cursor.max(event.end_ns());
        }
    }

    pub(super) fn calls(&mut self, calls: &[usize]) {
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
            match self.context.call_kind(event) {
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

    pub(super) fn launch(&mut self, call: usize, launched: Vec<usize>) {
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
        self.push(
            event.ts_ns,
            HostItem::Launch {
                signature,
                dispatch_ns: shape.dispatch_ns,
                activities: launched.clone(),
            },
        );
        if shape.blocking {
            let copy_done = self.context.launched.get(&call).and_then(|list| {
                list.iter()
                    .map(|&e| self.context.events()[e].end_ns())
                    .max()
            });
            let returned_from = copy_done
                .unwrap_or(event.ts_ns)
                .max(event.ts_ns.saturating_add(shape.dispatch_ns));
            self.push(
                returned_from.min(event.end_ns()),
                HostItem::Wait {
                    kind: WaitKind::Copy,
                    on: launched,
                    residual_ns: event.end_ns().saturating_sub(returned_from).max(0),
                },
            );
        }
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// The last activity of the step issued to `stream` before the `cudaEventRecord` call
    /// with correlation id `record` started (from any thread).
    pub(super) fn issued_before(&self, stream: StreamKey, record: i64) -> Option<usize> {
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
    pub(super) fn wait_on(&mut self, call: usize, kind: WaitKind, on: Vec<usize>) {
        let event = &self.context.events()[call];
        self.gap_until(event.ts_ns);
        let awaited: Vec<usize> = on
            .iter()
            .filter_map(|&l| self.members.get(l).copied())
            .collect();
        let residual_ns = residual(self.context.events(), &awaited, event);
        self.push(
            event.ts_ns,
            HostItem::Wait {
                kind,
                on,
                residual_ns,
            },
        );
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// A wait for what was issued before the call, on one stream or all: resolved later.
    pub(super) fn wait_for_issued(&mut self, call: usize, stream: Option<usize>) {
        let event = &self.context.events()[call];
        self.gap_until(event.ts_ns);
        self.waits.push(WaitRequest {
            thread: self.thread,
            item: self.items.len(),
            call,
            stream,
        });
        self.push(
            event.ts_ns,
            HostItem::Wait {
                kind: if stream.is_some() {
                    WaitKind::Stream
                } else {
                    WaitKind::Device
                },
                on: Vec::new(),
                residual_ns: event.dur_ns,
            },
        );
        self.cursor = self.cursor.max(event.end_ns());
    }

    /// The stream a stream sync waits on.
    pub(super) fn synced_stream(&self, event: &Event) -> SyncedStream {
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
