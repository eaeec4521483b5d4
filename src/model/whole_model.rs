//! [`WholeModel`]: what `replay full` times, whatever the file holds: a TorchScript model
//! ([`super::torchscript`]) or an AOTInductor package ([`super::aoti_package`]). The timing
//! ([`super::full::ModelTimer`], [`super::forward_passes::ForwardPasses`]) is written once
//! against this trait.

use std::path::Path;

use tch::Tensor;

use super::input_spec::InputSpec;
use crate::error::{Error, Result};

/// A loaded model that runs forward passes on fixed inputs.
pub trait WholeModel {
    /// The file it was loaded from, for messages.
    fn path(&self) -> &Path;

    /// Where its passes run (the opened device its inputs are made on).
    fn device(&self) -> &crate::device::Device;

    /// What kind of model file it is, for the timing file: `None` for TorchScript (the
    /// default, written as before), a name for anything else.
    fn format(&self) -> Option<&'static str>;

    /// The inputs a run feeds: `specs` (`--input`) completed from what the model knows, or
    /// its own default input (token ids `[batch, seq_len]` for TorchScript; the input a
    /// package was compiled for). A usage error when there is no input to make.
    fn resolve_inputs(
        &self,
        specs: &[InputSpec],
        batch: i64,
        seq_len: i64,
    ) -> Result<Vec<InputSpec>>;

    /// One forward pass on `inputs`, its outputs dropped.
    fn forward_dropped(&self, inputs: &[Tensor]) -> Result<()>;

    /// One forward pass on `inputs` made from `specs`; a model that does not run on them is a
    /// usage error naming the model file, the inputs and the reason.
    fn check_runs_on(&self, specs: &[InputSpec], inputs: &[Tensor]) -> Result<()>;

    /// Fixed random tensors of `specs` on the model's device, from libtorch's generator seeded
    /// with `seed` (as `scripts/capture_trace.py` seeds its own).
    fn make_inputs(&self, specs: &[InputSpec], seed: i64) -> Result<Vec<Tensor>> {
        tch::manual_seed(seed);
        specs
            .iter()
            .map(|spec| {
                spec.make(self.device()).map_err(|e| {
                    let text = e.to_string();
                    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    Error::Model(format!("input {spec}: {}", line.trim()))
                })
            })
            .collect()
    }
}
