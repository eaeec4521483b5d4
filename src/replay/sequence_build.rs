//! Rebuilding each op of a re-run step as the target that runs it in the sequence: by its
//! route ([`super::sequence_route`]), and wired to its producers when an Execution Trace gives
//! the data flow ([`super::flow_wiring`]). Every op is run once as it is built, in order,
//! so that an op that fails is known before any timing and the ops that read its outputs
//! find them.

use super::flow_wiring::Wiring;
use super::registry::{dispatcher_call, target_with, Method, Parameters, ReplayUnit, SetupError};
use super::sequence::ProgramEntry;
use super::sequence_route::{route, Placing, Route};
use super::tier3_libtorch::LibtorchOpTarget;
use crate::device::Device;
use crate::measure::Target;
use crate::signature::fusion_group::is_fusion_group_op;
use crate::signature::schema::SignatureFile;
use replay_core::inductor::InductorKernels;

/// Builds the ops of one step, in order.
pub struct SequenceBuilder<'a> {
    pub file: &'a SignatureFile,
    pub units: &'a [ReplayUnit],
    pub device: &'a Device,
    pub generated: Option<&'a InductorKernels>,
    /// The data flow, when an Execution Trace was given.
    pub wiring: Option<Wiring<'a>>,
}

impl<'a> SequenceBuilder<'a> {
    fn placing(&self) -> Placing {
        Placing {
            cuda: matches!(self.device, Device::Cuda(_)),
            flow: self.wiring.is_some(),
        }
    }

    /// The target of the op at `position`, run once; or why it cannot run.
    pub fn build(
        &mut self,
        position: usize,
        entry: &ProgramEntry,
    ) -> Result<(Box<dyn Target>, Method), SetupError> {
        let node = self.wiring.as_ref().and_then(|w| w.node(entry));
        let built = self
            .build_unwired(position, entry)
            .and_then(|(mut target, method)| {
                target.run(1).map_err(SetupError::from)?;
                Ok((target, method))
            });
        if let (Err(e), Some(node), Some(wiring)) = (&built, node, self.wiring.as_mut()) {
            let why = match e {
                SetupError::Unsupported(_) => "was not rebuilt",
                SetupError::Failed(_) | SetupError::Oom(_) => "failed",
            };
            wiring.not_run(node, position, why);
        }
        built
    }

    /// The op at `position` runs, but not as a libtorch call that gives its output (`why`):
    /// the ops that read its outputs read tensors of their own.
    fn gives_no_tensor(&mut self, entry: &ProgramEntry, position: usize, why: &str) {
        if let Some(wiring) = self.wiring.as_mut() {
            if let Some(node) = wiring.node(entry) {
                wiring.not_run(node, position, why);
            }
        }
    }

    fn build_unwired(
        &mut self,
        position: usize,
        entry: &ProgramEntry,
    ) -> Result<(Box<dyn Target>, Method), SetupError> {
        let Some(unit) = entry.unit.and_then(|u| self.units.get(u)) else {
            return Err(SetupError::Unsupported(
                "the trace names no signature for this work".into(),
            ));
        };
        let sig = &self.file.signatures[unit.lead];
        let op_name = sig.op.as_ref().map_or(&sig.name, |op| &op.name);
        match route(unit.tier, is_fusion_group_op(op_name), self.placing()) {
            Route::Native => {
                let built = target_with(
                    self.file,
                    unit,
                    self.device,
                    self.generated,
                    Parameters::OneSet,
                )?;
                self.gives_no_tensor(
                    entry,
                    position,
                    "is replayed by its tier's own replayer, which gives no tensor",
                );
                Ok(built)
            }
            Route::LibtorchMemory => {
                let Device::Cuda(dev) = self.device else {
                    return Err(SetupError::Unsupported(
                        "libtorch's copies are a CUDA sequence's".into(),
                    ));
                };
                let work = super::registry::memory_work(sig)?;
                let (op, method) = super::libtorch_memory::prepare(work, dev)?;
                let target = LibtorchOpTarget::new(op, self.device)?;
                self.gives_no_tensor(
                    entry,
                    position,
                    "is a copy or memset issued alone, which gives no tensor of the op",
                );
                Ok((Box::new(target), method))
            }
            Route::Dispatcher => {
                let (op, method) = dispatcher_call(sig, self.device, None)?;
                let node = self.wiring.as_ref().and_then(|w| w.node(entry));
                match (self.wiring.as_mut(), node) {
                    (Some(wiring), Some(node)) => {
                        Ok((wiring.wire(position, node, op, self.device)?, method))
                    }
                    _ => {
                        // No consumer reads its output: freed as each run ends.
                        let op = op.keep_output(false);
                        Ok((Box::new(LibtorchOpTarget::new(op, self.device)?), method))
                    }
                }
            }
        }
    }
}
