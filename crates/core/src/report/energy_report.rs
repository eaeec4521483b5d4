//! The comparison report's energy part: the kernels' energy (Σ joules per invocation ×
//! count) and the timeline's against the measured full-model energy.

use serde::{Deserialize, Serialize};

use crate::results::full_model::FullModelTiming;
use crate::results::isolated::{IsolatedResults, Status};

/// Energy predicted from the kernels (Σ joules per invocation × count) against the measured
/// full-model energy per forward pass, and predicted along the timeline (the kernels' joules
/// plus the gap power over the rest of the predicted step) where there is a timeline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnergyReport {
    #[serde(flatten)]
    pub comparison: crate::energy::EnergyComparison,
    /// Signatures whose energy was measured, and those without (not replayed, or the probe failed).
    pub signatures_measured: usize,
    pub signatures_without_energy: Vec<String>,
    /// The energy prediction along the timeline (needs a trace and the gap power).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::energy::TimelineEnergy>,
    /// The device's power while the host works and the device runs nothing, as measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_power: Option<crate::energy::GapPower>,
}

/// The energy comparison, when the run measured energy: the kernel sum always, along the
/// timeline when there is a predicted step (`timeline_us`) and a measured gap power.
pub fn energy_comparison(
    results: &IsolatedResults,
    full: &FullModelTiming,
    timeline_us: Option<f64>,
    gap_power: Option<crate::energy::GapPower>,
) -> Option<EnergyReport> {
    let full_energy = full.energy.as_ref()?;
    let measured: Vec<(f64, u64)> = results
        .results
        .iter()
        .filter_map(|r| r.joules_per_invocation.map(|j| (j, r.count)))
        .collect();
    let without = results
        .results
        .iter()
        .filter(|r| r.joules_per_invocation.is_none() && r.status != Status::Included)
        .map(|r| r.id.clone())
        .collect();
    let signatures_measured = measured.len();
    let comparison = crate::energy::EnergyComparison::new(measured, full_energy);
    let timeline = timeline_us.zip(gap_power.as_ref()).map(|(us, gap)| {
        // Each signature's power in its energy windows (its joules and their time per call,
        // both its share of the replay unit's) over the duration the timeline gives it.
        let signatures = results.results.iter().filter_map(|r| {
            let summary = r.energy.as_ref()?.as_ref().ok()?;
            let seconds = summary.seconds_per_invocation.median * r.share;
            if seconds <= 0.0 {
                return None;
            }
            Some(crate::energy::SignatureEnergy {
                watts: r.joules_per_invocation? / seconds,
                seconds_per_invocation: r.predicted_us? * 1e-6,
                count: r.count,
            })
        });
        crate::energy::TimelineEnergy::new(
            signatures,
            us * 1e-6,
            gap.watts.median,
            comparison.measured_joules,
        )
    });
    Some(EnergyReport {
        signatures_measured,
        comparison,
        signatures_without_energy: without,
        timeline,
        gap_power,
    })
}
