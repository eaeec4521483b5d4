//! The Execution Trace's iteration found again in the rest of the Kineto trace.
//!
//! An ET records one iteration; the Kineto trace it is paired with often holds many (PARAM's
//! linear pair: 40 training iterations in one profiled window, the ET of the last). Only that
//! iteration's ops link to nodes ([`super::link`]). Where the Kineto trace recorded no input
//! shapes, the others would stay shapeless, and their kernels unreplayable, although they are
//! the same calls again. An iteration repeats the ET's when its ops follow the ET's operators
//! name for name, with the shapes and dtypes where the op recorded them, as well as a linked
//! step must ([`MIN_MATCHED_SHARE`] of the ET's operators and of the Kineto ops spanned, the
//! walk of [`super::link_order`]). Repeats are found left to right, never overlapping each
//! other or the linked ops; what they tie an op to is its node's *inputs* (what the call
//! was given, [`super::fill`]), never its tensors' identities: those are the linked
//! iteration's own.

use crate::trace::steps::step_windows;
use crate::trace::{FxHashMap, Trace};

use super::link_order::{et_operators, kineto_steps, same, walk, MIN_MATCHED_SHARE};
use super::node::ExecutionTrace;

/// The Kineto ops of iterations that repeat the ET's, each tied to the node of its place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repeats {
    /// Index into [`ExecutionTrace::nodes`] by index into [`Trace::events`].
    pub node_of_event: FxHashMap<usize, usize>,
    /// The iterations found.
    pub iterations: u64,
}

/// The iterations of `trace` outside `linked` (the events already linked to a node) that
/// repeat `et`'s operators.
pub fn repeats(et: &ExecutionTrace, trace: &Trace, linked: &FxHashMap<usize, usize>) -> Repeats {
    let (names, ops) = et_operators(et);
    let mut found = Repeats::default();
    if ops.is_empty() {
        return found;
    }
    // A place must be able to match this many operators to be taken.
    let needed = (MIN_MATCHED_SHARE * ops.len() as f64).ceil() as usize;
    let (_, windows) = step_windows(trace);
    let mut pairs = Vec::new();
    for kineto in kineto_steps(trace, &names, &windows) {
        let Some(first) = ops.iter().position(|op| kineto.iter().any(|k| same(op, k))) else {
            continue;
        };
        let limit = 2 * ops.len();
        let mut start = 0;
        while start < kineto.len() {
            let place = start;
            start += 1;
            if linked.contains_key(&kineto[place].index) || !same(&ops[first], &kineto[place]) {
                continue;
            }
            let end = kineto.len().min(place + limit);
            pairs.clear();
            walk(&ops, first, &kineto[..end], place, needed, &mut pairs);
            let (Some(&(_, from)), Some(&(_, to))) = (pairs.first(), pairs.last()) else {
                continue;
            };
            let span = to - from + 1;
            let trusted = pairs.len() >= needed
                && pairs.len() as f64 >= MIN_MATCHED_SHARE * span as f64
                && kineto[from..=to]
                    .iter()
                    .all(|k| !linked.contains_key(&k.index));
            if !trusted {
                continue;
            }
            found.iterations += 1;
            for &(e, k) in &pairs {
                found.node_of_event.insert(kineto[k].index, ops[e].index);
            }
            start = to + 1;
        }
    }
    found
}
