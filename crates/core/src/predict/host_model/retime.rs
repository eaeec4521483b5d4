//! Re-timing one host thread: each item's host time from the host model instead of the
//! profiled trace.
//!
//! The thread's items (gaps, launch calls, waits) are laid on the trace's axis and cut at
//! the units' edges ([`super::units`]): every moment is either inside a unit (the op's own
//! host time: dispatcher, the op's code, its launch calls) or between units (the
//! framework: TorchScript's interpreter, Python, a compiled model's wrapper). Then
//! - a unit's host time becomes its modelled cost ([`UnitCosts::unit_ns`]): each of its gap
//!   pieces and launch calls is scaled by the same factor, so the launches keep their place
//!   inside the op;
//! - the framework time before each unit becomes the host profile's interpreter cost per op;
//! - a wait keeps its dependencies and takes the measured wake-up (`sync_us`) as its own cost.
//!
//! Only durations change: the items, their order and every dependency stay the trace's.

use crate::results::host_profile::HostProfile;
use crate::trace::Nanos;

use super::super::durations::us_to_ns;
use super::super::skeleton::{HostItem, HostThread, ThreadInTrace};
use super::units::Unit;

/// What the model knows of the costs, resolved for one trace.
pub(super) struct UnitCosts<'a> {
    pub host: &'a HostProfile,
    /// Each signature index's host time per call measured in the run that timed its device
    /// time (`isolated.json`'s `host_us`); `None` where it was not measured.
    pub measured_host_ns: &'a [Option<Nanos>],
    /// The profiler's cost per runtime call event, taken out of a launch call the model has
    /// no cost for.
    pub runtime_event_ns: Nanos,
}

/// What re-timing one thread did, for the report.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ThreadTally {
    pub units: u64,
    pub launches: u64,
    /// Launches whose host cost came from the replay's own measurement.
    pub launches_measured: u64,
    /// Units whose host time had no item to carry it (nothing re-timed).
    pub units_unplaced: u64,
    /// The modelled-to-profiled host time of the units the replay measured whole: what the
    /// others are scaled by.
    pub measured_ratio: Option<f64>,
}

/// Where a stretch of host time belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Inside unit `k`.
    Unit(usize),
    /// Between units: before unit `k` (`k == units.len()`: after the last).
    Before(usize),
}

/// The unit (or the stretch between units) that `at` falls in; `cursor` moves forward only.
fn owner_at(units: &[Unit], cursor: &mut usize, at: Nanos) -> Owner {
    while *cursor < units.len() && units[*cursor].end_ns <= at {
        *cursor += 1;
    }
    match units.get(*cursor) {
        Some(unit) if unit.start_ns <= at => Owner::Unit(*cursor),
        _ => Owner::Before(*cursor),
    }
}

/// The pieces of `[start, end)` by owner, in order. `cursor` is [`owner_at`]'s: a thread's
/// items come in time order, so one cursor walks its units once.
fn pieces(units: &[Unit], cursor: &mut usize, start: Nanos, end: Nanos) -> Vec<(Owner, Nanos)> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let owner = owner_at(units, cursor, at);
        let until = match owner {
            Owner::Unit(k) => units[k].end_ns,
            Owner::Before(k) => units.get(k).map_or(end, |u| u.start_ns),
        }
        .min(end)
        .max(at + 1);
        out.push((owner, until - at));
        at = until;
    }
    out
}

impl UnitCosts<'_> {
    fn us(us: Option<f64>) -> Option<Nanos> {
        us.and_then(us_to_ns)
    }

    /// The modelled host time of unit `unit`, which launched `launches` (the signature index
    /// of each launch call's first activity, and the call's profiled dispatch), and whether
    /// the replay measured every launch of it (else the time is a guess that
    /// [`apply_plan`] replaces by the trace's own ratio).
    fn unit_ns(
        &self,
        unit: &Unit,
        launches: &[(Option<u32>, Nanos)],
        tally: &mut ThreadTally,
    ) -> (Nanos, bool) {
        let dispatch = Self::us(self.host.dispatch_us_per_op).unwrap_or(0);
        if launches.is_empty() {
            // An op measured apart costs its whole call, the ops nested in it included (as
            // many events as `ops_events` says); every other event is one dispatcher trip.
            let (own, covered) = match self.host.ops_us.get(&unit.name) {
                Some(&us) => (
                    Self::us(Some(us)).unwrap_or(dispatch),
                    self.host
                        .ops_events
                        .get(&unit.name)
                        .map_or(1, |&events| events.round().max(1.0) as u32),
                ),
                None => (dispatch, 1),
            };
            let inner = Nanos::from(unit.cpu_events.saturating_sub(covered));
            return (own.saturating_add(dispatch.saturating_mul(inner)), true);
        }
        let mut total: Nanos = 0;
        let mut measured: u32 = 0;
        for &(signature, profiled_dispatch) in launches {
            tally.launches += 1;
            let own =
                signature.and_then(|s| self.measured_host_ns.get(s as usize).copied().flatten());
            match own {
                Some(ns) => {
                    tally.launches_measured += 1;
                    measured += 1;
                    total = total.saturating_add(ns);
                }
                None => {
                    let launch = Self::us(self.host.launch_us).unwrap_or_else(|| {
                        profiled_dispatch
                            .saturating_sub(self.runtime_event_ns)
                            .max(0)
                    });
                    total = total.saturating_add(launch);
                }
            }
        }
        // Every other op event inside the unit (the unit itself when none of its launches
        // was measured, the wrappers around a measured op) is one trip through the dispatcher.
        let others = Nanos::from(unit.cpu_events.saturating_sub(measured));
        (
            total.saturating_add(dispatch.saturating_mul(others)),
            measured as usize == launches.len(),
        )
    }
}

/// A thread's items cut at its units' edges, with each unit's profiled and modelled time:
/// what [`apply_plan`] re-times the thread with.
pub(super) struct ThreadPlan {
    item_pieces: Vec<Vec<(Owner, Nanos)>>,
    in_unit: Vec<Nanos>,
    between: Vec<Nanos>,
    /// Each unit's modelled host time, and whether the replay measured all its launches.
    targets: Vec<(Nanos, bool)>,
}

impl ThreadPlan {
    /// The modelled and the profiled host time of the units the replay measured whole.
    pub(super) fn measured_totals(&self) -> (Nanos, Nanos) {
        self.targets
            .iter()
            .zip(&self.in_unit)
            .filter(|((_, measured), _)| *measured)
            .fold((0, 0), |(m, p), ((target, _), profiled)| {
                (m.saturating_add(*target), p.saturating_add(*profiled))
            })
    }
}

/// Plans `thread`'s re-timing: `place` is where its items lie in the trace, `units` the
/// thread's units in the step. `None` when there is nothing to re-time.
pub(super) fn plan_thread(
    thread: &HostThread,
    place: &ThreadInTrace,
    units: &[Unit],
    costs: &UnitCosts<'_>,
    tally: &mut ThreadTally,
) -> Option<ThreadPlan> {
    let starts = &place.item_starts;
    if units.is_empty() || starts.len() != thread.items.len() {
        return None;
    }
    tally.units += units.len() as u64;
    let n = units.len();
    let mut in_unit: Vec<Nanos> = vec![0; n];
    let mut launches: Vec<Vec<(Option<u32>, Nanos)>> = vec![Vec::new(); n];
    let mut between: Vec<Nanos> = vec![0; n + 1];
    let mut item_pieces: Vec<Vec<(Owner, Nanos)>> = Vec::with_capacity(thread.items.len());
    let mut timed_as_work: Vec<bool> = vec![false; n];
    let mut cursor = 0;
    for (index, item) in thread.items.iter().enumerate() {
        let start = starts[index];
        let owned = match item {
            HostItem::Gap { ns, .. } => {
                pieces(units, &mut cursor, start, start.saturating_add(*ns))
            }
            HostItem::Launch {
                signature,
                dispatch_ns,
                ..
            } => {
                let owner = owner_at(units, &mut cursor, start);
                if let Owner::Unit(k) = owner {
                    launches[k].push((*signature, *dispatch_ns));
                }
                vec![(owner, *dispatch_ns)]
            }
            HostItem::HostOp { .. } => {
                // A CPU trace's op is timed as device work (its replayed time): it is the
                // unit's own time, nothing for the host model to place.
                if let Owner::Unit(k) = owner_at(units, &mut cursor, start) {
                    timed_as_work[k] = true;
                }
                Vec::new()
            }
            HostItem::Wait { .. } => Vec::new(),
        };
        for &(owner, ns) in &owned {
            match owner {
                Owner::Unit(k) => in_unit[k] = in_unit[k].saturating_add(ns),
                Owner::Before(k) => between[k] = between[k].saturating_add(ns),
            }
        }
        item_pieces.push(owned);
    }
    let targets = units
        .iter()
        .zip(&launches)
        .map(|(unit, launched)| costs.unit_ns(unit, launched, tally))
        .collect();
    tally.units_unplaced += in_unit
        .iter()
        .zip(&timed_as_work)
        .filter(|&(&ns, &work)| ns == 0 && !work)
        .count() as u64;
    Some(ThreadPlan {
        item_pieces,
        in_unit,
        between,
        targets,
    })
}

/// Re-times `thread` by its `plan`. A unit the replay did not measure whole (a TorchScript
/// fusion group, an op that failed to replay) takes its profiled time times `ratio`, the
/// modelled-to-profiled ratio of the trace's measured units, when there is one.
pub(super) fn apply_plan(
    thread: &mut HostThread,
    plan: &ThreadPlan,
    ratio: Option<f64>,
    costs: &UnitCosts<'_>,
) {
    let n = plan.in_unit.len();
    let (in_unit, between) = (&plan.in_unit, &plan.between);
    let interpreter = UnitCosts::us(costs.host.interpreter_us_per_op).unwrap_or(0);
    let mut unit_target: Vec<Nanos> = plan
        .targets
        .iter()
        .zip(in_unit)
        .map(|(&(target, measured), &profiled)| match (measured, ratio) {
            (false, Some(ratio)) => (profiled as f64 * ratio).round() as Nanos,
            _ => target,
        })
        .collect();
    for k in 0..n {
        // No framework time before a unit in the trace (ops back to back): its interpreter
        // cost goes into the unit.
        if between[k] == 0 {
            unit_target[k] = unit_target[k].saturating_add(interpreter);
        }
    }
    let factor = |target: Nanos, profiled: Nanos| {
        if profiled > 0 {
            target as f64 / profiled as f64
        } else {
            0.0
        }
    };
    let unit_factor: Vec<f64> = (0..n).map(|k| factor(unit_target[k], in_unit[k])).collect();
    let between_factor: Vec<f64> = (0..=n).map(|k| factor(interpreter, between[k])).collect();
    let scaled = |owner: Owner, ns: Nanos| -> Nanos {
        let f = match owner {
            Owner::Unit(k) => unit_factor[k],
            Owner::Before(k) => between_factor[k],
        };
        (ns as f64 * f).round() as Nanos
    };

    // Pass 3: the new durations.
    let wake = UnitCosts::us(costs.host.sync_us);
    for (item, owned) in thread.items.iter_mut().zip(&plan.item_pieces) {
        match item {
            HostItem::Gap { ns, profiled_ops } => {
                *ns = owned.iter().map(|&(o, p)| scaled(o, p)).sum();
                // The model's costs are unprofiled: nothing is left to take out.
                *profiled_ops = 0;
            }
            HostItem::Launch { dispatch_ns, .. } => {
                *dispatch_ns = match owned.first() {
                    Some(&(owner @ Owner::Unit(_), ns)) => scaled(owner, ns),
                    _ => UnitCosts::us(costs.host.launch_us).unwrap_or_else(|| {
                        dispatch_ns.saturating_sub(costs.runtime_event_ns).max(0)
                    }),
                };
            }
            HostItem::Wait { residual_ns, .. } => {
                if let Some(wake) = wake {
                    *residual_ns = wake;
                }
            }
            HostItem::HostOp { .. } => {}
        }
    }
}

/// The trace's host time with the profiler's own cost taken out: `cpu_event_ns` per op the
/// profiler recorded in a gap, `runtime_event_ns` per launch call and wait.
pub(super) fn correct_thread(
    thread: &mut HostThread,
    cpu_event_ns: Nanos,
    runtime_event_ns: Nanos,
) {
    for item in &mut thread.items {
        match item {
            HostItem::Gap { ns, profiled_ops } => {
                let recording = cpu_event_ns.saturating_mul(Nanos::from(*profiled_ops));
                *ns = ns.saturating_sub(recording).max(0);
                *profiled_ops = 0;
            }
            HostItem::Launch { dispatch_ns, .. } => {
                *dispatch_ns = dispatch_ns.saturating_sub(runtime_event_ns).max(0);
            }
            HostItem::Wait { residual_ns, .. } => {
                *residual_ns = residual_ns.saturating_sub(runtime_event_ns).max(0);
            }
            HostItem::HostOp { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(start: Nanos, end: Nanos) -> Unit {
        Unit {
            start_ns: start,
            end_ns: end,
            name: "aten::x".into(),
            cpu_events: 1,
        }
    }

    #[test]
    fn a_stretch_is_cut_at_the_units_edges() {
        let units = [unit(10, 20), unit(30, 40)];
        assert_eq!(
            pieces(&units, &mut 0, 0, 50),
            vec![
                (Owner::Before(0), 10),
                (Owner::Unit(0), 10),
                (Owner::Before(1), 10),
                (Owner::Unit(1), 10),
                (Owner::Before(2), 10),
            ]
        );
        assert_eq!(pieces(&units, &mut 0, 12, 15), vec![(Owner::Unit(0), 3)]);
        assert_eq!(pieces(&units, &mut 0, 15, 15), vec![]);
    }
}
