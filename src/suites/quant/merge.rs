//! `replay merge` of `bench quant` shards: one `results_<DDMMYYYY_HHMMSS>.csv` (named for the
//! merge's time, as a run names its own) and the seed's table.

use std::path::Path;

use replay_core::shard::MergePlan;
use replay_core::suite::RowSink as _;

use super::output::{open_results, table};
use super::rows::COLUMNS;
#[cfg(doc)]
use super::COMMAND;

/// Merges the shards of `plan` (of [`COMMAND`]) into `out`; the lines say what was written.
pub fn merge(plan: &MergePlan, out: &Path) -> crate::Result<Vec<String>> {
    // Each shard named its CSV for the time it ran: the name is in its shard.json.
    let rows = replay_core::shard::rows::ordered_rows_from(
        plan,
        |part| {
            part.dir
                .join(part.manifest.files.first().map_or("", String::as_str))
        },
        &COLUMNS,
    )
    .map_err(crate::Error::from)?;
    let (mut csv, path) = open_results(out, &COLUMNS)?;
    for row in &rows {
        csv.push(row)?;
    }
    let ok = rows
        .iter()
        .filter(|r| r.get("status").and_then(|s| s.as_str()) == Some("ok"))
        .count();
    Ok(vec![
        format!("{} rows, {ok} ok", rows.len()),
        table(&rows),
        format!("wrote {}", path.display()),
    ])
}
