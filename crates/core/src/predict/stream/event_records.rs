//! The `cudaEventRecord` calls a step's stream waits name. A `cudaStreamWaitEvent`'s
//! `cuda_sync` row names the record's correlation id; the builder asks when that record
//! started ([`crate::predict::build`]), wherever it lies. So each step that walks such a
//! wait gets the record call too: the wait rows (one per step they are routed to, carrying
//! the record's correlation id) and the record calls (the last of each id in the file, the
//! one the builder's index keeps) meet by correlation id.

use crate::predict::calls::{call_kind, CallKind};
use crate::trace::{Category, StringTable};

use super::record::Record;
use super::sink::{route, Sorter};

/// A request for the record that the wait row `row` names, from step `step`.
pub fn request(row: &Record, step: usize) -> Option<Record> {
    let wait = row.event.args.wait_on.as_ref()?;
    let mut request = Record {
        step: u32::try_from(step).unwrap_or(u32::MAX),
        ..row.clone()
    };
    request.event.args.correlation = Some(wait.record_correlation);
    Some(request)
}

/// The last `cudaEventRecord` call among `calls` (one correlation id's, in file order).
pub fn last_record<'r>(
    calls: impl Iterator<Item = &'r Record>,
    strings: &StringTable,
) -> Option<&'r Record> {
    calls
        .filter(|c| call_kind(strings.get(c.event.name)) == CallKind::EventRecord)
        .last()
}

/// Routes each record call to the steps that asked for it (`requests`: requests and
/// record calls, sorted by correlation id).
pub fn route_records(
    requests: impl Iterator<Item = std::io::Result<Record>>,
    routed: &mut Sorter,
) -> std::io::Result<()> {
    let mut group: Vec<Record> = Vec::new();
    for record in requests {
        let record = record?;
        if group
            .first()
            .is_some_and(|first| first.event.args.correlation != record.event.args.correlation)
        {
            route_group(&group, routed)?;
            group.clear();
        }
        group.push(record);
    }
    route_group(&group, routed)
}

fn route_group(group: &[Record], routed: &mut Sorter) -> std::io::Result<()> {
    let Some(call) = group.iter().find(|r| r.event.category.is_launch_call()) else {
        return Ok(());
    };
    let steps = group
        .iter()
        .filter(|r| r.event.category == Category::CudaSync)
        .map(|r| r.step as usize);
    route(routed, call, steps)
}
