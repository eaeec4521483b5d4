//! Compare, the tool's main job: capture (or take) a trace of the model, classify it, replay
//! every signature alone, time the real model, and report how close the prediction from the
//! parts is to the whole, tier by tier.

use std::ops::ControlFlow;

use crate::error::Context as _;

use crate::device::Device;
use crate::export::{self, OutputDir, OutputFile};
use crate::model::full::{check_runs, FullModelTiming, ModelTimer};
use crate::model::torchscript::TorchScriptModel;
use crate::report::aggregate::{aggregate, Context};
use crate::report::comparison::ComparisonReport;
use crate::report::{html, table};
use crate::results::compiled_model;
use crate::results::isolated::IsolatedResults;
use crate::signature;
use crate::trace;

use super::observer::{Observer, Stage};
use super::options::{CompareOptions, ExecutionTraceChoice};

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

/// Runs the whole pipeline, writes every file of the run to `options.run.output_dir`, hands
/// the table and the files' list to `observer` as the result, and returns the report.
pub fn run(
    options: &CompareOptions,
    observer: &mut dyn Observer,
) -> crate::Result<ComparisonReport> {
    let run = &options.run;
    // Refused before anything runs: the ET would belong to no trace of this run.
    if let (Some(ExecutionTraceChoice::File(et)), None) = (&options.execution_trace, &options.trace)
    {
        return Err(crate::Error::from(replay_core::Error::BadInput {
            path: et.clone(),
            message: "--execution-trace FILE is the Execution Trace of the trace given with \
                      --trace; without --trace, compare captures its own trace and records its \
                      Execution Trace with it (--execution-trace alone)"
                .into(),
        }));
    }
    let device = Device::open(run.device)?.with_blocking_kernel(options.blocking_kernel);
    super::threads::apply(run.threads)?;
    super::cpu_fuser::apply(run.fuse_on_cpu, run.device)?;
    let mut probe = run.energy.open()?;
    if options.compile.is_none() {
        crate::model::torchscript::check_model_file(&run.model)?;
    }
    check_runs(run.runs)?;
    let files = OutputDir::new(&run.output_dir);
    // Before the capture: an output folder that cannot be made would lose the whole run.
    files.ensure()?;
    // The host's costs, from a profile or measured here first (a few seconds, before anything
    // else has run in the process).
    let host_settings = host_settings(options, &device, &files, observer)?;

    // 1-2. A trace and its signatures.
    let (trace_path, sig_path) = match (&options.trace, &options.kernels) {
        (_, Some(kernels)) => (None, kernels.clone()),
        (Some(trace), None) => (Some(trace.clone()), files.path(OutputFile::Signatures)),
        (None, None) => {
            let trace = files.path(OutputFile::Trace);
            observer.stage_started(
                Stage::Capture,
                &format!(
                    "profiling one forward pass of {}{} on {}",
                    options.model_name(),
                    options
                        .compile
                        .map(|mode| format!(" compiled with torch.compile (mode {mode})"))
                        .unwrap_or_default(),
                    device.spec()
                ),
            );
            super::capture::run(&options.capture(trace.clone()), observer)?;
            observer.stage_finished(Stage::Capture);
            (Some(trace), files.path(OutputFile::Signatures))
        }
    };
    let mut loaded_trace = match &trace_path {
        Some(path) => Some(trace::load(path).map_err(crate::Error::from)?),
        None => None,
    };
    // The Execution Trace of the trace, where one was asked for: classify takes its exact
    // overloads and value ranges, the sequence stage its data flow.
    let execution_trace = trace_path
        .as_deref()
        .and_then(|t| options.execution_trace_of(t));
    let (file, linked) = match (&mut loaded_trace, &trace_path) {
        (Some(t), Some(path)) => super::classify::classify_into(
            t,
            path,
            options.inductor_cache.as_deref(),
            execution_trace.as_deref(),
            &sig_path,
            observer,
        )?,
        _ => (
            signature::read_file(&sig_path).map_err(crate::Error::from)?,
            None,
        ),
    };

    // 3. Every signature alone, in rounds.
    observer.stage_started(
        Stage::Isolated,
        &format!(
            "{} signatures on {}",
            file.signatures.len(),
            device.describe()
        ),
    );
    let isolated_options = options.isolated(sig_path.clone());
    let (results, full) = match options.compile {
        None => replay_and_time_the_model(
            options,
            &file,
            &device,
            &mut probe,
            observer,
            &isolated_options,
        )?,
        Some(_) => {
            let results = super::isolated::replay(
                &isolated_options,
                &file,
                &device,
                probe.as_deref_mut(),
                observer,
                |_, _| ControlFlow::Continue(()),
                None,
            )?;
            let trace = trace_path.as_deref().ok_or_else(|| {
                crate::Error::Failed("a compiled compare captures its own trace".into())
            })?;
            if options.runs_after_isolated() > 0 {
                observer.stage_started(
                    Stage::Full,
                    &format!(
                        "{} of {} runs of the compiled model after the isolated replay, in a \
                         second Python process (Inductor's cache kept by the capture)",
                        options.runs_after_isolated(),
                        run.runs
                    ),
                );
                super::capture::run(&options.time_again(trace.to_path_buf()), observer)?;
                observer.stage_finished(Stage::Full);
            }
            let timing = compiled_model_timing(options, &device, trace)?;
            if probe.is_some() {
                observer.warning(
                    "--energy: the compiled model's energy is not measured (it is timed in \
                     the capture's Python process); the report has the kernels' alone",
                );
            }
            files.write(
                OutputFile::FullModelTiming,
                &export::json::to_bytes(&timing),
            )?;
            (results, timing)
        }
    };

    // 5. The comparison.
    let timeline = loaded_trace
        .as_ref()
        .map(|t| {
            crate::predict::with_replayed_durations(t, &results)
                .map_err(|e| crate::Error::from(replay_core::Error::from(e)))
        })
        .transpose()?;
    // The same timeline with the host's durations from the host model: on a host-bound
    // GPU step, the prediction.
    let host_timeline = loaded_trace
        .as_ref()
        .map(|t| {
            crate::predict::with_host_times(t, &results, &host_settings)
                .map_err(|e| crate::Error::from(replay_core::Error::from(e)))
        })
        .transpose()?;
    // 6. The third prediction: the step re-run in order, its in-context times through the
    //    same timeline model. Its failure leaves the other two.
    let sequence = match (&loaded_trace, &trace_path, options.sequence) {
        (Some(t), Some(path), true) => {
            // With an Execution Trace, the re-run step has the model's data flow.
            let rerun = super::sequence::rerun(
                t,
                &file,
                &device,
                &options.sequence_of(path.clone()),
                linked.as_ref().map(|l| (&l.et, &l.links)),
                &mut super::observer::ResultsAsInfo(&mut *observer),
            )
            .and_then(|s| {
                let timeline = crate::predict::with_replayed_durations(t, &s.signatures)
                    .map_err(|e| crate::Error::from(replay_core::Error::from(e)))?;
                Ok((s, timeline.predicted_us))
            });
            match rerun {
                Ok(done) => Some(done),
                Err(e) => {
                    observer.warning(&format!("no sequence prediction: {}", e.with_causes()));
                    None
                }
            }
        }
        _ => None,
    };
    let in_context_us = sequence
        .as_ref()
        .map(|(s, _)| {
            s.signatures
                .results
                .iter()
                .filter_map(|r| Some((r.id.clone(), r.predicted_us?)))
                .collect()
        })
        .unwrap_or_default();
    let mut report = aggregate(
        &file,
        &results,
        &full,
        Context {
            model: options.model_name(),
            seq_len: run.seq_len,
            trace: trace_path.as_ref().map(|p| p.display().to_string()),
            signatures: sig_path.display().to_string(),
            timeline_predicted_us: timeline.as_ref().map(|t| t.predicted_us),
            timeline_interruptions: timeline.as_ref().map(|t| t.interruptions),
            self_check: timeline.as_ref().map(|t| t.self_check.clone()),
            sequence_predicted_us: sequence.as_ref().map(|(_, us)| *us),
            in_context_us,
            host_model_predicted_us: host_timeline.as_ref().map(|t| t.predicted_us),
            sequence_real_time_us: sequence
                .as_ref()
                .and_then(|(s, _)| s.real_time.as_ref())
                .map(|r| r.step_ops_us),
            host_device: host_timeline.as_ref().map(host_device),
            on_gpu: matches!(device.spec(), crate::device::DeviceSpec::Cuda(_)),
        },
    );
    // Energy along the timeline needs the device's power between kernels; without it (or a
    // timeline) the report keeps the kernel sum alone.
    let gap_power = match (probe.as_deref_mut(), &timeline, &full.energy) {
        (Some(probe), Some(_), Some(_)) => {
            observer.stage_started(Stage::Energy, "the device's power between kernels");
            let gap = crate::energy::measure_gap_power(probe, &run.energy.config());
            observer.stage_finished(Stage::Energy);
            match gap {
                Ok(gap) => Some(gap),
                Err(e) => {
                    observer.warning(&format!(
                        "no energy along the timeline: measuring the gap power failed: {e}"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    report.energy = crate::report::energy_report::energy_comparison(
        &results,
        &full,
        timeline.as_ref().map(|t| t.predicted_us),
        gap_power,
    );
    files.write(
        OutputFile::ComparisonReport,
        &export::json::to_bytes(&report),
    )?;
    if let Some(path) = &options.perfetto {
        match &timeline {
            Some(t) => {
                let catalog = crate::predict::SignatureCatalog::from_file(&file);
                export::perfetto::write(path, &[&t.own_timeline, &t.replayed_timeline], &catalog)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            None => observer.warning(&format!(
                "--perfetto: no timeline without a trace (--kernels alone); {} not written",
                path.display()
            )),
        }
    }
    let spans = timeline.map(|t| t.spans).unwrap_or_default();
    files
        .write(
            OutputFile::ReportHtml,
            html::render(&report, &spans).as_bytes(),
        )
        .context("writing report.html")?;
    observer.result(&table::render(&report));
    observer.result(&format!(
        "results: {}\n",
        [
            OutputFile::ComparisonReport,
            OutputFile::ReportHtml,
            OutputFile::IsolatedJson,
            OutputFile::FullModelTiming
        ]
        .map(|f| files.path(f).display().to_string())
        .join(", ")
    ));
    Ok(report)
}

/// The host side of the host-model prediction: `--host-times`, and the host section of
/// `--host-profile` (refused without one) or of `--profile` when that has one.
fn host_settings(
    options: &CompareOptions,
    device: &Device,
    files: &OutputDir,
    observer: &mut dyn Observer,
) -> crate::Result<crate::predict::HostSettings> {
    let mut settings = crate::predict::HostSettings::from_flags(
        options.host_times,
        options.host_profile.as_deref(),
        options.profile.as_deref(),
    )
    .map_err(crate::Error::from)?;
    if settings.host.is_none() && options.host_times != Some(crate::predict::HostTimes::Trace) {
        observer.stage_started(
            Stage::Host,
            &format!(
                "the host's costs on {} without the profiler (no --host-profile)",
                device.describe()
            ),
        );
        let measured = super::host::measure_host(device, observer);
        observer.stage_finished(Stage::Host);
        match measured {
            Ok(section) => {
                let path = files.path(OutputFile::HostProfile);
                std::fs::write(&path, export::json::to_bytes(&section))
                    .with_context(|| format!("writing {}", path.display()))?;
                settings.host = Some((section, format!("{} (measured here)", path.display())));
            }
            Err(e) => observer.warning(&format!(
                "the host's costs could not be measured ({e}): the host-model prediction takes \
                 the trace's host time less the profiler's cost instead"
            )),
        }
    }
    Ok(settings)
}

/// The host-model timeline's step split, as the report writes it.
fn host_device(
    timeline: &crate::predict::ReplayedTimeline,
) -> crate::report::comparison::HostDevice {
    let host = timeline.host.as_ref();
    crate::report::comparison::HostDevice {
        host_us: timeline.host_us,
        device_us: timeline.device_us,
        bound: timeline.bound().to_owned(),
        host_times: host.map_or("corrected", |h| h.host_times.name()).to_owned(),
        host_model: host.map(|h| h.host_model.clone()).unwrap_or_default(),
        notes: host.map(|h| h.notes.clone()).unwrap_or_default(),
    }
}

/// The isolated replay with the whole TorchScript model timed in as many chunks as it has
/// rounds, one after each round: the kernels and the model meet the same machine, so a
/// machine whose speed drifts moves both sides of the comparison alike.
fn replay_and_time_the_model(
    options: &CompareOptions,
    file: &signature::schema::SignatureFile,
    device: &Device,
    probe: &mut Option<Box<dyn crate::energy::EnergyProbe>>,
    observer: &mut dyn Observer,
    isolated_options: &super::options::IsolatedOptions,
) -> crate::Result<(IsolatedResults, FullModelTiming)> {
    let run = &options.run;
    let model = TorchScriptModel::load(&run.model, device)?;
    let mut timer = ModelTimer::new(&model, run.batch, run.seq_len, &run.inputs)?;
    timer.warm_up(run.warmup)?;
    let chunks = runs_per_round(run.runs, options.rounds);
    let rewarm = rewarm_passes(run.warmup, options.rounds);
    let mut model_error: Option<crate::Error> = None;
    let results = super::isolated::replay(
        isolated_options,
        file,
        device,
        probe.as_deref_mut(),
        observer,
        |round, observer| {
            observer.stage_started(
                Stage::Full,
                &format!(
                    "{} of {} runs after round {} of {}",
                    chunks[round as usize],
                    run.runs,
                    round + 1,
                    options.rounds
                ),
            );
            let timed = timer
                .warm_up(if round == 0 { 0 } else { rewarm })
                .and_then(|()| timer.time_runs(chunks[round as usize]));
            observer.stage_finished(Stage::Full);
            match timed {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    model_error = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
        None,
    )?;
    if let Some(e) = model_error {
        return Err(e).context(format!("timing {}", run.model.display()));
    }
    let timing = timer.timing(
        &run.model.display().to_string(),
        &device.describe(),
        run.seq_len,
        run.batch,
    )?;
    let full = super::full::finish(run, &model, timing, probe.as_deref_mut())?;
    Ok((results, full))
}

/// The compiled model's timing that the capture made in its Python process, and the second
/// half of the runs timed after the isolated replay (`compiled_model_timing.json` and
/// `compiled_model_timing_after.json` beside the trace), named as the report names the model.
fn compiled_model_timing(
    options: &CompareOptions,
    device: &Device,
    trace: &std::path::Path,
) -> crate::Result<FullModelTiming> {
    let folder = trace.parent().unwrap_or(std::path::Path::new("."));
    let before = folder.join(compiled_model::FILE);
    let mut timing = if options.runs_after_isolated() > 0 {
        compiled_model::read_halves(&before, &folder.join(compiled_model::AFTER_FILE))
    } else {
        compiled_model::read(&before)
    }
    .map_err(crate::Error::from)?;
    timing.model = options.model_name();
    timing.device = device.describe();
    Ok(timing)
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
