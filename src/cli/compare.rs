//! `replay compare`: the tool's main job. Capture (or take) a trace of the model, classify it,
//! replay every signature alone, time the real model, and report how close the prediction
//! from the parts is to the whole, tier by tier.

use std::ops::ControlFlow;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use crate::device::Device;
use crate::export::{self, OutputDir, OutputFile};
use crate::report::comparison::{aggregate, Context};
use crate::report::{html, table};
use crate::signature;
use crate::trace;

use super::full::FullArgs;
use super::isolated::IsolatedArgs;
use super::scripts::CaptureArgs;
use crate::model::full::{check_runs, ModelTimer};
use crate::model::torchscript::TorchScriptModel;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The model, its input, the device and the full-model timing (as `replay full`); every
    /// file of the run goes to --output-dir
    #[command(flatten)]
    pub run: FullArgs,

    /// Use this profiler trace instead of capturing one
    #[arg(long, value_name = "FILE", conflicts_with = "kernels")]
    pub trace: Option<PathBuf>,

    /// Use this signature file instead of capturing and classifying (the original tool's mode)
    #[arg(long, value_name = "FILE")]
    pub kernels: Option<PathBuf>,

    /// Time budget per signature, warm-up included, in seconds
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub max_time_per_kernel: f64,

    /// Interleaved rounds per signature in the isolated replay (see `replay isolated --help`)
    #[arg(long, default_value_t = super::isolated::DEFAULT_ROUNDS, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,

    /// Flush caches before every isolated sample
    #[arg(long)]
    pub cold: bool,

    /// Also write the trace's own timeline and the one with the replayed durations as a Chrome
    /// trace that ui.perfetto.dev and chrome://tracing open (as `replay predict --perfetto`)
    #[arg(long, value_name = "OUT.json", conflicts_with = "kernels")]
    pub perfetto: Option<PathBuf>,

    /// No progress bars
    #[arg(long, short)]
    pub quiet: bool,
}

fn step(quiet: bool, text: &str) {
    if !quiet {
        eprintln!("==> {text}");
    }
}

/// The full model's timed runs split over `rounds` chunks, as evenly as whole runs allow.
fn runs_per_round(runs: u32, rounds: u32) -> Vec<u32> {
    let rounds = rounds.max(1);
    (0..rounds)
        .map(|r| runs / rounds + u32::from(r < runs % rounds))
        .collect()
}

/// Untimed passes before each later chunk: the isolated round in between left other data in
/// the caches and the threads idle.
fn rewarm_passes(warmup: u32, rounds: u32) -> u32 {
    (warmup / rounds.max(1)).max(1)
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let device = Device::open(args.run.device)?;
    super::full::apply_threads(args.run.threads)?;
    let mut probe = args.run.energy.open()?;
    crate::model::torchscript::check_model_file(&args.run.model)?;
    check_runs(args.run.runs)?;
    let out = &args.run.output_dir;
    let files = OutputDir::new(out);
    // Before the capture: an output folder that cannot be made would lose the whole run.
    files.ensure()?;

    // 1-2. A trace and its signatures.
    let (trace_path, sig_path) = match (&args.trace, &args.kernels) {
        (_, Some(kernels)) => (None, kernels.clone()),
        (Some(trace), None) => (Some(trace.clone()), files.path(OutputFile::Signatures)),
        (None, None) => {
            let trace = files.path(OutputFile::Trace);
            step(
                args.quiet,
                &format!(
                    "capture: profiling one forward pass of {} on {}",
                    args.run.model.display(),
                    device.spec()
                ),
            );
            super::scripts::capture(&CaptureArgs {
                model: args.run.model.clone(),
                seq_len: args.run.seq_len,
                batch: args.run.batch,
                inputs: args.run.inputs.clone(),
                device: args.run.device,
                warmup: 3,
                out: trace.clone(),
                threads: args.run.threads.or(Some(tch::get_num_threads())),
                candidates: super::scripts::DEFAULT_CAPTURE_CANDIDATES,
            })?;
            (Some(trace), files.path(OutputFile::Signatures))
        }
    };
    let loaded_trace = match &trace_path {
        Some(path) => Some(trace::load(path).map_err(crate::Error::from)?),
        None => None,
    };
    let file = match (&loaded_trace, &trace_path) {
        (Some(t), Some(path)) => {
            step(args.quiet, &format!("classify: {}", path.display()));
            let file = signature::classify(t, path);
            export::write_atomic(&sig_path, &export::json::to_bytes(&file))?;
            file
        }
        _ => signature::read_file(&sig_path).map_err(crate::Error::from)?,
    };

    // 3. Every signature alone, in rounds.
    step(
        args.quiet,
        &format!(
            "isolated: {} signatures on {}",
            file.signatures.len(),
            device.describe()
        ),
    );
    let isolated_args = IsolatedArgs {
        kernels: sig_path.clone(),
        device: args.run.device,
        output_dir: out.clone(),
        cold: args.cold,
        max_time_per_kernel: args.max_time_per_kernel,
        noise: 0.005,
        min_samples: 10,
        rounds: args.rounds,
        threads: None,
        quiet: args.quiet,
        energy: args.run.energy.clone(),
    };
    // 4. The whole model, timed in as many chunks as the isolated replay has rounds, one
    // after each round: the kernels and the model meet the same machine, so a machine whose
    // speed drifts moves both sides of the comparison alike.
    let model = TorchScriptModel::load(&args.run.model, device.torch_device())?;
    let mut timer = ModelTimer::new(&model, args.run.batch, args.run.seq_len, &args.run.inputs)?;
    timer.warm_up(args.run.warmup)?;
    let chunks = runs_per_round(args.run.runs, args.rounds);
    let rewarm = rewarm_passes(args.run.warmup, args.rounds);
    let mut model_error: Option<crate::Error> = None;
    let results = super::isolated::run_with(
        &isolated_args,
        &file,
        &device,
        probe.as_deref_mut(),
        |round| {
            step(
                args.quiet,
                &format!(
                    "full: {} of {} runs after round {} of {}",
                    chunks[round as usize],
                    args.run.runs,
                    round + 1,
                    args.rounds
                ),
            );
            let timed = timer
                .warm_up(if round == 0 { 0 } else { rewarm })
                .and_then(|()| timer.time_runs(chunks[round as usize]));
            match timed {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    model_error = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
    )?;
    if let Some(e) = model_error {
        return Err(e).context(format!("timing {}", args.run.model.display()));
    }
    let timing = timer.timing(
        &args.run.model.display().to_string(),
        &device.describe(),
        args.run.seq_len,
        args.run.batch,
    )?;
    let full = super::full::finish(&args.run, &model, timing, probe.as_deref_mut())?;

    // 5. The comparison.
    let timeline = loaded_trace
        .as_ref()
        .map(|t| {
            crate::predict::with_replayed_durations(t, &results)
                .map_err(|e| crate::Error::from(replay_core::Error::from(e)))
        })
        .transpose()?;
    let report = aggregate(
        &file,
        &results,
        &full,
        Context {
            model: args.run.model.display().to_string(),
            seq_len: args.run.seq_len,
            trace: trace_path.as_ref().map(|p| p.display().to_string()),
            signatures: sig_path.display().to_string(),
            timeline_predicted_us: timeline.as_ref().map(|t| t.predicted_us),
            timeline_interruptions: timeline.as_ref().map(|t| t.interruptions),
            self_check: timeline.as_ref().map(|t| t.self_check.clone()),
        },
    );
    let mut report = report;
    // Energy along the timeline needs the device's power between kernels; without it (or a
    // timeline) the report keeps the kernel sum alone.
    let gap_power = match (probe.as_deref_mut(), &timeline, &full.energy) {
        (Some(probe), Some(_), Some(_)) => {
            step(args.quiet, "energy: the device's power between kernels");
            match crate::energy::measure_gap_power(probe, &args.run.energy.config()) {
                Ok(gap) => Some(gap),
                Err(e) => {
                    eprintln!("warning: no energy along the timeline: measuring the gap power failed: {e}");
                    None
                }
            }
        }
        _ => None,
    };
    report.energy = crate::report::comparison::energy_comparison(
        &results,
        &full,
        timeline.as_ref().map(|t| t.predicted_us),
        gap_power,
    );
    files.write(
        OutputFile::ComparisonReport,
        &export::json::to_bytes(&report),
    )?;
    if let Some(path) = &args.perfetto {
        match &timeline {
            Some(t) => {
                let catalog = crate::predict::SignatureCatalog::from_file(&file);
                export::perfetto::write(path, &[&t.own_timeline, &t.replayed_timeline], &catalog)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            None => eprintln!(
                "warning: --perfetto: no timeline without a trace (--kernels alone); {} not written",
                path.display()
            ),
        }
    }
    let spans = timeline.map(|t| t.spans).unwrap_or_default();
    files
        .write(
            OutputFile::ReportHtml,
            html::render(&report, &spans).as_bytes(),
        )
        .context("writing report.html")?;
    print!("{}", table::render(&report));
    println!(
        "results: {}",
        [
            OutputFile::ComparisonReport,
            OutputFile::ReportHtml,
            OutputFile::IsolatedJson,
            OutputFile::FullModelTiming
        ]
        .map(|f| files.path(f).display().to_string())
        .join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_split_evenly_over_rounds() {
        assert_eq!(runs_per_round(100, 5), vec![20; 5]);
        assert_eq!(runs_per_round(7, 3), vec![3, 2, 2]);
        assert_eq!(runs_per_round(2, 5), vec![1, 1, 0, 0, 0]);
        assert_eq!(runs_per_round(10, 1), vec![10]);
        for (runs, rounds) in [(100, 7), (3, 2), (1, 4)] {
            assert_eq!(runs_per_round(runs, rounds).iter().sum::<u32>(), runs);
        }
    }

    #[test]
    fn later_chunks_rewarm_with_a_share_of_the_warmup() {
        assert_eq!(rewarm_passes(10, 5), 2);
        assert_eq!(rewarm_passes(3, 5), 1);
        assert_eq!(rewarm_passes(0, 1), 1);
    }
}
