//! Merging the shards of `replay isolated`: its work items are the replay units of the
//! signature file (a signature and the ones that run inside its replay), each shard's
//! `isolated.json` holds its units' results, and the merged file holds every unit's results
//! in the file's unit order, with the same writers a single run uses.

use std::path::Path;

use super::{MergePlan, ShardError};
use crate::export::{self, OutputDir, OutputFile};
use crate::results::isolated::IsolatedResults;

/// The command name the manifests of `replay isolated` carry.
pub const COMMAND: &str = "isolated";

/// The merged results of `plan`'s parts.
pub fn merge(plan: &MergePlan) -> Result<IsolatedResults, ShardError> {
    let mut read = Vec::with_capacity(plan.parts.len());
    for part in &plan.parts {
        let path = OutputDir::new(&part.dir).path(OutputFile::IsolatedJson);
        let results = IsolatedResults::read(&path).map_err(|e| ShardError::BadPart {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if !results.complete {
            return Err(ShardError::BadPart {
                path,
                message: "says complete: false (the shard stopped before its last round)".into(),
            });
        }
        read.push(results);
    }
    let mut merged = read[0].clone();
    merged.results = Vec::new();
    for (part, slot) in plan.order() {
        let unit = &plan.parts[part].manifest.covered[slot];
        let before = merged.results.len();
        merged.results.extend(
            read[part]
                .results
                .iter()
                .filter(|r| &r.replayed_as == unit)
                .cloned(),
        );
        if merged.results.len() == before {
            return Err(ShardError::BadPart {
                path: plan.parts[part].dir.clone(),
                message: format!("isolated.json has no result for the replay unit {unit}"),
            });
        }
    }
    let in_parts: usize = read.iter().map(|r| r.results.len()).sum();
    if in_parts != merged.results.len() {
        return Err(ShardError::Mismatch(format!(
            "the parts' isolated.json files hold {in_parts} results, {} of them for the units their shard.json files list",
            merged.results.len()
        )));
    }
    merged.complete = true;
    Ok(merged)
}

/// Writes `isolated.json` and `isolated.csv` into `out`, as `replay isolated` does.
pub fn write(results: &IsolatedResults, out: &Path) -> crate::Result<Vec<String>> {
    let files = OutputDir::new(out);
    files.ensure()?;
    files.write(OutputFile::IsolatedJson, &export::json::to_bytes(results))?;
    files.write(
        OutputFile::IsolatedCsv,
        &export::csv::isolated_to_bytes(results),
    )?;
    Ok(vec![
        files.path(OutputFile::IsolatedJson).display().to_string(),
        files.path(OutputFile::IsolatedCsv).display().to_string(),
    ])
}
