//! The quantization microbenchmarks as a [`Suite`] of the core's runner: every
//! (model_params entry, recipe pair, shape) in a fixed order; each case builds its model
//! from seeded weights, checks every quantized Linear against its dequantize-then-matmul
//! reference, measures the output's SQNR against the high-precision model, and times the
//! baseline (once per shape) and the quantized model through the measurement core.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use replay_core::export::rows::Row;
use replay_core::measure::{Clock as _, Measurement, MonotonicClock, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};
use tch::Tensor;

use super::case::{CaseNotes, QuantCase};
use super::config::{ModelParams, QuantConfig};
use super::error::QuantError;
use super::model::{Model, ModelWeights};
use super::python_helper::{self, HelperRequest};
use super::recipe::{recipe_pairs, Recipe};
use super::rows::{self, COLUMNS};
use super::sqnr::sqnr_db;
use super::timing::TimingMode;
use crate::device::{Device, DeviceSpec};
use crate::torch::work_target::TorchWork;

/// libtorch's generator is seeded with this before each case's weights and input, so every
/// recipe of a shape quantizes the same weights and sees the same input.
pub const SEED: i64 = 0;
/// Rows of the probe input each quantized Linear is checked on.
const CHECK_ROWS: i64 = 32;
/// A kernel whose output is further than this from its own dequantize-then-matmul reference
/// is wrong (packing or scale bugs land near 0 dB; bfloat16 rounding alone stays above 40).
pub const CHECK_MIN_SQNR_DB: f64 = 30.0;

/// How the suite runs besides the config.
#[derive(Debug, Clone)]
pub struct QuantSettings {
    pub timing: TimingMode,
    pub threads: usize,
    /// The folder rows, traces and memory files go to.
    pub output_dir: PathBuf,
}

/// A shape of a `model_params` entry: (entry, shape name, [m, k, n]).
type BaselineKey = (usize, String, [i64; 3]);

pub struct QuantSuite {
    config: QuantConfig,
    settings: QuantSettings,
    /// Each entry's device, or why it cannot be used (CUDA missing).
    devices: Vec<Result<Device, String>>,
    /// Baseline eager times (ms) by (entry, shape), so each shape's baseline is timed once.
    baselines: RefCell<HashMap<BaselineKey, f64>>,
    notes: RefCell<CaseNotes>,
    rows: RefCell<Option<Row>>,
}

fn open_device(device: DeviceSpec) -> Result<Device, String> {
    match device {
        DeviceSpec::Cpu => Ok(Device::host().clone()),
        DeviceSpec::Cuda(_) => Device::open(device).map_err(|e| e.to_string()),
    }
}

/// The device of each of `specs`, each distinct one opened once by `open` and shared by the
/// entries that name it (a YAML of 24 entries on `cuda:0` opens it once, not 24 times).
fn open_each_once<T: Clone>(
    specs: impl Iterator<Item = DeviceSpec>,
    mut open: impl FnMut(DeviceSpec) -> T,
) -> Vec<T> {
    let mut opened: Vec<(DeviceSpec, T)> = Vec::new();
    specs
        .map(
            |spec| match opened.iter().find(|(known, _)| *known == spec) {
                Some((_, device)) => device.clone(),
                None => {
                    let device = open(spec);
                    opened.push((spec, device.clone()));
                    device
                }
            },
        )
        .collect()
}

fn torch_error(e: tch::TchError) -> CaseError {
    quant_error(QuantError::Torch(e))
}

/// A suite error as the row's status.
pub fn quant_error(e: QuantError) -> CaseError {
    let message = e.to_string();
    let status = match e {
        QuantError::NotImplemented(_) => CaseStatus::NotImplemented,
        _ if message.to_lowercase().contains("out of memory") => CaseStatus::Oom,
        _ => CaseStatus::Error,
    };
    CaseError::new(status, message)
}

impl QuantSuite {
    pub fn new(config: QuantConfig, settings: QuantSettings) -> QuantSuite {
        let devices = open_each_once(config.model_params.iter().map(|p| p.device), open_device);
        if config
            .model_params
            .iter()
            .any(|p| p.enable_memory_profiler && p.device == DeviceSpec::Cpu)
        {
            // Installed before any model exists, so the peaks count the weights as well.
            if let Err(e) = crate::torch::cpu_memory_counter::install() {
                eprintln!("warning: the CPU memory counter is unavailable: {e}");
            }
        }
        QuantSuite {
            config,
            settings,
            devices,
            baselines: RefCell::new(HashMap::new()),
            notes: RefCell::new(CaseNotes::default()),
            rows: RefCell::new(None),
        }
    }

    pub fn config(&self) -> &QuantConfig {
        &self.config
    }

    pub fn settings(&self) -> &QuantSettings {
        &self.settings
    }

    /// Whether each entry's device opened (for the console).
    pub fn device_problems(&self) -> Vec<(usize, String)> {
        self.devices
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.as_ref().err().map(|e| (i, e.clone())))
            .collect()
    }

    /// The row of the case that just ended.
    pub fn last_row(&self) -> Option<Row> {
        self.rows.borrow().clone()
    }

    /// The helper's request for `case`, its compiled models timed with `counts` (warm-up and
    /// timed calls): the eager quantized model's, so a budget cut applies to both.
    fn helper_request<'a>(
        &self,
        p: &'a ModelParams,
        case: &QuantCase,
        (warmup, runs): (u64, usize),
    ) -> HelperRequest<'a> {
        HelperRequest {
            model_type: p.model_type.to_string(),
            m: case.shape.m,
            k: case.shape.k,
            n: case.shape.n,
            dtype: p.high_precision_dtype.torch_name(),
            device: p.device.short_name(),
            recipe: case.quantization.clone(),
            threads: self.settings.threads,
            warmup,
            runs,
        }
    }

    /// File-name stem of a case's files, as the seed names them.
    fn file_stem(&self, p: &ModelParams, case: &QuantCase) -> String {
        let stem = format!(
            "{}_{}_{}_{}_quant_{}_sparsity_{}",
            rows::row_name(p, case),
            case.shape.m,
            case.shape.k,
            case.shape.n,
            case.quantization,
            case.sparsity.as_deref().unwrap_or("None")
        );
        stem.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    /// Checks each quantized Linear of `model` against its float64 dequantize-then-matmul
    /// reference on a seeded probe input.
    fn check_layers(
        &self,
        model: &Model,
        device: &Device,
        dtype: tch::Kind,
    ) -> Result<String, CaseError> {
        let mut worst = f64::INFINITY;
        for layer in model.linears() {
            let k = layer.in_features();
            let probe =
                Tensor::f_randn([CHECK_ROWS, k], (dtype, device.torch())).map_err(torch_error)?;
            let out = layer.forward(&probe).map_err(torch_error)?;
            let reference = layer.reference(&probe).map_err(quant_error)?;
            let sqnr = sqnr_db(&reference, &out).map_err(torch_error)?;
            if sqnr.is_nan() || sqnr < CHECK_MIN_SQNR_DB {
                return Err(CaseError::new(
                    CaseStatus::Error,
                    format!(
                        "wrong result: the {} kernel is {sqnr:.1} dB from its dequantize-then-matmul \
                         reference (at least {CHECK_MIN_SQNR_DB} dB expected)",
                        layer.recipe()
                    ),
                ));
            }
            worst = worst.min(sqnr);
        }
        Ok(format!(
            "checked against the dequantize-then-matmul reference: {} dB at worst",
            if worst.is_finite() {
                format!("{worst:.1}")
            } else {
                "inf".into()
            }
        ))
    }

    /// Times `model` on `input`: its time in ms as the timing mode reads it, and the
    /// measurement.
    fn time_model(
        &self,
        model: &Model,
        input: &Tensor,
        device: &Device,
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<(f64, Measurement), CaseError> {
        let mut work = TorchWork::new(device, || model.forward(input).map(drop))
            .map_err(|e| CaseError::new(CaseStatus::Error, e.to_string()))?;
        let measured = time(&mut work)?;
        Ok((self.settings.timing.time_ms(&measured.summary), measured))
    }

    /// Builds, checks and times `case` (what [`Suite::measure_case`] does), first saying
    /// through `announce` what a long timing will cost: the time of one call (the first,
    /// untimed, made for the output's SQNR or for this estimate) times the seed's counts, or
    /// the budget per case where they do not fit.
    pub fn measure_announced(
        &self,
        case: &QuantCase,
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
        announce: &mut dyn FnMut(&str),
    ) -> Result<Measurement, CaseError> {
        let p = &self.config.model_params[case.param];
        if let Some(s) = &case.sparsity {
            return Err(CaseError::new(
                CaseStatus::NotImplemented,
                format!("sparsity {s}: replay implements no sparsity recipe"),
            ));
        }
        let recipe = Recipe::parse(&case.quantization)
            .map_err(|why| CaseError::new(CaseStatus::NotImplemented, why))?;
        let device = match self.devices.get(case.param) {
            Some(Ok(d)) => d,
            Some(Err(why)) => return Err(CaseError::new(CaseStatus::Skipped, why.clone())),
            None => {
                return Err(CaseError::new(
                    CaseStatus::Error,
                    "no such model_params entry",
                ))
            }
        };
        let dtype = p.high_precision_dtype.kind();
        let _guard = tch::no_grad_guard();
        tch::manual_seed(SEED);
        let (m, k, n) = (case.shape.m, case.shape.k, case.shape.n);
        let weights =
            ModelWeights::random(p.model_type, k, n, dtype, device).map_err(quant_error)?;
        let input =
            ModelWeights::random_input(p.model_type, m, k, dtype, device).map_err(quant_error)?;
        let baseline = Model::new(&weights, Recipe::Baseline).map_err(quant_error)?;
        let quantized = Model::new(&weights, recipe).map_err(quant_error)?;

        // One untimed call of each model (for the output's SQNR, or for the estimate alone):
        // its time says what timing the model will cost.
        let clock = MonotonicClock::new();
        let one_call = |model: &Model| -> Result<(Tensor, Duration), CaseError> {
            let start = clock.now();
            let out = model.forward(&input).map_err(torch_error)?;
            crate::torch::work_target::synchronize(device)
                .map_err(|e| CaseError::new(CaseStatus::Error, e.to_string()))?;
            Ok((out, clock.now().saturating_sub(start)))
        };
        let key = (case.param, case.shape.name.clone(), [m, k, n]);
        let cached = self.baselines.borrow().get(&key).copied();
        let quantized_call = if recipe.is_baseline() {
            one_call(&quantized)?.1
        } else {
            let note = self.check_layers(&quantized, device, dtype)?;
            let (reference, baseline_call) = one_call(&baseline)?;
            let (output, quantized_call) = one_call(&quantized)?;
            if cached.is_none() {
                self.announce_estimate(case, "baseline", baseline_call, announce);
            }
            let mut notes = self.notes.borrow_mut();
            notes.sqnr_db = Some(sqnr_db(&reference, &output).map_err(torch_error)?);
            notes.message = Some(note);
            quantized_call
        };
        self.announce_estimate(case, "model", quantized_call, announce);

        // The baseline row times the unquantized model once: both of its columns are that one
        // measurement (timing it twice gave a "speedup" of 1.24x against itself, the noise
        // between two runs of one model).
        let baseline_ms = match cached {
            Some(ms) => Some(ms),
            None if recipe.is_baseline() => None,
            None => {
                let (ms, _) = self.time_model(&baseline, &input, device, time)?;
                self.baselines.borrow_mut().insert(key.clone(), ms);
                Some(ms)
            }
        };
        let (quantized_ms, measured) = self.time_model(&quantized, &input, device, time)?;
        let baseline_ms = match baseline_ms {
            Some(ms) if !recipe.is_baseline() => ms,
            _ => {
                self.baselines.borrow_mut().insert(key, quantized_ms);
                quantized_ms
            }
        };
        let mut notes = self.notes.borrow_mut();
        notes.baseline_ms = Some(baseline_ms);
        notes.quantized_ms = Some(quantized_ms);
        drop(notes);

        // Extras: each failure is said in the row; none costs the row its times.
        let mut problems = Vec::new();
        if p.enable_memory_profiler {
            match self.memory_profile(p, case, &quantized, &input, device) {
                Ok((path, stats)) => {
                    let mut notes = self.notes.borrow_mut();
                    notes.memory_profile_path = Some(path);
                    notes.memory_stats = Some(stats);
                }
                Err(e) => problems.push(format!("memory profiler: {e}")),
            }
        }
        // Seed timing: the compiled models get the eager one's counts (a cut included);
        // replay's: the seed's.
        let counts = match self.settings.timing {
            TimingMode::Seed { .. } => (measured.summary.warmup_calls, measured.summary.samples),
            TimingMode::Replay { .. } => (
                super::timing::SEED_CALLS,
                super::timing::SEED_CALLS as usize,
            ),
        };
        let request = self.helper_request(p, case, counts);
        if p.enable_profiler {
            let path = self
                .settings
                .output_dir
                .join("profiler")
                .join(format!("{}_profile.json", self.file_stem(p, case)));
            match python_helper::profile(&request, &path) {
                Ok(written) => self.notes.borrow_mut().profile_path = Some(written),
                Err(e) => problems.push(format!("profiler: {e}")),
            }
        }
        if let Some(mode) = &p.compile_mode {
            match python_helper::compiled_times(&request, mode) {
                Ok(times) => {
                    let mut notes = self.notes.borrow_mut();
                    notes.compiled = Some(times);
                    notes.compile_status = Some("ok".into());
                }
                Err(e) => {
                    self.notes.borrow_mut().compile_status = Some(format!("unavailable: {e}"))
                }
            }
        }
        if !problems.is_empty() {
            let mut notes = self.notes.borrow_mut();
            let joined = problems.join("; ");
            notes.message = Some(match notes.message.take() {
                Some(m) => format!("{m}; {joined}"),
                None => joined,
            });
        }
        Ok(measured)
    }

    /// Says before a long timing what it will cost (see [`TimingMode::estimate`]).
    fn announce_estimate(
        &self,
        case: &QuantCase,
        model: &str,
        one_call: Duration,
        announce: &mut dyn FnMut(&str),
    ) {
        if let Some(text) = self.settings.timing.estimate(one_call) {
            announce(&format!("{}: the {model}'s {text}", case.describe()));
        }
    }

    fn memory_profile(
        &self,
        p: &ModelParams,
        case: &QuantCase,
        model: &Model,
        input: &Tensor,
        device: &Device,
    ) -> Result<(String, String), QuantError> {
        let _guard = tch::no_grad_guard();
        let stats = match device {
            Device::Cuda(dev) => {
                let shim = |e: crate::torch::ShimError| QuantError::Unsupported(e.to_string());
                crate::torch::cuda_memory_stats::reset_peak(dev).map_err(shim)?;
                drop(model.forward(input)?);
                crate::torch::work_target::synchronize_gpu(dev)
                    .map_err(|e| QuantError::Unsupported(e.to_string()))?;
                let (allocated, reserved) =
                    crate::torch::cuda_memory_stats::peak(dev).map_err(shim)?;
                serde_json::json!({
                    "device": "cuda",
                    "peak_allocated_bytes": allocated,
                    "peak_reserved_bytes": reserved,
                    "snapshot": "not recorded (the caching allocator's snapshot needs torch.cuda.memory._record_memory_history, which tch does not expose)",
                })
            }
            Device::Cpu(_) => {
                if !crate::torch::cpu_memory_counter::is_installed() {
                    return Err(QuantError::Unsupported(
                        "the CPU memory counter could not be installed".into(),
                    ));
                }
                let live_before = crate::torch::cpu_memory_counter::live_bytes();
                crate::torch::cpu_memory_counter::reset_peak();
                drop(model.forward(input)?);
                let peak = crate::torch::cpu_memory_counter::peak_bytes();
                serde_json::json!({
                    "device": "cpu",
                    "peak_allocated_bytes": peak,
                    "live_before_call_bytes": live_before,
                    "peak_during_call_bytes": peak.saturating_sub(live_before),
                })
            }
        };
        let dir = self.settings.output_dir.join("memory_profiler");
        std::fs::create_dir_all(&dir)
            .map_err(|e| QuantError::Python(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join(format!("{}_memory_profile.json", self.file_stem(p, case)));
        let text = serde_json::to_string_pretty(&stats).unwrap_or_default();
        std::fs::write(&path, &text)
            .map_err(|e| QuantError::Python(format!("cannot write {}: {e}", path.display())))?;
        Ok((path.display().to_string(), stats.to_string()))
    }
}

impl Suite for QuantSuite {
    type Case = QuantCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<QuantCase> {
        let pairs = recipe_pairs(
            &self.config.quantization_recipes,
            &self.config.sparsity_recipes,
        );
        let mut cases = Vec::new();
        for (param, p) in self.config.model_params.iter().enumerate() {
            for (quantization, sparsity) in &pairs {
                for shape in &p.shapes {
                    cases.push(QuantCase {
                        param,
                        quantization: quantization.clone(),
                        sparsity: sparsity.clone(),
                        shape: shape.clone(),
                    });
                }
            }
        }
        cases
    }

    fn skip(&self, case: &QuantCase, _done: &[(QuantCase, CaseStatus)]) -> Option<String> {
        // Every case passes here first: its notes start empty.
        *self.notes.borrow_mut() = CaseNotes::default();
        match self.devices.get(case.param) {
            Some(Err(why)) => Some(why.clone()),
            _ => None,
        }
    }

    fn measure_case(
        &self,
        case: &QuantCase,
        _device: &(),
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        self.measure_announced(case, time, &mut |_| {})
    }

    fn row(&self, case: &QuantCase, outcome: &CaseOutcome) -> Row {
        let p = &self.config.model_params[case.param];
        let row = rows::row(
            p,
            case,
            &self.settings.output_dir.display().to_string(),
            &self.settings.timing.describe(self.settings.threads),
            outcome,
            &self.notes.borrow(),
        );
        *self.rows.borrow_mut() = Some(row.clone());
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_named_device_is_opened_once_and_shared() {
        let specs = [
            DeviceSpec::Cuda(0),
            DeviceSpec::Cpu,
            DeviceSpec::Cuda(0),
            DeviceSpec::Cuda(1),
            DeviceSpec::Cpu,
        ];
        let mut opens = Vec::new();
        let devices = open_each_once(specs.into_iter(), |spec| {
            opens.push(spec);
            (spec, opens.len())
        });
        assert_eq!(
            opens,
            [DeviceSpec::Cuda(0), DeviceSpec::Cpu, DeviceSpec::Cuda(1)]
        );
        // Every entry gets the one opening of its device.
        assert_eq!(
            devices.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            [1, 2, 1, 3, 2]
        );
    }
}
