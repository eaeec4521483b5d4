//! The host in the prediction: whose host durations a replayed timeline runs with.
//!
//! A profiled trace's host time is the profiler's as much as the model's: with shapes recorded
//! and CUPTI on, every recorded op and runtime call costs the host microseconds, and a
//! host-bound inference (most small-batch GPU inference) is predicted that much too slow.
//! [`HostTimes`] chooses the host's durations:
//! - `trace`: as recorded, profiler and all (the like-with-like check: the trace's own
//!   per-signature times then give back the trace's own model call);
//! - `corrected`: as recorded, less the profiler's measured cost per recorded event;
//! - `model`: from the host model: each outermost op costs what the replay measured for it
//!   without the profiler (`isolated.json`'s `host_us`), plus the dispatcher's cost for every
//!   other op event inside it, and the framework between ops costs the interpreter's cost per
//!   op, all from the `host` section of a calibration profile ([`HostProfile`]).
//!
//! The dependencies stay the trace's ([`super::simulate`]): a kernel starts when its stream is
//! free and its launch was issued, a synchronisation makes the host wait for the device.

mod retime;
pub mod units;

use std::collections::HashMap;

use serde::Serialize;

use crate::results::host_profile::HostProfile;
use crate::trace::link;
use crate::trace::{Nanos, Platform, Trace};

use super::durations::us_to_ns;
use super::skeleton::Skeleton;
use retime::{correct_thread, ThreadTally, UnitCosts};
use units::Units;

/// Whose host durations the replayed timeline runs with (`--host-times`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostTimes {
    /// The trace's, as recorded (profiler included).
    Trace,
    /// The trace's, less the profiler's measured cost per recorded event.
    Corrected,
    /// The host model's: measured without the profiler.
    Model,
}

impl HostTimes {
    pub fn name(self) -> &'static str {
        match self {
            HostTimes::Trace => "trace",
            HostTimes::Corrected => "corrected",
            HostTimes::Model => "model",
        }
    }
}

impl std::str::FromStr for HostTimes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "trace" => Ok(HostTimes::Trace),
            "corrected" => Ok(HostTimes::Corrected),
            "model" => Ok(HostTimes::Model),
            other => Err(format!(
                "'{other}' is not a host-times choice: trace, corrected or model"
            )),
        }
    }
}

/// What the host side of a prediction runs with.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// `None`: the default, `model` when `host` can drive it, else `corrected`.
    pub times: Option<HostTimes>,
    /// The host section, and where it came from (a profile's path, `measured in this run`).
    pub host: Option<(HostProfile, String)>,
    /// Each signature's host time per call measured without the profiler in the run that
    /// timed its device time (`isolated.json`'s `host_us`), by signature id.
    pub measured_host_us: HashMap<String, f64>,
}

/// What the host side of a prediction ran with, as the reports print it.
#[derive(Debug, Clone, Serialize)]
pub struct HostReport {
    pub host_times: HostTimes,
    /// The host model, or the correction, in words: which costs from where.
    pub host_model: String,
    /// The profiler's cost taken out per recorded op event and per runtime call (µs).
    pub profiler_us_per_cpu_event: f64,
    pub profiler_us_per_runtime_event: f64,
    /// Outermost ops re-timed, launch calls among them, and how many of those had the
    /// replay's own host measurement.
    pub units: u64,
    pub launches: u64,
    pub launches_measured: u64,
    /// Fallbacks and mismatches, each a sentence.
    pub notes: Vec<String>,
}

/// The device a trace was captured on (`deviceProperties[0].name`), if it says.
pub(crate) fn trace_device_name(trace: &Trace) -> Option<String> {
    trace
        .metadata
        .device_properties
        .as_ref()?
        .as_array()?
        .first()?
        .get("name")?
        .as_str()
        .map(str::to_owned)
}

impl HostSettings {
    /// The settings of `--host-times` and of the host section of `--host-profile` (a profile
    /// with one, or a section alone), else of `--profile` when that has one.
    pub fn from_flags(
        times: Option<HostTimes>,
        host_profile: Option<&std::path::Path>,
        profile: Option<&std::path::Path>,
    ) -> crate::Result<HostSettings> {
        use crate::results::calibration::Profile;
        let host = match (host_profile, profile) {
            (Some(path), _) => Some((
                Profile::read_host_section(path)?,
                path.display().to_string(),
            )),
            (None, Some(path)) => Profile::read(path)?
                .host
                .map(|section| (section, path.display().to_string())),
            (None, None) => None,
        };
        Ok(HostSettings {
            times,
            host,
            measured_host_us: HashMap::new(),
        })
    }

    /// The host times the settings resolve to, and why when it is not the one asked for.
    fn resolve(&self) -> (HostTimes, Option<String>) {
        let usable = self.host.as_ref().is_some_and(|(h, _)| h.is_usable());
        match self.times {
            Some(HostTimes::Model) if !usable => (
                HostTimes::Corrected,
                Some(match &self.host {
                    None => "no host section was given (a profile from `replay calibrate` \
                             has one): the trace's host time with the profiler's cost taken \
                             out instead of the host model"
                        .to_owned(),
                    Some((_, from)) => format!(
                        "the host section of {from} lacks the dispatch or interpreter cost: \
                         the trace's host time with the profiler's cost taken out instead"
                    ),
                }),
            ),
            Some(times) => (times, None),
            None if usable => (HostTimes::Model, None),
            None => (HostTimes::Corrected, None),
        }
    }

    /// Re-times `skeleton`'s host items for these settings; `trace` is the trace it was built
    /// from (its ops and metadata). A GPU host model given for a trace with no launches is the
    /// user's mistake (`Err` with the sentence).
    pub fn apply(&self, trace: &Trace, skeleton: &mut Skeleton) -> Result<HostReport, String> {
        let (times, fallback) = self.resolve();
        let mut notes: Vec<String> = fallback.into_iter().collect();
        let host = self.host.as_ref().map(|(h, _)| h);
        if let Some((host, from)) = &self.host {
            let gpu_model = host.launch_us.is_some()
                || !host.machine.device.trim().eq_ignore_ascii_case("cpu")
                    && !host.machine.device.is_empty();
            if trace.platform == Platform::Cpu && gpu_model && times == HostTimes::Model {
                return Err(format!(
                    "it has no launches (a CPU trace), but the host section of {from} is of a \
                     GPU machine ({}): give a profile calibrated on this CPU",
                    host.machine.device
                ));
            }
            if let Some(device) = trace_device_name(trace) {
                let wanted = host.machine.device.trim();
                if !wanted.is_empty() && !device.trim().eq_ignore_ascii_case(wanted) {
                    notes.push(format!(
                        "the host section of {from} was measured with '{wanted}', the trace on \
                         '{device}': the prediction is for the host section's machine"
                    ));
                }
            }
        }
        // The profiler's costs: the host section's measurement, else capture's own.
        let cpu_event_us = host
            .and_then(|h| h.profiler_us_per_cpu_event)
            .or(trace.metadata.profiler_overhead_us_per_op);
        let runtime_event_us = host.and_then(|h| h.profiler_us_per_runtime_event);
        if times == HostTimes::Corrected && cpu_event_us.is_none() {
            notes.push(
                "the profiler's cost per op is unknown (neither the host section nor the \
                 capture measured it): the trace's host time is kept as recorded"
                    .to_owned(),
            );
        }
        let cpu_event_ns = cpu_event_us.and_then(us_to_ns).unwrap_or(0);
        let runtime_event_ns = runtime_event_us.and_then(us_to_ns).unwrap_or(0);
        let mut report = HostReport {
            host_times: times,
            host_model: String::new(),
            profiler_us_per_cpu_event: if times == HostTimes::Trace {
                0.0
            } else {
                cpu_event_us.unwrap_or(0.0)
            },
            profiler_us_per_runtime_event: if times == HostTimes::Trace {
                0.0
            } else {
                runtime_event_us.unwrap_or(0.0)
            },
            units: 0,
            launches: 0,
            launches_measured: 0,
            notes,
        };
        match (times, &self.host) {
            (HostTimes::Trace, _) => {
                report.host_model = "the trace's host time as recorded (profiler included)".into();
            }
            (HostTimes::Corrected, _) | (HostTimes::Model, None) => {
                report.host_model = format!(
                    "the trace's host time less the profiler's {:.2} us per recorded op and \
                     {:.2} us per runtime call",
                    cpu_event_ns as f64 / 1e3,
                    runtime_event_ns as f64 / 1e3
                );
                for step in &mut skeleton.steps {
                    for thread in &mut step.threads {
                        correct_thread(thread, cpu_event_ns, runtime_event_ns);
                    }
                }
            }
            (HostTimes::Model, Some((host, from))) => {
                let tally = self.model(trace, skeleton, host, (cpu_event_ns, runtime_event_ns));
                report.units = tally.units;
                report.launches = tally.launches;
                report.launches_measured = tally.launches_measured;
                report.host_model = format!(
                    "host model of {from} ({}): {} outermost ops, {} of {} launches with \
                     their host time measured by the replay{}",
                    host.source,
                    tally.units,
                    tally.launches_measured,
                    tally.launches,
                    tally.measured_ratio.map_or(String::new(), |r| format!(
                        "; the others' ops at {:.3} of their profiled time, as the measured ones",
                        r
                    ))
                );
                if tally.units_unplaced > 0 {
                    report.notes.push(format!(
                        "{} ops had no host time of their own in the trace to re-time",
                        tally.units_unplaced
                    ));
                }
            }
        }
        Ok(report)
    }

    /// The host model on every thread that knows its place in the trace and has ops; the
    /// others (no ops: the trace's time less the profiler's `(cpu, runtime)` event costs).
    fn model(
        &self,
        trace: &Trace,
        skeleton: &mut Skeleton,
        host: &HostProfile,
        (cpu_event_ns, runtime_event_ns): (Nanos, Nanos),
    ) -> ThreadTally {
        let links = link::link(trace);
        let units = Units::of(trace, &links);
        let measured: Vec<Option<Nanos>> = skeleton
            .signature_ids
            .iter()
            .map(|id| self.measured_host_us.get(id).copied().and_then(us_to_ns))
            .collect();
        let costs = UnitCosts {
            host,
            measured_host_ns: &measured,
            runtime_event_ns,
        };
        let mut total = ThreadTally::default();
        // Plan every thread first: the units the replay measured whole give the trace's own
        // unprofiled-to-profiled ratio, which the others take.
        let mut plans: Vec<Vec<Option<retime::ThreadPlan>>> = Vec::new();
        for step in &mut skeleton.steps {
            let mut step_plans = Vec::new();
            for thread in &mut step.threads {
                let plan = thread.trace.as_ref().and_then(|place| {
                    let thread_units =
                        units.of_thread((place.pid, place.tid), place.step_start_ns, place.end_ns);
                    retime::plan_thread(thread, place, thread_units, &costs, &mut total)
                });
                if plan.is_none() {
                    correct_thread(thread, cpu_event_ns, runtime_event_ns);
                }
                step_plans.push(plan);
            }
            plans.push(step_plans);
        }
        let (modelled, profiled) = plans
            .iter()
            .flatten()
            .flatten()
            .map(retime::ThreadPlan::measured_totals)
            .fold((0, 0), |(m, p), (a, b)| (m + a, p + b));
        let ratio = (profiled > 0).then(|| modelled as f64 / profiled as f64);
        total.measured_ratio = ratio;
        for (step, step_plans) in skeleton.steps.iter_mut().zip(&plans) {
            for (thread, plan) in step.threads.iter_mut().zip(step_plans) {
                if let Some(plan) = plan {
                    retime::apply_plan(thread, plan, ratio, &costs);
                }
            }
        }
        total
    }
}

#[cfg(test)]
mod tests;
