//! What an Execution Trace adds to a signature file, when `classify --execution-trace`
//! linked one: the exact overload each launching op called and the values of its
//! arguments, and how much of the trace the ET covered.

use serde::{Deserialize, Serialize};

/// One argument of a launching op as its Execution Trace node recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactInput {
    /// The ET's type: `Tensor(float)`, `Int`, `Double`, `GenericList[Int,Int]`, `None`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The value of a non-tensor argument (a scalar, an int list, a device, a string), as
    /// recorded; `None` for tensors (their identities belong to one invocation, not to the
    /// signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

/// The values an integral tensor argument held, as an Execution Trace recorded them
/// (`tensor_range`, written when `ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE` is
/// set, as `replay capture --execution-trace` does): the smallest and the largest value, over
/// every linked invocation of the signature. Tier 3 draws index and other integer tensors
/// from this range instead of a bound derived from the shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRange {
    /// The argument's position among the op's inputs (as `exact_inputs` and the trace's
    /// `Input Dims` number them).
    pub input: usize,
    /// The tensor's position in a tensor-list argument (`Tensor?[] indices`); absent for a
    /// tensor argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<usize>,
    pub min: i64,
    pub max: i64,
}

impl InputRange {
    /// Widens `ranges` (one entry per argument and element) by `more`, keeping them sorted.
    pub fn union_into(ranges: &mut Vec<InputRange>, more: &[InputRange]) {
        for range in more {
            match ranges
                .iter_mut()
                .find(|r| (r.input, r.element) == (range.input, range.element))
            {
                Some(known) => {
                    known.min = known.min.min(range.min);
                    known.max = known.max.max(range.max);
                }
                None => ranges.push(*range),
            }
        }
        ranges.sort_by_key(|r| (r.input, r.element));
    }

    /// The range recorded for argument `input` (element `element` of a list), if any.
    pub fn find(ranges: &[InputRange], input: usize, element: Option<usize>) -> Option<InputRange> {
        ranges
            .iter()
            .find(|r| r.input == input && r.element == element)
            .copied()
    }
}

/// The Execution Trace a signature file was classified with, and how it linked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionTraceSource {
    /// The ET's path as given.
    pub path: String,
    /// Its `schema` (`1.0.1`, `1.1.0-chakra.0.0.4`).
    pub schema: String,
    /// The Kineto trace's ops (`cpu_op`, `user_annotation`), those with a record-function
    /// id, and those linked to an ET node of the same name.
    pub kineto_ops: u64,
    pub kineto_ops_with_id: u64,
    pub linked_ops: u64,
    /// Signatures with a launching op, and those whose launching op linked (and so carry
    /// `op.schema` where the node had one).
    pub signatures_with_op: u64,
    pub signatures_linked: u64,
    pub signatures_with_schema: u64,
    /// Invocations of those signatures, and those whose own launching op linked.
    pub invocations: u64,
    pub invocations_linked: u64,
    /// Signatures whose launching op carries recorded value ranges (`op.input_ranges`);
    /// 0 in files written before ranges were read.
    #[serde(default)]
    pub signatures_with_ranges: u64,
    /// Where the Kineto trace records no record-function id: how its ops were linked by op
    /// order and shapes instead (the step, how many operators matched and did not). Absent
    /// when linked by record-function id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_by_order: Option<String>,
    /// Where the Kineto trace recorded no input shapes: the ops that were given the linked
    /// node's (`execution_trace::fill`), as one line. Absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_filled: Option<String>,
}

impl ExecutionTraceSource {
    /// One line on how the Execution Trace linked, as `classify`, `isolated` and `compare`
    /// print it.
    pub fn summary(&self) -> String {
        let how = match &self.linked_by_order {
            None => "by record-function id".to_owned(),
            Some(order) => format!("by op order and shapes ({order})"),
        };
        format!(
            "execution trace {} (schema {}): {} of {} ops linked {how}; {} of {} signatures \
             with an op carry its exact schema, {} recorded integer value ranges",
            self.path,
            self.schema,
            self.linked_ops,
            self.kineto_ops,
            self.signatures_with_schema,
            self.signatures_with_op,
            self.signatures_with_ranges
        ) + &self
            .inputs_filled
            .as_ref()
            .map(|line| format!("; {line}"))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(input: usize, element: Option<usize>, min: i64, max: i64) -> InputRange {
        InputRange {
            input,
            element,
            min,
            max,
        }
    }

    #[test]
    fn ranges_of_the_same_argument_widen_and_others_are_kept_apart() {
        let mut ranges = vec![range(1, None, 3, 9)];
        InputRange::union_into(
            &mut ranges,
            &[
                range(1, None, 0, 5),
                range(0, None, 2, 2),
                range(1, Some(0), 7, 8),
            ],
        );
        assert_eq!(
            ranges,
            [
                range(0, None, 2, 2),
                range(1, None, 0, 9),
                range(1, Some(0), 7, 8)
            ]
        );
        assert_eq!(
            InputRange::find(&ranges, 1, None),
            Some(range(1, None, 0, 9))
        );
        assert_eq!(InputRange::find(&ranges, 1, Some(1)), None);
        // Written without the element of a plain tensor argument; read back the same.
        let text = serde_json::to_string(&ranges[1]).unwrap();
        assert_eq!(text, r#"{"input":1,"min":0,"max":9}"#);
        assert_eq!(
            serde_json::from_str::<InputRange>(&text).unwrap(),
            ranges[1]
        );
    }
}
