//! A named, simulated run of a trace's skeleton: the original timeline, a what-if, or the
//! timeline with replayed durations. What the exporters draw and the reports summarise.

use super::critical_path::{critical_path, StepNode};
use super::{simulate, Durations, Prediction, Simulation, Skeleton};

/// A skeleton and its simulation, under a name (`original`, `tier2*0.5`).
#[derive(Debug, Clone)]
pub struct Timeline {
    pub name: String,
    pub skeleton: Skeleton,
    pub simulation: Simulation,
}

impl Timeline {
    /// `skeleton` simulated with `durations`.
    pub fn simulate(name: impl Into<String>, skeleton: Skeleton, durations: &Durations) -> Self {
        let simulation = simulate(&skeleton, durations);
        Timeline {
            name: name.into(),
            skeleton,
            simulation,
        }
    }

    /// Its numbers: predicted against measured, per step and on average.
    pub fn prediction(&self) -> Prediction {
        Prediction::from_simulation(&self.skeleton, &self.simulation)
    }

    /// The critical path of each step ([`critical_path`]).
    pub fn critical_paths(&self) -> Vec<Vec<StepNode>> {
        self.skeleton
            .steps
            .iter()
            .zip(&self.simulation.steps)
            .map(|(step, simulated)| critical_path(step, simulated))
            .collect()
    }
}
