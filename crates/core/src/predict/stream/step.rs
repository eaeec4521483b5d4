//! Each step predicted from its own events: the routed records of one step (in file order)
//! become a small trace, whose skeleton the in-memory builder makes
//! ([`crate::predict::build::step_skeleton`]) with what it needs of the rest of the trace
//! ([`StepFacts`]); the step is simulated, its numbers kept, its events dropped.

use super::super::build::{step_skeleton, StepFacts};
use super::super::durations::Durations;
use super::super::prediction::{uninstrumented_compiled_us, StepNumbers};
use super::super::simulate::simulate;
use super::super::skeleton::Skeleton;
use crate::trace::Trace;

use super::record::Record;
use super::windows::Windows;

/// What the steps came to: each one's numbers and uninstrumented compiled code.
#[derive(Default)]
pub struct StepResults {
    pub numbers: Vec<StepNumbers>,
    pub compiled: Vec<Option<f64>>,
}

/// Predicts every step from `routed` (sorted by step, then file order). `trace` is the
/// streamed trace (no events): its strings, platform and source serve each step's trace.
/// `on_step` sees each step's skeleton (with its own signature ids) before it is dropped.
pub fn predict_steps(
    routed: impl Iterator<Item = std::io::Result<Record>>,
    windows: &Windows,
    trace: &mut Trace,
    mut facts: StepFacts,
    on_step: &mut dyn FnMut(&Skeleton),
) -> std::io::Result<StepResults> {
    let mut results = StepResults::default();
    let mut routed = routed.peekable();
    for (step, window) in windows.steps.iter().enumerate() {
        trace.events.clear();
        facts.previous_end.clear();
        let mut last_index = None;
        while let Some(record) = routed.next_if(|r| {
            r.as_ref()
                .map_or(true, |r| usize::try_from(r.step).is_ok_and(|s| s <= step))
        }) {
            let record = record?;
            // A record routed twice to one step (it cannot be, but a step reads each event
            // once) is taken once.
            if usize::try_from(record.step).is_ok_and(|s| s < step)
                || last_index == Some(record.index)
            {
                continue;
            }
            last_index = Some(record.index);
            trace.events.push(record.event);
            facts.previous_end.push(record.previous_end);
        }
        let skeleton = step_skeleton(trace, window, &facts);
        on_step(&skeleton);
        let simulation = simulate(&skeleton, &Durations::trace_own());
        if let (Some(built), Some(simulated)) = (skeleton.steps.first(), simulation.steps.first()) {
            results.numbers.push(StepNumbers::new(built, simulated));
        }
        // The in-memory prediction takes a step's compiled code in the first window of its
        // name.
        let first_named = windows.steps.iter().position(|w| w.name == window.name);
        let compiled = match first_named {
            Some(first) if first < step => results.compiled.get(first).copied().flatten(),
            _ => uninstrumented_compiled_us(trace, window),
        };
        results.compiled.push(compiled);
    }
    trace.events = Vec::new();
    Ok(results)
}
