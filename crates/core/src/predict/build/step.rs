//! The step skeleton made from the trace context: one step's activities and streams, each
//! host thread's items, and the waits resolved across threads.

use crate::trace::{Category, FxHashMap, Nanos, Platform};

use super::super::skeleton::{
    Activity, ActivityKind, HostThread, StepSkeleton, Stream, ThreadInTrace,
};
use crate::trace::steps::StepWindow;

use super::context::{by_start, stream_key, StreamKey, ThreadEvents, TraceContext};
use super::thread::ThreadBuilder;
use super::waits::{resolve_waits, WaitRequest};

impl TraceContext<'_> {
    /// The skeleton of the step in `window`.
    pub(super) fn step(&self, window: &StepWindow) -> StepSkeleton {
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
        step.activity_ops = members
            .iter()
            .map(|&e| self.op_of.get(&e).copied())
            .collect();

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
                op_events: Vec::new(),
                item_starts: Vec::new(),
                cursor: window.start_ns,
                last_launched: None,
                recorded: None,
                pending_waits: Vec::new(),
                waits: &mut waits,
                host: thread,
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
            let end_ns = builder.cursor;
            let (items, op_events, item_starts) =
                (builder.items, builder.op_events, builder.item_starts);
            step.threads.push(HostThread {
                label: self.label(key),
                items,
                op_events,
                trace: Some(ThreadInTrace {
                    pid: key.0,
                    tid: key.1,
                    step_start_ns: window.start_ns,
                    item_starts,
                    end_ns,
                }),
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
