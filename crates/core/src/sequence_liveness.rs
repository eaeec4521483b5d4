//! The lifetimes of a re-run step's tensors, from its Execution Trace (`replay sequence
//! --execution-trace`): what the memory plan ([`crate::sequence_plan`]) follows instead of
//! the size-and-dtype rule when the model's data flow is known.
//!
//! The step's ops are the Execution Trace nodes they linked to, in step order. A tensor an op
//! reads is either an earlier op's output (it flows: the re-run reads the producer's output
//! itself) or a tensor from outside the step (a parameter, the model's input: allocated once,
//! read by every op that reads it). The re-run passes on every output that is one tensor, as
//! the data-flow wiring does; an input made by a list output is the reader's own, sized.
//!
//! An op's outputs are held from its run until the last reader of any of them has run, then
//! let go, as the model frees a tensor after its last use; an output nobody reads is freed as
//! its op ends. A storage (what memory a tensor lives in: views and in-place results share
//! their input's) lives from the op that makes it until every op holding a tensor of it has
//! let go. An output whose storage no input of its op shares is a new storage (the observer
//! reuses a freed storage's id). The live bytes at each op are the storages alive while it
//! runs; their most is what the data flow adds to the plan's buffers.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::execution_trace::{EtArg, EtNode, TensorRef};
use crate::sequence_gaps::{list_pieces, Gap};
use crate::sequence_plan::{FlowMemory, OpNeeds, Source};

pub use crate::execution_trace::{tensor_key, TensorKey};

/// The elements a tensor argument spans in its storage, from the node's own shape and
/// strides (contiguous when the schema records none): `offset + extent`.
pub fn span(arg: &EtArg, tensor: &TensorRef) -> Option<i64> {
    let ints =
        |v: &Value| -> Option<Vec<i64>> { v.as_array()?.iter().map(Value::as_i64).collect() };
    let sizes = ints(&arg.shape)?;
    let strides = match arg.strides.as_ref().and_then(ints) {
        Some(s) if s.len() == sizes.len() => s,
        _ => {
            let mut s = vec![1; sizes.len()];
            for i in (0..sizes.len().saturating_sub(1)).rev() {
                s[i] = s[i + 1] * sizes[i + 1].max(1);
            }
            s
        }
    };
    let extent = if sizes.contains(&0) {
        0
    } else {
        1 + sizes
            .iter()
            .zip(&strides)
            .map(|(&size, &stride)| (size - 1) * stride)
            .sum::<i64>()
    };
    Some(tensor.offset + extent)
}

/// A storage one of the step's ops makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Storage {
    pub storage_id: i64,
    /// Its bytes: the making output's elements past its offset's start, times its itemsize.
    pub bytes: u64,
    /// The op that makes it, and the last op while which it is alive.
    pub made: usize,
    pub freed_after: usize,
}

/// An external storage that several external tensors view at different offsets: one
/// allocation of `len` elements of `itemsize` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasedStorage {
    pub storage_id: i64,
    pub len: i64,
    pub itemsize: i64,
}

/// The lifetimes of a step's tensors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepLiveness {
    /// Per op, per (recorded input, element of a list input): where it comes from; an input
    /// not named here (no node, no tensor, another output's) is the op's own, by size.
    pub sources: Vec<HashMap<(usize, Option<usize>), Source>>,
    /// The op whose output an input reads, for a flowing input.
    pub producers: Vec<HashMap<(usize, Option<usize>), usize>>,
    /// Per op: the last op that reads one of its outputs (itself when none does): its outputs
    /// are held until that op has run.
    pub held_until: Vec<usize>,
    pub storages: Vec<Storage>,
    pub aliased: Vec<AliasedStorage>,
    pub external_tensors: usize,
    /// The bytes of the storages alive while each op runs.
    pub live_bytes: Vec<u64>,
}

impl StepLiveness {
    /// Whether a later op reads an output of the op at `position`.
    pub fn is_read_later(&self, position: usize) -> bool {
        self.held_until
            .get(position)
            .is_some_and(|&until| until > position)
    }

    /// Whether the op at `position` is the last reader of `producer`'s outputs.
    pub fn is_last_reader(&self, producer: usize, position: usize) -> bool {
        self.held_until.get(producer) == Some(&position) && producer < position
    }

    /// Marks each request of `ops` (the same ops, in order) with its source, where its
    /// recorded input is known, and says what the data flow adds to the plan.
    pub fn annotate(&self, ops: &mut [OpNeeds]) -> FlowMemory {
        let mut memory = self.memory();
        for (position, op) in ops.iter_mut().enumerate() {
            for request in &mut op.requests {
                request.source = request
                    .input
                    .and_then(|slot| self.sources.get(position)?.get(&(slot.input, slot.element)))
                    .copied()
                    .unwrap_or(Source::Sized);
                match request.source {
                    Source::Sized => memory.sized_requests += 1,
                    Source::Flowing => memory.flowing_requests += 1,
                    Source::External(_) => memory.external_requests += 1,
                }
            }
        }
        memory
    }

    /// The live outputs' peak, the storages and the aliased external storages.
    pub fn memory(&self) -> FlowMemory {
        let (live_peak_op, live_peak_bytes) = self
            .live_bytes
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|&(op, bytes)| (bytes, std::cmp::Reverse(op)))
            .unwrap_or((0, 0));
        FlowMemory {
            live_peak_bytes,
            live_peak_op,
            outputs_bytes: self.storages.iter().map(|s| s.bytes).sum(),
            storages: self.storages.len(),
            storages_read_later: self
                .storages
                .iter()
                .filter(|s| s.freed_after > s.made)
                .count(),
            external_tensors: self.external_tensors,
            aliased_storage_bytes: self
                .aliased
                .iter()
                .map(|a| (a.len.max(0) as u64).saturating_mul(a.itemsize.max(0) as u64))
                .sum(),
            ..FlowMemory::default()
        }
    }
}

/// Where a storage id stands now.
#[derive(Debug, Clone, Copy)]
enum Known {
    External,
    /// Made in the step: its index in [`StepLiveness::storages`].
    Made(usize),
}

/// The lifetimes of the step whose ops linked to `nodes` (`None`: an op with no node, which
/// takes and gives nothing the Execution Trace follows), with `gaps` the ops before each that
/// the step does not re-run ([`crate::sequence_gaps::gaps`]; empty: none): a view its reader
/// applies passes its producer on; another view's outputs are the reader's own when made
/// from the step's tensors, else from outside the step.
pub fn step_liveness(nodes: &[Option<&EtNode>], gaps: &[Vec<Gap>]) -> StepLiveness {
    let n = nodes.len();
    let mut out = StepLiveness {
        sources: vec![HashMap::new(); n],
        producers: vec![HashMap::new(); n],
        held_until: (0..n).collect(),
        ..StepLiveness::default()
    };
    // The latest op to output each tensor, and whether it flows (a single tensor's output).
    let mut producer: HashMap<TensorKey, (usize, bool)> = HashMap::new();
    let mut known: HashMap<i64, Known> = HashMap::new();
    let mut externals: HashMap<TensorKey, u64> = HashMap::new();
    // External tensors by storage: each one's span and itemsize.
    let mut views: HashMap<i64, HashMap<i64, (i64, i64)>> = HashMap::new();
    // Per storage made: the ops holding a tensor of it.
    let mut holders: Vec<Vec<usize>> = Vec::new();
    for (position, node) in nodes.iter().enumerate() {
        for gap in gaps.get(position).into_iter().flatten() {
            // A view flows from its input's maker; another view of the step's tensors is the
            // reader's own.
            gap.pass_on(&mut producer, |&from, _| from, || (position, false));
        }
        let Some(node) = node else { continue };
        for (input, arg) in node.inputs.iter().enumerate() {
            for (k, tensor) in arg.tensors.iter().enumerate() {
                let element = (!arg.is_tensor()).then_some(k);
                match producer.get(&tensor_key(tensor)) {
                    Some(&(from, true)) => {
                        out.sources[position].insert((input, element), Source::Flowing);
                        out.producers[position].insert((input, element), from);
                        out.held_until[from] = out.held_until[from].max(position);
                    }
                    // A list output's, or made by an op not re-run: the reader's own.
                    Some(&(_, false)) => {}
                    None => {
                        known.entry(tensor.storage_id).or_insert(Known::External);
                        if !arg.is_tensor() {
                            continue;
                        }
                        let next = externals.len() as u64;
                        let id = *externals.entry(tensor_key(tensor)).or_insert(next);
                        out.sources[position].insert((input, None), Source::External(id));
                        if let Some(end) = span(arg, tensor) {
                            let tensors = views.entry(tensor.storage_id).or_default();
                            let (len, _) = tensors
                                .entry(tensor.tensor_id)
                                .or_insert((end, tensor.itemsize));
                            *len = (*len).max(end);
                        }
                    }
                }
            }
        }
        let read: HashSet<i64> = node
            .inputs
            .iter()
            .flat_map(|a| a.tensors.iter().map(|t| t.storage_id))
            .collect();
        for arg in &node.outputs {
            for tensor in &arg.tensors {
                producer.insert(tensor_key(tensor), (position, arg.is_tensor()));
                let existing = known.get(&tensor.storage_id).copied();
                let same_op =
                    matches!(existing, Some(Known::Made(s)) if out.storages[s].made == position);
                match existing {
                    // A view or in-place result of what it read, or a second output in the
                    // storage its op just made: held by this op too.
                    Some(Known::Made(s)) if same_op || read.contains(&tensor.storage_id) => {
                        holders[s].push(position)
                    }
                    Some(Known::External) if read.contains(&tensor.storage_id) => {}
                    _ => {
                        let elements =
                            u64::try_from(tensor.offset.max(0).saturating_add(tensor.numel.max(0)));
                        let bytes = elements
                            .unwrap_or(0)
                            .saturating_mul(tensor.itemsize.max(0) as u64);
                        out.storages.push(Storage {
                            storage_id: tensor.storage_id,
                            bytes,
                            made: position,
                            freed_after: position,
                        });
                        holders.push(vec![position]);
                        known.insert(tensor.storage_id, Known::Made(out.storages.len() - 1));
                    }
                }
            }
        }
        // A list output (`split`'s) is read as the pieces of its input it is: each piece
        // flows from the input's maker, which its readers then hold.
        if let Some(pieces) = list_pieces(node) {
            pieces.pass_on(&mut producer, |&from, _| from, || (position, false));
        }
    }
    out.external_tensors = externals.len();
    let mut delta = vec![0i128; n + 1];
    for (storage, held) in out.storages.iter_mut().zip(&holders) {
        storage.freed_after = held
            .iter()
            .map(|&h| out.held_until[h])
            .max()
            .unwrap_or(storage.made);
        delta[storage.made] += i128::from(storage.bytes);
        delta[storage.freed_after + 1] -= i128::from(storage.bytes);
    }
    let mut live = 0i128;
    out.live_bytes = delta[..n]
        .iter()
        .map(|d| {
            live += d;
            u64::try_from(live).unwrap_or(0)
        })
        .collect();
    let mut aliased: Vec<AliasedStorage> = views
        .into_iter()
        .filter_map(|(storage_id, tensors)| {
            let itemsize = tensors.values().next().map_or(0, |&(_, s)| s);
            (tensors.len() > 1 && tensors.values().all(|&(_, s)| s == itemsize)).then(|| {
                AliasedStorage {
                    storage_id,
                    len: tensors.values().map(|&(l, _)| l).max().unwrap_or(0),
                    itemsize,
                }
            })
        })
        .collect();
    aliased.sort_by_key(|a| a.storage_id);
    out.aliased = aliased;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(tensor_id: i64, storage_id: i64, numel: i64) -> EtArg {
        EtArg::float_tensor(tensor_id, storage_id, numel)
    }

    fn node(id: i64, inputs: Vec<EtArg>, outputs: Vec<EtArg>) -> EtNode {
        EtNode {
            inputs,
            outputs,
            ..EtNode::named(id, format!("op{id}"))
        }
    }

    #[test]
    fn an_output_lives_from_its_op_to_its_last_reader_and_a_view_keeps_its_storage() {
        // x (external, storage 1) -> a = f(x) [storage 2, 100 floats] -> v = view(a)
        // [storage 2] -> b = g(x) [storage 3, 10 floats], read by nobody -> c = h(v, x)
        // [storage 4, 50 floats] -> d = k(c) [storage 5, 1 float].
        let nodes = [
            node(1, vec![tensor(1, 1, 8)], vec![tensor(2, 2, 100)]),
            node(2, vec![tensor(2, 2, 100)], vec![tensor(3, 2, 100)]),
            node(3, vec![tensor(1, 1, 8)], vec![tensor(4, 3, 10)]),
            node(
                4,
                vec![tensor(3, 2, 100), tensor(1, 1, 8)],
                vec![tensor(5, 4, 50)],
            ),
            node(5, vec![tensor(5, 4, 50)], vec![tensor(6, 5, 1)]),
        ];
        let refs: Vec<Option<&EtNode>> = nodes.iter().map(Some).collect();
        let live = step_liveness(&refs, &[]);
        assert_eq!(live.held_until, vec![1, 3, 2, 4, 4]);
        assert!(live.is_last_reader(0, 1) && live.is_last_reader(1, 3));
        assert!(!live.is_read_later(2) && live.is_read_later(3));
        // Storage 2 is a's, held by the view until c has run; storage 3 only while op 2 runs.
        let lives: Vec<(i64, u64, usize, usize)> = live
            .storages
            .iter()
            .map(|s| (s.storage_id, s.bytes, s.made, s.freed_after))
            .collect();
        assert_eq!(
            lives,
            vec![(2, 400, 0, 3), (3, 40, 2, 2), (4, 200, 3, 4), (5, 4, 4, 4)]
        );
        assert_eq!(live.live_bytes, vec![400, 400, 440, 600, 204]);
        assert_eq!(live.sources[3][&(1, None)], Source::External(0));
        assert_eq!(live.sources[3][&(0, None)], Source::Flowing);
        assert_eq!(live.producers[3][&(0, None)], 1);
        assert_eq!(live.external_tensors, 1);
        let memory = live.memory();
        assert_eq!((memory.live_peak_bytes, memory.live_peak_op), (600, 3));
        assert_eq!(memory.outputs_bytes, 644);
        assert_eq!((memory.storages, memory.storages_read_later), (4, 2));
    }

    #[test]
    fn a_second_output_flows_and_holds_its_op_until_its_last_reader() {
        // op0 gives (t1, t2), as nll_loss_forward gives (loss, total_weight); op1 reads t1,
        // op2 reads t2 (nll_loss_backward): both flow, and op0's outputs are held until op2.
        let nodes = [
            node(
                0,
                vec![tensor(10, 100, 8)],
                vec![tensor(1, 1, 1), tensor(2, 2, 1)],
            ),
            node(1, vec![tensor(1, 1, 1)], vec![tensor(3, 3, 1)]),
            node(
                2,
                vec![tensor(3, 3, 1), tensor(2, 2, 1)],
                vec![tensor(4, 4, 1)],
            ),
        ];
        let refs: Vec<Option<&EtNode>> = nodes.iter().map(Some).collect();
        let live = step_liveness(&refs, &[]);
        assert_eq!(live.producers[1].get(&(0, None)), Some(&0));
        assert_eq!(live.producers[2].get(&(1, None)), Some(&0));
        assert_eq!(live.sources[2].get(&(1, None)), Some(&Source::Flowing));
        assert_eq!(live.held_until[0], 2);
        assert!(live.is_read_later(0) && live.is_last_reader(0, 2) && !live.is_last_reader(0, 1));
        // A list output (one argument of two tensors) does not flow: the reader's own.
        let mut list = tensor(5, 5, 1);
        list.ty = "GenericList[Tensor(float),Tensor(float)]".into();
        list.tensors.push(list.tensors[0].clone());
        list.tensors[1].tensor_id = 6;
        let nodes = [
            node(0, vec![], vec![list]),
            node(1, vec![tensor(6, 5, 1)], vec![]),
        ];
        let refs: Vec<Option<&EtNode>> = nodes.iter().map(Some).collect();
        let live = step_liveness(&refs, &[]);
        assert!(live.sources[1].is_empty() && !live.is_read_later(0));
    }

    #[test]
    fn a_re_run_splits_pieces_flow_from_its_inputs_maker_which_they_hold() {
        // op0 makes t1 [8] ; op1 `split(t1, 4)` gives the list (t2, t3), views of t1's storage
        // (the re-run call gives no single tensor) ; op2 reads t2 ; op3 reads t3. Both pieces
        // flow from op0, held until op3; op1's own output is read by nobody.
        let mut pieces = tensor(2, 1, 4);
        pieces.ty = "GenericList[Tensor(float),Tensor(float)]".into();
        pieces.shape = serde_json::json!([[4], [4]]);
        pieces.tensors.push(pieces.tensors[0].clone());
        pieces.tensors[1].tensor_id = 3;
        pieces.tensors[1].offset = 4;
        let int = |v: i64| EtArg {
            value: serde_json::json!(v),
            ty: "Int".into(),
            shape: serde_json::json!([]),
            strides: None,
            tensors: vec![],
        };
        let split = EtNode {
            inputs: vec![tensor(1, 1, 8), int(4), int(0)],
            outputs: vec![pieces],
            ..EtNode::named(1, "aten::split")
        };
        let nodes = [
            node(0, vec![], vec![tensor(1, 1, 8)]),
            split,
            node(2, vec![tensor(2, 1, 4)], vec![tensor(4, 2, 4)]),
            node(3, vec![tensor(3, 1, 4)], vec![tensor(5, 3, 4)]),
        ];
        let refs: Vec<Option<&EtNode>> = nodes.iter().map(Some).collect();
        let live = step_liveness(&refs, &[]);
        assert_eq!(live.producers[2].get(&(0, None)), Some(&0));
        assert_eq!(live.producers[3].get(&(0, None)), Some(&0));
        assert_eq!(live.held_until[0], 3);
        assert!(live.is_last_reader(0, 3) && !live.is_read_later(1));
    }

    #[test]
    fn a_freed_storage_id_made_again_is_a_new_storage_and_views_of_one_external_one_allocation() {
        // Storage 7 made by op 0, read by op 1; op 2 makes storage 7 again (the id reused):
        // a new storage. Two external tensors view storage 9 at offsets 0 and 16.
        let mut shifted = tensor(11, 9, 16);
        shifted.tensors[0].offset = 16;
        let nodes = [
            node(1, vec![tensor(10, 9, 16)], vec![tensor(1, 7, 32)]),
            node(2, vec![tensor(1, 7, 32)], vec![tensor(2, 8, 4)]),
            node(3, vec![shifted], vec![tensor(3, 7, 64)]),
        ];
        let refs: Vec<Option<&EtNode>> = nodes.iter().map(Some).chain([None]).collect();
        let live = step_liveness(&refs, &[]);
        let made: Vec<(i64, u64, usize, usize)> = live
            .storages
            .iter()
            .map(|s| (s.storage_id, s.bytes, s.made, s.freed_after))
            .collect();
        assert_eq!(made, vec![(7, 128, 0, 1), (8, 16, 1, 1), (7, 256, 2, 2)]);
        assert_eq!(live.live_bytes, vec![128, 144, 256, 0]);
        assert_eq!(
            live.aliased,
            vec![AliasedStorage {
                storage_id: 9,
                len: 32,
                itemsize: 4
            }]
        );
        assert_eq!(live.memory().aliased_storage_bytes, 128);
        assert_eq!(live.external_tensors, 2);
    }
}
