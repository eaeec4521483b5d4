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
    /// The pieces `node` cuts its first input into, each as the view of it that it is, when it
    /// is `split`, `split_with_sizes`, `chunk` or `unbind` (one list output); `None` else.
    pub fn pieces(node: &EtNode) -> Option<Vec<ViewOp>> {
        let input = node.inputs.first()?;
        let [list] = &node.outputs[..] else {
            return None;
        };
        let n = list.tensors.len() as i64;
        let int = |i: usize, default: i64| {
            node.inputs.get(i).map_or(Some(default), |a| {
                a.value.as_i64().or(a.value.is_null().then_some(default))
            })
        };
        let sizes = input.shape.as_array()?;
        let dim = int(2, 0)?;
        let along = |dim: i64| {
            let d = if dim < 0 {
                dim + sizes.len() as i64
            } else {
                dim
            };
            sizes.get(usize::try_from(d).ok()?)?.as_i64()
        };
        let slices = |starts: Vec<(i64, i64)>, dim: i64| {
            starts
                .into_iter()
                .map(|(start, len)| ViewOp::Slice {
                    dim,
                    start: Some(start),
                    end: Some(start + len),
                    step: 1,
                })
                .collect()
        };
        Some(match node.name.as_str() {
            "aten::unbind" => {
                let dim = int(1, 0)?;
                (0..n).map(|k| ViewOp::Select(dim, k)).collect()
            }
            "aten::split" | "aten::chunk" => {
                let size = match node.name.as_str() {
                    "aten::split" => int(1, 0)?,
                    _ => {
                        let chunks = int(1, 1)?.max(1);
                        (along(dim)? + chunks - 1) / chunks
                    }
                };
                slices((0..n).map(|k| (k * size, size)).collect(), dim)
            }
            "aten::split_with_sizes" => {
                let lens: Vec<i64> = node
                    .inputs
                    .get(1)?
                    .value
                    .as_array()?
                    .iter()
                    .map(Value::as_i64)
                    .collect::<Option<_>>()?;
                let mut start = 0;
                let starts = lens
                    .iter()
                    .map(|&len| {
                        start += len;
                        (start - len, len)
                    })
                    .collect();
                slices(starts, dim)
            }
            _ => return None,
        })
    }

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
    /// Its outputs are views of its first input that a reader can apply ([`ViewOp`]): one, or
    /// a list's pieces (`split`, `split_with_sizes`, `chunk`, `unbind`).
    View {
        input: TensorKey,
        outputs: Vec<(TensorKey, ViewOp)>,
    },
    /// Its outputs view its inputs' storage otherwise (`as_strided`, `diagonal`): outputs that
    /// are one of its inputs are left out.
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
    if let Some(input) = first_input.and_then(|a| a.tensors.first()) {
        let views = match &outputs[..] {
            [output] => ViewOp::of(node).map(|op| vec![(tensor_key(output), op)]),
            _ => ViewOp::pieces(node)
                .filter(|pieces| pieces.len() == outputs.len())
                .map(|pieces| outputs.iter().map(|t| tensor_key(t)).zip(pieces).collect()),
        };
        if let Some(outputs) = views {
            return Some(GapEffect::View {
                input: tensor_key(input),
                outputs,
            });
        }
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
pub fn gaps<'a>(et: &'a ExecutionTrace, nodes: &[Option<&EtNode>]) -> Vec<Vec<Gap<'a>>> {
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
    for node in between {
        let next = step.partition_point(|&(id, _)| id < node.id);
        if let (Some(&(_, position)), Some(effect)) = (step.get(next), effect(node)) {
            out[position].push(Gap { node, effect });
        }
    }
    out
}

/// A step op's list output read as the pieces of its input it is (`split`, `split_with_sizes`,
/// `chunk`, `unbind`): what the step op gives its readers, as a [`Gap`] of that op whose
/// [`Gap::pass_on`] maps each element to its input's maker, with the piece's slice or select.
/// The rebuilt call of a list-returning op gives no single tensor to link to, but each piece
/// is a view of the op's input, so a reader can read it from the input's maker. `None` for an
/// op of no list output or whose pieces are not worked out.
pub fn list_pieces(node: &EtNode) -> Option<Gap<'_>> {
    if node.outputs.iter().all(|a| a.is_tensor()) {
        return None;
    }
    match effect(node)? {
        effect @ GapEffect::View { .. } => Some(Gap { node, effect }),
        _ => None,
    }
}

/// One op between the step's ops that the step does not re-run, and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap<'a> {
    pub node: &'a EtNode,
    pub effect: GapEffect,
}

impl Gap<'_> {
    /// Passes what the op did on to `produced` (who made each tensor the step's ops can
    /// read): a view's outputs take their input's maker, through `view`; the outputs of another
    /// view of a tensor the step made take `derived()`; any other output is forgotten (a tensor
    /// from outside the step), and with it a maker whose ids the Execution Trace reused.
    pub fn pass_on<P: Clone>(
        &self,
        produced: &mut HashMap<TensorKey, P>,
        view: impl Fn(&P, &ViewOp) -> P,
        derived: impl Fn() -> P,
    ) {
        match &self.effect {
            GapEffect::View { input, outputs } => {
                let from = produced.get(input).cloned();
                for (output, op) in outputs {
                    match &from {
                        Some(from) => produced.insert(*output, view(from, op)),
                        None => produced.remove(output),
                    };
                }
            }
            GapEffect::Made { inputs, outputs } => {
                let from_step = inputs.iter().any(|k| produced.contains_key(k));
                for output in outputs {
                    match from_step {
                        true => produced.insert(*output, derived()),
                        false => produced.remove(output),
                    };
                }
            }
            GapEffect::Fresh { outputs } => {
                for output in outputs {
                    produced.remove(output);
                }
            }
        }
    }
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
            .map(|g| g.iter().map(|g| g.node.id).collect())
            .collect();
        assert_eq!(ids, [vec![], vec![4, 5, 7]]);
        let effects: Vec<GapEffect> = gaps[1].iter().map(|g| g.effect.clone()).collect();
        assert_eq!(
            effects,
            [
                GapEffect::View {
                    input: (11, 11),
                    outputs: vec![((12, 11), ViewOp::Reshape(vec![4]))],
                },
                GapEffect::View {
                    input: (12, 11),
                    outputs: vec![((13, 11), ViewOp::T)],
                },
                GapEffect::Fresh {
                    outputs: vec![(14, 14)]
                },
            ]
        );
        // The liveness follows them: relu reads the view of addmm's output, as it flows.
        let live = crate::sequence_liveness::step_liveness(&step, &gaps);
        assert_eq!(live.producers[1].get(&(0, None)), Some(&0));
        // A split's pieces are each a view of its input; a list of another length than the
        // split gives is another view.
        let mut split = node(9, "aten::split", 1, vec![tensor(12, 11, 4)], vec![]);
        split.inputs.push(EtArg {
            value: json!(2),
            ..tensor(0, 0, 0)
        });
        let mut list = tensor(20, 11, 2);
        list.ty = "GenericList[Tensor(float),Tensor(float)]".into();
        list.tensors.push(TensorRef {
            tensor_id: 21,
            ..list.tensors[0].clone()
        });
        split.outputs = vec![list];
        let slice = |start| ViewOp::Slice {
            dim: 0,
            start: Some(start),
            end: Some(start + 2),
            step: 1,
        };
        assert_eq!(
            effect(&split),
            Some(GapEffect::View {
                input: (12, 11),
                outputs: vec![((20, 11), slice(0)), ((21, 11), slice(2))],
            })
        );
        split.outputs[0].tensors.pop();
        assert!(matches!(effect(&split), Some(GapEffect::Made { .. })));
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
