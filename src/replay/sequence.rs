//! A trace's step as a program (`replay sequence`): every launching op of the step in the
//! recorded order, each with inputs and parameters of its own, run one after the other as one
//! target of the measurement core, with each op's time read in its place.
//!
//! On a CPU trace the launching ops are the step's top-level ops. On a GPU trace they are the
//! ops that launched kernels, copies and memsets: consecutive launches of one op call (a GEMM
//! and its split-K reduction, the kernels of one `aten::layer_norm`, cuBLAS's memset, the
//! GEMM and the other kernels of an `aten::addmm` that were grouped as two replay units) are
//! one op instance, until a kernel of it comes round again. An instance spanning several
//! units is replayed by the one that runs the whole call ([`replayer_rank`]): the op's
//! libtorch replay, which runs its GEMM too, so that nothing runs twice.

use std::collections::HashMap;

use crate::measure::{MeasureError, Placement, Target, Timer};
use crate::signature::schema::SignatureFile;
use replay_core::predict::{HostItem, Skeleton, StepSkeleton};
use replay_core::trace::Nanos;

use super::registry::{group_key, ReplayUnit};
use crate::signature::schema::Tier;

/// One op instance of the step.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramEntry {
    /// Index into the replay units; `None` when the trace names no signature for its work.
    pub unit: Option<usize>,
    /// The signature ids of the work this instance did in the trace, in order.
    pub signatures: Vec<String>,
    /// Its time in the trace: the op's (CPU trace) or its activities' (GPU trace).
    pub trace_ns: Nanos,
    /// The trace event of the op: a CPU trace's top-level op, a GPU trace's launching op (what
    /// links it to its Execution Trace node); `None` for a skeleton not built from a trace.
    pub event: Option<usize>,
}

/// The step's op instances in order: each host thread's in turn (threads in the skeleton's
/// order), which on a multi-threaded step runs them one after the other.
pub fn program(
    skeleton: &Skeleton,
    step: &StepSkeleton,
    file: &SignatureFile,
    units: &[ReplayUnit],
) -> Vec<ProgramEntry> {
    let index_of: HashMap<&str, usize> = file
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let mut unit_of: HashMap<usize, usize> = HashMap::new();
    for (u, unit) in units.iter().enumerate() {
        unit_of.insert(unit.lead, u);
        for &(member, _) in &unit.members {
            unit_of.insert(member, u);
        }
        for &included in &unit.included {
            unit_of.insert(included, u);
        }
    }
    let resolve = |signature: Option<u32>| -> (Option<String>, Option<usize>) {
        let id = signature.and_then(|s| skeleton.signature_id(s));
        let unit = id
            .and_then(|id| index_of.get(id))
            .and_then(|i| unit_of.get(i))
            .copied();
        (id.map(str::to_owned), unit)
    };
    // The op call a launched signature's work came from; none where the trace recorded no
    // input shapes: calls of one op then look alike (consecutive calls would merge), and the
    // op cannot be rebuilt to run their kernels anyway.
    let call_of = |id: Option<&String>| -> Option<String> {
        id.and_then(|id| index_of.get(id.as_str()))
            .map(|&i| &file.signatures[i])
            .filter(|sig| sig.inputs.is_some())
            .and_then(group_key)
    };
    let mut entries: Vec<ProgramEntry> = Vec::new();
    for thread in &step.threads {
        // Whether the last entry was opened by this thread's previous launch (nothing but
        // framework time since), so a launch of the same unit may belong to it.
        let mut open = false;
        // The op call of the last entry's first launch.
        let mut last_call: Option<String> = None;
        let mut host_ops = thread.op_events.iter().copied();
        for item in &thread.items {
            match item {
                HostItem::HostOp { signature, ns } => {
                    let (id, unit) = resolve(*signature);
                    entries.push(ProgramEntry {
                        unit,
                        signatures: id.into_iter().collect(),
                        trace_ns: *ns,
                        event: host_ops.next(),
                    });
                    open = false;
                    last_call = None;
                }
                HostItem::Launch { activities, .. } => {
                    for &a in activities {
                        let Some(activity) = step.activities.get(a) else {
                            continue;
                        };
                        let (id, unit) = resolve(activity.signature);
                        let call = call_of(id.as_ref());
                        let joins = open
                            && unit.is_some()
                            && entries.last().is_some_and(|last| {
                                (last.unit == unit || (call.is_some() && call == last_call))
                                    && id.as_ref().is_some_and(|id| !last.signatures.contains(id))
                            });
                        if joins {
                            let last = entries.last_mut().expect("checked above");
                            last.signatures.extend(id);
                            last.trace_ns += activity.trace_ns;
                            let rank = |u: Option<usize>| {
                                u.map_or(u8::MAX, |u| replayer_rank(&units[u], file))
                            };
                            if rank(unit) < rank(last.unit) {
                                last.unit = unit;
                            }
                        } else {
                            entries.push(ProgramEntry {
                                unit,
                                signatures: id.into_iter().collect(),
                                trace_ns: activity.trace_ns,
                                // The op call the launches of the entry come from.
                                event: step.activity_ops.get(a).copied().flatten(),
                            });
                            last_call = call;
                        }
                        open = true;
                    }
                }
                HostItem::Gap { .. } => {}
                HostItem::Wait { .. } => open = false,
            }
        }
    }
    entries
}

/// Which of the units of one op call replays an instance that spans several (lowest first):
/// the op's libtorch replay runs every kernel of the call, a GEMM unit the GEMM and its
/// helpers, a copy or memset only itself; a unit whose lead the classifier marked not
/// replayable comes last, so that the call's replayable work still runs.
pub fn replayer_rank(unit: &ReplayUnit, file: &SignatureFile) -> u8 {
    let replayable = file
        .signatures
        .get(unit.lead)
        .is_some_and(|sig| sig.replayable || sig.inputs.is_some());
    match (replayable, unit.tier) {
        (false, _) => 3,
        (true, Tier::Op) => 0,
        (true, Tier::Gemm) => 1,
        (true, Tier::Generated | Tier::Copy) => 2,
    }
}

/// One rebuilt op instance: its replayer, set up before the timed region.
pub struct Step {
    pub target: Box<dyn Target>,
    /// Its time in each run of the sequence so far, in order (µs).
    pub samples: Vec<f64>,
    /// The host's time to issue it in each run (µs): on the CPU, `samples` again.
    pub host_samples: Vec<f64>,
}

impl Step {
    /// A rebuilt op with no samples yet.
    pub fn new(target: Box<dyn Target>) -> Step {
        Step {
            target,
            samples: Vec::new(),
            host_samples: Vec::new(),
        }
    }
}

/// The rebuilt op instances run in order as one call: one call is one run of the step.
pub struct SequenceTarget {
    steps: Vec<Step>,
}

impl SequenceTarget {
    /// `steps` must not be empty; every one must run where the first does (the host, or one
    /// device stream), which [`SequenceTarget::placement_mismatch`] checks.
    pub fn new(steps: Vec<Step>) -> SequenceTarget {
        SequenceTarget { steps }
    }

    /// Why the steps cannot be timed as one sequence, if they cannot: they run in different
    /// places (the host and a stream, or two streams), which one timer cannot time.
    pub fn placement_mismatch(&self) -> Option<String> {
        let first = self.steps.first()?.target.placement().timer_name();
        self.steps
            .iter()
            .map(|s| s.target.placement().timer_name())
            .find(|name| *name != first)
            .map(|other| {
                format!(
                    "the rebuilt ops run in different places ({first} and {other}); one \
                     sequence is timed by one timer"
                )
            })
    }

    /// The rebuilt op instances with their in-context samples.
    pub fn into_steps(self) -> Vec<Step> {
        self.steps
    }
}

impl Target for SequenceTarget {
    fn placement(&self) -> Placement<'_> {
        self.steps
            .first()
            .map_or(Placement::Host, |s| s.target.placement())
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            for step in &mut self.steps {
                step.target.run(1)?;
            }
        }
        Ok(())
    }

    /// Each op is timed in its place by the one timer the core chose: its own segments (its
    /// `run_timed`), read before and after it ([`Timer::running`]).
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        for _ in 0..calls {
            for step in &mut self.steps {
                let before = timer.running();
                step.target.run_timed(1, timer)?;
                let after = timer.running();
                step.samples
                    .push(after.device.saturating_sub(before.device).as_secs_f64() * 1e6);
                step.host_samples
                    .push(after.host.saturating_sub(before.host).as_secs_f64() * 1e6);
            }
        }
        Ok(())
    }

    fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        for step in &mut self.steps {
            step.target.prepare_sample()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure_detailed, MeasureConfig, MonotonicClock};
    use crate::replay::registry::replay_units;
    use std::time::{Duration, Instant};

    fn load(name: &str) -> (replay_core::trace::Trace, SignatureFile) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
        let trace = replay_core::trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let file = replay_core::signature::classify(&trace, &path);
        (trace, file)
    }

    #[test]
    fn a_cpu_traces_program_is_its_top_level_ops_in_order() {
        let (trace, file) = load("tests/data/gpt2_1layer_cpu_seq16.json.gz");
        let skeleton = replay_core::predict::skeleton(&trace).unwrap();
        let units = replay_units(&file);
        let step = skeleton.steps.last().unwrap();
        let entries = program(&skeleton, step, &file, &units);
        assert_eq!(entries.len(), step.host_op_count());
        let ops: Vec<Nanos> = step
            .threads
            .iter()
            .flat_map(|t| &t.items)
            .filter_map(|i| match i {
                HostItem::HostOp { ns, .. } => Some(*ns),
                _ => None,
            })
            .collect();
        assert_eq!(entries.iter().map(|e| e.trace_ns).collect::<Vec<_>>(), ops);
        assert!(entries
            .iter()
            .all(|e| e.unit.is_some() && e.signatures.len() == 1));
        // Each entry knows its op's trace event: a top-level op of that name and time.
        for entry in &entries {
            let event = &trace.events[entry.event.expect("a CPU trace's top-level op")];
            assert_eq!(event.dur_ns, entry.trace_ns);
            let id = entry.signatures[0].as_str();
            let name = &file.signatures.iter().find(|s| s.id == id).unwrap().name;
            assert_eq!(trace.name(event), name.as_str());
        }
    }

    #[test]
    fn a_gpu_traces_program_is_its_op_instances_and_keeps_every_activity() {
        let (trace, file) = load("../shared/traces/kineto/h100_bert_small_infer.json.gz");
        let skeleton = replay_core::predict::skeleton(&trace).unwrap();
        let units = replay_units(&file);
        let step = skeleton.steps.last().unwrap();
        let entries = program(&skeleton, step, &file, &units);
        let launched: Vec<&replay_core::predict::Activity> = step
            .activities
            .iter()
            .filter(|a| a.launch.is_some())
            .collect();
        // Every launched activity is in exactly one entry, with its trace time.
        let signatures: usize = entries.iter().map(|e| e.signatures.len()).sum();
        assert_eq!(signatures, launched.len());
        let trace_ns: Nanos = entries.iter().map(|e| e.trace_ns).sum();
        assert_eq!(trace_ns, launched.iter().map(|a| a.trace_ns).sum::<Nanos>());
        // No entry holds a signature twice, and entries of one unit are instances of it.
        for entry in &entries {
            let mut seen = entry.signatures.clone();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), entry.signatures.len(), "{entry:?}");
        }
        assert!(entries.len() <= launched.len() && !entries.is_empty());
        // Each entry knows its launching op's trace event: the op its signatures name.
        for entry in &entries {
            let event = &trace.events[entry.event.expect("a GPU trace's launching op")];
            assert_eq!(event.category, replay_core::trace::Category::CpuOp);
            let id = entry.signatures[0].as_str();
            let op = file
                .signatures
                .iter()
                .find(|s| s.id == id)
                .unwrap()
                .op
                .as_ref();
            assert_eq!(Some(trace.name(event)), op.map(|op| op.name.as_str()));
        }
    }

    #[test]
    fn an_op_call_grouped_as_two_units_is_one_instance_replayed_by_its_op() {
        // bert-base on the H200: 24 `aten::addmm` calls launched cuBLAS's memset, an
        // elementwise kernel and the GEMM, grouped as a memset, an op and a GEMM unit: the
        // GEMM ran twice (the op unit replays the whole addmm) and each call was 3 entries.
        let (trace, file) =
            load("../shared/gpu-truth/h200-2026-11-28/bert-base-seq128/trace.json.gz");
        let skeleton = replay_core::predict::skeleton(&trace).unwrap();
        let units = replay_units(&file);
        let step = skeleton.steps.last().unwrap();
        let entries = program(&skeleton, step, &file, &units);
        let index = |id: &str| file.signatures.iter().position(|s| s.id == id).unwrap();
        let unit_of = |i: usize| {
            units
                .iter()
                .position(|u| u.members.iter().any(|m| m.0 == i) || u.included.contains(&i))
                .unwrap()
        };
        let spanning: Vec<&ProgramEntry> = entries
            .iter()
            .filter(|e| {
                let mut us: Vec<usize> = e.signatures.iter().map(|id| unit_of(index(id))).collect();
                us.sort();
                us.dedup();
                us.len() > 1
            })
            .collect();
        assert_eq!(spanning.len(), 24);
        for entry in &spanning {
            let unit = &units[entry.unit.unwrap()];
            assert_eq!(unit.tier, Tier::Op, "{entry:?}");
            // One op call: every signature's launching op and inputs are the same.
            let keys: Vec<Option<String>> = entry
                .signatures
                .iter()
                .map(|id| group_key(&file.signatures[index(id)]))
                .collect();
            assert!(
                keys[0].is_some() && keys.iter().all(|k| *k == keys[0]),
                "{keys:?}"
            );
            assert!(entry
                .signatures
                .iter()
                .any(|id| file.signatures[index(id)].tier == Tier::Gemm));
        }
        // 165 entries before (as the H200 ran them), two fewer for each such call.
        assert_eq!(entries.len(), 165 - 2 * 24);
    }

    /// Spins for a fixed time on the host.
    struct Spin(Duration);

    impl Target for Spin {
        fn placement(&self) -> Placement<'_> {
            Placement::Host
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                let t = Instant::now();
                while t.elapsed() < self.0 {}
            }
            Ok(())
        }
    }

    #[test]
    fn each_op_is_timed_in_its_place_and_the_runs_are_their_sum() {
        let steps = [300u64, 900]
            .map(|us| Step::new(Box::new(Spin(Duration::from_micros(us)))))
            .into();
        let mut sequence = SequenceTarget::new(steps);
        assert_eq!(sequence.placement_mismatch(), None);
        let measured = measure_detailed(
            &mut sequence,
            &MeasureConfig::fixed_runs(2, 10),
            &MonotonicClock::new(),
        )
        .unwrap();
        let steps = sequence.into_steps();
        // Timed warm-up runs are in the samples too: the last runs are the measured ones.
        let n = steps[0].samples.len();
        assert!(n >= 10 && steps[1].samples.len() == n, "{n}");
        let run_sum: Vec<f64> = (n - 10..n)
            .map(|i| steps[0].samples[i] + steps[1].samples[i])
            .collect();
        for (sum, sample) in run_sum.iter().zip(&measured.device_us) {
            assert!((sum - sample).abs() < 1.0, "{sum} vs {sample}");
        }
        let median = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        assert!(median(&steps[0].samples) >= 300.0 && median(&steps[0].samples) < 600.0);
        assert!(median(&steps[1].samples) >= 900.0 && median(&steps[1].samples) < 1800.0);
        // On the host the issue time is the time.
        assert_eq!(steps[1].host_samples, steps[1].samples);
    }
}
