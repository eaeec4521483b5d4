//! Interruptions in a profiled model call: host gaps far longer than the model's others.
//!
//! Between two ops of a TorchScript forward there is only the interpreter's own work, a few
//! microseconds, much the same from op to op. A gap of tens of microseconds there means the
//! process was not running: preempted by another process or, on a VM, by the host. That time
//! is the machine's, not the model's, and one profiled step is a single draw of it, so the
//! prediction of the model call replaces such a gap by the step's typical gap and says how
//! much it took out. The trace's own self-check keeps every gap as recorded.

use serde::{Deserialize, Serialize};

use super::skeleton::{HostItem, Skeleton};
use crate::trace::Nanos;

/// A gap counts as an interruption when it is longer than this many times the step's median
/// gap between ops...
pub const INTERRUPTION_FACTOR: i64 = 10;
/// ...and longer than this: short gaps are never interruptions, whatever the median.
pub const INTERRUPTION_MIN_NS: Nanos = 20_000;

/// What [`remove_interruptions`] took out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Interruptions {
    /// Gaps replaced by their step's median gap.
    pub gaps: u64,
    /// Host time taken out, over every step (µs).
    pub removed_us: f64,
}

/// Replaces every interruption between the first and the last op of each host thread by that
/// thread's median gap between ops (per recorded op the gap holds). Gaps before the first op and after the last are left
/// alone: they are outside the model call (see `model_call`).
pub fn remove_interruptions(skeleton: &mut Skeleton) -> Interruptions {
    let mut out = Interruptions::default();
    for step in &mut skeleton.steps {
        for thread in &mut step.threads {
            let work: Vec<usize> = thread
                .items
                .iter()
                .enumerate()
                .filter(|(_, item)| !matches!(item, HostItem::Gap { .. }))
                .map(|(i, _)| i)
                .collect();
            let (Some(&first), Some(&last)) = (work.first(), work.last()) else {
                continue;
            };
            // A gap holding recorded ops that launch nothing (views, CPU-side ops in a GPU
            // trace) is longer by their work: gaps are compared per op they hold.
            let per_op = |ns: Nanos, ops: u32| ns / Nanos::from(ops.max(1));
            let mut inner: Vec<Nanos> = thread.items[first..last]
                .iter()
                .filter_map(|item| match item {
                    HostItem::Gap { ns, profiled_ops } => Some(per_op(*ns, *profiled_ops)),
                    _ => None,
                })
                .collect();
            if inner.len() < 3 {
                continue;
            }
            inner.sort_unstable();
            let median = inner[inner.len() / 2];
            let threshold = median
                .saturating_mul(INTERRUPTION_FACTOR)
                .max(INTERRUPTION_MIN_NS);
            for item in &mut thread.items[first..last] {
                if let HostItem::Gap { ns, profiled_ops } = item {
                    if per_op(*ns, *profiled_ops) > threshold {
                        let typical = median.saturating_mul(Nanos::from((*profiled_ops).max(1)));
                        out.gaps += 1;
                        out.removed_us += (*ns - typical) as f64 / 1000.0;
                        *ns = typical;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::skeleton::StepSkeleton;
    use crate::predict::StepSource;

    fn step(gaps: &[Nanos], edges: Nanos) -> Skeleton {
        let mut skeleton = Skeleton::new(StepSource::ProfilerStep);
        let op = skeleton.intern_signature("op");
        let mut step = StepSkeleton::new("ProfilerStep#1", 0);
        let t = step.add_thread("1/1");
        step.push_gap(t, edges);
        step.push_host_op(t, Some(op), 10_000);
        for &gap in gaps {
            step.push_gap(t, gap);
            step.push_host_op(t, Some(op), 10_000);
        }
        step.push_gap(t, edges);
        skeleton.steps.push(step);
        skeleton
    }

    fn gaps(skeleton: &Skeleton) -> Vec<Nanos> {
        skeleton.steps[0].threads[0]
            .items
            .iter()
            .filter_map(|i| match i {
                HostItem::Gap { ns, .. } => Some(*ns),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_preemption_between_ops_becomes_a_typical_gap() {
        // Gaps of 2-4 µs and one of 44.5 µs, as in a bloom-tiny step profiled on a busy VM.
        let mut s = step(&[2_000, 3_000, 44_500, 2_500, 4_000], 300_000);
        let removed = remove_interruptions(&mut s);
        assert_eq!(removed.gaps, 1);
        assert!((removed.removed_us - 41.5).abs() < 1e-9, "{removed:?}");
        // The loop around the model (the edges) is not touched.
        assert_eq!(
            gaps(&s),
            vec![300_000, 2_000, 3_000, 3_000, 2_500, 4_000, 300_000]
        );
    }

    #[test]
    fn ordinary_variation_and_short_gaps_stay() {
        let mut s = step(&[2_000, 3_000, 15_000, 2_500], 0);
        assert_eq!(remove_interruptions(&mut s), Interruptions::default());
        // Ten times the median but under 20 µs: kept.
        let mut s = step(&[1_000, 1_000, 19_000, 1_000], 0);
        assert_eq!(remove_interruptions(&mut s).gaps, 0);
    }

    #[test]
    fn a_gap_full_of_recorded_ops_is_judged_per_op() {
        let mut skeleton = step(&[2_000, 3_000, 2_500, 4_000], 0);
        // 40 µs holding 20 recorded ops (2 µs each) is work, not an interruption.
        if let HostItem::Gap { ns, profiled_ops } = &mut skeleton.steps[0].threads[0].items[4] {
            *ns = 40_000;
            *profiled_ops = 20;
        } else {
            panic!("item 4 is a gap");
        }
        assert_eq!(remove_interruptions(&mut skeleton).gaps, 0);
    }

    #[test]
    fn too_few_gaps_to_judge() {
        let mut s = step(&[1_000, 90_000], 0);
        assert_eq!(remove_interruptions(&mut s).gaps, 0);
    }
}
