//! The `host` section of a calibration profile: what the host of this machine costs to drive
//! its device, measured in replay's own process without the profiler (issue 50).
//!
//! Every figure is timed on the measurement core with the host's monotonic clock (no profiler
//! and no per-op CUDA event in the timed path), in interleaved rounds, as a median with its
//! p10–p90 spread ([`timing`]). One concept per file:
//! - [`dispatch`]: the ops that launch nothing, one call each through libtorch's dispatcher
//!   (`ops_us`; their median is `dispatch_us_per_op`);
//! - [`interpreter`]: TorchScript's interpreter per op (`interpreter_us_per_op`);
//! - [`cuda_costs`]: on a GPU, a launch, a synchronisation, pinned and pageable copies;
//! - [`profiler_cost`]: the profiler's own cost per event with capture's settings;
//! - [`machine`]: which machine, torch and driver the figures belong to;
//! - [`render`]: the lines `replay calibrate` prints about them.

pub mod cuda_costs;
pub mod dispatch;
pub mod error;
pub mod interpreter;
pub mod machine;
pub mod profiler_cost;
pub mod render;
pub mod timing;

use std::collections::BTreeMap;

use crate::device::Device;
pub use error::HostError;
pub use replay_core::results::host_profile::{HostMachine, HostProfile};
use timing::{Derived, Plan};

/// The work item's label in a calibration, and its key in the journal.
pub const LABEL: &str = "host";

/// A host section and the figures that could not be measured (each also noted in it).
#[derive(Debug, Clone, PartialEq)]
pub struct HostMeasurement {
    pub profile: HostProfile,
    /// `(field, why)` for every figure that failed.
    pub failures: Vec<(String, String)>,
}

/// The notes and failures gathered while measuring.
#[derive(Default)]
struct Notes {
    notes: BTreeMap<String, String>,
    failures: Vec<(String, String)>,
}

impl Notes {
    fn note(&mut self, field: &str, text: String) {
        self.notes.insert(field.to_string(), text);
    }

    /// `result`'s value, or `None` with the failure noted under each of `fields`.
    fn kept<T>(&mut self, fields: &[&str], result: Result<T, HostError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                for field in fields {
                    self.note(field, format!("not measured: {e}"));
                    self.failures.push((field.to_string(), e.to_string()));
                }
                None
            }
        }
    }
}

/// Measures the host section on `device`; `by` names who measured it (`replay calibrate`),
/// `progress` hears what is being measured.
pub fn measure_host(
    device: &Device,
    by: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<HostMeasurement, HostError> {
    let plan = Plan::SHORT_CALLS;
    // libtorch's first op on a device initialises it (its context, its allocator): not timed.
    drop(tch::Tensor::f_zeros(
        [1],
        (tch::Kind::Float, device.torch()),
    )?);
    let mut notes = Notes::default();
    let mut host = HostProfile {
        machine: machine::machine_of(device),
        ..HostProfile::default()
    };

    progress("ops that launch nothing, one dispatcher call each");
    let mut ops = dispatch::no_launch_ops(device)?;
    let figures = notes.kept(
        &["dispatch_us_per_op"],
        dispatch::measure_ops(&mut ops, &plan),
    );
    progress("TorchScript's interpreter per op");
    let interpreter = interpreter::measure_interpreter(device, &plan);
    if let Some(cost) = notes.kept(&["interpreter_us_per_op"], interpreter) {
        host.interpreter_us_per_op = Some(cost.per_op.value);
        notes.note(
            "interpreter_us_per_op",
            format!(
                "{}: forward of {} ops {}, of {} ops {}; the same ops called directly {}, {}",
                cost.per_op.describe(),
                interpreter::SHORT_LINKS * interpreter::OPS_PER_LINK,
                cost.scripted_short.describe(),
                interpreter::LONG_LINKS * interpreter::OPS_PER_LINK,
                cost.scripted_long.describe(),
                cost.direct_short.describe(),
                cost.direct_long.describe(),
            ),
        );
    }

    if let Device::Cuda(dev) = device {
        let gpu_plan = cuda_costs::plan(&plan);
        progress("a launch and a synchronisation");
        let launches = cuda_costs::measure_launches(dev, &gpu_plan);
        if let Some(c) = notes.kept(&["launch_us", "sync_us"], launches) {
            host.launch_us = Some(c.launch.median_us);
            host.launch_op_us = Some(c.launch_op.median_us);
            host.sync_us = Some(c.sync.value);
            notes.note(
                "launch_us",
                format!("cuLaunchKernel, GPU busy: {}", c.launch.describe()),
            );
            notes.note(
                "launch_op_us",
                format!("aten::fill_ of one element: {}", c.launch_op.describe()),
            );
            notes.note(
                "sync_us",
                format!(
                    "{}: launch + cuStreamSynchronize {} less the launch and the kernel's \
                     device time {}",
                    c.sync.describe(),
                    c.round_trip.describe(),
                    c.kernel.describe(),
                ),
            );
        }
        progress("4-byte copies to pinned and pageable memory");
        let copies = cuda_costs::measure_copies(dev, &gpu_plan);
        if let Some(c) = notes.kept(&["copy_pinned_us", "copy_pageable_us"], copies) {
            host.copy_pinned_us = Some(c.pinned.median_us);
            host.copy_pageable_us = Some(c.pageable.median_us);
            notes.note("copy_pinned_us", c.pinned.describe());
            notes.note("copy_pageable_us", c.pageable.describe());
        }
    }

    // From here on the profiler runs: everything above is measured in a process that has not
    // started it yet (a started CUPTI may leave work in every later CUDA call).
    progress("the profiler's events per op, with capture's settings");
    let events = notes.kept(
        &["ops_events"],
        profiler_cost::events_per_call(&mut ops, device.is_cuda()),
    );
    if let Some(events) = &events {
        for (op, n) in ops.iter().zip(events) {
            host.ops_events.insert(op.name.to_string(), *n);
        }
    }
    if let Some(figures) = figures {
        let mut described = Vec::new();
        for (op, figure) in ops.iter().zip(&figures) {
            host.ops_us.insert(op.name.to_string(), figure.median_us);
            let recorded = host
                .ops_events
                .get(op.name)
                .map(|e| format!(", {e} profiler op events per call"))
                .unwrap_or_default();
            described.push(format!("{}: {}{recorded}", op.name, figure.describe()));
        }
        // Per recorded op event: an op the profiler does not record (aten::size) is left out.
        let medians: Vec<f64> = ops
            .iter()
            .zip(&figures)
            .filter(|(op, _)| host.ops_events.get(op.name) != Some(&0.0))
            .map(|(_, f)| f.median_us)
            .collect();
        host.dispatch_us_per_op = dispatch::median(&medians);
        notes.note(
            "dispatch_us_per_op",
            format!(
                "median of {} ops' medians (ops_us, less those the profiler does not record); \
                 range {}–{} µs",
                medians.len(),
                timing::us(medians.iter().copied().fold(f64::INFINITY, f64::min)),
                timing::us(medians.iter().copied().fold(0.0, f64::max)),
            ),
        );
        notes.note("ops_us", described.join("; "));
    }

    progress("the profiler's cost per event, with capture's settings");
    let profiler = profiler_cost::measure_profiler(&mut ops, device, &profiler_cost::STREAM_PLAN);
    let fields = ["profiler_us_per_cpu_event", "profiler_us_per_runtime_event"];
    if let Some(cost) = notes.kept(&fields[..1 + usize::from(device.is_cuda())], profiler) {
        host.profiler_us_per_cpu_event = Some(cost.per_cpu_event.value);
        host.profiler_us_per_runtime_event = cost.per_runtime_event.as_ref().map(|d| d.value);
        host.profiler_us_per_session = Some(cost.per_session.value);
        notes.note(
            "profiler_us_per_cpu_event",
            profiler_note(&cost.per_cpu_event, &cost.no_launch),
        );
        notes.note(
            "profiler_us_per_session",
            format!(
                "{}: what a session of the short no-launch stream added beyond its events",
                cost.per_session.describe()
            ),
        );
        if let (Some(d), Some(l)) = (&cost.per_runtime_event, &cost.launching) {
            notes.note("profiler_us_per_runtime_event", profiler_note(d, l));
        }
    }

    host.source = format!(
        "measured by {by} (replay {}) on {}, without the profiler: host monotonic clock \
         through the measurement core, {} interleaved rounds of at least {} samples per figure, \
         median (spreads in notes)",
        env!("CARGO_PKG_VERSION"),
        device.describe(),
        plan.rounds,
        plan.min_samples_per_round,
    );
    host.notes = notes.notes;
    Ok(HostMeasurement {
        profile: host,
        failures: notes.failures,
    })
}

/// How a per-event profiler cost was had: each stream length's call unprofiled and profiled,
/// and the events a profiled call recorded.
fn profiler_note(cost: &Derived, streams: &[profiler_cost::StreamCost; 2]) -> String {
    let length = |stream: &profiler_cost::StreamCost| {
        format!(
            "{} repetitions: {} unprofiled, {} profiled, recording {:.1} CPU op, {:.1} runtime and \
             {:.1} other events ({:.0} % of the op events with shapes)",
            stream.repetitions,
            stream.plain.describe(),
            stream.profiled.describe(),
            stream.cpu_ops_per_call,
            stream.runtime_per_call,
            stream.other_per_call,
            stream.with_shapes * 100.0,
        )
    };
    format!(
        "{}: slope between a call of {}; and one of {}",
        cost.describe(),
        length(&streams[0]),
        length(&streams[1])
    )
}
