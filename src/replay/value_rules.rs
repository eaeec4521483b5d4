//! Valid values for tensor arguments that are not indices.
//!
//! Integer tensors are filled with zeros unless the op says otherwise: zero is a valid index
//! (see [`super::index_bounds`]) and a harmless operand for most ops, but not for all. A
//! traced `h // n_head` is an `aten::floor_divide` of two 0-dim integer tensors, and a zero
//! divisor makes libtorch throw `ZeroDivisionError`; a repeat count must not be negative.
//! A batch norm's running variance is positive in every model: drawn from a normal
//! distribution, half of it is negative (the output NaN) and some of it within `eps` of
//! zero, where the reciprocal square root of `var + eps` magnifies float32's roundoff of the
//! sum by thousands. The profiler records no values of tensors, so these are chosen valid for
//! the op.

/// What the values of an integer tensor argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRule {
    /// A divisor: never zero (filled with small positive integers).
    NonZero,
    /// A count or size: at least one; a variance: positive, of order one.
    Positive,
}

/// The rules for the arguments of `op_name`: `(argument position, rule)`, positions in the
/// chosen overload's arguments.
pub fn value_rules(op_name: &str) -> &'static [(usize, ValueRule)] {
    let base = op_name.strip_prefix("aten::").unwrap_or(op_name);
    let base = base.strip_suffix('_').unwrap_or(base);
    match base {
        // `other` of the Tensor overloads and of `remainder.Scalar_Tensor(Scalar self, Tensor other)`.
        "div" | "divide" | "true_divide" | "floor_divide" | "remainder" | "fmod" => {
            &[(1, ValueRule::NonZero)]
        }
        // `repeat_interleave.Tensor(repeats)` and `repeat_interleave.self_Tensor(self, repeats)`;
        // an integer `self` of the latter is data, for which positive values are as good.
        "repeat_interleave" => &[(0, ValueRule::Positive), (1, ValueRule::Positive)],
        // `running_var` of `batch_norm(input, weight, bias, running_mean, running_var, ...)`
        // and of the ops it dispatches to; `invstd` of `batch_norm_elemt`.
        "batch_norm"
        | "native_batch_norm"
        | "_native_batch_norm_legit_no_training"
        | "_batch_norm_impl_index"
        | "cudnn_batch_norm"
        | "miopen_batch_norm"
        | "instance_norm"
        | "batch_norm_elemt" => &[(4, ValueRule::Positive)],
        _ => &[],
    }
}

/// The rule for argument `position` of `op_name`, if it has one.
pub fn value_rule(op_name: &str, position: usize) -> Option<ValueRule> {
    value_rules(op_name)
        .iter()
        .find(|(p, _)| *p == position)
        .map(|(_, rule)| *rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_and_counts() {
        for op in [
            "aten::floor_divide",
            "aten::div",
            "aten::div_",
            "aten::remainder",
            "aten::fmod",
        ] {
            assert_eq!(value_rule(op, 1), Some(ValueRule::NonZero), "{op}");
            assert_eq!(value_rule(op, 0), None, "{op}: the dividend may be zero");
        }
        assert_eq!(
            value_rule("aten::repeat_interleave", 0),
            Some(ValueRule::Positive)
        );
        assert!(value_rules("aten::add").is_empty());
        assert_eq!(
            value_rule("aten::batch_norm", 4),
            Some(ValueRule::Positive),
            "running_var"
        );
        assert_eq!(value_rule("aten::batch_norm", 3), None, "running_mean");
    }
}
