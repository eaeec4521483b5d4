//! The model's data flow in a re-run step, from its Execution Trace (`replay sequence
//! --execution-trace`).
//!
//! Each op of the step found its Execution Trace node (by record-function id, or by op order
//! and shapes). A node's tensor inputs and outputs carry identities (tensor id, storage id,
//! offset). An input whose tensor an earlier op of the step produced reads that op's real
//! output of the same run, linked in the shim to the producer's output (an [`OutputSource`]:
//! the call reads the producer's output itself, any of its tensor returns, as the model passes
//! it, with nothing done by replay between calls). An op of the step that is a view op (on a
//! CPU trace) runs on the flowing tensor, so its output is the view of its real input. The
//! view ops the step does not re-run (on a GPU trace, those between launches), found by
//! [`replay_core::sequence_gaps`], are applied by their reader to the producer's output, in
//! the shim on every run. An input produced outside the step (a parameter, the model's input)
//! is allocated once before the timed region, one tensor per Execution Trace tensor, so that
//! two ops that read one weight read one tensor; external inputs that are views at different
//! offsets of one storage are views of one allocation.
//!
//! An op's outputs are kept only while a later op reads one: the last reader of any of them
//! (by the Execution Trace's lifetimes, [`replay_core::sequence_liveness`]) lets go of them
//! after each run, as the model frees a tensor after its last use, and an output nobody reads
//! is freed as its op ends. The memory plan counts the outputs alive at once the same way.
//!
//! An input that should flow but cannot (its producer was not run, gave a list, was viewed by
//! an op replay does not apply, or gave, so viewed, another dtype or sizes than recorded)
//! reads a tensor of its own and is counted as a fallback, with the reason.

use std::collections::HashMap;

use tch::Tensor;

use super::registry::SetupError;
use super::rotating_op::RotatingOp;
use super::sequence::ProgramEntry;
use super::tier3_libtorch::LibtorchOpTarget;
use super::tier3_tensors::storage_len;
use crate::device::Device;
use crate::measure::Target;
use crate::torch::{apply_views, InputLink, OutputSource};
use replay_core::execution_trace::link::EtLinks;
use replay_core::execution_trace::{EtArg, EtNode, ExecutionTrace, TensorRef};
use replay_core::results::sequence::FlowCounts;
use replay_core::sequence_gaps::{gaps, list_pieces, Gap, ViewOp};
use replay_core::sequence_liveness::{
    span, step_liveness, tensor_key as key, StepLiveness, TensorKey,
};

/// How many fallback reasons are kept for the report.
const REASONS_KEPT: usize = 8;

/// Who made a tensor of the step.
#[derive(Debug, Clone)]
enum Producer {
    /// The op at this position, return `.1` of it (read through the op's source), as it is or
    /// through the views `.2` (view ops the step does not re-run: its reader applies them).
    Op(usize, usize, Vec<ViewOp>),
    /// An op whose output cannot be read, and why.
    Unavailable(String),
}

/// What reads `from` through the view `op` reads: its producer, with the view added.
fn viewed(from: &Producer, op: &ViewOp) -> Producer {
    match from {
        Producer::Op(p, o, views) => {
            let mut views = views.clone();
            views.push(op.clone());
            Producer::Op(*p, *o, views)
        }
        unavailable => unavailable.clone(),
    }
}

/// External tensors that view one storage at different places: one allocation of `len`
/// elements of `itemsize` bytes.
#[derive(Debug)]
struct SharedStorage {
    len: i64,
    itemsize: i64,
    base: Option<Tensor>,
}

/// The Execution Trace nodes of `entries`, in order (`None`: an op with no node).
pub fn nodes_of<'a>(
    et: &'a ExecutionTrace,
    links: &EtLinks,
    entries: &[ProgramEntry],
) -> Vec<Option<&'a EtNode>> {
    entries
        .iter()
        .map(|e| e.event.and_then(|event| links.node(et, event)))
        .collect()
}

/// Wires the ops of one step to each other as its Execution Trace says.
pub struct Wiring<'a> {
    et: &'a ExecutionTrace,
    links: &'a EtLinks,
    produced: HashMap<TensorKey, Producer>,
    /// The lifetimes of the step's tensors: which outputs a later op reads, and which op
    /// reads each last (it lets go of the output after its run).
    liveness: StepLiveness,
    external: HashMap<TensorKey, Tensor>,
    storages: HashMap<i64, SharedStorage>,
    /// The outputs of the ops whose output a later op reads, by position.
    sources: Vec<Option<OutputSource>>,
    /// Per position, the Execution Trace's ops before it that the step does not re-run, and
    /// how many positions' have been passed.
    gaps: Vec<Vec<Gap<'a>>>,
    gaps_passed: usize,
    counts: FlowCounts,
}

impl<'a> Wiring<'a> {
    /// The wiring of `entries` (the step's program) by `et`, linked to the trace by `links`.
    pub fn new(et: &'a ExecutionTrace, links: &'a EtLinks, entries: &[ProgramEntry]) -> Self {
        let nodes = nodes_of(et, links, entries);
        let gaps = gaps(et, &nodes);
        let liveness = step_liveness(&nodes, &gaps);
        // External tensors that view one storage at different offsets: one allocation.
        let storages = liveness
            .aliased
            .iter()
            .map(|a| {
                let shared = SharedStorage {
                    len: a.len,
                    itemsize: a.itemsize,
                    base: None,
                };
                (a.storage_id, shared)
            })
            .collect();
        Wiring {
            et,
            links,
            produced: HashMap::new(),
            liveness,
            external: HashMap::new(),
            storages,
            sources: (0..entries.len()).map(|_| None).collect(),
            gaps,
            gaps_passed: 0,
            counts: FlowCounts {
                execution_trace: et.path.display().to_string(),
                ..FlowCounts::default()
            },
        }
    }

    /// The Execution Trace node of `entry`, if its op linked to one.
    pub fn node(&self, entry: &ProgramEntry) -> Option<&'a EtNode> {
        entry.event.and_then(|e| self.links.node(self.et, e))
    }

    /// What was wired so far.
    pub fn counts(&self) -> &FlowCounts {
        &self.counts
    }

    /// The latest output of the op at `position`, when a later op reads it.
    pub fn output_of(&self, position: usize) -> Option<Tensor> {
        self.sources.get(position)?.as_ref()?.tensor(0)
    }

    /// The counts, once every entry is wired.
    pub fn finish(self) -> FlowCounts {
        self.counts
    }

    fn fallback(&mut self, why: String) {
        self.counts.fallbacks += 1;
        *self
            .counts
            .fallback_kinds
            .entry(replay_core::results::sequence::fallback_kind(&why))
            .or_default() += 1;
        if self.counts.fallback_reasons.len() < REASONS_KEPT {
            self.counts.fallback_reasons.push(why);
        }
    }

    /// The op at `position` (linked to `node`) was not run by a libtorch call that gives its
    /// output (`why`): the ops that read its outputs read tensors of their own.
    pub fn not_run(&mut self, node: &EtNode, position: usize, why: &str) {
        self.pass_gaps(position);
        for arg in &node.outputs {
            for tensor in &arg.tensors {
                self.produced.insert(
                    key(tensor),
                    Producer::Unavailable(format!("#{position} {} {why}", node.name)),
                );
            }
        }
    }

    /// Wires the prepared call `op` of the op at `position`, linked to `node`, and returns it
    /// as the target that runs it in the sequence. Its external inputs are bound now; its
    /// flowing inputs are checked against the outputs its producers gave when they were set
    /// up (run once, in order, before this one), then linked to them: every run of the call
    /// reads its producers' latest outputs.
    pub fn wire(
        &mut self,
        position: usize,
        node: &EtNode,
        mut op: RotatingOp,
        device: &Device,
    ) -> Result<Box<dyn Target>, SetupError> {
        self.pass_gaps(position);
        for (input, arg) in node.inputs.iter().enumerate() {
            for (k, tensor) in arg.tensors.iter().enumerate() {
                let element = (!arg.is_tensor()).then_some(k);
                // The Execution Trace records an op's schema arguments alone (its observer
                // takes the last `num_inputs` of the call's inputs), where a TorchScript op's
                // Kineto event may record values left on the interpreter's stack before them
                // (classify's `skip`): an Execution Trace input is the call's argument of the
                // same index. GPT-2's `linear`, `add`, `slice`, `tanh`, `embedding`, ...
                let argument = input;
                let bound = op.bound_tensor(argument, element);
                let what = format!("#{position} {} input {input}", node.name);
                match self.produced.get(&key(tensor)).cloned() {
                    Some(Producer::Op(producer, output, views)) => match bound {
                        Some(bound) => {
                            // The last reader lets go of the output after its run.
                            let last = self.liveness.is_last_reader(producer, position);
                            let linked = self
                                .check_source(producer, output, &views, &bound)
                                .and_then(|source| {
                                    let link = InputLink {
                                        source,
                                        output,
                                        views: &views,
                                        release_after: last,
                                    };
                                    op.link_input(argument, element, link)
                                        .map(|()| !views.is_empty())
                                        .map_err(|e| e.0)
                                });
                            match linked {
                                Ok(viewed) => {
                                    self.counts.flowing_inputs += 1;
                                    self.counts.released_after_last_reader += usize::from(last);
                                    self.counts.viewed_inputs += usize::from(viewed);
                                }
                                Err(why) => self.fallback(format!("{what}: {why}")),
                            }
                        }
                        None => self
                            .fallback(format!("{what}: not a tensor argument of the rebuilt call")),
                    },
                    Some(Producer::Unavailable(why)) => {
                        self.fallback(format!("{what}: its producer {why}"))
                    }
                    // A wrapped number the rebuilt call passes as a scalar has no tensor.
                    None => {
                        if let Some(bound) = bound.filter(|_| arg.is_tensor()) {
                            self.external_input(arg, tensor, bound)
                                .map_err(SetupError::Failed)?;
                        }
                    }
                }
            }
        }
        for (index, arg) in node.outputs.iter().enumerate() {
            for tensor in &arg.tensors {
                let producer = if arg.is_tensor() {
                    Producer::Op(position, index, Vec::new())
                } else {
                    Producer::Unavailable(format!(
                        "#{position} {}: output {index} is a list (a single tensor's output \
                         flows)",
                        node.name
                    ))
                };
                self.produced.insert(key(tensor), producer);
            }
        }
        // A list output (`split`'s) is read as the pieces of its input it is, from the
        // input's maker with the piece's slice or select, as `sequence_liveness` holds it.
        if let Some(pieces) = list_pieces(node) {
            pieces.pass_on(&mut self.produced, viewed, || {
                Producer::Unavailable(format!("#{position} {}: a list output", node.name))
            });
        }
        self.counts.linked_entries += 1;
        let op = if self.liveness.is_read_later(position) {
            if let Some(place) = self.sources.get_mut(position) {
                *place = op.output_source();
            }
            op
        } else {
            // No later op reads its output: freed as each run ends, as the model frees it.
            op.keep_output(false)
        };
        let call = LibtorchOpTarget::new(op, device).map_err(SetupError::from)?;
        Ok(Box::new(call))
    }

    /// What the Execution Trace's ops that the step does not re-run, up to the op at
    /// `position`, did to the step's tensors: a view its reader can apply passes its producer
    /// on, with the view added; another view of the step's tensors cannot flow (its readers
    /// fall back, with the op named); new storage, or a view of tensors from outside the
    /// step, comes from outside the step. Either way a stale producer whose ids the Execution
    /// Trace reused is forgotten.
    fn pass_gaps(&mut self, position: usize) {
        let upto = (position + 1).min(self.gaps.len());
        for at in self.gaps_passed..upto {
            for gap in &self.gaps[at] {
                let derived = || {
                    Producer::Unavailable(format!(
                        "{} (Execution Trace node {}), a view of the step's tensors that is not \
                         re-run and that replay does not apply",
                        gap.node.name, gap.node.id
                    ))
                };
                gap.pass_on(&mut self.produced, viewed, derived);
            }
        }
        self.gaps_passed = self.gaps_passed.max(upto);
    }

    /// The output source of the op at `producer`, if its return `output`, through `views`
    /// (view ops the step does not re-run, such as the `view` after a bias gradient's `sum`
    /// or the `t` of a weight's gradient: none launches work, so none is an op of a GPU
    /// trace's step), can stand for `bound`: the producer ran and gave a tensor that is, so
    /// viewed, of the recorded dtype and sizes.
    fn check_source(
        &self,
        producer: usize,
        output: usize,
        views: &[ViewOp],
        bound: &Tensor,
    ) -> Result<&OutputSource, String> {
        let source = self
            .sources
            .get(producer)
            .and_then(Option::as_ref)
            .ok_or("its producer keeps no output")?;
        let out = source
            .tensor(output)
            .ok_or_else(|| format!("its producer gave no tensor as return {output}"))?;
        let viewed = apply_views(&out, views).map_err(|e| {
            format!(
                "its producer's output {:?} would not take the views {views:?}: {e}",
                out.size()
            )
        })?;
        if viewed.kind() == bound.kind() && viewed.size() == bound.size() {
            return Ok(source);
        }
        let through = if views.is_empty() {
            String::new()
        } else {
            format!(" (through {views:?})")
        };
        Err(format!(
            "its producer's output{through} is {:?} {:?}, the recorded input {:?} {:?}",
            viewed.kind(),
            viewed.size(),
            bound.kind(),
            bound.size()
        ))
    }

    /// Binds an input produced outside the step: the tensor already allocated for it, if
    /// another op read it; else its own, placed in its storage's one allocation when other
    /// external tensors view that storage too.
    fn external_input(
        &mut self,
        arg: &EtArg,
        tensor: &TensorRef,
        mut bound: Tensor,
    ) -> Result<(), String> {
        self.counts.external_inputs += 1;
        let err = |e: tch::TchError| format!("binding an external input: {e}");
        if let Some(known) = self.external.get(&key(tensor)) {
            if known.size() == bound.size() && known.kind() == bound.kind() {
                // The in-place call returns another handle on `bound`, not needed.
                let _ = bound.f_set_source_tensor_(known).map_err(err)?;
                self.counts.shared_external_inputs += 1;
            }
            return Ok(());
        }
        let size = bound.size();
        let stride = bound.stride();
        let fits = span(arg, tensor).is_some_and(|end| {
            end >= tensor.offset + storage_len(&size, &stride)
                && bound.kind().elt_size_in_bytes() as i64 == tensor.itemsize
        });
        if let Some(storage) = self.storages.get_mut(&tensor.storage_id) {
            let kind_fits = storage
                .base
                .as_ref()
                .is_none_or(|b| b.kind() == bound.kind());
            if fits && kind_fits && storage.itemsize == tensor.itemsize {
                let base = match &storage.base {
                    Some(base) => base.shallow_clone(),
                    None => {
                        let base = Tensor::f_zeros([storage.len], (bound.kind(), bound.device()))
                            .map_err(err)?;
                        storage.base = Some(base.shallow_clone());
                        base
                    }
                };
                let view = base
                    .f_as_strided(&size, &stride, Some(tensor.offset))
                    .map_err(err)?;
                // The values the input rules made (valid indices, positive divisors) move in.
                let mut view_mut = view.shallow_clone();
                view_mut.f_copy_(&bound).map_err(err)?;
                let _ = bound.f_set_source_tensor_(&view).map_err(err)?;
                self.counts.aliased_external_inputs += 1;
            }
        }
        self.external.insert(key(tensor), bound);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceSpec;
    use crate::replay::registry::replay_units;
    use crate::replay::sequence::program;
    use crate::replay::sequence_build::SequenceBuilder;
    use replay_core::execution_trace::attach::{attach, link_file};
    use std::path::Path;

    /// bloom-tiny's pair (`crates/core/tests/data/et`, recorded in one step): its Execution
    /// Trace and links, its signatures with the ET attached, its units and its step's program.
    struct BloomTiny {
        et: ExecutionTrace,
        links: EtLinks,
        file: crate::signature::schema::SignatureFile,
        units: Vec<crate::replay::registry::ReplayUnit>,
        entries: Vec<ProgramEntry>,
    }

    fn bloom_tiny() -> BloomTiny {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/tests/data/et");
        let trace_path = dir.join("bloom_tiny_cpu.json.gz");
        let mut trace = replay_core::trace::load(&trace_path).unwrap();
        let linked = link_file(
            &mut trace,
            &trace_path,
            &dir.join("bloom_tiny_cpu.et.json.gz"),
        )
        .unwrap();
        let mut file = replay_core::signature::classify(&trace, &trace_path);
        attach(&mut file, &trace, &linked);
        let (et, links) = (linked.et, linked.links);
        let skeleton = replay_core::predict::skeleton(&trace).unwrap();
        let step = skeleton.steps.last().unwrap();
        let units = replay_units(&file);
        let entries = program(&skeleton, step, &file, &units);
        BloomTiny {
            et,
            links,
            file,
            units,
            entries,
        }
    }

    #[test]
    fn the_bloom_tiny_pairs_activations_flow_and_its_tied_weight_is_one_tensor() {
        let BloomTiny {
            et,
            links,
            file,
            units,
            entries,
        } = bloom_tiny();
        let device = Device::open(DeviceSpec::Cpu).unwrap();
        let _no_grad = tch::no_grad_guard();
        let mut builder = SequenceBuilder {
            file: &file,
            units: &units,
            device: &device,
            generated: None,
            wiring: Some(Wiring::new(&et, &links, &entries)),
        };
        // Each op's output where it starts, read as it is built (it runs once then): a later
        // reader frees it once it is the last.
        let mut outputs: Vec<Option<usize>> = Vec::new();
        for (position, entry) in entries.iter().enumerate() {
            if let Err(e) = builder.build(position, entry) {
                panic!("#{position}: {e:?}");
            }
            let wiring = builder.wiring.as_ref().unwrap();
            outputs.push(wiring.output_of(position).map(|t| t.data_ptr() as usize));
        }
        let wiring = builder.wiring.take().unwrap();
        let counts = wiring.counts().clone();

        // The same from the Execution Trace alone: every top-level op's node, in order; an
        // input is an activation of the step when an earlier op output its tensor.
        let nodes: Vec<&EtNode> = entries
            .iter()
            .map(|e| {
                links
                    .node(&et, e.event.expect("a CPU trace's op"))
                    .expect("linked")
            })
            .collect();
        assert_eq!(counts.linked_entries, entries.len());
        let mut producer: HashMap<TensorKey, usize> = HashMap::new();
        let mut flowing = 0;
        let mut external: HashMap<TensorKey, usize> = HashMap::new();
        let mut views = Vec::new();
        for (position, node) in nodes.iter().enumerate() {
            for arg in node.inputs.iter().filter(|a| a.is_tensor()) {
                for tensor in &arg.tensors {
                    match producer.get(&key(tensor)) {
                        Some(&p) => {
                            flowing += 1;
                            if node.name == "aten::view" {
                                views.push((p, position));
                            }
                        }
                        None => *external.entry(key(tensor)).or_default() += 1,
                    }
                }
            }
            for arg in node.outputs.iter().filter(|a| a.is_tensor()) {
                for tensor in &arg.tensors {
                    producer.insert(key(tensor), position);
                }
            }
        }
        assert!(flowing > 100, "{flowing}");
        assert_eq!(counts.flowing_inputs, flowing);
        assert_eq!(counts.fallbacks, 0, "{:?}", counts.fallback_reasons);
        // Read twice: the embedding's table (tied to the LM head's weight) and the input ids
        // (the embedding's and ones_like's); each is one tensor.
        let read_again: usize = external.values().map(|n| n - 1).sum();
        assert!(read_again >= 1);
        assert_eq!(counts.shared_external_inputs, read_again);
        // A view of a flowing tensor is a view of the producer's real output: same memory.
        let mut checked = 0;
        for (from, view) in views {
            if let (Some(base), Some(out)) = (outputs[from], outputs[view]) {
                assert_eq!(base, out, "#{view} views #{from}");
                checked += 1;
            }
        }
        assert!(checked > 0);
        // Every output a later op reads was kept until its last reader ran, then let go:
        // once the step is built, none is held; the last reader of each made the link.
        let read_later: Vec<usize> = (0..entries.len())
            .filter(|&p| outputs[p].is_some())
            .collect();
        assert!(read_later.len() > 50, "{}", read_later.len());
        for &p in &read_later {
            assert!(wiring.output_of(p).is_none(), "#{p}'s output still held");
        }
        assert!(counts.released_after_last_reader >= read_later.len());
        assert!(counts.released_after_last_reader < counts.flowing_inputs);
    }

    #[test]
    fn the_bloom_tiny_plan_follows_its_tensors_lifetimes_and_holds_each_parameter_once() {
        use crate::replay::sequence_needs::needs;
        use crate::replay::sequence_route::Placing;
        use replay_core::sequence_plan::{plan_flow, OpNeeds, Source};

        let b = bloom_tiny();
        let nodes = nodes_of(&b.et, &b.links, &b.entries);
        assert!(
            nodes.iter().all(Option::is_some),
            "a CPU pair: every op has its node"
        );
        let live = step_liveness(&nodes, &gaps(&b.et, &nodes));
        // #0 is the embedding: its output, [1, 5, 64] float32 (1280 bytes), is the first
        // storage the step makes; it lives until the last op that reads a tensor of its
        // storage (itself or a view) has run, read here straight from the nodes.
        let first = nodes[0].unwrap();
        assert_eq!(first.name, "aten::embedding");
        let made = &first.outputs[0].tensors[0];
        let readers: Vec<usize> = (1..nodes.len())
            .filter(|&p| {
                nodes[p]
                    .unwrap()
                    .inputs
                    .iter()
                    .any(|a| a.tensors.iter().any(|t| t.storage_id == made.storage_id))
            })
            .collect();
        assert_eq!(readers, [1], "the embedding's layer norm");
        let storage = &live.storages[0];
        assert_eq!(
            (storage.storage_id, storage.bytes, storage.made),
            (made.storage_id, 1280, 0)
        );
        assert_eq!(Some(&storage.freed_after), readers.last());

        // The plan: the 42 tensors from outside the step, one buffer each. bloom-tiny's 29
        // parameters, the tied LM head's weight being the embedding table (1000 x 64); per
        // layer two layer norms (2 x 128), qkv (64 x 192 + 192), dense (64 x 64 + 64), h_to_4h
        // (64 x 256 + 256), 4h_to_h (256 x 64 + 64), two layers; the embedding's and the
        // final layer norms (2 x 128): 164,224 float32. The 5 input ids (int64), the 4 ALiBi
        // slopes (float32) and 11 numbers the model passes as 0-dim tensors (float64 or
        // int64: 8 bytes each).
        let placing = Placing {
            cuda: false,
            flow: true,
        };
        let mut ops: Vec<OpNeeds> = b
            .entries
            .iter()
            .map(|e| needs(e, &b.file, &b.units, placing))
            .collect();
        let flow = live.annotate(&mut ops);
        let plan = plan_flow(&ops, Some(&flow), u64::MAX).unwrap();
        let mut external: Vec<usize> = ops
            .iter()
            .zip(&plan.assignment)
            .flat_map(|(o, a)| o.requests.iter().zip(a))
            .filter(|(r, _)| matches!(r.source, Source::External(_)))
            .map(|(_, &buffer)| buffer)
            .collect();
        external.sort_unstable();
        external.dedup();
        let external_bytes: u64 = external.iter().map(|&b| plan.buffers[b].bytes).sum();
        assert_eq!(external_bytes, 164_224 * 4 + 5 * 8 + 4 * 4 + 11 * 8);
        assert_eq!((external.len(), flow.external_tensors), (42, 42));
        // Read twice each: the tied weight (embedding and LM head), the input ids.
        assert_eq!(flow.external_requests, 44);
        // The peak: the buffers, and the outputs alive at once at their most.
        let buffers: u64 = plan.buffers.iter().map(|b| b.bytes).sum();
        assert_eq!(
            plan.peak_bytes,
            buffers + flow.live_peak_bytes + flow.aliased_storage_bytes
        );
        assert!(flow.live_peak_bytes < flow.outputs_bytes, "{flow:?}");
        assert_eq!(
            flow.live_peak_bytes,
            live.storages
                .iter()
                .filter(|s| s.made <= flow.live_peak_op && flow.live_peak_op <= s.freed_after)
                .map(|s| s.bytes)
                .sum::<u64>()
        );
    }
}
