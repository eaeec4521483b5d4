//! Sequence: re-run a trace's step as a program, every launching op in the recorded order with
//! inputs of its own, timed whole and per op in its place (`replay sequence`).

use std::fmt::Write as _;
use std::path::Path;

use crate::error::Context as _;

use crate::device::Device;
use crate::export::{self, OutputDir, OutputFile};
use crate::measure::{measure_detailed, MonotonicClock, Timing};
use crate::replay::flow_wiring::Wiring;
use crate::replay::registry::{replay_units, SetupError};
use crate::replay::sequence::{program, ProgramEntry, SequenceTarget, Step};
use crate::replay::sequence_build::SequenceBuilder;
use crate::replay::sequence_route::Placing;
use crate::signature::schema::{SignatureFile, Tier};
use replay_core::execution_trace::attach::{attach, link_file};
use replay_core::execution_trace::link::EtLinks;
use replay_core::execution_trace::ExecutionTrace;
use replay_core::memory_size::size_text;
use replay_core::results::isolated::{RunConfig, Status};
use replay_core::results::sequence::{
    comparable, EntryResult, SequenceResults, Spread, SEQUENCE_SCHEMA_VERSION,
};

use super::observer::{Observer, Stage, Tick};
use super::options::SequenceOptions;
use super::sequence_real_time::PerOpRuns;

fn bad(what: &Path, message: String) -> crate::Error {
    crate::Error::from(replay_core::Error::BadInput {
        path: what.to_path_buf(),
        message,
    })
}

/// Runs `replay sequence` with `options`, writing `sequence.json` and `sequence.csv`.
pub fn run(
    options: &SequenceOptions,
    observer: &mut dyn Observer,
) -> crate::Result<SequenceResults> {
    if !(options.max_time_s.is_finite() && options.max_time_s > 0.0) {
        return Err(bad(
            Path::new("--max-time"),
            "must be a positive number of seconds".into(),
        ));
    }
    OutputDir::new(&options.output_dir)
        .ensure()
        .map_err(crate::Error::from)?;
    let mut trace = replay_core::trace::load(&options.trace).map_err(crate::Error::from)?;
    // The Execution Trace: read and linked before anything runs (a bad one, or one of
    // another run, exits 2 naming the file); the inputs the trace did not record come from it
    // before classifying, and its exact overloads go into the signatures.
    let linked = match &options.execution_trace {
        Some(path) => {
            let linked = link_file(&mut trace, &options.trace, path)
                .map_err(|e| crate::Error::from(replay_core::Error::from(e)))?;
            // How it linked: by record-function id, or by op order and shapes.
            observer.info(&format!(
                "execution trace {}: {}\n",
                path.display(),
                linked.links.describe()
            ));
            if let Some(line) = linked.filled.describe() {
                observer.info(&format!("{line}\n"));
            }
            Some(linked)
        }
        None => None,
    };
    let mut file = match &options.kernels {
        Some(path) => crate::signature::read_file(path).map_err(crate::Error::from)?,
        None => replay_core::signature::classify(&trace, &options.trace),
    };
    if let Some(linked) = &linked {
        attach(&mut file, &trace, linked);
    }
    super::threads::apply(options.threads)?;
    let device = Device::open(options.device)?.with_blocking_kernel(options.blocking_kernel);
    let linked = linked.as_ref().map(|l| (&l.et, &l.links));
    rerun(&trace, &file, &device, options, linked, observer)
}

/// Re-runs the last step of `trace` (classified as `file`) on `device` and writes
/// `sequence.json` and `sequence.csv` to `options.output_dir`; also `replay compare`'s third
/// prediction. With `execution_trace` (read and linked to `trace`), outputs flow into the ops
/// that consume them, as in the model.
pub fn rerun(
    trace: &replay_core::trace::Trace,
    file: &SignatureFile,
    device: &Device,
    options: &SequenceOptions,
    execution_trace: Option<(&ExecutionTrace, &EtLinks)>,
    observer: &mut dyn Observer,
) -> crate::Result<SequenceResults> {
    let files = OutputDir::new(&options.output_dir);
    // With an Execution Trace, the step it recorded (its data flow is that step's); else the
    // trace's last.
    let skeleton = match execution_trace.and_then(|(_, links)| links.step_window(trace)) {
        Some((source, window)) => replay_core::predict::skeleton_of_window(trace, source, &window),
        None => replay_core::predict::skeleton(trace)
            .map_err(|e| bad(&options.trace, format!("no step to re-run: {e}")))?,
    };
    let Some(step) = skeleton.steps.last() else {
        return Err(bad(
            &options.trace,
            "no step to re-run: the trace has no profiled step".into(),
        ));
    };
    let units = replay_units(file);
    let entries = program(&skeleton, step, file, &units);
    if entries.is_empty() {
        return Err(bad(
            &options.trace,
            format!("step {} launched nothing to re-run", step.name),
        ));
    }
    let generated = super::isolated::generated_kernels(
        file,
        options.kernels.as_deref().unwrap_or(&options.trace),
        options.inductor_cache.as_deref(),
    )?;
    let _no_grad = tch::no_grad_guard();
    if matches!(device, Device::Cuda(_)) {
        observer.warning(
            "replay sequence on CUDA runs every op on libtorch's current stream (GEMMs, copies \
             and memsets issued by libtorch too): work the trace ran on other streams is \
             serialised here",
        );
    }
    // The memory plan, before anything is allocated: refused here when it cannot fit.
    let placing = Placing {
        cuda: matches!(device, Device::Cuda(_)),
        flow: execution_trace.is_some(),
    };
    let mut planned = super::sequence_memory::plan_step(
        &entries,
        file,
        &units,
        placing,
        device,
        options.memory_budget,
        execution_trace,
        &options.trace,
        observer,
    )?;
    planned.record.measured_by = super::sequence_memory::start_measuring(device);
    let mut builder = SequenceBuilder {
        file,
        units: &units,
        device,
        generated: generated.as_ref(),
        wiring: execution_trace.map(|(et, links)| Wiring::new(et, links, &entries)),
    };

    // 1. Every op instance rebuilt, inputs and parameters allocated before any timing, and
    //    run once alone: an op that fails here enters the step with its trace time.
    observer.stage_started(
        Stage::Sequence,
        &format!(
            "rebuilding the {} ops of {} on {}",
            entries.len(),
            step.name,
            device.describe()
        ),
    );
    let mut results: Vec<EntryResult> = Vec::with_capacity(entries.len());
    let mut steps: Vec<Step> = Vec::new();
    let mut step_of: Vec<Option<usize>> = Vec::with_capacity(entries.len());
    for (position, entry) in entries.iter().enumerate() {
        let (name, tier, members, included) = describe(entry, file, &units);
        observer.progress(Tick {
            step: position,
            steps: entries.len(),
            round: 0,
            rounds: 1,
            name: &name,
        });
        let mut result = EntryResult {
            position,
            name,
            tier,
            members,
            included,
            trace_us: entry.trace_ns as f64 / 1000.0,
            status: Status::Ok,
            method: None,
            reason: None,
            in_context: None,
        };
        let oversized = planned.plan.oversized.iter().find(|o| o.op == position);
        let built = match oversized {
            Some(o) => Err(SetupError::Oom(format!(
                "needs {} alone, over the memory budget of {}: not allocated",
                size_text(o.bytes),
                size_text(planned.plan.budget)
            ))),
            None => planned
                .buffers
                .serve(&planned.plan.assignment[position], || {
                    builder.build(position, entry)
                }),
        };
        match built {
            Ok((target, method)) => {
                result.method = Some(method.0);
                step_of.push(Some(steps.len()));
                steps.push(Step::new(target));
            }
            Err(e) => {
                let (status, reason) = match e {
                    SetupError::Unsupported(m) => (Status::Unsupported, m),
                    SetupError::Failed(m) => (Status::Failed, m),
                    SetupError::Oom(m) => (Status::Oom, m),
                };
                result.status = status;
                result.reason = Some(reason);
                step_of.push(None);
            }
        }
        results.push(result);
    }
    observer.stage_finished(Stage::Sequence);
    let (build_peak, held) = super::sequence_memory::after_build(device);
    planned.record.measured_build_peak_bytes = build_peak;
    planned.record.measured_held_bytes = held;
    let flow = builder.wiring.take().map(Wiring::finish);
    let data_flow = flow.as_ref().is_some_and(|f| f.linked_entries > 0);

    let unrebuilt: f64 = results
        .iter()
        .filter(|r| r.status != Status::Ok)
        .map(|r| r.trace_us)
        .sum();

    // 2. The whole sequence, repeated on the measurement core: one run per sample, each op
    //    timed in its place. 3. Then the same ops back to back in real time.
    let (runs, real_time) = if steps.is_empty() {
        (None, None)
    } else {
        let sequence = SequenceTarget::new(steps);
        if let Some(why) = sequence.placement_mismatch() {
            return Err(crate::Error::Failed(format!(
                "{why}: replay sequence on {} is unavailable for this trace",
                device.spec()
            )));
        }
        observer.stage_started(
            Stage::Sequence,
            &format!(
                "running the step's {} rebuilt ops in order, {:.1} s at most",
                step_of.iter().flatten().count(),
                options.max_time_s
            ),
        );
        let budget = Timing::budget(options.max_time_s).map_err(|message| {
            crate::Error::from(replay_core::Error::BadInput {
                path: "--max-time".into(),
                message,
            })
        })?;
        let config = Timing {
            min_samples: options.min_samples,
            noise: options.noise,
            one_call_per_sample: true,
            ..Timing::alone(budget)
        }
        .config();
        let mut sequence = sequence;
        let measured = measure_detailed(&mut sequence, &config, &MonotonicClock::new())
            .context("running the sequence")?;
        observer.stage_finished(Stage::Sequence);
        let steps = sequence.into_steps();
        let n = measured.device_us.len();
        for (result, index) in results.iter_mut().zip(&step_of) {
            if let Some(i) = index {
                result.in_context = Spread::of(last(&steps[*i].samples, n));
            }
        }
        let ops_host_us = steps
            .iter()
            .filter_map(|s| Spread::of(last(&s.host_samples, n)))
            .map(|s| s.median_us)
            .sum();
        let per_op = PerOpRuns {
            ops_host_us,
            unrebuilt_trace_us: unrebuilt,
        };
        let ops = steps.into_iter().map(|s| s.target).collect();
        let real_time =
            match super::sequence_real_time::measure(ops, per_op, device, &config, observer) {
                Ok(real_time) => Some(real_time),
                Err(e) => {
                    observer.warning(&format!("no real-time step: {}", e.with_causes()));
                    None
                }
            };
        (Some(measured.summary), real_time)
    };
    let run_peak = super::sequence_memory::measured_peak(device);
    planned.record.measured_run_peak_bytes = run_peak;
    planned.record.measured_peak_bytes = build_peak.max(run_peak);
    planned.record.unplanned_bytes = planned.buffers.unplanned_bytes();
    let config = RunConfig {
        cold: false,
        max_time_per_kernel_s: options.max_time_s,
        noise_target: options.noise,
        min_samples: options.min_samples,
        rounds: 1,
    };
    let trace_name = options.trace.display().to_string();
    let signatures =
        SequenceResults::signature_rows(&results, file, &device.describe(), &trace_name, config);
    let sequence = SequenceResults {
        schema_version: SEQUENCE_SCHEMA_VERSION,
        tool: format!("replay {}", env!("CARGO_PKG_VERSION")),
        device: device.describe(),
        trace: trace_name,
        step: step.name.clone(),
        trace_step_us: step.measured_ns as f64 / 1000.0,
        trace_ops_us: results.iter().map(|r| r.trace_us).sum(),
        comparable: comparable(data_flow).to_owned(),
        data_flow,
        flow,
        step_ops_us: runs.as_ref().map_or(0.0, |r| r.median) + unrebuilt,
        runs,
        unrebuilt_trace_us: unrebuilt,
        entries: results,
        signatures,
        real_time,
        memory: Some(planned.record),
    };
    files
        .write(OutputFile::SequenceJson, &export::json::to_bytes(&sequence))
        .and_then(|_| {
            files.write(
                OutputFile::SequenceCsv,
                &export::csv::sequence_to_bytes(&sequence),
            )
        })
        .context("writing sequence results")?;
    observer.result(&summary(&sequence, &files));
    Ok(sequence)
}

/// The last `n` of `samples`: the measured runs' (timed warm-up runs come first).
fn last(samples: &[f64], n: usize) -> &[f64] {
    &samples[samples.len().saturating_sub(n)..]
}

/// An entry's name, tier, members with their shares, and included signatures: those this
/// instance ran (a unit's member may be missing from one instance; the units of one op call
/// that joined it add theirs).
fn describe(
    entry: &ProgramEntry,
    file: &SignatureFile,
    units: &[crate::replay::registry::ReplayUnit],
) -> (String, Tier, Vec<(String, f64)>, Vec<String>) {
    let by_id = |id: &str| file.signatures.iter().find(|s| s.id == id);
    let Some(unit) = entry.unit.map(|u| &units[u]) else {
        let name = entry
            .signatures
            .first()
            .and_then(|id| by_id(id.as_str()))
            .map_or_else(|| "unattributed".to_owned(), |s| s.name.clone());
        let tier = entry
            .signatures
            .first()
            .and_then(|id| by_id(id.as_str()))
            .map_or(Tier::Op, |s| s.tier);
        return (name, tier, Vec::new(), Vec::new());
    };
    let lead = &file.signatures[unit.lead];
    // The signatures this instance ran, in the file's order: a unit's own, and those of the
    // other units of its op call that joined it. A GEMM's helpers are included in their
    // GEMM; every other signature shares the instance's time by its trace time.
    let included_anywhere: std::collections::HashSet<usize> = units
        .iter()
        .flat_map(|u| u.included.iter().copied())
        .collect();
    let ran: Vec<usize> = (0..file.signatures.len())
        .filter(|&i| entry.signatures.contains(&file.signatures[i].id))
        .collect();
    let (included, mut members): (Vec<usize>, Vec<usize>) =
        ran.into_iter().partition(|i| included_anywhere.contains(i));
    // The replaying unit's lead first: what the signature rows name as replayed.
    members.sort_by_key(|&i| i != unit.lead);
    let weight = |i: usize| file.signatures[i].trace_mean_us.max(0.0);
    let total: f64 = members.iter().map(|&i| weight(i)).sum();
    let count = members.len() as f64;
    let members = members
        .into_iter()
        .map(|i| {
            let share = if total > 0.0 {
                weight(i) / total
            } else {
                1.0 / count
            };
            (file.signatures[i].id.clone(), share)
        })
        .collect();
    let included = included
        .into_iter()
        .map(|i| file.signatures[i].id.clone())
        .collect();
    (lead.name.clone(), unit.tier, members, included)
}

/// What `replay sequence` prints: the step re-run against the trace's, the entries that could
/// not run, the slowest ops in context, what is comparable, and the files.
fn summary(sequence: &SequenceResults, files: &OutputDir) -> String {
    let mut out = String::new();
    let count = |s: Status| sequence.entries.iter().filter(|e| e.status == s).count();
    let _ = writeln!(
        out,
        "re-ran {} of {} ({} ops) on {}: {} ran, {} unsupported, {} failed, {} oom",
        sequence.trace,
        sequence.step,
        sequence.entries.len(),
        sequence.device,
        count(Status::Ok),
        count(Status::Unsupported),
        count(Status::Failed),
        count(Status::Oom),
    );
    match &sequence.runs {
        Some(runs) => {
            let _ = writeln!(
                out,
                "sequence of the rebuilt ops  {:>12.1} us   (median of {} runs; p10 {:.1}, p90 {:.1}; {})",
                runs.median,
                runs.samples,
                runs.p10,
                runs.p90,
                runs.timer.as_deref().unwrap_or("monotonic clock")
            );
        }
        None => {
            let _ = writeln!(out, "sequence of the rebuilt ops  none could be rebuilt");
        }
    }
    if sequence.unrebuilt_trace_us > 0.0 {
        let _ = writeln!(
            out,
            "ops not rebuilt, trace time  {:>12.1} us",
            sequence.unrebuilt_trace_us
        );
    }
    let _ = writeln!(
        out,
        "the step's ops, re-run       {:>12.1} us   (trace: {:.1} us of ops in a {:.1} us step, {:+.1}%)",
        sequence.step_ops_us,
        sequence.trace_ops_us,
        sequence.trace_step_us,
        replay_core::predict::error_percent(sequence.step_ops_us, sequence.trace_ops_us)
    );
    if let Some(real_time) = &sequence.real_time {
        out.push_str(&super::sequence_real_time::summary_lines(
            real_time,
            sequence.trace_ops_us,
            sequence.unrebuilt_trace_us,
        ));
    }
    let mut slowest: Vec<&EntryResult> = sequence
        .entries
        .iter()
        .filter(|e| e.in_context.is_some())
        .collect();
    slowest.sort_by(|a, b| b.step_us().total_cmp(&a.step_us()));
    if !slowest.is_empty() {
        let _ = writeln!(
            out,
            "\nslowest ops in context{:>31} {:>12} {:>8}",
            "in context us", "trace us", "ratio"
        );
        for e in slowest.iter().take(8) {
            let name: String = e.name.chars().take(44).collect();
            let _ = writeln!(
                out,
                "  {:<4} {:<44} {:>12.2} {:>12.2} {:>8.2}",
                e.position,
                name,
                e.step_us(),
                e.trace_us,
                if e.trace_us > 0.0 {
                    e.step_us() / e.trace_us
                } else {
                    0.0
                }
            );
        }
    }
    for e in sequence
        .entries
        .iter()
        .filter(|e| e.status != Status::Ok)
        .take(5)
    {
        let _ = writeln!(
            out,
            "not run: #{} {}: {}",
            e.position,
            e.name,
            e.reason.as_deref().unwrap_or("")
        );
    }
    if let Some(memory) = &sequence.memory {
        let _ = writeln!(
            out,
            "\nmemory: planned peak {} ({} shared buffers serve {} of {} requests; every op \
             with inputs of its own: {}), budget {} ({}); measured peak {}, {} held once \
             built{}",
            size_text(memory.planned_peak_bytes),
            memory.shared_buffers,
            memory.shared_requests,
            memory.requests,
            size_text(memory.unshared_bytes),
            size_text(memory.budget_bytes),
            memory.budget_from,
            memory
                .measured_peak_bytes
                .map_or("not measured".into(), size_text),
            memory
                .measured_held_bytes
                .map_or("not measured".into(), size_text),
            if memory.unplanned_bytes > 0 {
                format!(
                    " ({:.1} MiB asked for outside the plan)",
                    memory.unplanned_bytes as f64 / (1u64 << 20) as f64
                )
            } else {
                String::new()
            }
        );
        if let Some(flow) = &memory.liveness {
            let _ = writeln!(
                out,
                "memory from the Execution Trace's liveness: op outputs {} at most alive at once \
                 (every output kept: {}), {} tensors from outside the step once each",
                size_text(flow.live_peak_bytes),
                size_text(flow.outputs_bytes),
                flow.external_tensors
            );
        }
    }
    match &sequence.flow {
        Some(flow) if sequence.data_flow => {
            let _ = writeln!(
                out,
                "\ndata flow: the model's ({}): {} ops linked, {} inputs read their producer's \
                 output ({} of them its last reader, which lets it go{}), {} read tensors from \
                 outside the step ({} of them shared, {} views of one allocation), {} fell back \
                 to inputs of their own",
                flow.execution_trace,
                flow.linked_entries,
                flow.flowing_inputs,
                flow.released_after_last_reader,
                match flow.viewed_inputs {
                    0 => String::new(),
                    n => format!("; {n} as the view a view op that is not re-run made of it"),
                },
                flow.external_inputs,
                flow.shared_external_inputs,
                flow.aliased_external_inputs,
                flow.fallbacks
            );
            for why in &flow.fallback_reasons {
                let _ = writeln!(out, "  fell back: {why}");
            }
            if flow.fallback_kinds.len() > 1 || flow.fallbacks > flow.fallback_reasons.len() {
                let _ = writeln!(out, "  fallbacks by kind (positions left out):");
                let mut kinds: Vec<_> = flow.fallback_kinds.iter().collect();
                kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                for (kind, n) in kinds {
                    let _ = writeln!(out, "  {n:>5}  {kind}");
                }
            }
        }
        Some(flow) => {
            let _ = writeln!(
                out,
                "\ndata flow: not the model's: no op of the step linked to a node of {} \
                 (data flow is followed on a CPU trace's top-level ops and a GPU trace's launching ops)",
                flow.execution_trace
            );
        }
        None => {}
    }
    let _ = writeln!(out, "\n{}", sequence.comparable);
    let _ = writeln!(
        out,
        "results: {}, {}",
        files.path(OutputFile::SequenceJson).display(),
        files.path(OutputFile::SequenceCsv).display()
    );
    out
}
