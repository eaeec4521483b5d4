//! The durations a simulation uses in place of the trace's own, per signature id.
//!
//! An empty [`Durations`] means "the trace's own durations" (the self-check). Replayed
//! timings come in per signature: the device time of one invocation (every invocation of
//! the signature gets it; on a CPU-only trace the "device" is the CPU and the invocation is
//! a top-level op) and, optionally, the host dispatch time of the call that launches it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::trace::Nanos;

/// Replacement times for one signature, in microseconds like every time in the reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignatureDuration {
    /// Time of one invocation on its device.
    pub device_us: f64,
    /// Host time of the launch call of one invocation; `None` keeps the trace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_us: Option<f64>,
}

/// Durations by signature id. Ids that the skeleton does not contain are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durations {
    by_signature: HashMap<String, SignatureDuration>,
    /// The profiler's own cost per recorded op (µs), taken out of the host gaps: a replayed
    /// prediction is for a run without the profiler. `None` (the self-check) keeps the gaps.
    #[serde(default)]
    profiler_overhead_us_per_op: Option<f64>,
}

impl Durations {
    /// No replacement: every duration is the trace's own.
    pub fn trace_own() -> Self {
        Durations::default()
    }

    /// Every invocation of signature `id` takes `device_us` on its device.
    pub fn set(&mut self, id: impl Into<String>, device_us: f64) -> &mut Self {
        self.by_signature.insert(
            id.into(),
            SignatureDuration {
                device_us,
                dispatch_us: None,
            },
        );
        self
    }

    /// As [`Self::set`], and each launch of it costs `dispatch_us` on the host.
    pub fn set_with_dispatch(
        &mut self,
        id: impl Into<String>,
        device_us: f64,
        dispatch_us: f64,
    ) -> &mut Self {
        self.by_signature.insert(
            id.into(),
            SignatureDuration {
                device_us,
                dispatch_us: Some(dispatch_us),
            },
        );
        self
    }

    /// Takes `us` of profiler recording cost per op out of every host gap.
    pub fn remove_profiler_overhead(&mut self, us: f64) -> &mut Self {
        self.profiler_overhead_us_per_op = Some(us);
        self
    }

    pub fn profiler_overhead_ns(&self) -> Nanos {
        self.profiler_overhead_us_per_op
            .and_then(us_to_ns)
            .unwrap_or(0)
    }

    pub fn get(&self, id: &str) -> Option<&SignatureDuration> {
        self.by_signature.get(id)
    }

    pub fn len(&self) -> usize {
        self.by_signature.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_signature.is_empty()
    }
}

/// Microseconds to whole nanoseconds, the simulation's unit. A value that is not a
/// finite time (NaN, infinite) cannot be simulated and yields `None`, so the trace's own
/// duration is kept; a negative one is taken as zero.
pub(crate) fn us_to_ns(micros: f64) -> Option<Nanos> {
    if !micros.is_finite() {
        return None;
    }
    let nanos = (micros * 1000.0).round().max(0.0);
    // Beyond ±292 years the cast would saturate; such a value is as unusable as NaN.
    (nanos < 9.2e18).then_some(nanos as Nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_become_whole_nanoseconds() {
        assert_eq!(us_to_ns(1.5), Some(1500));
        assert_eq!(us_to_ns(0.0004), Some(0));
        assert_eq!(us_to_ns(-3.0), Some(0));
        assert_eq!(us_to_ns(f64::NAN), None);
        assert_eq!(us_to_ns(f64::INFINITY), None);
        assert_eq!(us_to_ns(1e30), None);
    }

    #[test]
    fn the_last_setting_of_an_id_wins() {
        let mut durations = Durations::trace_own();
        assert!(durations.is_empty());
        durations.set("a", 1.0).set_with_dispatch("a", 2.0, 3.0);
        assert_eq!(durations.len(), 1);
        assert_eq!(
            durations.get("a"),
            Some(&SignatureDuration {
                device_us: 2.0,
                dispatch_us: Some(3.0)
            })
        );
    }
}
