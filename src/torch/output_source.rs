//! [`OutputSource`]: a shared handle on what a [`PreparedOp`](super::PreparedOp) returned
//! last, which another prepared call can read as its input on every run
//! ([`PreparedOp::link_input`](super::PreparedOp::link_input)): a step's data flow, passed
//! inside the shim as the model passes it (a reference to the producer's output), with no
//! per-call work on replay's side.

use replay_core::sequence_gaps::ViewOp;
use tch::Tensor;

use super::sys::{self, RawOutputSource};

/// What one prepared call returned last; every later run of that call updates it. It keeps
/// the output alive (and readable) however long it lives, even after its call is freed.
pub struct OutputSource {
    pub(super) raw: *mut RawOutputSource,
}

impl std::fmt::Debug for OutputSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSource").finish_non_exhaustive()
    }
}

impl OutputSource {
    /// Return `output` (0: the first) of the call's latest output; `None` before it ran, or
    /// when that return is no tensor.
    pub fn tensor(&self, output: usize) -> Option<Tensor> {
        // SAFETY: `raw` is a live source owned by self; the shim returns a new heap
        // `torch::Tensor*` (or null) that tch takes ownership of.
        let raw = unsafe { sys::replay_output_source_tensor(self.raw, output) };
        (!raw.is_null()).then(|| unsafe { Tensor::from_ptr(raw as *mut _) })
    }
}

/// What a linked input reads of its producer ([`PreparedOp::link_input`](super::PreparedOp::link_input)).
#[derive(Debug, Clone, Copy)]
pub struct InputLink<'a> {
    pub source: &'a OutputSource,
    /// Which of the producer's returns (0: its first).
    pub output: usize,
    /// Read through these views, in order: the view ops the model applied to the output that
    /// are not re-run (a GPU trace's step re-runs the ops that launch work).
    pub views: &'a [ViewOp],
    /// This call is the source's last reader: the source lets go of the output after each of
    /// its runs.
    pub release_after: bool,
}

impl Drop for OutputSource {
    fn drop(&mut self) {
        // SAFETY: made by replay_op_output_source, freed once.
        unsafe { sys::replay_output_source_free(self.raw) }
    }
}
