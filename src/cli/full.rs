//! `replay full`: time the whole TorchScript model.

use std::path::PathBuf;

use clap::Args;

use crate::device::{Device, DeviceSpec};
use crate::export::{self, OutputDir, OutputFile};
use crate::model::full::{time_model, FullModelTiming};
use crate::model::input_spec::InputSpec;
use crate::model::torchscript::TorchScriptModel;

#[derive(Debug, Args, Clone)]
pub struct FullArgs {
    /// TorchScript model (write one with `replay export`)
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,

    /// Tokens in the input sequence
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(i64).range(1..))]
    pub seq_len: i64,

    /// Sequences per forward pass
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..))]
    pub batch: i64,

    /// One input tensor of the model instead of token ids of --batch x --seq-len, repeated
    /// for each input in order: DTYPE[d0,d1,...] with an optional :LO..HI for integers, e.g.
    /// float32[1,3,224,224] or int64[1,128]:0..50257 (integers without a range: [0, vocab))
    #[arg(long = "input", value_name = "SPEC", value_parser = crate::model::input_spec::parse_input_spec)]
    pub inputs: Vec<InputSpec>,

    /// Untimed forward passes first (TorchScript optimises itself during the first few)
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,

    /// Timed forward passes
    #[arg(long, default_value_t = 100)]
    pub runs: u32,

    /// Device: cpu, cuda or cuda:N
    #[arg(long, default_value = "cpu", value_parser = super::parse_device)]
    pub device: DeviceSpec,

    /// Where full_model_timing.json goes (for compare: every file of the run)
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// libtorch intra-op threads (default: libtorch's own choice); use the same value for
    /// capture, isolated and full so their times are comparable
    #[arg(long)]
    pub threads: Option<i32>,

    #[command(flatten)]
    pub energy: super::energy_args::EnergyArgs,
}

pub fn apply_threads(threads: Option<i32>) -> anyhow::Result<()> {
    if let Some(n) = threads {
        if n < 1 {
            anyhow::bail!(crate::Error::from(replay_core::Error::BadInput {
                path: "--threads".into(),
                message: "must be at least 1".into()
            }));
        }
        tch::set_num_threads(n);
    }
    Ok(())
}

/// Loads and times the model, writing `full_model_timing.json`.
pub fn run_with(
    args: &FullArgs,
    device: &Device,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
) -> anyhow::Result<FullModelTiming> {
    apply_threads(args.threads)?;
    let model = TorchScriptModel::load(&args.model, device.torch_device())?;
    let name = args.model.display().to_string();
    let timing = time_model(
        &model,
        &name,
        &device.describe(),
        args.seq_len,
        args.batch,
        &args.inputs,
        args.warmup,
        args.runs,
    )?;
    finish(args, &model, timing, probe)
}

/// Adds the energy of a forward pass (with a probe) and writes `full_model_timing.json`; also
/// used by `replay compare`, which times the runs itself.
pub fn finish(
    args: &FullArgs,
    model: &TorchScriptModel,
    mut timing: FullModelTiming,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
) -> anyhow::Result<FullModelTiming> {
    if let Some(probe) = probe {
        let config = args.energy.config();
        timing.energy = Some(crate::model::full::model_energy(
            model, &timing, probe, &config,
        )?);
    }
    OutputDir::new(&args.output_dir).write(
        OutputFile::FullModelTiming,
        &export::json::to_bytes(&timing),
    )?;
    Ok(timing)
}

pub fn run(args: FullArgs) -> anyhow::Result<()> {
    let device = Device::open(args.device)?;
    // Before any run is timed: an output folder that cannot be made would lose them all.
    export::ensure_output_dir(&args.output_dir)?;
    let mut probe = args.energy.open()?;
    let t = run_with(&args, &device, probe.as_deref_mut())?;
    println!(
        "{}: median {:.1} us (mean {:.1}, p10 {:.1}, p90 {:.1}, std {:.1}) over {} runs after {} warm-ups on {}, {} threads",
        t.model, t.median_us, t.mean_us, t.p10_us, t.p90_us, t.std_us, t.runs, t.warmup, t.device, t.threads
    );
    println!(
        "results: {}",
        OutputDir::new(&args.output_dir)
            .path(OutputFile::FullModelTiming)
            .display()
    );
    Ok(())
}
