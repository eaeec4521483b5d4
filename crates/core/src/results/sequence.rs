//! `sequence.json`: what `replay sequence` measured when it re-ran a trace's step in order.
//! Plain data, shared by the replay engine that writes it and the reports that read it.
//!
//! Every launching op of the step is an *entry*, in the recorded order, with inputs of its
//! own; the whole sequence is run repeatedly on the measurement core and each entry's time is
//! read in its place (in context). Per signature, the in-context time of one invocation is
//! also kept as `isolated.json`'s rows ([`SequenceResults::signatures`]), so every report
//! and the timeline model read it as they read an isolated replay. The same ops are then run
//! back to back in real time, timed as one ([`RealTime`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::{Stats, StopReason, Summary};
use crate::signature::schema::{SignatureFile, Tier};

use super::isolated::{IsolatedResults, RunConfig, SignatureResult, Status};

pub const SEQUENCE_SCHEMA_VERSION: u32 = 1;

/// What a re-run of a trace recorded elsewhere can and cannot say, printed and kept in the
/// file, when each op reads inputs of its own (no Execution Trace).
pub const COMPARABLE: &str = "comparable with the trace: the work (every rebuilt op with its \
     recorded shapes, dtypes and scalars) and its order; not comparable: the host time between \
     ops (framework time), which is the recording machine's and is not re-run, and data flow \
     (each op reads inputs of its own, not its producer's output)";

/// [`COMPARABLE`] for a re-run whose data flow is the model's (an Execution Trace linked).
pub const COMPARABLE_WITH_FLOW: &str = "comparable with the trace: the work (every rebuilt op \
     with its recorded shapes, dtypes and scalars), its order and its data flow (each op reads \
     its producer's real output of the same run, views alias their base, the parameters and \
     model inputs are allocated once per tensor of the Execution Trace: the model's working \
     set); not comparable: the host time between ops (framework time), which is the recording \
     machine's and is not re-run";

/// What the sequence says is comparable, with or without the model's data flow.
pub fn comparable(data_flow: bool) -> &'static str {
    if data_flow {
        COMPARABLE_WITH_FLOW
    } else {
        COMPARABLE
    }
}

/// How the step's inputs were wired when an Execution Trace gave the data flow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowCounts {
    /// The Execution Trace read.
    pub execution_trace: String,
    /// Rebuilt entries whose op linked to an Execution Trace node.
    pub linked_entries: usize,
    /// Tensor inputs that read an earlier op's real output of the same run.
    pub flowing_inputs: usize,
    /// Tensor inputs produced outside the step (parameters, the model's inputs): one tensor
    /// per Execution Trace tensor, allocated before the timed region.
    pub external_inputs: usize,
    /// Of those, reads of a tensor another entry reads too (a weight read twice).
    pub shared_external_inputs: usize,
    /// External inputs that are views into a storage another external input also views (one
    /// allocation, different offsets).
    pub aliased_external_inputs: usize,
    /// Flowing inputs whose op is its producer's last reader: the producer's output is let
    /// go after that op runs, as the model frees it (0 in a file written before).
    #[serde(default)]
    pub released_after_last_reader: usize,
    /// Flowing inputs read as the view a view op made of their producer's output (reshaped to
    /// the recorded sizes): the view op launches nothing, so a GPU trace's step does not
    /// re-run it (0 in a file written before).
    #[serde(default)]
    pub viewed_inputs: usize,
    /// Inputs that should have flowed but read a tensor of their own: the producer's output
    /// did not match the recorded sizes or dtype, or the producer was not run.
    pub fallbacks: usize,
    /// Why, for the first few of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_reasons: Vec<String>,
    /// Every fallback counted by its reason with the step positions (`#12 `) left out, so that
    /// each layer's same fallback is one kind (empty in a file written before).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fallback_kinds: BTreeMap<String, usize>,
}

/// A fallback reason with its step positions (`#12 `) left out: its kind.
pub fn fallback_kind(reason: &str) -> String {
    reason
        .split(' ')
        .filter(|word| {
            !(word.len() > 1
                && word.starts_with('#')
                && word[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The spread of one entry's in-context samples (µs per run of the entry).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
    pub samples: usize,
}

impl Spread {
    /// The spread of `samples` (µs), `None` for none.
    pub fn of(samples: &[f64]) -> Option<Spread> {
        let s = Stats::from_samples(samples)?;
        Some(Spread {
            median_us: s.median,
            p10_us: s.p10,
            p90_us: s.p90,
            samples: s.n,
        })
    }
}

/// One entry of the sequence: one launching op instance of the step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EntryResult {
    /// Position in the step (0 first).
    pub position: usize,
    pub name: String,
    pub tier: Tier,
    /// The signatures whose work this entry runs, with each one's share of its time (summing
    /// to 1), as the isolated replay shares a unit's time.
    pub members: Vec<(String, f64)>,
    /// Signatures whose work runs inside this entry and get no time of their own (a GEMM's
    /// split-K reduction).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub included: Vec<String>,
    /// The entry's time in the trace (µs): the op's on a CPU trace, its activities' on a GPU
    /// trace.
    pub trace_us: f64,
    /// `ok` (run in the sequence), or why not (`unsupported`, `failed`, `oom`): then it enters
    /// the step with its trace time.
    pub status: Status,
    pub method: Option<String>,
    pub reason: Option<String>,
    /// Its time in its place in the sequence, over the measured runs.
    pub in_context: Option<Spread>,
}

impl EntryResult {
    /// What this entry contributes to the step: its in-context median, or its trace time
    /// when it was not run.
    pub fn step_us(&self) -> f64 {
        match (&self.status, &self.in_context) {
            (Status::Ok, Some(s)) => s.median_us,
            _ => self.trace_us,
        }
    }
}

/// `real_time`: the re-run step in real time, as the model's host issues it. The rebuilt ops
/// are called back to back with nothing of replay's between them (inputs, routes and results
/// prepared before), and one timing goes around the whole step: the monotonic clock on the
/// CPU; on a GPU, CUDA events on the ops' stream at the step's two ends, with no blocking
/// kernel. Beside it, replay's own cost per op in that loop, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RealTime {
    /// The rebuilt ops called in each run (the entries that ran).
    pub ops: usize,
    /// What timed the step: `monotonic clock`, or `CUDA events on libtorch's current stream`.
    pub timer: String,
    /// The step, one sample per run (µs): on a GPU from the event before its first op to the
    /// event after its last, so the device's time where the device bounds the step.
    pub step_us: Spread,
    /// The host's time to issue the step, per run (µs); on the CPU the step itself.
    pub host_us: Spread,
    /// The step's ops re-run in real time: `step_us`'s median plus the trace time of the
    /// entries that could not be rebuilt (µs); the real-time counterpart of the sequence's
    /// `step_ops_us`.
    pub step_ops_us: f64,
    /// Warm-up runs before the samples (timed, not kept).
    pub warmup_runs: u64,
    pub stopped_by: StopReason,
    /// The sum of the ops' own host times (µs): each op's median issue time in its place in
    /// the per-op runs (on the CPU its in-context time).
    pub ops_host_us: f64,
    /// The host's step less the ops' own host times, per op (µs): what running them back to
    /// back costs (or saves: warm caches, no timer reads) beside timing each alone in place.
    pub step_minus_ops_us_per_op: f64,
    /// Replay's own cost per op in the timed loop, measured: the same loop over as many ops,
    /// each an empty dispatcher call (`empty_op`) made as replay makes its calls, divided by
    /// the op count (µs). An upper bound: it holds libtorch's dispatch of the empty op, which
    /// the model's own calls pay too.
    pub replay_overhead_us_per_op: f64,
    /// The loop alone: the same loop with every op a no-op, per op (µs).
    pub loop_us_per_op: f64,
    /// The op the empty calls call (`aten::size.int`).
    pub empty_op: String,
}

/// The whole `sequence.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SequenceResults {
    pub schema_version: u32,
    pub tool: String,
    pub device: String,
    /// The trace whose step was re-run.
    pub trace: String,
    /// Which step: `ProfilerStep#6`, or `window` when the trace marks none.
    pub step: String,
    /// The step's own time in the trace (µs), framework time included.
    pub trace_step_us: f64,
    /// The ops' time in the trace's step (µs): the sum of the entries' trace times.
    pub trace_ops_us: f64,
    /// See [`COMPARABLE`] and [`COMPARABLE_WITH_FLOW`].
    pub comparable: String,
    /// Whether the ops' inputs flowed as in the model (an Execution Trace linked, see
    /// [`FlowCounts`]); false: each op read inputs of its own.
    #[serde(default)]
    pub data_flow: bool,
    /// How the inputs were wired, when an Execution Trace was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowCounts>,
    /// One sample per run of the whole sequence: the sum of the entries' timed parts (µs);
    /// `None` when nothing could be run.
    pub runs: Option<Summary>,
    /// The step's ops as re-run: the runs' median plus the trace time of the entries that
    /// could not be rebuilt (µs).
    pub step_ops_us: f64,
    /// The trace time of the entries that could not be rebuilt (µs), inside `step_ops_us`.
    pub unrebuilt_trace_us: f64,
    pub entries: Vec<EntryResult>,
    /// Per signature: the in-context time of one invocation (the mean over its entries of
    /// their median × its share), as `isolated.json`'s rows.
    pub signatures: IsolatedResults,
    /// The step in real time: the rebuilt ops back to back, one timing around the whole
    /// step, and replay's own cost per op; `None` when nothing could be run (and in files
    /// written before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_time: Option<RealTime>,
    /// The memory plan the rebuilt ops were allocated by, and the peak measured (`None` in
    /// files written before there was a plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<SequenceMemory>,
}

/// The memory of a re-run step: planned before anything was allocated, then measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceMemory {
    /// What the plan holds at once: every buffer it allocates (bytes).
    pub planned_peak_bytes: u64,
    /// The budget the plan had to fit (bytes), and where it came from (`--memory-budget`, or
    /// 80 % of the device's free memory).
    pub budget_bytes: u64,
    pub budget_from: String,
    /// The device's free memory when the plan was made (bytes), where it could be read.
    pub free_bytes: Option<u64>,
    /// Every op with inputs of its own, as before the plan: the sum of every op's inputs.
    pub unshared_bytes: u64,
    /// `activations` or `parameters_too`, and what that shares.
    pub sharing: crate::sequence_plan::Sharing,
    pub sharing_described: String,
    /// Buffers in the plan; those serving two requests or more, and the requests they serve.
    pub buffers: usize,
    pub shared_buffers: usize,
    pub shared_requests: usize,
    pub requests: usize,
    /// Ops left out because each alone needs more than the budget (they enter as `oom`).
    pub oversized: Vec<crate::sequence_plan::Oversized>,
    /// Bytes the replayers asked for that the plan had not foreseen, allocated privately.
    pub unplanned_bytes: u64,
    /// The peak measured from before the first buffer to the end of the runs (bytes), and
    /// what measured it.
    pub measured_peak_bytes: Option<u64>,
    /// What the rebuilt ops held once every op was built, before the first run (bytes): the
    /// buffers, private tensors and host copies' buffers, which is what the plan's peak
    /// counts (`None`: not measured, or a file written before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_held_bytes: Option<u64>,
    /// The peak while the ops were built (each buffer drawn, each op's first call) and while
    /// they ran (the held bytes plus each op's outputs and workspace as it runs); the larger
    /// is `measured_peak_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_build_peak_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_run_peak_bytes: Option<u64>,
    pub measured_by: String,
    /// With an Execution Trace: what its data flow adds to the plan (outputs alive from
    /// their op to their last reader, external tensors once each); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<crate::sequence_plan::FlowMemory>,
}

impl SequenceResults {
    /// The per-signature rows of `entries`: a signature that ran in at least one entry is
    /// `ok` with the mean of its in-context times; one that is only ever `included` is
    /// `included`; one whose entries all failed keeps the first entry's status and reason.
    pub fn signature_rows(
        entries: &[EntryResult],
        file: &SignatureFile,
        device: &str,
        trace: &str,
        config: RunConfig,
    ) -> IsolatedResults {
        #[derive(Default)]
        struct Acc {
            times: Vec<f64>,
            included: bool,
            first_failure: Option<(Status, Option<String>)>,
            method: Option<String>,
            replayed_as: Option<String>,
            share: f64,
            summary: Option<Spread>,
        }
        let mut by_id: BTreeMap<&str, Acc> = BTreeMap::new();
        for entry in entries {
            let lead = entry.members.first().map(|(id, _)| id.clone());
            for (id, share) in &entry.members {
                let acc = by_id.entry(id.as_str()).or_default();
                match (&entry.status, &entry.in_context) {
                    (Status::Ok, Some(spread)) => {
                        acc.times.push(spread.median_us * share);
                        acc.method = entry.method.clone();
                        acc.replayed_as = lead.clone();
                        acc.share = *share;
                        acc.summary.get_or_insert(*spread);
                    }
                    _ => {
                        acc.first_failure
                            .get_or_insert((entry.status, entry.reason.clone()));
                    }
                }
            }
            for id in &entry.included {
                let acc = by_id.entry(id.as_str()).or_default();
                acc.included = true;
                acc.replayed_as = lead.clone();
            }
        }
        let mut results = Vec::new();
        for sig in &file.signatures {
            let Some(acc) = by_id.get(sig.id.as_str()) else {
                continue;
            };
            let (status, predicted, reason) = if !acc.times.is_empty() {
                let mean = acc.times.iter().sum::<f64>() / acc.times.len() as f64;
                (Status::Ok, Some(mean), None)
            } else if acc.included {
                (Status::Included, Some(0.0), None)
            } else {
                let (status, reason) = acc
                    .first_failure
                    .clone()
                    .unwrap_or((Status::Failed, Some("never run".into())));
                (status, None, reason)
            };
            results.push(SignatureResult {
                id: sig.id.clone(),
                tier: sig.tier,
                name: sig.name.clone(),
                op: sig.op.as_ref().map(|o| o.name.clone()),
                count: sig.count,
                trace_mean_us: sig.trace_mean_us,
                trace_total_us: sig.trace_total_us,
                status,
                method: acc.method.clone(),
                reason,
                replayed_as: acc.replayed_as.clone().unwrap_or_else(|| sig.id.clone()),
                share: if status == Status::Ok { acc.share } else { 0.0 },
                predicted_us: predicted,
                host_us: None,
                stats: None,
                joules_per_invocation: None,
                energy: None,
                roofline: None,
            });
        }
        IsolatedResults {
            schema_version: super::isolated::ISOLATED_SCHEMA_VERSION,
            tool: format!("replay {}", env!("CARGO_PKG_VERSION")),
            device: device.to_owned(),
            signatures_file: trace.to_owned(),
            config,
            signatures_total: file.signatures.len(),
            complete: true,
            results,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_kind_leaves_out_step_positions_only() {
        assert_eq!(
            fallback_kind(
                "#41 aten::transpose input 0: its producer #40 aten::split output 0 is a list"
            ),
            "aten::transpose input 0: its producer aten::split output 0 is a list"
        );
        // Sizes, node ids and a bare '#' stay.
        assert_eq!(
            fallback_kind("#4 aten::embedding input 0: sizes [1, 5] (node #17) against # [50257]"),
            "aten::embedding input 0: sizes [1, 5] (node #17) against # [50257]"
        );
    }

    fn entry(position: usize, members: &[(&str, f64)], median: Option<f64>) -> EntryResult {
        EntryResult {
            position,
            name: members[0].0.into(),
            tier: Tier::Op,
            members: members.iter().map(|(id, s)| ((*id).into(), *s)).collect(),
            included: vec![],
            trace_us: 10.0,
            status: if median.is_some() {
                Status::Ok
            } else {
                Status::Failed
            },
            method: median.map(|_| "libtorch dispatcher".into()),
            reason: median.is_none().then(|| "no kernel".into()),
            in_context: median.map(|m| Spread {
                median_us: m,
                p10_us: m,
                p90_us: m,
                samples: 3,
            }),
        }
    }

    fn config() -> RunConfig {
        RunConfig {
            cold: false,
            max_time_per_kernel_s: 1.0,
            noise_target: 0.01,
            min_samples: 10,
            rounds: 1,
        }
    }

    #[test]
    fn a_signature_takes_the_mean_of_its_instances_in_context_times_and_failures_keep_their_reason()
    {
        // The committed signature file of the real BERT trace; three of its signatures.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../signatures/h100_bert_small_infer.json");
        let file = crate::signature::read_file(&path).expect("committed signature file reads");
        let [a, b, c] = [0, 1, 2].map(|i| file.signatures[i].id.as_str());
        let entries = vec![
            entry(0, &[(a, 1.0)], Some(4.0)),
            entry(1, &[(b, 0.25), (c, 0.75)], Some(8.0)),
            entry(2, &[(a, 1.0)], Some(6.0)),
        ];
        let rows = SequenceResults::signature_rows(&entries, &file, "cpu", "t.json", config());
        assert_eq!(
            rows.results.len(),
            3,
            "only the signatures the sequence ran"
        );
        let get = |id: &str| rows.results.iter().find(|r| r.id == id).unwrap();
        assert_eq!(get(a).predicted_us, Some(5.0));
        assert_eq!(get(b).predicted_us, Some(2.0));
        assert_eq!(get(c).predicted_us, Some(6.0));
        assert_eq!(get(c).replayed_as, b);
        assert_eq!(get(c).status, Status::Ok);
        let failed = vec![entry(0, &[(a, 1.0)], None)];
        let rows = SequenceResults::signature_rows(&failed, &file, "cpu", "t.json", config());
        assert_eq!(rows.results.len(), 1);
        assert_eq!(rows.results[0].status, Status::Failed);
        assert_eq!(rows.results[0].predicted_us, None);
        assert_eq!(rows.results[0].reason.as_deref(), Some("no kernel"));
        assert_eq!(entries[1].step_us(), 8.0);
        assert_eq!(
            failed[0].step_us(),
            10.0,
            "a failed entry enters with its trace time"
        );
    }

    #[test]
    fn a_file_written_before_the_real_time_step_reads_and_writes_back_unchanged() {
        // A sequence.json of the H200 truth (bloom-560m f32 seq 5), written before
        // `real_time` existed: it reads without one, and every field it has is written back
        // as it was, with no `real_time` key added.
        use std::io::Read as _;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../../shared/gpu-truth/h200-2026-11-28/bloom-560m-float32-seq5/sequence.json.gz",
        );
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(file)
            .read_to_string(&mut text)
            .unwrap();
        let old: SequenceResults = serde_json::from_str(&text).unwrap();
        assert!(old.real_time.is_none());
        let plain: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_value(&old).unwrap(), plain);

        // With one, it is written and read back as it was.
        let spread = Spread {
            median_us: 5042.5,
            p10_us: 5001.0,
            p90_us: 5300.25,
            samples: 40,
        };
        let mut new = old;
        new.real_time = Some(RealTime {
            ops: 3,
            timer: "CUDA events on libtorch's current stream".into(),
            step_us: spread,
            host_us: Spread {
                median_us: 4900.0,
                ..spread
            },
            step_ops_us: 5042.5,
            warmup_runs: 3,
            stopped_by: StopReason::NoiseTarget,
            ops_host_us: 4800.0,
            step_minus_ops_us_per_op: 100.0 / 3.0,
            replay_overhead_us_per_op: 0.1,
            loop_us_per_op: 0.002,
            empty_op: "aten::size.int".into(),
        });
        let written = serde_json::to_string(&new).unwrap();
        let back: SequenceResults = serde_json::from_str(&written).unwrap();
        assert_eq!(back.real_time, new.real_time);
        let value: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(value["real_time"]["step_us"]["median_us"], 5042.5);
        assert_eq!(value["real_time"]["stopped_by"], "noise_target");
    }
}
