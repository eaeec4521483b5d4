//! The `host` section of a calibration profile: what the host costs to drive the device, on
//! one machine, with one torch and one driver, measured without the profiler.
//!
//! On a GPU, a small-batch inference is usually host-bound: the latency is the time the host
//! takes to issue the step (the framework's interpreter, libtorch's dispatcher, the launch
//! calls), not the kernels'. A profiled trace records that host time inflated by the
//! profiler's own cost per recorded event (on an H200 with `record_shapes` and CUPTI, a
//! BLOOM-560M step took 24.8 ms profiled against 8.4 ms unprofiled), so a prediction for an
//! unprofiled run needs the host's costs from somewhere else: this section, measured by
//! `replay calibrate` (or fitted on named configurations, `source` says which).
//!
//! Every cost is in microseconds. `None` means "not measured": the predictor falls back to the
//! trace's own host time with the profiler's cost taken out, and says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the host section belongs to: a host model is only valid on the machine, torch and
/// driver it was measured with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostMachine {
    /// The device the host drives (`NVIDIA H200`, `cpu`).
    pub device: String,
    /// The CPU's model name (`/proc/cpuinfo`).
    #[serde(default)]
    pub cpu: String,
    /// libtorch's version (`2.11.0+cu130`).
    #[serde(default)]
    pub torch: String,
    /// The CUDA driver's version; empty on the CPU.
    #[serde(default)]
    pub driver: String,
}

impl HostMachine {
    /// What differs between `self` (the profile's) and `other` (the run's or the trace's), as
    /// `field: profile's vs other's` phrases; empty when they match. An empty field on either
    /// side is unknown and matches anything.
    pub fn differences(&self, other: &HostMachine) -> Vec<String> {
        let pairs = [
            ("device", &self.device, &other.device),
            ("cpu", &self.cpu, &other.cpu),
            ("torch", &self.torch, &other.torch),
            ("driver", &self.driver, &other.driver),
        ];
        pairs
            .iter()
            .filter(|(_, a, b)| !a.is_empty() && !b.is_empty() && a.trim() != b.trim())
            .map(|(what, a, b)| format!("{what}: '{a}' vs '{b}'"))
            .collect()
    }
}

/// The host's costs, in microseconds, measured without the profiler.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostProfile {
    /// The machine, torch and driver this was measured on.
    pub machine: HostMachine,
    /// How the numbers were had: `measured by replay calibrate (...)` or `fitted on ...`.
    pub source: String,
    /// An op that launches nothing (`aten::view`, `aten::reshape`, …) or an op nested in
    /// another: one trip through libtorch's dispatcher, per recorded op event.
    #[serde(default)]
    pub dispatch_us_per_op: Option<f64>,
    /// The framework between two top-level ops (TorchScript's interpreter, Python, the
    /// generated wrapper of a compiled model), per top-level op.
    #[serde(default)]
    pub interpreter_us_per_op: Option<f64>,
    /// One kernel launch call (`cudaLaunchKernel`), as the host sees it.
    #[serde(default)]
    pub launch_us: Option<f64>,
    /// One libtorch op that launches one tiny kernel (`aten::fill_` of one element): the
    /// dispatcher and the launch together, as the host sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_op_us: Option<f64>,
    /// From the device finishing to the host running again after a synchronisation
    /// (`cudaStreamSynchronize` on a stream whose work just ended).
    #[serde(default)]
    pub sync_us: Option<f64>,
    /// A small device-to-host copy into pinned and into pageable memory (the host waits).
    #[serde(default)]
    pub copy_pinned_us: Option<f64>,
    #[serde(default)]
    pub copy_pageable_us: Option<f64>,
    /// The profiler's own cost per recorded event with capture's settings (shapes recorded,
    /// CUDA activities on), measured on a synthetic op stream profiled against unprofiled:
    /// per CPU op event and per CUDA runtime call event.
    #[serde(default)]
    pub profiler_us_per_cpu_event: Option<f64>,
    #[serde(default)]
    pub profiler_us_per_runtime_event: Option<f64>,
    /// What one profiler session costs beyond its events, inside the span it records (its first
    /// events fill the profiler's buffers): once per profiled step. The per-event costs above
    /// are the slope between a short and a long session, without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiler_us_per_session: Option<f64>,
    /// Per op name, the host's cost of one call through the dispatcher where it was measured
    /// apart (beats `dispatch_us_per_op` for that op).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ops_us: BTreeMap<String, f64>,
    /// Per op name in `ops_us`, the op events the profiler records for one call of it with
    /// capture's settings: the op and the ops nested inside it (`aten::t` → `aten::transpose`
    /// → `aten::as_strided` records 3; 0 for one it does not record), so that an `ops_us`
    /// figure is matched with the top-level event, not added again for its children.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ops_events: BTreeMap<String, f64>,
    /// Each figure's spread and sample count, by the field's name (free-form, for people).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
}

impl HostProfile {
    /// The host's cost of one recorded op event that is not itself replayed: its own measured
    /// cost when `ops_us` has it, else the generic dispatch cost.
    pub fn op_us(&self, name: &str) -> Option<f64> {
        self.ops_us.get(name).copied().or(self.dispatch_us_per_op)
    }

    /// Whether the section can drive the host model (the two costs it cannot do without).
    pub fn is_usable(&self) -> bool {
        self.dispatch_us_per_op.is_some() && self.interpreter_us_per_op.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(device: &str, torch: &str, driver: &str) -> HostMachine {
        HostMachine {
            device: device.into(),
            cpu: String::new(),
            torch: torch.into(),
            driver: driver.into(),
        }
    }

    #[test]
    fn differences_name_each_field_and_unknowns_match_anything() {
        let profile = machine("NVIDIA H200", "2.11.0+cu130", "580.159.04");
        assert!(profile
            .differences(&machine("NVIDIA H200", "2.11.0+cu130", ""))
            .is_empty());
        let other = machine("NVIDIA H100 80GB HBM3", "2.11.0+cu130", "570.1");
        assert_eq!(
            profile.differences(&other),
            vec![
                "device: 'NVIDIA H200' vs 'NVIDIA H100 80GB HBM3'".to_owned(),
                "driver: '580.159.04' vs '570.1'".to_owned()
            ]
        );
    }

    #[test]
    fn an_op_measured_apart_beats_the_generic_dispatch_cost() {
        let mut host = HostProfile {
            dispatch_us_per_op: Some(1.0),
            ..HostProfile::default()
        };
        host.ops_us.insert("aten::view".into(), 0.4);
        assert_eq!(host.op_us("aten::view"), Some(0.4));
        assert_eq!(host.op_us("aten::select"), Some(1.0));
        assert!(!host.is_usable());
        host.interpreter_us_per_op = Some(2.0);
        assert!(host.is_usable());
    }

    #[test]
    fn a_section_without_optional_costs_reads() {
        let host: HostProfile = serde_json::from_str(
            r#"{"machine": {"device": "cpu"}, "source": "fitted", "dispatch_us_per_op": 1.5}"#,
        )
        .unwrap();
        assert_eq!(host.dispatch_us_per_op, Some(1.5));
        assert_eq!(host.launch_us, None);
    }
}
