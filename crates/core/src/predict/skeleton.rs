//! The skeleton of a profiled step: what happens in what order, with every duration that
//! a replay can change kept apart from the structure.
//!
//! A step is host threads, each an ordered list of [`HostItem`]s (framework time, top-level
//! ops, launch calls, waits for the GPU), and GPU [`Activity`]s on streams. Times inside a
//! step are relative to the step's start. [`super::simulate`] turns a skeleton and a set of
//! [`super::Durations`] into a timeline; [`super::build`] makes a skeleton from a trace, and
//! the constructors here build one by hand (tests, synthetic what-ifs).

use serde::{Deserialize, Serialize};

use crate::trace::{ExecutionId, Nanos};

use crate::trace::steps::StepSource;

/// Every profiled step of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skeleton {
    pub source: StepSource,
    /// Signature ids; activities and host ops refer to them by index.
    pub signature_ids: Vec<String>,
    pub steps: Vec<StepSkeleton>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSkeleton {
    /// `ProfilerStep#6`, `window`, or a name given by hand.
    pub name: String,
    /// The trace's own step time (0 for a hand-built step with nothing to compare to).
    pub measured_ns: Nanos,
    /// How far GPU work launched in the step ran past the step span's end in the trace:
    /// 0 when the step ends with a synchronisation. The model ends a step when host *and*
    /// device are done, a host-side span does not, so a non-zero tail is an expected error.
    pub measured_device_tail_ns: Nanos,
    pub threads: Vec<HostThread>,
    pub streams: Vec<Stream>,
    /// Within one stream, activities run in the order of this list.
    pub activities: Vec<Activity>,
    /// The trace event of each activity's launching op (the innermost op around its launch
    /// call), by activity index: what ties a GPU trace's launch to its Execution Trace node
    /// (`replay sequence --execution-trace`). Built from a trace only; not written out.
    #[serde(skip)]
    pub activity_ops: Vec<Option<usize>>,
}

/// A host thread: its items run one after the other from the step's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostThread {
    /// `pid/tid` in the trace.
    pub label: String,
    pub items: Vec<HostItem>,
    /// The trace event (index into the trace's events) of each [`HostItem::HostOp`] item, in
    /// order: what ties a CPU trace's top-level op to its Execution Trace node (`replay
    /// sequence --execution-trace`). Built from a trace only; not written out.
    #[serde(skip)]
    pub op_events: Vec<usize>,
    /// Where the thread and its items lie in the trace: what the host model
    /// (`predict::host_model`) needs to find the ops each item belongs to. Built from a
    /// trace only; not written out.
    #[serde(skip)]
    pub trace: Option<ThreadInTrace>,
}

/// A host thread's place in its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadInTrace {
    /// The trace's (pid, tid) of the thread.
    pub pid: ExecutionId,
    pub tid: ExecutionId,
    /// The step's start on the trace's axis.
    pub step_start_ns: Nanos,
    /// Each item's start on the trace's axis, in item order. An item ends where the next
    /// begins (the last at `end_ns`): the builder accounts for every moment.
    pub item_starts: Vec<Nanos>,
    /// Where the thread's last item ends on the trace's axis.
    pub end_ns: Nanos,
}

impl ThreadInTrace {
    /// Where item `index` ends on the trace's axis.
    pub fn item_end(&self, index: usize) -> Nanos {
        self.item_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.end_ns)
    }
}

/// One thing a host thread does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum HostItem {
    /// Host time that no replay changes (Python, dispatcher, other API calls), as measured.
    /// `profiled_ops` ops were recorded by the profiler inside it: their recording cost is
    /// part of `ns`, and a prediction for an unprofiled run takes it out.
    Gap {
        ns: Nanos,
        #[serde(default)]
        profiled_ops: u32,
    },
    /// A top-level op of a CPU-only trace: its time is its signature's device time.
    HostOp { signature: Option<u32>, ns: Nanos },
    /// A launch call (kernel launch, async copy or memset): `dispatch_ns` of host time,
    /// after which `activities` may start on the GPU.
    Launch {
        /// The signature of the first launched activity: whose dispatch time applies.
        signature: Option<u32>,
        dispatch_ns: Nanos,
        activities: Vec<usize>,
    },
    /// The host blocks until every activity in `on` has finished (the last one of each
    /// stream is enough: a stream runs in order), then spends `residual_ns` more (the
    /// call's own cost, or the wake-up after the GPU finished).
    Wait {
        kind: WaitKind,
        on: Vec<usize>,
        residual_ns: Nanos,
    },
}

/// Why the host waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// Device synchronisation: all work issued so far.
    Device,
    /// Stream synchronisation (`cudaStreamSynchronize`, the `.item()`/`.cpu()` pattern).
    Stream,
    /// Event synchronisation: the work before an event record.
    Event,
    /// A copy call that returns when its copy is done (synchronous or pageable copies).
    Copy,
}

/// A GPU stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stream {
    /// `device/stream` in the trace.
    pub label: String,
    /// Work issued before the step (not part of it) keeps the stream busy until then;
    /// measured, not simulated. Non-zero only in pipelined traces, where a step does not
    /// end with a synchronisation and the GPU is still on the previous step's work.
    pub busy_until_ns: Nanos,
}

/// What a GPU activity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    Kernel,
    Memcpy,
    Memset,
}

/// Where a launch call sits: `threads[thread].items[item]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchRef {
    pub thread: usize,
    pub item: usize,
}

/// One GPU activity (kernel, copy, memset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    pub kind: ActivityKind,
    /// Index into [`StepSkeleton::streams`].
    pub stream: usize,
    pub signature: Option<u32>,
    /// The trace's duration of this invocation.
    pub trace_ns: Nanos,
    /// When it started in the trace, relative to the step's start (0 when built by hand):
    /// not used by the simulation, kept to compare the simulated timeline with the trace's.
    pub trace_start_ns: Nanos,
    /// The launch call; `None` for activities whose launch is not in the trace.
    pub launch: Option<LaunchRef>,
    /// From the end of the launch call to the earliest start on an idle GPU (negative when
    /// the activity started before its call returned). Never earlier than the call's start.
    pub latency_ns: Nanos,
    /// From the end of the work it waits for on the GPU (the previous activity on its
    /// stream, or an activity in `after`) to its start, when that work is the bottleneck.
    pub stream_gap_ns: Nanos,
    /// Earliest start, relative to the step's start: the trace's own start for activities
    /// with no launch call (nothing else says when they were issued), 0 otherwise.
    pub release_ns: Nanos,
    /// Activities on other streams that must finish first (`cudaStreamWaitEvent`).
    pub after: Vec<usize>,
}

impl Activity {
    /// A kernel of `trace_ns` on `stream`, launched with no extra latency or gap.
    pub fn kernel(stream: usize, signature: Option<u32>, trace_ns: Nanos) -> Activity {
        Activity {
            kind: ActivityKind::Kernel,
            stream,
            signature,
            trace_ns,
            trace_start_ns: 0,
            launch: None,
            latency_ns: 0,
            stream_gap_ns: 0,
            release_ns: 0,
            after: Vec::new(),
        }
    }
}

impl Skeleton {
    /// An empty skeleton, to fill by hand.
    pub fn new(source: StepSource) -> Skeleton {
        Skeleton {
            source,
            signature_ids: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The index of signature `id`, added if new.
    pub fn intern_signature(&mut self, id: &str) -> u32 {
        let index = match self.signature_ids.iter().position(|known| known == id) {
            Some(index) => index,
            None => {
                self.signature_ids.push(id.to_owned());
                self.signature_ids.len() - 1
            }
        };
        u32::try_from(index).unwrap_or(u32::MAX)
    }

    /// The id at `index`.
    pub fn signature_id(&self, index: u32) -> Option<&str> {
        self.signature_ids.get(index as usize).map(String::as_str)
    }
}

impl StepSkeleton {
    /// An empty step whose trace time was `measured_ns`.
    pub fn new(name: impl Into<String>, measured_ns: Nanos) -> StepSkeleton {
        StepSkeleton {
            name: name.into(),
            measured_ns,
            measured_device_tail_ns: 0,
            threads: Vec::new(),
            streams: Vec::new(),
            activities: Vec::new(),
            activity_ops: Vec::new(),
        }
    }

    /// Adds a host thread; returns its index.
    pub fn add_thread(&mut self, label: impl Into<String>) -> usize {
        self.threads.push(HostThread {
            label: label.into(),
            items: Vec::new(),
            op_events: Vec::new(),
            trace: None,
        });
        self.threads.len() - 1
    }

    /// Adds an idle stream; returns its index.
    pub fn add_stream(&mut self, label: impl Into<String>) -> usize {
        self.streams.push(Stream {
            label: label.into(),
            busy_until_ns: 0,
        });
        self.streams.len() - 1
    }

    /// Appends host time that no replay changes. A thread index that does not exist is
    /// ignored (as are the pushes below): hand-built steps are checked by their tests.
    pub fn push_gap(&mut self, thread: usize, ns: Nanos) {
        self.push_item(
            thread,
            HostItem::Gap {
                ns,
                profiled_ops: 0,
            },
        );
    }

    /// Appends a top-level host op.
    pub fn push_host_op(&mut self, thread: usize, signature: Option<u32>, ns: Nanos) {
        self.push_item(thread, HostItem::HostOp { signature, ns });
    }

    /// Appends a launch call of `dispatch_ns` that launches `activities` (appended to the
    /// step's list in this order, so after every activity pushed before). Returns the
    /// activities' indices.
    pub fn push_launch(
        &mut self,
        thread: usize,
        dispatch_ns: Nanos,
        activities: Vec<Activity>,
    ) -> Vec<usize> {
        let Some(host) = self.threads.get(thread) else {
            return Vec::new();
        };
        let launch = LaunchRef {
            thread,
            item: host.items.len(),
        };
        let signature = activities.first().and_then(|a| a.signature);
        let first = self.activities.len();
        self.activities
            .extend(activities.into_iter().map(|activity| Activity {
                launch: Some(launch),
                ..activity
            }));
        let indices: Vec<usize> = (first..self.activities.len()).collect();
        self.push_item(
            thread,
            HostItem::Launch {
                signature,
                dispatch_ns,
                activities: indices.clone(),
            },
        );
        indices
    }

    /// Appends a wait for `on`, then `residual_ns` of host time.
    pub fn push_wait(&mut self, thread: usize, kind: WaitKind, on: Vec<usize>, residual_ns: Nanos) {
        self.push_item(
            thread,
            HostItem::Wait {
                kind,
                on,
                residual_ns,
            },
        );
    }

    /// The last activity of `stream` in the list so far: what a stream sync waits for.
    pub fn last_on_stream(&self, stream: usize) -> Option<usize> {
        self.activities.iter().rposition(|a| a.stream == stream)
    }

    /// The last activity of every stream so far: what a device sync waits for.
    pub fn last_on_every_stream(&self) -> Vec<usize> {
        (0..self.streams.len())
            .filter_map(|stream| self.last_on_stream(stream))
            .collect()
    }

    /// Number of launch calls.
    pub fn launch_count(&self) -> usize {
        self.count_items(|item| matches!(item, HostItem::Launch { .. }))
    }

    /// Number of waits for the GPU.
    pub fn wait_count(&self) -> usize {
        self.count_items(|item| matches!(item, HostItem::Wait { .. }))
    }

    /// Number of top-level host ops.
    pub fn host_op_count(&self) -> usize {
        self.count_items(|item| matches!(item, HostItem::HostOp { .. }))
    }

    fn count_items(&self, which: impl Fn(&HostItem) -> bool) -> usize {
        self.threads
            .iter()
            .map(|t| t.items.iter().filter(|item| which(item)).count())
            .sum()
    }

    fn push_item(&mut self, thread: usize, item: HostItem) {
        if let Some(host) = self.threads.get_mut(thread) {
            host.items.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_point_back_at_their_call() {
        let mut step = StepSkeleton::new("s", 0);
        let t = step.add_thread("main");
        let s = step.add_stream("0/7");
        step.push_gap(t, 5);
        let launched = step.push_launch(t, 3, vec![Activity::kernel(s, None, 10)]);
        assert_eq!(launched, vec![0]);
        assert_eq!(
            step.activities[0].launch,
            Some(LaunchRef { thread: 0, item: 1 })
        );
        assert_eq!(step.last_on_every_stream(), vec![0]);
        assert_eq!(step.launch_count(), 1);
        // A thread that does not exist is ignored rather than panicking.
        assert!(step
            .push_launch(9, 3, vec![Activity::kernel(s, None, 1)])
            .is_empty());
        assert_eq!(step.activities.len(), 1);
    }

    #[test]
    fn signature_ids_are_interned_once() {
        let mut skeleton = Skeleton::new(StepSource::ProfiledWindow);
        assert_eq!(skeleton.intern_signature("a"), 0);
        assert_eq!(skeleton.intern_signature("b"), 1);
        assert_eq!(skeleton.intern_signature("a"), 0);
        assert_eq!(skeleton.signature_id(1), Some("b"));
        assert_eq!(skeleton.signature_id(2), None);
    }
}
