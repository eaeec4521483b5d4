//! Readers of the result files replay writes, each through the core's own reader (the checks
//! and messages of the command that reads it), into frames:
//! - `isolated.json` (`replay isolated`): one row per signature;
//! - `comparison_report.json` (`replay compare`): its lists as frames, the rest as `summary`;
//! - a calibration profile (`replay calibrate`, `profiles/`): the same split;
//! - a suite's CSV (`bench scan`, `bench quant`, `bench mhc`, calibrate's CSVs): as written.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use replay_core::report::comparison::ComparisonReport;
use replay_core::results::calibration::Profile;
use replay_core::results::isolated::IsolatedResults;
use replay_core::shard::rows::read_cells;

use crate::columns::Table;
use crate::json_table::{sections, table};

fn value_of<T: Serialize>(path: &Path, value: &T) -> replay_core::Result<Value> {
    serde_json::to_value(value).map_err(|e| replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message: format!("cannot lay it out as a table: {e}"),
    })
}

/// `isolated.json`: its rows (`results`) as one frame, and the run's settings as `summary`.
pub fn isolated(path: &Path) -> replay_core::Result<Vec<(String, Table)>> {
    let results = IsolatedResults::read(path)?;
    Ok(sections(&value_of(path, &results)?))
}

/// `comparison_report.json`, read as `replay`'s report writer wrote it.
pub fn comparison(path: &Path) -> replay_core::Result<Vec<(String, Table)>> {
    let bad = |message: String| replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let report: ComparisonReport = serde_json::from_slice(&bytes).map_err(|e| {
        bad(format!(
            "not a comparison_report.json of `replay compare`: {e}"
        ))
    })?;
    Ok(sections(&value_of(path, &report)?))
}

/// A calibration profile.
pub fn profile(path: &Path) -> replay_core::Result<Vec<(String, Table)>> {
    let profile = Profile::read(path)?;
    Ok(sections(&value_of(path, &profile)?))
}

/// A suite's CSV: its columns as written, numbers as numbers, empty cells null.
pub fn suite_csv(path: &Path) -> replay_core::Result<Table> {
    let (header, records) = read_cells(path)?;
    let rows: Vec<Value> = records
        .into_iter()
        .map(|record| {
            let mut row = serde_json::Map::new();
            for (name, cell) in header.iter().zip(record) {
                row.insert(name.clone(), cell.unwrap_or(Value::Null));
            }
            Value::Object(row)
        })
        .collect();
    let mut frame = table(&rows);
    // The file's column order (a JSON object sorts its keys).
    frame
        .columns
        .sort_by_key(|c| header.iter().position(|h| *h == c.name));
    Ok(frame)
}
