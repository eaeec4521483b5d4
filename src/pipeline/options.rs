//! What each stage of the pipeline is told, with its defaults declared once: `Default` here is
//! what a program using the library gets, and the command line's defaults (`cli/`) read the
//! same constants.

use std::path::PathBuf;

use crate::device::DeviceSpec;
use crate::energy::{self, EnergyConfig, EnergyProbe, ProbeSpec};
use crate::model::input_spec::InputSpec;
/// The input's default shape, the model's (which a package's compiled input is checked against).
pub use crate::model::input_spec::{DEFAULT_BATCH, DEFAULT_SEQ_LEN};

/// Device of every command but selftest.
pub const DEFAULT_DEVICE: DeviceSpec = DeviceSpec::Cpu;
/// Where a run's files go.
pub const DEFAULT_OUTPUT_DIR: &str = "results";
/// Unprofiled forward passes before the profiled one.
pub const DEFAULT_CAPTURE_WARMUP: u32 = 3;
/// Profiled candidate steps, of which the median one is kept.
pub const DEFAULT_CAPTURE_CANDIDATES: u32 = 5;
/// Untimed forward passes before the full model is timed (TorchScript optimises itself
/// during the first few).
pub const DEFAULT_FULL_WARMUP: u32 = 10;
/// Timed forward passes of the full model.
pub const DEFAULT_FULL_RUNS: u32 = 100;
/// Time budget per signature, warm-up included, in seconds.
pub const DEFAULT_MAX_TIME_PER_KERNEL_S: f64 = 0.5;
/// Relative standard error of the median at which sampling a signature stops.
pub const DEFAULT_NOISE: f64 = 0.005;
/// Samples taken of every signature at least (over all rounds).
pub const DEFAULT_MIN_SAMPLES: usize = 10;
/// Rounds per signature (see [`crate::measure::interleave`]).
pub const DEFAULT_ROUNDS: u32 = 5;
/// The energy probe: none.
pub const DEFAULT_ENERGY_PROBE: &str = "none";
/// Update periods of the probe each energy window covers at least.
pub const DEFAULT_ENERGY_MIN_PERIODS: f64 = 100.0;

/// The energy probe and how its windows are measured (`--energy` and its options).
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyOptions {
    /// none, nvml[:N], rapl[:ROOT], "cmd:PROGRAM [ARGS]" or "plugin:PATH.so [CONFIG]".
    pub probe: String,
    /// Subtract idle power, measured in an equal empty window after each busy one.
    pub idle_subtract: bool,
    /// Each energy window covers at least this many update periods of the probe.
    pub min_periods: f64,
}

impl Default for EnergyOptions {
    fn default() -> Self {
        EnergyOptions {
            probe: DEFAULT_ENERGY_PROBE.into(),
            idle_subtract: false,
            min_periods: DEFAULT_ENERGY_MIN_PERIODS,
        }
    }
}

impl EnergyOptions {
    /// The opened probe, or `None` for `none`.
    pub fn open(&self) -> crate::Result<Option<Box<dyn EnergyProbe>>> {
        let spec: ProbeSpec = self.probe.parse().map_err(crate::Error::from)?;
        if spec.is_none() {
            return Ok(None);
        }
        Ok(Some(energy::open(&spec).map_err(crate::Error::from)?))
    }

    pub fn config(&self) -> EnergyConfig {
        EnergyConfig {
            min_update_periods: self.min_periods,
            idle_subtract: self.idle_subtract,
            ..EnergyConfig::default()
        }
    }
}

/// `--compile [MODE]`: the mode of `torch.compile` a capture compiles the model with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileMode {
    Default,
    ReduceOverhead,
    MaxAutotune,
}

impl CompileMode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [CompileMode; 3] = [
        CompileMode::Default,
        CompileMode::ReduceOverhead,
        CompileMode::MaxAutotune,
    ];

    /// The mode spelled `name` (as [`CompileMode::as_str`] spells it).
    pub fn from_name(name: &str) -> Option<CompileMode> {
        CompileMode::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// The mode as torch.compile (and `capture_trace.py --compile`) spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CompileMode::Default => "default",
            CompileMode::ReduceOverhead => "reduce-overhead",
            CompileMode::MaxAutotune => "max-autotune",
        }
    }
}

impl std::fmt::Display for CompileMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `replay capture`: profile one forward pass of a model into a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureOptions {
    /// The model file: TorchScript (.pt) or a torch.export ExportedProgram (.pt2); ignored
    /// when `zoo` names a model.
    pub model: PathBuf,
    /// A model of the zoo (`scripts/zoo.py`), built eagerly with random weights.
    pub zoo: Option<String>,
    /// torch.compile the model with this mode and keep Inductor's cache and the recording of
    /// its generated kernels in `inductor/` beside the trace.
    pub compile: Option<CompileMode>,
    pub seq_len: i64,
    pub batch: i64,
    /// Input tensors instead of token ids of `batch` x `seq_len`.
    pub inputs: Vec<InputSpec>,
    pub device: DeviceSpec,
    pub warmup: u32,
    /// The trace file (.json, or .json.gz to compress).
    pub out: PathBuf,
    /// libtorch intra-op threads; `None`: libtorch's own choice.
    pub threads: Option<i32>,
    pub candidates: u32,
    /// With `compile`: time the compiled model whole in the capture's Python process after
    /// the profiled steps, this many timed passes (0: not timed), into
    /// `compiled_model_timing.json` beside the trace.
    pub time_runs: u32,
    /// Untimed passes before those.
    pub time_warmup: u32,
    /// After a compiled capture into the same folder: only compile the model again (from the
    /// kept Inductor cache) and time it, into `compiled_model_timing_after.json`.
    pub time_only: bool,
    /// Also record the kept step's PyTorch Execution Trace beside the trace
    /// (`NAME.et.json`), linked to it by record-function ids.
    pub execution_trace: bool,
    /// Switch TorchScript's fuser on for the CPU (`--fuse-on-cpu`).
    pub fuse_on_cpu: bool,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            model: PathBuf::new(),
            zoo: None,
            compile: None,
            seq_len: DEFAULT_SEQ_LEN,
            batch: DEFAULT_BATCH,
            inputs: Vec::new(),
            device: DEFAULT_DEVICE,
            warmup: DEFAULT_CAPTURE_WARMUP,
            out: PathBuf::new(),
            threads: None,
            candidates: DEFAULT_CAPTURE_CANDIDATES,
            time_runs: 0,
            time_warmup: DEFAULT_FULL_WARMUP,
            time_only: false,
            execution_trace: false,
            fuse_on_cpu: false,
        }
    }
}

/// `replay isolated`: replay every signature of a signature file alone and time it.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolatedOptions {
    /// The signature file; with `trace`, where the trace's signatures are written.
    pub kernels: PathBuf,
    /// A profiler trace to classify (into `kernels`) instead of reading a signature file.
    pub trace: Option<PathBuf>,
    /// The trace's Execution Trace, attached as `classify --execution-trace` does (exact
    /// overloads, recorded index ranges); only with `trace`.
    pub execution_trace: Option<PathBuf>,
    pub device: DeviceSpec,
    /// Where isolated.json and isolated.csv go.
    pub output_dir: PathBuf,
    /// Flush the L2 (CUDA) or last-level cache (CPU) before every sample.
    pub cold: bool,
    pub max_time_per_kernel_s: f64,
    pub noise: f64,
    pub min_samples: usize,
    pub rounds: u32,
    /// libtorch intra-op threads; `None`: libtorch's own choice.
    pub threads: Option<i32>,
    pub energy: EnergyOptions,
    /// A calibration profile of this device: roofline estimates beside every measurement,
    /// and in place of the replays that cannot run.
    pub profile: Option<PathBuf>,
    /// The units this run replays (`--shard I/N`, which the suite driver resolves; the
    /// whole file by default).
    pub shard: replay_core::shard::Shard,
    /// The kept Inductor cache (`--inductor-cache DIR`) that tier-4 signatures are replayed
    /// from.
    pub inductor_cache: Option<PathBuf>,
    /// On a GPU, queue each timed sample behind the CUDA timer's blocking kernel, so that
    /// kernels shorter than their launch are timed on the device alone (`--no-blocking-kernel`
    /// turns it off, to compare).
    pub blocking_kernel: bool,
}

impl Default for IsolatedOptions {
    fn default() -> Self {
        IsolatedOptions {
            kernels: PathBuf::new(),
            trace: None,
            execution_trace: None,
            device: DEFAULT_DEVICE,
            output_dir: PathBuf::from(DEFAULT_OUTPUT_DIR),
            cold: false,
            max_time_per_kernel_s: DEFAULT_MAX_TIME_PER_KERNEL_S,
            noise: DEFAULT_NOISE,
            min_samples: DEFAULT_MIN_SAMPLES,
            rounds: DEFAULT_ROUNDS,

            threads: None,
            energy: EnergyOptions::default(),
            profile: None,
            shard: replay_core::shard::Shard::WHOLE,
            inductor_cache: None,
            blocking_kernel: true,
        }
    }
}

/// Time budget of `replay sequence`'s runs of the whole step, warm-up included (seconds).
pub const DEFAULT_SEQUENCE_MAX_TIME_S: f64 = 10.0;
/// The same inside `replay compare`, where it is the third prediction beside the others.
pub const DEFAULT_COMPARE_SEQUENCE_MAX_TIME_S: f64 = 3.0;

/// `replay sequence`: re-run a trace's step in order.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceOptions {
    /// The profiler trace whose step is re-run.
    pub trace: PathBuf,
    /// Its signature file, when classified already (`replay classify`); else the trace is
    /// classified.
    pub kernels: Option<PathBuf>,
    pub device: DeviceSpec,
    /// Where sequence.json and sequence.csv go.
    pub output_dir: PathBuf,
    /// Time budget of the runs, warm-up included (seconds): the per-op runs and the runs in
    /// real time have one each.
    pub max_time_s: f64,
    pub noise: f64,
    pub min_samples: usize,
    /// libtorch intra-op threads; `None`: libtorch's own choice.
    pub threads: Option<i32>,
    /// The kept Inductor cache generated kernels are rebuilt from.
    pub inductor_cache: Option<PathBuf>,
    /// On a GPU, each op's segment queued behind the CUDA timer's blocking kernel.
    pub blocking_kernel: bool,
    /// The Execution Trace recorded in the same step: outputs flow into the ops that
    /// consume them, as in the model.
    pub execution_trace: Option<PathBuf>,
    /// The most memory the step's planned buffers may hold (bytes); `None`: 80 % of the
    /// device's free memory.
    pub memory_budget: Option<u64>,
}

impl Default for SequenceOptions {
    fn default() -> Self {
        SequenceOptions {
            trace: PathBuf::new(),
            kernels: None,
            device: DEFAULT_DEVICE,
            output_dir: PathBuf::from(DEFAULT_OUTPUT_DIR),
            max_time_s: DEFAULT_SEQUENCE_MAX_TIME_S,
            noise: DEFAULT_NOISE,
            min_samples: DEFAULT_MIN_SAMPLES,
            threads: None,
            inductor_cache: None,
            blocking_kernel: true,
            execution_trace: None,
            memory_budget: None,
        }
    }
}

/// `replay full`: time the whole TorchScript model.
#[derive(Debug, Clone, PartialEq)]
pub struct FullOptions {
    pub model: PathBuf,
    pub seq_len: i64,
    pub batch: i64,
    /// Input tensors instead of token ids of `batch` x `seq_len`.
    pub inputs: Vec<InputSpec>,
    pub warmup: u32,
    pub runs: u32,
    pub device: DeviceSpec,
    /// Where full_model_timing.json goes (for compare: every file of the run).
    pub output_dir: PathBuf,
    /// libtorch intra-op threads; `None`: libtorch's own choice.
    pub threads: Option<i32>,
    pub energy: EnergyOptions,
    /// Switch TorchScript's fuser on for the CPU before the model is loaded, so that its
    /// element-wise chains run as fusion groups as on a GPU (`--fuse-on-cpu`).
    pub fuse_on_cpu: bool,
}

impl Default for FullOptions {
    fn default() -> Self {
        FullOptions {
            model: PathBuf::new(),
            seq_len: DEFAULT_SEQ_LEN,
            batch: DEFAULT_BATCH,
            inputs: Vec::new(),
            warmup: DEFAULT_FULL_WARMUP,
            runs: DEFAULT_FULL_RUNS,
            device: DEFAULT_DEVICE,
            output_dir: PathBuf::from(DEFAULT_OUTPUT_DIR),
            threads: None,
            energy: EnergyOptions::default(),
            fuse_on_cpu: false,
        }
    }
}

/// Where `capture --execution-trace` writes the Execution Trace of the trace `trace`:
/// `NAME.et.json` for `NAME.json`, `NAME.et.json.gz` for `NAME.json.gz` (as the script names it).
pub fn execution_trace_path(trace: &std::path::Path) -> PathBuf {
    let name = trace.display().to_string();
    for ext in [".json.gz", ".json"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return format!("{stem}.et{ext}").into();
        }
    }
    format!("{name}.et.json").into()
}

/// `replay compare`: capture (or take) a trace, classify it, replay every signature alone,
/// time the real model and compare.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// The model, its input, the device, the full-model timing and the output folder.
    pub run: FullOptions,
    /// A profiler trace to use instead of capturing one.
    pub trace: Option<PathBuf>,
    /// A signature file to use instead of capturing and classifying.
    pub kernels: Option<PathBuf>,
    pub max_time_per_kernel_s: f64,
    /// Interleaved rounds of the isolated replay; the full model is timed in as many chunks.
    pub rounds: u32,
    /// Flush caches before every isolated sample.
    pub cold: bool,
    /// Also write the trace's own and the replayed timeline as a Chrome trace here.
    pub perfetto: Option<PathBuf>,
    /// The isolated replay's `--profile`.
    pub profile: Option<PathBuf>,
    /// The kept Inductor cache of the trace (`--inductor-cache DIR`; default `inductor/`
    /// beside the trace).
    pub inductor_cache: Option<PathBuf>,
    /// Capture the model compiled with torch.compile in this mode (see [`CaptureOptions`]);
    /// the compiled model is then timed in the capture's process (`--warmup`, `--runs`).
    pub compile: Option<CompileMode>,
    /// The isolated replay's blocking kernel (see [`IsolatedOptions::blocking_kernel`]); the
    /// full model is timed without it either way.
    pub blocking_kernel: bool,
    /// A model of the zoo instead of `run.model` (with `compile`).
    pub zoo: Option<String>,
    /// Re-run the trace's step in order for the third prediction (`replay sequence`).
    pub sequence: bool,
    /// Its time budget (seconds), for each of its two measurements (each op in its place,
    /// the step in real time).
    pub sequence_max_time_s: f64,
    /// Classify (and replay) with an Execution Trace (`--execution-trace [ET]`); see
    /// [`CompareOptions::execution_trace_of`].
    pub execution_trace: Option<ExecutionTraceChoice>,
    /// The profile whose host section drives the host-model prediction (else `profile`'s,
    /// else measured before the replay).
    pub host_profile: Option<PathBuf>,
    /// Whose host durations the host-model prediction runs with [default: the model].
    pub host_times: Option<crate::predict::HostTimes>,
}

/// Where compare's Execution Trace comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecutionTraceChoice {
    /// Recorded by compare's own capture, beside its trace (`--execution-trace` alone).
    Captured,
    /// This file: the Execution Trace of the given `--trace` (`--execution-trace ET`).
    File(PathBuf),
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            run: FullOptions::default(),
            trace: None,
            kernels: None,
            max_time_per_kernel_s: DEFAULT_MAX_TIME_PER_KERNEL_S,
            rounds: DEFAULT_ROUNDS,
            cold: false,
            perfetto: None,
            profile: None,
            inductor_cache: None,
            compile: None,
            blocking_kernel: true,
            zoo: None,
            sequence: true,
            sequence_max_time_s: DEFAULT_COMPARE_SEQUENCE_MAX_TIME_S,
            execution_trace: None,
            host_profile: None,
            host_times: None,
        }
    }
}

impl CompareOptions {
    /// The capture of compare's own trace: the model's input, device and threads, with the
    /// capture's own defaults for the rest.
    pub fn capture(&self, out: PathBuf) -> CaptureOptions {
        CaptureOptions {
            model: self.run.model.clone(),
            seq_len: self.run.seq_len,
            batch: self.run.batch,
            inputs: self.run.inputs.clone(),
            device: self.run.device,
            out,
            // The capture runs in a child process: pass libtorch's choice in this one on, so
            // trace and timings see the same thread count.
            threads: self.run.threads.or(Some(tch::get_num_threads())),
            compile: self.compile,
            zoo: self.zoo.clone(),
            execution_trace: self.execution_trace == Some(ExecutionTraceChoice::Captured),
            fuse_on_cpu: self.run.fuse_on_cpu,
            // A compiled model is timed where it was compiled, with compare's protocol: the
            // first half of the runs here, the rest after the isolated replay
            // ([`Self::time_again`]).
            time_runs: if self.compile.is_some() {
                self.run.runs - self.runs_after_isolated()
            } else {
                0
            },
            time_warmup: self.run.warmup,
            ..CaptureOptions::default()
        }
    }

    /// The later half of a compiled model's runs, after the isolated replay: a second Python
    /// process compiles the model again from the capture's Inductor cache beside `trace`.
    pub fn time_again(&self, trace: PathBuf) -> CaptureOptions {
        CaptureOptions {
            time_runs: self.runs_after_isolated(),
            time_only: true,
            execution_trace: false,
            ..self.capture(trace)
        }
    }

    /// The Execution Trace that goes with compare's `trace`, where one was asked for: the one
    /// its own capture recorded beside it, or the given one. The sequence stage is to be handed
    /// it too (`replay sequence --execution-trace`, wired where [`Self::sequence_of`] is).
    pub fn execution_trace_of(&self, trace: &std::path::Path) -> Option<PathBuf> {
        match &self.execution_trace {
            None => None,
            Some(ExecutionTraceChoice::Captured) => Some(execution_trace_path(trace)),
            Some(ExecutionTraceChoice::File(et)) => Some(et.clone()),
        }
    }

    /// Of a compiled model's runs, those timed after the isolated replay (the later half; none
    /// when there is only one run).
    pub fn runs_after_isolated(&self) -> u32 {
        self.run.runs / 2
    }

    /// How messages and the report name the model: the file, or the zoo model.
    pub fn model_name(&self) -> String {
        match &self.zoo {
            Some(name) => format!("zoo model {name}"),
            None => self.run.model.display().to_string(),
        }
    }

    /// The re-run of `trace`'s step in order (the third prediction): compare's device,
    /// folder and Inductor cache. Threads were set for the whole run.
    pub fn sequence_of(&self, trace: PathBuf) -> SequenceOptions {
        SequenceOptions {
            trace,
            device: self.run.device,
            output_dir: self.run.output_dir.clone(),
            max_time_s: self.sequence_max_time_s,
            inductor_cache: self.inductor_cache.clone(),
            blocking_kernel: self.blocking_kernel,
            ..SequenceOptions::default()
        }
    }

    /// The isolated replay of `kernels`: compare's budget, rounds and cache state, with the
    /// isolated replay's own defaults for the rest. Threads were set for the whole run.
    pub fn isolated(&self, kernels: PathBuf) -> IsolatedOptions {
        IsolatedOptions {
            kernels,
            device: self.run.device,
            output_dir: self.run.output_dir.clone(),
            cold: self.cold,
            max_time_per_kernel_s: self.max_time_per_kernel_s,
            rounds: self.rounds,
            threads: None,
            energy: self.run.energy.clone(),
            profile: self.profile.clone(),
            inductor_cache: self.inductor_cache.clone(),
            blocking_kernel: self.blocking_kernel,
            ..IsolatedOptions::default()
        }
    }
}

/// `replay selftest`: one replay per tier on a device, checked against libtorch on the CPU;
/// with a model, the model too and a small compare run.
#[derive(Debug, Clone, PartialEq)]
pub struct SelftestOptions {
    pub device: DeviceSpec,
    /// A TorchScript model to check too.
    pub model: Option<PathBuf>,
    /// Tokens in the model's input sequence.
    pub seq_len: i64,
    /// Report as JSON instead of text.
    pub json: bool,
}

impl Default for SelftestOptions {
    fn default() -> Self {
        SelftestOptions {
            device: DEFAULT_DEVICE,
            model: None,
            seq_len: DEFAULT_SEQ_LEN,
            json: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_hands_its_settings_to_the_stages_and_keeps_their_defaults() {
        let compare = CompareOptions {
            run: FullOptions {
                model: "m.pt".into(),
                seq_len: 7,
                device: DeviceSpec::Cuda(1),
                output_dir: "out".into(),
                threads: Some(2),
                ..FullOptions::default()
            },
            max_time_per_kernel_s: 0.02,
            rounds: 3,
            cold: true,
            compile: Some(CompileMode::MaxAutotune),
            blocking_kernel: false,
            ..CompareOptions::default()
        };
        let capture = compare.capture("out/trace.json".into());
        assert_eq!(capture.seq_len, 7);
        assert_eq!(capture.compile, Some(CompileMode::MaxAutotune));
        assert_eq!(capture.zoo, None);
        assert_eq!(capture.device, DeviceSpec::Cuda(1));
        assert_eq!(capture.threads, Some(2));
        assert_eq!(capture.warmup, DEFAULT_CAPTURE_WARMUP);
        assert_eq!(capture.candidates, DEFAULT_CAPTURE_CANDIDATES);
        // The compiled model is timed with compare's own protocol, half its runs in the
        // capture and half in a second process after the isolated replay.
        assert_eq!(
            (capture.time_runs, capture.time_warmup, capture.time_only),
            (DEFAULT_FULL_RUNS / 2, DEFAULT_FULL_WARMUP, false)
        );
        let odd = CompareOptions {
            run: FullOptions {
                runs: 7,
                ..compare.run.clone()
            },
            ..compare.clone()
        };
        let again = odd.time_again("out/trace.json".into());
        assert_eq!((again.time_runs, again.time_only), (3, true));
        assert_eq!(odd.capture("out/trace.json".into()).time_runs, 4);
        assert_eq!(again.compile, Some(CompileMode::MaxAutotune));
        let eager = CompareOptions {
            compile: None,
            ..compare.clone()
        };
        assert_eq!(eager.capture("t.json".into()).time_runs, 0);
        let isolated = compare.isolated("out/signatures.json".into());
        assert_eq!(isolated.output_dir, PathBuf::from("out"));
        assert_eq!(isolated.rounds, 3);
        assert!(isolated.cold);
        assert_eq!(isolated.max_time_per_kernel_s, 0.02);
        assert_eq!(isolated.noise, DEFAULT_NOISE);
        assert_eq!(isolated.min_samples, DEFAULT_MIN_SAMPLES);
        assert!(
            !isolated.blocking_kernel,
            "--no-blocking-kernel reaches the isolated replay"
        );
        assert!(
            CompareOptions::default()
                .isolated("k".into())
                .blocking_kernel
        );
    }

    #[test]
    fn the_execution_trace_goes_beside_the_trace() {
        for (trace, et) in [
            ("run/trace.json", "run/trace.et.json"),
            ("t.json.gz", "t.et.json.gz"),
            ("t.trace", "t.trace.et.json"),
        ] {
            assert_eq!(
                execution_trace_path(std::path::Path::new(trace)),
                std::path::PathBuf::from(et)
            );
        }
    }

    #[test]
    fn the_execution_trace_is_captured_beside_the_trace_or_taken_as_given() {
        let trace = std::path::Path::new("out/trace.json");
        let none = CompareOptions::default();
        assert_eq!(none.execution_trace_of(trace), None);
        assert!(!none.capture(trace.into()).execution_trace);
        let captured = CompareOptions {
            execution_trace: Some(ExecutionTraceChoice::Captured),
            ..CompareOptions::default()
        };
        assert!(captured.capture(trace.into()).execution_trace);
        assert!(!captured.time_again(trace.into()).execution_trace);
        assert_eq!(
            captured.execution_trace_of(trace),
            Some(PathBuf::from("out/trace.et.json"))
        );
        let given = CompareOptions {
            execution_trace: Some(ExecutionTraceChoice::File("t.et.json".into())),
            ..CompareOptions::default()
        };
        assert!(!given.capture(trace.into()).execution_trace);
        assert_eq!(
            given.execution_trace_of(trace),
            Some(PathBuf::from("t.et.json"))
        );
    }
}
