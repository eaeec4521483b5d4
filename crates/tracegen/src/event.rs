//! One step's events as the model builds them, before they are rendered: times relative to
//! the step's start (nanoseconds) and ids as offsets into the step's share of each counter,
//! so that every step is the same template with different numbers.

/// A counter that runs through the whole trace: each step takes a fixed share of it, so
/// every id is fresh (never reused by another step) and increasing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// `External id`: one per host op or annotation; GPU activities carry their op's.
    External,
    /// `correlation`: one per runtime call, shared with the activity it launched and the
    /// `ac2g` flow between them.
    Correlation,
    /// `Ev Idx`: the profiler's running event index.
    EvIdx,
    /// `Python id` of the `nn.Module` frames.
    Python,
    /// `Seq`: the collective's sequence number in its process group.
    Seq,
}

/// How many counters there are ([`Counter`] as an index).
pub const COUNTERS: usize = 5;

impl Counter {
    pub fn index(self) -> usize {
        match self {
            Counter::External => 0,
            Counter::Correlation => 1,
            Counter::EvIdx => 2,
            Counter::Python => 3,
            Counter::Seq => 4,
        }
    }
}

/// An argument's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// The step's base of the counter plus this offset.
    Id(Counter, u64),
    /// JSON text, written as is.
    Raw(String),
}

/// Whose process an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// The training process (pid chosen by rank).
    Host,
    /// The GPU (pid 0, the device id; tid is the stream).
    Gpu,
}

/// The event's phase and what it alone carries.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// A complete event (`"ph": "X"`) of this duration in nanoseconds.
    Complete { dur: u64 },
    /// The start of an `ac2g` flow at a runtime call (`"ph": "s"`).
    FlowStart { correlation: u64 },
    /// The end of an `ac2g` flow at the GPU activity (`"ph": "f"`, `"bp": "e"`).
    FlowEnd { correlation: u64 },
}

/// An event's name.
#[derive(Clone, Debug, PartialEq)]
pub enum Name {
    Text(String),
    /// `ProfilerStep#` followed by the step's number.
    Step,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub phase: Phase,
    pub cat: &'static str,
    pub name: Name,
    pub process: Process,
    pub tid: u64,
    /// Nanoseconds after the step's start.
    pub ts: u64,
    pub args: Vec<(&'static str, Value)>,
}

impl Event {
    /// The correlation id of a runtime call, a GPU activity or a flow.
    pub fn correlation(&self) -> Option<u64> {
        match self.phase {
            Phase::FlowStart { correlation } | Phase::FlowEnd { correlation } => Some(correlation),
            Phase::Complete { .. } => self.args.iter().find_map(|(key, value)| match value {
                Value::Id(Counter::Correlation, c) if *key == "correlation" => Some(*c),
                _ => None,
            }),
        }
    }

    pub fn end(&self) -> u64 {
        match self.phase {
            Phase::Complete { dur } => self.ts + dur,
            _ => self.ts,
        }
    }
}

/// One step, built once per variant and rendered into a template.
#[derive(Clone, Debug)]
pub struct Step {
    /// The step's events together: host events in start order, then the GPU's step span and
    /// each stream's activities ([`crate::generate::Layout::Steps`]).
    pub events: Vec<Event>,
    /// The same events in the three sections that Kineto writes a whole trace in
    /// ([`crate::generate::Layout::Kineto`]): host ops, annotations and module frames; the
    /// runtime calls, each followed by its flow and the GPU activity it launched; the GPU's
    /// step span.
    pub sections: [Vec<Event>; 3],
    /// How much of each counter one step takes.
    pub counters: [u64; COUNTERS],
    /// From the step's start to the next step's start, nanoseconds.
    pub length: u64,
}
