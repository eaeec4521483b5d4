//! A tier-3 op call with copies of the model's parameters, used in turn.
//!
//! In a forward pass each layer's weights are read once and then not again until the next
//! pass: a model larger than the last-level cache streams them from memory. An isolated replay
//! that calls one op with the same weights over and over finds them in the cache and predicts
//! the op too fast (a ResNet-50 3x3 convolution with a 9.4 MB weight ran 4.0 ms with one
//! weight and 6.9 ms rotating eight; a BERT-base encoder layer at seq-len 5, 6.9 and 12.6 ms).
//! As tier 2 does for GEMM weights ([`super::parameter_copies`]), the call is prepared
//! several times over the same activations, each with its own copy of the parameters, and the
//! calls go round them.

use crate::torch::{InputLink, OutputSource, PreparedOp, ShimError};
use tch::Tensor;

/// Whether a schema argument holds a model parameter (or buffer) rather than an activation:
/// by its name, which libtorch's schemas give consistently (`weight`, `bias`, `qkv_weight`,
/// `ffn_bias_2`, `norm_weight_1`, `running_mean`, `running_var`).
pub fn is_parameter(schema_name: &str) -> bool {
    schema_name.contains("weight")
        || schema_name.contains("bias")
        || schema_name.starts_with("running_")
}

/// One op call prepared once per parameter copy; `run` goes round them.
#[derive(Debug)]
pub struct RotatingOp {
    calls: Vec<PreparedOp>,
    next: usize,
}

impl RotatingOp {
    /// `calls` must be the same call (one overload, same activations), each with its own
    /// parameters; at least one.
    pub fn new(calls: Vec<PreparedOp>) -> RotatingOp {
        debug_assert!(!calls.is_empty());
        RotatingOp { calls, next: 0 }
    }

    /// A handle on the tensor the call (its one copy of the parameters; the first of
    /// several) binds as argument `arg`, element `element` of a list: see
    /// [`PreparedOp::bound_tensor`].
    pub fn bound_tensor(&self, arg: usize, element: Option<usize>) -> Option<Tensor> {
        self.calls.first()?.bound_tensor(arg, element)
    }

    /// Says that the first copy has just run (the call made up front, before the others were
    /// prepared): the next call goes to the second copy, whose parameters are not in the cache.
    pub fn after_first_call(mut self) -> RotatingOp {
        self.next = 1 % self.calls.len();
        self
    }

    /// Whether every copy keeps its output between runs: see [`PreparedOp::keep_output`].
    pub fn keep_output(mut self, keep: bool) -> RotatingOp {
        self.calls.iter_mut().for_each(|c| c.keep_output(keep));
        self
    }

    /// Parameter copies in use.
    pub fn copies(&self) -> usize {
        self.calls.len()
    }

    /// `aten::add.Tensor`.
    pub fn name(&self) -> &str {
        self.calls.first().map_or("", |c| c.name())
    }

    /// Calls the operator `calls` times, each time with the next copy of its parameters.
    pub fn run(&mut self, calls: u64) -> Result<(), ShimError> {
        if self.calls.len() == 1 {
            return self.calls[0].run(calls);
        }
        for _ in 0..calls {
            self.calls[self.next].run(1)?;
            self.next = (self.next + 1) % self.calls.len();
        }
        Ok(())
    }

    /// A shared handle on the call's output, when it has one copy of its parameters (a
    /// call going round several has no one output to follow).
    pub fn output_source(&self) -> Option<OutputSource> {
        match &self.calls[..] {
            [one] => Some(one.output_source()),
            _ => None,
        }
    }

    /// Argument `arg` (element `element` of a list) of every copy reads `link`'s output from
    /// now on: see [`PreparedOp::link_input`].
    pub fn link_input(
        &mut self,
        arg: usize,
        element: Option<usize>,
        link: InputLink<'_>,
    ) -> Result<(), ShimError> {
        self.calls
            .iter_mut()
            .try_for_each(|call| call.link_input(arg, element, link))
    }

    /// The first tensor the last call returned.
    pub fn last_output(&self) -> Option<Tensor> {
        let last = (self.next + self.calls.len() - 1) % self.calls.len();
        self.calls[last].last_output()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_by_schema_name() {
        for name in [
            "weight",
            "bias",
            "qkv_weight",
            "ffn_bias_2",
            "norm_weight_1",
            "running_var",
        ] {
            assert!(is_parameter(name), "{name}");
        }
        for name in ["input", "self", "src", "other", "mask", "indices", "mat2"] {
            assert!(!is_parameter(name), "{name}");
        }
    }
}
