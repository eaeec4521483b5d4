//! The Execution Trace's ops that a re-run step does not re-run, between the ops it does
//! (`replay sequence --execution-trace`).
//!
//! A GPU trace's step re-runs the ops that launched work; the ops between them that launch
//! nothing (a `view`, a `t`, an `empty`) are not re-run, yet they make tensors that later ops
//! read. The Execution Trace reuses tensor and storage ids once a tensor is freed, so such an
//! op's output may carry the ids of an earlier output of the step: without these ops, a
//! reader would take that stale producer for its own. Each op between two re-run ones is read
//! for what it does to the step's tensors ([`GapEffect`]): a view of one tensor that its
//! reader applies to the producer's output ([`ViewOp`]: a reshape, `t`, `transpose`,
//! `permute`, `expand`, `select`, `slice`), another view of the step's tensors, or new
//! tensors.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::execution_trace::{tensor_key, EtNode, ExecutionTrace, TensorKey, TensorRef};

/// View ops whose output is their input in other sizes, same elements in the same order when
/// the input is contiguous: what a reader can read as the producer's output reshaped to the
/// recorded sizes.
pub const RESHAPE_OPS: &[&str] = &[
    "aten::view",
    "aten::reshape",
    "aten::_unsafe_view",
    "aten::_reshape_alias",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::flatten",
    "aten::view_as",
    "aten::reshape_as",
    "aten::detach",
    "aten::alias",
];

/// A view op that is not re-run, as its reader applies it to its producer's output (in the
/// shim, on every run, as the model's op did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewOp {
    /// To the recorded sizes (every op of [`RESHAPE_OPS`]).
    Reshape(Vec<i64>),
    /// `aten::t`.
    T,
    /// `aten::transpose(dim0, dim1)`.
    Transpose(i64, i64),
    /// `aten::permute(dims)`.
    Permute(Vec<i64>),
    /// `aten::expand(size)`.
    Expand(Vec<i64>),
    /// `aten::select(dim, index)`.
    Select(i64, i64),
    /// `aten::slice(dim, start, end, step)`.
    Slice {
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    },
}

impl ViewOp {
    /// The view `node` applies to its first input, when it is one of these.
    pub fn of(node: &EtNode) -> Option<ViewOp> {
        let arg = |i: usize| node.inputs.get(i).map(|a| &a.value);
        let int = |i: usize| arg(i).and_then(Value::as_i64);
        let ints = |v: Option<&Value>| -> Option<Vec<i64>> {
            v?.as_array()?.iter().map(Value::as_i64).collect()
        };
        let name = node.name.as_str();
        Some(match name {
            _ if RESHAPE_OPS.contains(&name) => {
                let [output] = &node.outputs[..] else {
                    return None;
                };
                ViewOp::Reshape(ints(Some(&output.shape))?)
            }
            "aten::t" => ViewOp::T,
            "aten::transpose" => ViewOp::Transpose(int(1)?, int(2)?),
            "aten::permute" => ViewOp::Permute(ints(arg(1))?),
            "aten::expand" => ViewOp::Expand(ints(arg(1))?),
            "aten::select" => ViewOp::Select(int(1)?, int(2)?),
            "aten::slice" => ViewOp::Slice {
                dim: int(1).unwrap_or(0),
                start: int(2),
                end: int(3),
                step: int(4).unwrap_or(1),
            },
            _ => return None,
        })
    }
}

/// What an op that is not re-run does to the step's tensors.
#[derive(Debug, Clone, PartialEq)]
pub enum GapEffect {
    /// Its output is a view of its first input that a reader can apply ([`ViewOp`]).
    View {
        input: TensorKey,
        output: TensorKey,
        op: ViewOp,
    },
    /// Its outputs view its inputs' storage otherwise (`as_strided`, `unbind`, `split`):
    /// outputs that are one of its inputs are left out.
    Made {
        inputs: Vec<TensorKey>,
        outputs: Vec<TensorKey>,
    },
    /// Its outputs are new storages (`empty_like`): what they hold is written by the ops that
    /// read them, not made of the step's tensors.
    Fresh { outputs: Vec<TensorKey> },
}

/// What `node` does to the step's tensors; `None` when it outputs no tensor.
pub fn effect(node: &EtNode) -> Option<GapEffect> {
    let outputs: Vec<&TensorRef> = node.outputs.iter().flat_map(|a| &a.tensors).collect();
    if outputs.is_empty() {
        return None;
    }
    let first_input = node.inputs.iter().find(|a| a.is_tensor());
    if let (Some(input), [output], Some(op)) = (
        first_input.and_then(|a| a.tensors.first()),
        &outputs[..],
        ViewOp::of(node),
    ) {
        return Some(GapEffect::View {
            input: tensor_key(input),
            output: tensor_key(output),
            op,
        });
    }
    let inputs: Vec<&TensorRef> = node.inputs.iter().flat_map(|a| &a.tensors).collect();
    let storages: HashSet<i64> = inputs.iter().map(|t| t.storage_id).collect();
    let (aliases, fresh): (Vec<&TensorRef>, Vec<&TensorRef>) = outputs
        .into_iter()
        .partition(|o| storages.contains(&o.storage_id));
    if aliases.is_empty() {
        return Some(GapEffect::Fresh {
            outputs: fresh.into_iter().map(tensor_key).collect(),
        });
    }
    let inputs: Vec<TensorKey> = inputs.into_iter().map(tensor_key).collect();
    // An output that is one of its inputs (an op that returned its input, as `to` of the
    // tensor's own dtype does) is unchanged.
    let outputs = aliases
        .into_iter()
        .map(tensor_key)
        .filter(|o| !inputs.contains(o))
        .collect();
    Some(GapEffect::Made { inputs, outputs })
}

/// Per op of the step (`nodes`: each op's node, in step order), the Execution Trace's ops
/// that run before it and after the op of the step that precedes it in the Execution Trace's
/// own order (its node ids), that are not re-run: not an op of the step, not called inside one
/// (an op's callees are its work), nor calling one (a `linear` whose `addmm` is re-run), nor
/// called inside another such op, in the order they ran. Ops after the step's last are left
/// out.
pub fn gaps<'a>(et: &'a ExecutionTrace, nodes: &[Option<&EtNode>]) -> Vec<Vec<&'a EtNode>> {
    let mut out = vec![Vec::new(); nodes.len()];
    let mut step: Vec<(i64, usize)> = nodes
        .iter()
        .enumerate()
        .filter_map(|(position, n)| Some((n.as_ref()?.id, position)))
        .collect();
    step.sort_unstable();
    let Some(&(first, _)) = step.first() else {
        return out;
    };
    let in_step: HashSet<i64> = step.iter().map(|&(id, _)| id).collect();
    let parent: HashMap<i64, i64> = et
        .nodes
        .iter()
        .filter_map(|n| Some((n.id, n.parent?)))
        .collect();
    let mut calling_step: HashSet<i64> = HashSet::new();
    for &(id, _) in &step {
        calling_step.extend(callers(&parent, id));
    }
    let mut between: Vec<&EtNode> = et
        .nodes
        .iter()
        .filter(|n| {
            n.id > first
                && !n.outputs.is_empty()
                && !in_step.contains(&n.id)
                && !calling_step.contains(&n.id)
                && !callers(&parent, n.id).any(|c| in_step.contains(&c))
        })
        .collect();
    between.sort_by_key(|n| n.id);
    // An op called inside another that is not re-run is that op's work (`t` calls
    // `transpose`, which calls `as_strided`): the outermost speaks for it.
    let outer: HashSet<i64> = between.iter().map(|n| n.id).collect();
    between.retain(|n| !callers(&parent, n.id).any(|c| outer.contains(&c)));
    for gap in between {
        let next = step.partition_point(|&(id, _)| id < gap.id);
        if let Some(&(_, position)) = step.get(next) {
            out[position].push(gap);
        }
    }
    out
}

/// The callers of node `id`, nearest first (bounded: a malformed file may loop).
fn callers(parent: &HashMap<i64, i64>, id: i64) -> impl Iterator<Item = i64> + '_ {
    let mut at = id;
    std::iter::from_fn(move || {
        let up = *parent.get(&at)?;
        (up != at).then(|| {
            at = up;
            up
        })
    })
    .take(4096)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution_trace::EtArg;
    use serde_json::json;

    fn tensor(tensor_id: i64, storage_id: i64, numel: i64) -> EtArg {
        EtArg::float_tensor(tensor_id, storage_id, numel)
    }

    fn node(id: i64, name: &str, parent: i64, inputs: Vec<EtArg>, outputs: Vec<EtArg>) -> EtNode {
        EtNode {
            parent: Some(parent),
            inputs,
            outputs,
            ..EtNode::named(id, name)
        }
    }

    #[test]
    fn the_ops_between_are_the_outermost_not_re_run_placed_before_the_next_step_op() {
        // 2 linear (calls 3 addmm, re-run) ; 4 view of addmm's output ; 5 t (calls 6
        // transpose) ; 7 empty_like ; 8 relu (re-run) ; 9 sum after the last step op.
        let et = ExecutionTrace {
            nodes: vec![
                node(1, "[root]", 1, vec![], vec![]),
                node(
                    2,
                    "aten::linear",
                    1,
                    vec![tensor(10, 10, 4)],
                    vec![tensor(11, 11, 4)],
                ),
                node(
                    3,
                    "aten::addmm",
                    2,
                    vec![tensor(10, 10, 4)],
                    vec![tensor(11, 11, 4)],
                ),
                node(
                    4,
                    "aten::view",
                    1,
                    vec![tensor(11, 11, 4)],
                    vec![tensor(12, 11, 4)],
                ),
                node(
                    5,
                    "aten::t",
                    1,
                    vec![tensor(12, 11, 4)],
                    vec![tensor(13, 11, 4)],
                ),
                node(
                    6,
                    "aten::transpose",
                    5,
                    vec![tensor(12, 11, 4)],
                    vec![tensor(13, 11, 4)],
                ),
                node(
                    7,
                    "aten::empty_like",
                    1,
                    vec![tensor(12, 11, 4)],
                    vec![tensor(14, 14, 4)],
                ),
                node(
                    8,
                    "aten::relu",
                    1,
                    vec![tensor(12, 11, 4)],
                    vec![tensor(15, 15, 4)],
                ),
                node(
                    9,
                    "aten::sum",
                    1,
                    vec![tensor(15, 15, 4)],
                    vec![tensor(16, 16, 1)],
                ),
            ],
            path: "t.json".into(),
            schema: "1.0.1".into(),
            version: crate::execution_trace::SchemaVersion::V1_0,
            pid: None,
            time: None,
        };
        let step = [Some(&et.nodes[2]), Some(&et.nodes[7])];
        let gaps = gaps(&et, &step);
        let ids: Vec<Vec<i64>> = gaps
            .iter()
            .map(|g| g.iter().map(|n| n.id).collect())
            .collect();
        assert_eq!(ids, [vec![], vec![4, 5, 7]]);
        let effects: Vec<GapEffect> = gaps[1].iter().filter_map(|n| effect(n)).collect();
        assert_eq!(
            effects,
            [
                GapEffect::View {
                    input: (11, 11),
                    output: (12, 11),
                    op: ViewOp::Reshape(vec![4]),
                },
                GapEffect::View {
                    input: (12, 11),
                    output: (13, 11),
                    op: ViewOp::T,
                },
                GapEffect::Fresh {
                    outputs: vec![(14, 14)]
                },
            ]
        );
        // The liveness follows them: relu reads the view of addmm's output, as it flows.
        let live = crate::sequence_liveness::step_liveness(&step, &gaps);
        assert_eq!(live.producers[1].get(&(0, None)), Some(&0));
        // Another view of the step's tensors (an `as_strided` met alone) is no view a reader
        // applies; its arguments are read as recorded.
        let mut strided = et.nodes[5].clone();
        strided.name = "aten::as_strided".into();
        assert!(matches!(effect(&strided), Some(GapEffect::Made { .. })));
        let mut transpose = et.nodes[5].clone();
        transpose.inputs.push(EtArg {
            value: json!(0),
            ..tensor(0, 0, 0)
        });
        transpose.inputs.push(EtArg {
            value: json!(1),
            ..tensor(0, 0, 0)
        });
        assert_eq!(ViewOp::of(&transpose), Some(ViewOp::Transpose(0, 1)));
        let mut slice = transpose.clone();
        slice.name = "aten::slice".into();
        slice.inputs.push(EtArg {
            value: Value::Null,
            ..tensor(0, 0, 0)
        });
        assert_eq!(
            ViewOp::of(&slice),
            Some(ViewOp::Slice {
                dim: 0,
                start: Some(1),
                end: None,
                step: 1
            })
        );
    }
}
