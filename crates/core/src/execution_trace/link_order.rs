//! Tying an Execution Trace to a Kineto trace that records no record-function ids, by op
//! order and shapes.
//!
//! A Kineto trace profiled without an `ExecutionTraceObserver` running (PARAM's 2023 test
//! pairs) names no node: what ties an op to its node is then where it stands. Both sides are
//! put in the order their ops began: the ET's operator nodes (those with an operator schema)
//! by record-function id, which the observer hands out as each call enters, the Kineto
//! trace's CPU ops (`cpu_op`, nested ones included) by start time, parents before their
//! children. Kineto ops whose name no operator node has (the profiler's own annotations,
//! `ProfilerStep#N`, autograd's wrappers) are left out before matching.
//!
//! Two ops match when their names agree and, where the Kineto op recorded its inputs
//! (`Input Dims`, `Input type`: profiled with `record_shapes`), every tensor input the node
//! records has the same shape and dtype ([`super::link_shapes`]). The ET records one
//! iteration; a Kineto trace often holds many. Every place in every step (each
//! `ProfilerStep#N` span, or the profiled window) where the ET's first operator could stand is
//! tried: from it the two sequences are walked together, an op present in one side only is
//! stepped over where the other side's op turns up within a few ops ([`LOOKAHEAD`]), and the
//! place where the most ET operators match wins (the latest of equally good places: the step
//! `replay sequence` re-runs is the trace's last). A place whose first [`SEED`] operators
//! mostly fail is given up early.
//!
//! A pair recorded together matches all its operators but those at the edges of the
//! recording window (PARAM's linear pair: 710 of 710); another model's trace with the same op
//! names matches far fewer, and those sparsely (PARAM's resnet pair: about 3,000 of 10,818,
//! spread over 16,000 Kineto ops). Links that wrong would wire one op's tensors into another,
//! so the match is refused below [`MIN_MATCHED_SHARE`] of the ET's operators, or of the
//! Kineto ops between its first and last match.

use crate::trace::steps::{step_windows, StepWindow};
use crate::trace::{Category, FxHashMap, Trace};

use super::link_shapes::{EtInputs, KinetoInputs};
use super::node::ExecutionTrace;

/// The least share of the ET's operators, and of the comparable Kineto ops between the first
/// and the last match, that must match for the links to be trusted.
pub const MIN_MATCHED_SHARE: f64 = 0.8;

/// How many ops ahead one side is searched for the other side's op before both are stepped
/// over as unmatched.
pub const LOOKAHEAD: usize = 32;

/// A place whose first this many operators match fewer than half is given up there: the ET's
/// own iteration matches nearly all of them (this keeps a long trace of a frequent first op,
/// `aten::empty`, from being walked in full at every one).
pub const SEED: usize = 64;

/// How an Execution Trace linked by op order and shapes: where, and how well.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderMatch {
    /// The Kineto step the ET's ops were found in (`ProfilerStep#6`, or `window`).
    pub step: String,
    /// The ET's operator nodes (those with an operator schema).
    pub et_operators: u64,
    /// Operators matched to a Kineto op of the same name (and shapes, where recorded).
    pub matched: u64,
    /// The Kineto ops an operator could have matched (a name some operator has) from the
    /// first matched op to the last, and those of them left unmatched.
    pub kineto_span_ops: u64,
    pub kineto_unmatched: u64,
    /// Matched pairs whose shapes and dtypes were compared (the Kineto op recorded them).
    pub shapes_compared: u64,
    /// Places tried (an op of the ET's first matchable operator's name, in any step).
    pub places_tried: u64,
}

impl OrderMatch {
    /// The ET's operators left unmatched.
    pub fn et_unmatched(&self) -> u64 {
        self.et_operators - self.matched
    }

    /// Whether enough of both sides matched to trust the links ([`MIN_MATCHED_SHARE`]).
    pub fn trusted(&self) -> bool {
        let share =
            |part: u64, whole: u64| whole > 0 && part as f64 >= MIN_MATCHED_SHARE * whole as f64;
        share(self.matched, self.et_operators) && share(self.matched, self.kineto_span_ops)
    }

    /// One line: where the ET was found and how many ops matched.
    pub fn describe(&self) -> String {
        format!(
            "in step {}, {} of the Execution Trace's {} operators matched ({} not), {} of the \
             {} Kineto ops between the first and the last match unmatched, shapes compared on \
             {}",
            self.step,
            self.matched,
            self.et_operators,
            self.et_unmatched(),
            self.kineto_unmatched,
            self.kineto_span_ops,
            self.shapes_compared
        )
    }
}

/// One side's op: its name as a number (the same on both sides) and where it stands.
pub(super) struct Op<I> {
    pub(super) name: u32,
    pub(super) index: usize,
    pub(super) inputs: I,
}

/// The best place found: its matches (ET operator position, Kineto op position).
#[derive(Default)]
struct Best {
    pairs: Vec<(usize, usize)>,
    step: usize,
}

/// The ET's operators in the order they began (record-function ids are handed out on entry;
/// node ids are not, across threads), with the numbers their names are given.
pub(super) fn et_operators(et: &ExecutionTrace) -> (FxHashMap<&str, u32>, Vec<Op<EtInputs>>) {
    let mut names: FxHashMap<&str, u32> = FxHashMap::default();
    let mut nodes: Vec<usize> = (0..et.nodes.len())
        .filter(|&n| et.nodes[n].op_schema.is_some())
        .collect();
    if nodes.iter().all(|&n| et.nodes[n].rf_id.is_some()) {
        nodes.sort_by_key(|&n| (et.nodes[n].rf_id, n));
    } else {
        nodes.sort_by_key(|&n| (et.nodes[n].id, n));
    }
    let ops = nodes
        .into_iter()
        .map(|n| {
            let node = &et.nodes[n];
            let next = names.len() as u32;
            Op {
                name: *names.entry(node.name.as_str()).or_insert(next),
                index: n,
                inputs: EtInputs::of(node),
            }
        })
        .collect();
    (names, ops)
}

/// Each step's CPU ops whose name some operator has (`names`), by start time, a parent before
/// its children: the Kineto side of a match, one list per window of `step_windows`.
pub(super) fn kineto_steps(
    trace: &Trace,
    names: &FxHashMap<&str, u32>,
    windows: &[StepWindow],
) -> Vec<Vec<Op<KinetoInputs>>> {
    let mut events: Vec<usize> = (0..trace.events.len())
        .filter(|&i| trace.events[i].category == Category::CpuOp)
        .collect();
    events.sort_by_key(|&i| {
        let e = &trace.events[i];
        (e.ts_ns, std::cmp::Reverse(e.dur_ns), i)
    });
    windows
        .iter()
        .map(|window| {
            let from = events.partition_point(|&i| trace.events[i].ts_ns < window.start_ns);
            let to = events.partition_point(|&i| trace.events[i].ts_ns < window.end_ns);
            events[from..to.max(from)]
                .iter()
                .filter_map(|&i| {
                    let event = &trace.events[i];
                    Some(Op {
                        name: *names.get(trace.name(event))?,
                        index: i,
                        inputs: KinetoInputs::of(trace, event),
                    })
                })
                .collect()
        })
        .collect()
}

/// Links `et`'s operator nodes to `trace`'s CPU ops by order and shapes: the Kineto event
/// index → node index map of the best place, and how it matched (which may be too poor to
/// trust: [`OrderMatch::trusted`]).
pub fn link_by_order(et: &ExecutionTrace, trace: &Trace) -> (FxHashMap<usize, usize>, OrderMatch) {
    let (names, ops) = et_operators(et);
    let (_, windows) = step_windows(trace);
    let mut record = OrderMatch {
        et_operators: ops.len() as u64,
        ..OrderMatch::default()
    };
    let mut best = Best::default();
    let mut pairs = Vec::new();
    let steps = kineto_steps(trace, &names, &windows);
    for (step, kineto) in steps.iter().enumerate() {
        // The first operator that can match at all in this step anchors the places tried.
        let Some(first) = ops.iter().position(|op| kineto.iter().any(|k| same(op, k))) else {
            continue;
        };
        let limit = 2 * ops.len();
        for start in (0..kineto.len()).filter(|&k| same(&ops[first], &kineto[k])) {
            record.places_tried += 1;
            let end = kineto.len().min(start + limit);
            walk(
                &ops,
                first,
                &kineto[..end],
                start,
                best.pairs.len(),
                &mut pairs,
            );
            if !pairs.is_empty() && pairs.len() >= best.pairs.len() {
                std::mem::swap(&mut best.pairs, &mut pairs);
                best.step = step;
            }
            pairs.clear();
        }
    }
    let mut links = FxHashMap::default();
    if let (Some(&(_, first)), Some(&(_, last))) = (best.pairs.first(), best.pairs.last()) {
        let kineto = &steps[best.step];
        record.step = windows[best.step].name.clone();
        record.matched = best.pairs.len() as u64;
        record.kineto_span_ops = (last - first + 1) as u64;
        record.kineto_unmatched = record.kineto_span_ops - record.matched;
        for &(e, k) in &best.pairs {
            record.shapes_compared += u64::from(kineto[k].inputs.recorded());
            links.insert(kineto[k].index, ops[e].index);
        }
    }
    (links, record)
}

/// Whether ET operator `e` and Kineto op `k` can be the same call.
pub(super) fn same(e: &Op<EtInputs>, k: &Op<KinetoInputs>) -> bool {
    e.name == k.name && k.inputs.agree_with(&e.inputs)
}

/// Walks `ops` from `first` and `kineto` from `start` together, pushing each match onto
/// `pairs`; gives up once it can no longer reach `to_beat` matches.
pub(super) fn walk(
    ops: &[Op<EtInputs>],
    first: usize,
    kineto: &[Op<KinetoInputs>],
    start: usize,
    to_beat: usize,
    pairs: &mut Vec<(usize, usize)>,
) {
    let (mut e, mut k) = (first, start);
    while e < ops.len() && k < kineto.len() {
        if pairs.len() + (ops.len() - e) < to_beat
            || (e >= first + SEED && pairs.len() * 2 < SEED.min(ops.len() - first))
        {
            return;
        }
        if same(&ops[e], &kineto[k]) {
            pairs.push((e, k));
            e += 1;
            k += 1;
            continue;
        }
        // The nearer of: this operator a few Kineto ops on (ops only Kineto recorded), or
        // this Kineto op a few operators on (ops only the ET recorded).
        let kineto_skip = (1..LOOKAHEAD)
            .take_while(|d| k + d < kineto.len())
            .find(|&d| same(&ops[e], &kineto[k + d]));
        let et_skip = (1..LOOKAHEAD)
            .take_while(|d| e + d < ops.len())
            .find(|&d| same(&ops[e + d], &kineto[k]));
        match (kineto_skip, et_skip) {
            (Some(a), Some(b)) if a <= b => k += a,
            (Some(a), None) => k += a,
            (_, Some(b)) => e += b,
            (None, None) => {
                e += 1;
                k += 1;
            }
        }
    }
}
