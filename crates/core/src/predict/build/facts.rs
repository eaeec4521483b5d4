//! What a step's skeleton needs from the whole trace when it is built from the step's own
//! events (the streamed predict, [`crate::predict::stream`]).

use crate::trace::{ExecutionId, Nanos};

use super::super::delays::TypicalDelays;

/// What one step's skeleton needs from the whole trace when it is built from the step's
/// events alone.
#[derive(Debug, Clone, Default)]
pub(crate) struct StepFacts {
    /// By event of the step's trace: the end of the work before it on its stream, over the
    /// whole trace (GPU activities only).
    pub previous_end: Vec<Option<Nanos>>,
    /// The whole trace's typical delays.
    pub typical: TypicalDelays,
    /// Every (pid, tid) with an op or a runtime call anywhere in the trace.
    pub host_threads: Vec<(ExecutionId, ExecutionId)>,
}
