//! `replay merge` of `replay bench mhc` shards: each shard appended its configurations' rows
//! to its own `benchmark_results.csv` (the last rows it wrote: shard.json comes after them);
//! the merge puts every configuration's rows back in the run's order into one
//! `benchmark_results.csv`, and for a sweep writes the offload answer from all of them.

use std::path::Path;

use replay_core::export::rows::{CsvRows, Row};
use replay_core::shard::rows::read_rows;
use replay_core::shard::MergePlan;
use replay_core::suite::RowSink as _;

use super::rows::{COLUMNS, RESULTS_CSV};
use super::run::{
    configurations, options_from_settings, results_from_rows, rows_per_configuration, write_answer,
};
use super::MhcError;

/// Merges the shards of `plan` into `out`: one `benchmark_results.csv` and, for a sweep, the
/// offload answer; the lines say what was written.
pub fn merge(plan: &MergePlan, out: &Path) -> Result<Vec<String>, MhcError> {
    let options = options_from_settings(&plan.first().settings, out)?;
    let per = rows_per_configuration(&options);
    let mut parts: Vec<Vec<Row>> = Vec::with_capacity(plan.parts.len());
    for part in &plan.parts {
        let path = part.dir.join(RESULTS_CSV);
        let rows = read_rows(&path, &COLUMNS).map_err(|e| MhcError::InvalidInput(e.to_string()))?;
        let need = part.manifest.covered.len() * per;
        if rows.len() < need {
            return Err(MhcError::InvalidInput(format!(
                "{}: holds {} rows, but its shard.json lists {} configurations of {per} rows",
                path.display(),
                rows.len(),
                part.manifest.covered.len()
            )));
        }
        parts.push(rows[rows.len() - need..].to_vec());
    }
    let configurations = configurations(&options);
    let mut groups: Vec<Vec<Row>> = Vec::with_capacity(configurations.len());
    for ((part, slot), (placement, shape)) in plan.order().into_iter().zip(&configurations) {
        let group = parts[part][slot * per..(slot + 1) * per].to_vec();
        let batch = options.shapes[*shape].batch as u64;
        let device = placement.device_name(options.gpu_spec);
        let theirs = |r: &Row| {
            r.get("BatchSize").and_then(|v| v.as_u64()) == Some(batch)
                && r.get("Device").and_then(|v| v.as_str()) == Some(device.as_str())
        };
        if !group.iter().all(theirs) {
            return Err(MhcError::InvalidInput(format!(
                "{}: its last rows are not those of {device} B={batch} (was another run \
                 appended to it after the shard finished?)",
                plan.parts[part].dir.join(RESULTS_CSV).display()
            )));
        }
        groups.push(group);
    }
    let path = out.join(RESULTS_CSV);
    let mut csv =
        CsvRows::open(&path, &COLUMNS).map_err(|e| MhcError::InvalidInput(e.to_string()))?;
    for row in groups.iter().flatten() {
        csv.push(row)
            .map_err(|e| MhcError::InvalidInput(e.to_string()))?;
    }
    let rows: usize = groups.iter().map(Vec::len).sum();
    let ok = groups
        .iter()
        .flatten()
        .filter(|r| r.get("Status").and_then(|s| s.as_str()) == Some("ok"))
        .count();
    let mut lines = vec![
        format!(
            "{} configurations, {rows} rows, {ok} ok",
            configurations.len()
        ),
        format!("wrote {}", path.display()),
    ];
    if options.sweep {
        let results = results_from_rows(&options, &groups);
        let (md, svg, _) = write_answer(&options, &results)?;
        lines.push(format!("wrote {} and {}", md.display(), svg.display()));
    }
    Ok(lines)
}
