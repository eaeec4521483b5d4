//! `replay merge` of `bench scan` shards: benchmark_full.csv, heatmap_data.json and
//! memory_breakdown.csv, as a run writes them, then the analysis (`bench scan analyze`) into
//! `plots/`.

use std::path::Path;

use replay_core::shard::MergePlan;
use replay_core::suite::RowSink as _;

use crate::error::Context as _;

use super::outputs::{FULL_CSV, HEATMAP_JSON, MEMORY_BREAKDOWN_CSV};
use super::rows::COLUMNS;
use super::ScanOutputs;
#[cfg(doc)]
use super::COMMAND;
use crate::suites::scan::analyze;
use crate::suites::scan::status::is_success;

/// Where the merged scan's analysis goes, inside `--out`.
pub const SCAN_PLOTS_DIR: &str = "plots";

/// Merges the shards of `plan` (of [`COMMAND`]) into `out`, then analyses the merged rows;
/// the lines say what was written.
pub fn merge(plan: &MergePlan, out: &Path) -> crate::Result<Vec<String>> {
    let rows = replay_core::shard::rows::ordered_rows(plan, FULL_CSV, &COLUMNS)
        .map_err(crate::Error::from)?;
    let mut outputs = ScanOutputs::create(out)?;
    for row in &rows {
        outputs.push(row)?;
    }
    let ok = rows
        .iter()
        .filter(|r| {
            r.get("status")
                .and_then(|s| s.as_str())
                .is_some_and(is_success)
        })
        .count();
    let mut lines = vec![format!("{} cases, {ok} success", rows.len())];
    for file in [FULL_CSV, HEATMAP_JSON, MEMORY_BREAKDOWN_CSV] {
        lines.push(format!("wrote {}", out.join(file).display()));
    }
    if ok == 0 {
        lines.push("no successful case: no analysis".into());
        return Ok(lines);
    }
    let plots = out.join(SCAN_PLOTS_DIR);
    // Not the user's to fix here (exit status 1), whatever the analysis says of its file.
    let summary = analyze::run(&out.join(FULL_CSV), &plots, None, &[])
        .map_err(|e| crate::Error::suite(e, false))
        .context("analysing the merged benchmark_full.csv")?;
    lines.push(format!(
        "wrote {} tables and plots to {} (open index.html)",
        summary.files.len(),
        plots.display()
    ));
    Ok(lines)
}
