//! A libtorch op call of a sequence whose inputs flow (`replay sequence --execution-trace`):
//! before each call, its flowing arguments are pointed at their producers' real outputs of
//! the same run, read from the sequence's slot table; after it, its output is stored in its
//! own slot for the ops that consume it.
//!
//! Pointing an argument is `set_` on the tensor the prepared call binds (the same tensor
//! object libtorch holds), so the call reads the producer's memory itself, views included:
//! no copy. The rebinding happens outside the op's timed segment.

use std::cell::RefCell;
use std::rc::Rc;

use tch::Tensor;

use super::tier3_libtorch::LibtorchOpTarget;
use crate::measure::{MeasureError, Placement, Target, Timer};

/// The outputs of a sequence's ops, one slot per op (by position in the step), filled as the
/// ops run: owned by the sequence, shared by its flowing ops.
pub type Slots = Rc<RefCell<Vec<Option<Tensor>>>>;

/// A new slot table for `ops` ops.
pub fn slots(ops: usize) -> Slots {
    Rc::new(RefCell::new((0..ops).map(|_| None).collect()))
}

/// One flowing argument: the tensor the call binds, and the slot it reads.
pub struct Inflow {
    pub bound: Tensor,
    pub slot: usize,
}

/// A libtorch op call with flowing inputs and its output kept in a slot.
pub struct FlowingOp {
    call: LibtorchOpTarget,
    inflows: Vec<Inflow>,
    output: Option<usize>,
    slots: Slots,
}

impl FlowingOp {
    /// `call` reads `inflows` from `slots` and writes its first output to slot `output`.
    pub fn new(
        call: LibtorchOpTarget,
        inflows: Vec<Inflow>,
        output: Option<usize>,
        slots: Slots,
    ) -> FlowingOp {
        FlowingOp {
            call,
            inflows,
            output,
            slots,
        }
    }

    /// Points every flowing argument at its producer's latest output.
    fn bind(&mut self) -> Result<(), MeasureError> {
        let slots = self.slots.borrow();
        for inflow in &mut self.inflows {
            if let Some(Some(source)) = slots.get(inflow.slot) {
                // The in-place call returns another handle on the bound tensor, not needed.
                let _ = inflow
                    .bound
                    .f_set_source_tensor_(source)
                    .map_err(|e| MeasureError::target(format!("set_ of a flowing input: {e}")))?;
            }
        }
        Ok(())
    }

    fn store(&mut self) {
        if let Some(slot) = self.output {
            let output = self.call.last_output();
            if let Some(place) = self.slots.borrow_mut().get_mut(slot) {
                *place = output;
            }
        }
    }
}

impl Target for FlowingOp {
    fn placement(&self) -> Placement<'_> {
        self.call.placement()
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.bind()?;
            self.call.run(1)?;
            self.store();
        }
        Ok(())
    }

    /// Only the call is timed: binding and storing are outside its segment.
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.bind()?;
            self.call.run_timed(1, timer)?;
            self.store();
        }
        Ok(())
    }
}
