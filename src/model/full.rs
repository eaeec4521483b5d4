//! `replay full`: the real model's latency, R timed forward passes after W warm-ups.

use super::forward_passes::{model_error, ForwardPasses};
use super::input_spec::InputSpec;
use super::whole_model::WholeModel;
use crate::error::{Error, Result};
use crate::measure::{measure_detailed, MeasureConfig, Measurement, MonotonicClock, TimedTarget};

pub use crate::results::full_model::FullModelTiming;

/// Times forward passes of a model on a fixed input, in as many sittings as the caller wants:
/// `replay full` times all runs at once; `replay compare` times them in chunks between the
/// rounds of the isolated replay, so the model and its kernels meet the same machine. The
/// passes are a [`ForwardPasses`] target of the measurement core, and each sitting is a
/// fixed-runs measurement ([`MeasureConfig::fixed_runs`]) whose samples pool with the earlier
/// ones: `--runs N` is exactly N timed passes, `--warmup W` exactly W untimed ones.
pub struct ModelTimer<'m> {
    passes: ForwardPasses<'m>,
    specs: Vec<InputSpec>,
    warmup: u32,
    measured: Option<Measurement>,
    format: Option<&'static str>,
}

impl<'m> ModelTimer<'m> {
    /// A timer for `model` on fixed random inputs of `specs` (`--input`), or of the model's
    /// own default input (`batch` × `seq_len` tokens for TorchScript) when there are none.
    pub fn new(
        model: &'m dyn WholeModel,
        batch: i64,
        seq_len: i64,
        specs: &[InputSpec],
    ) -> Result<Self> {
        let specs = model.resolve_inputs(specs, batch, seq_len)?;
        let input = model.make_inputs(&specs, 0)?;
        model.check_runs_on(&specs, &input)?;
        Ok(ModelTimer {
            passes: ForwardPasses::new(model, input)?,
            specs,
            warmup: 0,
            measured: None,
            format: model.format(),
        })
    }

    /// Untimed forward passes: one timed batch of the target, whose timing is thrown away as
    /// the core's own warm-up does (it waits for the device, so no pass is left running).
    pub fn warm_up(&mut self, passes: u32) -> Result<()> {
        if passes > 0 {
            let mut timed = TimedTarget::new(&mut self.passes).map_err(model_error)?;
            timed.batch(u64::from(passes)).map_err(model_error)?;
        }
        self.warmup += passes;
        Ok(())
    }

    /// `runs` timed forward passes, added to the samples so far.
    pub fn time_runs(&mut self, runs: u32) -> Result<()> {
        if runs == 0 {
            return Ok(());
        }
        let sitting = measure_detailed(
            &mut self.passes,
            &MeasureConfig::fixed_runs(0, runs as usize),
            &MonotonicClock::new(),
        )
        .map_err(model_error)?;
        match &mut self.measured {
            Some(measured) => measured.add_round(sitting).map_err(model_error)?,
            None => self.measured = Some(sitting),
        }
        Ok(())
    }

    /// The timing file from every sample so far.
    pub fn timing(
        &self,
        model_name: &str,
        device_description: &str,
        seq_len: i64,
        batch: i64,
    ) -> Result<FullModelTiming> {
        let samples = self.measured.as_ref().map_or(&[][..], |m| &m.device_us[..]);
        check_runs(samples.len() as u32)?;
        let stats = crate::measure::Stats::from_samples(samples)
            .ok_or_else(|| Error::Model("no samples".into()))?;
        // A compiled package runs on the token ids it was compiled for: record their shape.
        let (batch, seq_len) = match (self.format, self.specs.as_slice()) {
            (Some(_), [only]) if only.dtype == "int64" && only.sizes.len() == 2 => {
                (only.sizes[0], only.sizes[1])
            }
            _ => (batch, seq_len),
        };
        Ok(FullModelTiming {
            model: model_name.to_string(),
            device: device_description.to_string(),
            seq_len,
            batch,
            inputs: self.specs.iter().map(InputSpec::to_string).collect(),
            warmup: self.warmup,
            runs: samples.len() as u32,
            threads: tch::get_num_threads(),
            timer: self.passes.timer(),
            mean_us: stats.mean,
            median_us: stats.median,
            min_us: stats.min,
            max_us: stats.max,
            std_us: stats.std,
            p10_us: stats.p10,
            p90_us: stats.p90,
            rse_median: stats.rse_median,
            samples_us: samples.to_vec(),
            energy: None,
            model_format: self.format.map(str::to_string),
            compile_mode: None,
            timed_in: None,
            runs_after_isolated: None,
        })
    }
}

/// A spread needs at least two runs: checked before any work, and again on the samples.
pub fn check_runs(runs: u32) -> Result<()> {
    if runs < 2 {
        return Err(Error::from(replay_core::Error::BadInput {
            path: "--runs".into(),
            message: "at least 2 runs are needed to report a spread".into(),
        }));
    }
    Ok(())
}

/// Times `runs` forward passes after `warmup` untimed ones.
// The input (batch, seq_len, specs) is three arguments because the timing file records all three.
#[allow(clippy::too_many_arguments)]
pub fn time_model(
    model: &dyn WholeModel,
    model_name: &str,
    device_description: &str,
    seq_len: i64,
    batch: i64,
    inputs: &[InputSpec],
    warmup: u32,
    runs: u32,
) -> Result<FullModelTiming> {
    check_runs(runs)?;
    let mut timer = ModelTimer::new(model, batch, seq_len, inputs)?;
    timer.warm_up(warmup)?;
    timer.time_runs(runs)?;
    timer.timing(model_name, device_description, seq_len, batch)
}

/// Energy of one forward pass, measured in windows that cover the probe's update period.
///
/// Each run of the window is `calls` passes lasting together at least 10 ms (from the timed
/// median), so the probe's read latency is small against the work it brackets.
pub fn model_energy(
    model: &dyn WholeModel,
    timing: &FullModelTiming,
    probe: &mut dyn crate::energy::EnergyProbe,
    config: &crate::energy::EnergyConfig,
) -> Result<crate::energy::EnergySummary> {
    // The inputs the timing recorded (written by `InputSpec`'s Display, so they parse back).
    let specs: Vec<InputSpec> = timing
        .inputs
        .iter()
        .filter_map(|text| text.parse().ok())
        .collect();
    let input = model.make_inputs(
        &model.resolve_inputs(&specs, timing.batch, timing.seq_len)?,
        0,
    )?;
    let calls = (10_000.0 / timing.median_us.max(1.0)).ceil().max(1.0) as u64;
    // The target's batches timed as the core times them: on a GPU they end when the device
    // has finished the passes (the end event is waited for), so a window never closes on
    // work still queued.
    let mut passes = ForwardPasses::new(model, input)?;
    let mut timed = TimedTarget::new(&mut passes).map_err(model_error)?;
    crate::energy::measure_energy(probe, calls, config, || {
        timed.batch(calls).map(drop).map_err(model_error)
    })
    .map_err(Error::from)
}
