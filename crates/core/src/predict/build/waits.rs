//! What a synchronising call waits for: the activities it awaits and the residual host
//! time after the last of them.

use crate::trace::{Event, Nanos};

use super::super::skeleton::{HostItem, StepSkeleton};

/// A wait whose activities depend on what was issued before it, from any thread: filled in
/// once every thread is built.
pub(super) struct WaitRequest {
    pub(super) thread: usize,
    pub(super) item: usize,
    pub(super) call: usize,
    /// `None`: every stream.
    pub(super) stream: Option<usize>,
}

pub(super) enum SyncedStream {
    Stream(usize),
    Device,
    Idle,
}

/// The host time of a wait call beyond the wait itself: from when it could return (its
/// start, or the end of the awaited work if later) to when it did.
pub(super) fn residual(events: &[Event], awaited: &[usize], call: &Event) -> Nanos {
    let finished = awaited
        .iter()
        .map(|&e| events[e].end_ns())
        .max()
        .unwrap_or(call.ts_ns);
    call.end_ns()
        .saturating_sub(finished.max(call.ts_ns))
        .max(0)
}

/// Fills in the waits for "everything issued before the call": per stream, the last
/// activity whose launch call (or, without one, whose own start) came before the wait.
pub(super) fn resolve_waits(
    step: &mut StepSkeleton,
    members: &[usize],
    issued_at: &[Nanos],
    events: &[Event],
    waits: &[WaitRequest],
) {
    if waits.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..issued_at.len()).collect();
    order.sort_by_key(|&a| (issued_at[a], a));
    let mut requests: Vec<&WaitRequest> = waits.iter().collect();
    requests.sort_by_key(|w| (events[w.call].ts_ns, w.call));

    let mut last_issued: Vec<Option<usize>> = vec![None; step.streams.len()];
    let mut next = 0;
    for request in requests {
        let call = &events[request.call];
        while let Some(&activity) = order.get(next) {
            if issued_at[activity] >= call.ts_ns {
                break;
            }
            if let Some(stream) = step.activities.get(activity).map(|a| a.stream) {
                if let Some(slot) = last_issued.get_mut(stream) {
                    *slot = Some(slot.map_or(activity, |s: usize| s.max(activity)));
                }
            }
            next += 1;
        }
        let on: Vec<usize> = match request.stream {
            Some(stream) => last_issued
                .get(stream)
                .copied()
                .flatten()
                .into_iter()
                .collect(),
            None => last_issued.iter().flatten().copied().collect(),
        };
        let awaited: Vec<usize> = on.iter().filter_map(|&a| members.get(a).copied()).collect();
        let residual_ns = residual(events, &awaited, call);
        if let Some(HostItem::Wait {
            on: slot,
            residual_ns: slot_residual,
            ..
        }) = step
            .threads
            .get_mut(request.thread)
            .and_then(|t| t.items.get_mut(request.item))
        {
            *slot = on;
            *slot_residual = residual_ns;
        }
    }
}
