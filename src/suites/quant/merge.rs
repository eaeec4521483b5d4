//! `replay merge` of `bench quant` shards: one `results_<DDMMYYYY_HHMMSS>.csv` (named for the
//! merge's time, as a run names its own) and the seed's table.

use std::path::Path;

use replay_core::cli::merge::CommandMerger;
use replay_core::shard::MergePlan;
use replay_core::suite::RowSink as _;

use super::output::{open_results, table};
use super::rows::COLUMNS;
use super::COMMAND;

pub struct QuantMerger;

impl CommandMerger for QuantMerger {
    fn command(&self) -> &'static str {
        COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
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
}
