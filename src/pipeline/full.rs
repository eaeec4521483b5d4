//! Full: the whole model, timed (and with a probe, its energy): a TorchScript model, or an
//! AOTInductor package run by libtorch's loader (`replay export --format pt2 --aoti`).

use std::fmt::Write as _;

use crate::device::Device;
use crate::export::{self, OutputDir, OutputFile};
use crate::model::full::{time_model, FullModelTiming};
use crate::model::whole_model::WholeModel;

use super::observer::Observer;
use super::options::FullOptions;

/// `replay full`: times the model and reports the timing and where it went.
pub fn run(options: &FullOptions, observer: &mut dyn Observer) -> crate::Result<FullModelTiming> {
    let device = Device::open(options.device)?;
    // Before any run is timed: an output folder that cannot be made would lose them all.
    export::ensure_output_dir(&options.output_dir)?;
    let mut probe = options.energy.open()?;
    let t = time(options, &device, probe.as_deref_mut())?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: median {:.1} us (mean {:.1}, p10 {:.1}, p90 {:.1}, std {:.1}) over {} runs after {} warm-ups on {}, {} threads",
        t.model, t.median_us, t.mean_us, t.p10_us, t.p90_us, t.std_us, t.runs, t.warmup, t.device, t.threads
    );
    if t.model_format.as_deref() == Some(crate::model::aoti_package::FORMAT) {
        let _ = writeln!(
            out,
            "timed: an AOTInductor package, run by libtorch's AOTIModelPackageLoader on input {}{}",
            t.inputs.join(" "),
            if matches!(device, Device::Cuda(_)) {
                " (the CUDA path of AOTInductor packages is untested until a GPU run)"
            } else {
                ""
            }
        );
    }
    if let Some(warning) = replay_core::report::disturbed::speed_change(&t.samples_us) {
        let _ = writeln!(out, "warning: {warning}");
    }
    let _ = writeln!(
        out,
        "results: {}",
        OutputDir::new(&options.output_dir)
            .path(OutputFile::FullModelTiming)
            .display()
    );
    observer.result(&out);
    Ok(t)
}

/// Loads and times the model, writing `full_model_timing.json`.
pub fn time(
    options: &FullOptions,
    device: &Device,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
) -> crate::Result<FullModelTiming> {
    super::threads::apply(options.threads)?;
    super::cpu_fuser::apply(options.fuse_on_cpu, options.device)?;
    let model = crate::model::model_file::load(&options.model, device)?;
    let name = options.model.display().to_string();
    let timing = time_model(
        model.as_ref(),
        &name,
        &device.describe(),
        options.seq_len,
        options.batch,
        &options.inputs,
        options.warmup,
        options.runs,
    )?;
    finish(options, model.as_ref(), timing, probe)
}

/// Adds the energy of a forward pass (with a probe) and writes `full_model_timing.json`; also
/// used by compare, which times the runs itself.
pub fn finish(
    options: &FullOptions,
    model: &dyn WholeModel,
    mut timing: FullModelTiming,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
) -> crate::Result<FullModelTiming> {
    if let Some(probe) = probe {
        let config = options.energy.config();
        timing.energy = Some(crate::model::full::model_energy(
            model, &timing, probe, &config,
        )?);
    }
    OutputDir::new(&options.output_dir).write(
        OutputFile::FullModelTiming,
        &export::json::to_bytes(&timing),
    )?;
    Ok(timing)
}
