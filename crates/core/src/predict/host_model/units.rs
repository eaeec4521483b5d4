//! The units the host model costs: each thread's outermost ops.
//!
//! A unit is an op with no enclosing op: a dispatcher op (`aten::linear`, `mylib::op`: a name
//! with a namespace), a TorchScript fusion group (`fused_mul_add`), or a kernel Inductor
//! generated (`graph_0_cpp_fused_gelu_view_1`). Frames such as a TorchScript method's
//! `forward` are cpu_op events too, but the framework runs them: the ops inside are the units,
//! and the time between units is the framework's.

use crate::signature::fusion_group::is_fusion_group_op;
use crate::signature::generated::inductor_cpp_op;
use crate::trace::link::Links;
use crate::trace::{Category, ExecutionId, FxHashMap, Nanos, Trace};

/// One outermost op of a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    /// The op's name (`aten::linear`).
    pub name: String,
    /// Op events the profiler recorded inside it, the unit itself included: each one trip
    /// through the dispatcher.
    pub cpu_events: u32,
}

/// Every thread's units, by (pid, tid), each list in start order.
#[derive(Debug, Default)]
pub struct Units {
    by_thread: FxHashMap<(ExecutionId, ExecutionId), Vec<Unit>>,
}

/// Whether an op of this name is a unit of work rather than a frame of the framework.
pub fn is_unit_name(name: &str) -> bool {
    name.contains("::") || is_fusion_group_op(name) || inductor_cpp_op(name).is_some()
}

impl Units {
    /// The units of `trace`, with `links`' op nesting.
    pub fn of(trace: &Trace, links: &Links) -> Units {
        let events = &trace.events;
        let is_unit = |index: usize| is_unit_name(trace.name(&events[index]));
        // Each op's outermost enclosing unit (or itself): where its dispatch cost belongs.
        let mut outermost: FxHashMap<usize, u32> = FxHashMap::default();
        for (index, event) in events.iter().enumerate() {
            if event.category != Category::CpuOp {
                continue;
            }
            let unit = links
                .ancestors(index)
                .into_iter()
                .chain(std::iter::once(index))
                .find(|&op| is_unit(op));
            if let Some(unit) = unit {
                *outermost.entry(unit).or_default() += 1;
            }
        }
        let mut by_thread: FxHashMap<(ExecutionId, ExecutionId), Vec<Unit>> = FxHashMap::default();
        for (&index, &cpu_events) in &outermost {
            let event = &events[index];
            by_thread
                .entry((event.pid, event.tid))
                .or_default()
                .push(Unit {
                    start_ns: event.ts_ns,
                    end_ns: event.end_ns(),
                    name: trace.name(event).to_owned(),
                    cpu_events,
                });
        }
        for units in by_thread.values_mut() {
            units.sort_by_key(|u| (u.start_ns, std::cmp::Reverse(u.end_ns)));
        }
        Units { by_thread }
    }

    /// The units of one thread that start in `[from, until)`, in start order.
    pub fn of_thread(
        &self,
        thread: (ExecutionId, ExecutionId),
        from: Nanos,
        until: Nanos,
    ) -> &[Unit] {
        let Some(units) = self.by_thread.get(&thread) else {
            return &[];
        };
        let first = units.partition_point(|u| u.start_ns < from);
        let last = units.partition_point(|u| u.start_ns < until);
        units.get(first..last).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_and_fusion_groups_are_units_and_frames_are_not() {
        assert!(is_unit_name("aten::linear"));
        assert!(is_unit_name("mylib::op"));
        assert!(is_unit_name("fused_mul_mul_mul_mu_5065363705190979294"));
        assert!(is_unit_name("graph_0_cpp_fused_gelu_view_1"));
        assert!(!is_unit_name("forward"));
        assert!(!is_unit_name("ProfilerStep#1"));
    }
}
