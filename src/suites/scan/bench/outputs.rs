//! The run's three files in `--output-dir`, as the seed names them: `benchmark_full.csv`
//! (a row appended and flushed as each case ends), and `heatmap_data.json` and
//! `memory_breakdown.csv`, rewritten whole (atomically) after each row, so a stopped run
//! keeps all three up to its last case. A run starts the three afresh, as the seed's does.

use std::path::{Path, PathBuf};

use replay_core::export::rows::{to_csv_bytes, CsvRows, Row};
use replay_core::export::{json, write_atomic};
use replay_core::suite::RowSink;
use serde_json::{json, Map, Value};

use super::rows::COLUMNS;

pub const FULL_CSV: &str = "benchmark_full.csv";
pub const HEATMAP_JSON: &str = "heatmap_data.json";
pub const MEMORY_BREAKDOWN_CSV: &str = "memory_breakdown.csv";

/// `memory_breakdown.csv`'s header (the seed's), and the `benchmark_full.csv` column each
/// comes from.
const BREAKDOWN: [(&str, &str); 14] = [
    ("backend", "backend"),
    ("semiring", "semiring"),
    ("phase", "phase"),
    ("T", "T"),
    ("K", "K"),
    ("C", "C"),
    ("KC", "KC"),
    ("status", "status"),
    ("peak_allocated_gb", "peak_allocated_gb"),
    ("peak_reserved_gb", "peak_reserved_gb"),
    ("est_potentials_gb", "memory_potentials_gb"),
    ("est_dp_state_gb", "memory_dp_state_gb"),
    ("est_workspace_gb", "memory_workspace_gb"),
    ("est_autograd_gb", "memory_autograd_gb"),
];

/// The sink of a run's rows.
pub struct ScanOutputs {
    dir: PathBuf,
    full: CsvRows,
    rows: Vec<Row>,
}

impl ScanOutputs {
    /// Makes `dir` and starts the three files afresh (a previous run's are replaced).
    pub fn create(dir: &Path) -> replay_core::Result<ScanOutputs> {
        replay_core::export::ensure_output_dir(dir)?;
        let full_path = dir.join(FULL_CSV);
        match std::fs::remove_file(&full_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(replay_core::Error::output(&full_path, "replace", error)),
        }
        let outputs = ScanOutputs {
            dir: dir.to_path_buf(),
            full: CsvRows::open(&full_path, &COLUMNS)?,
            rows: Vec::new(),
        };
        outputs.rewrite()?;
        Ok(outputs)
    }

    /// Resumes the run in `dir` whose rows start at byte `start` of `benchmark_full.csv`: its
    /// whole rows are kept (a half-written last one is cut off) and returned, the other two
    /// files rewritten from them.
    pub fn resume(dir: &Path, start: u64) -> replay_core::Result<(ScanOutputs, Vec<Row>)> {
        let full_path = dir.join(FULL_CSV);
        let recovered = replay_core::shard::recover::recover_rows(&full_path, start, &COLUMNS, 1)?;
        let outputs = ScanOutputs {
            dir: dir.to_path_buf(),
            full: CsvRows::open(&full_path, &COLUMNS)?,
            rows: recovered.rows.clone(),
        };
        outputs.rewrite()?;
        Ok((outputs, recovered.rows))
    }

    /// Where the run's first row goes in `benchmark_full.csv` (after its header).
    pub fn rows_start(&self) -> replay_core::Result<u64> {
        self.full.end()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn rewrite(&self) -> replay_core::Result<()> {
        write_atomic(
            &self.dir.join(HEATMAP_JSON),
            &json::to_bytes(&heatmap(&self.rows)),
        )?;
        let columns: Vec<&str> = BREAKDOWN.iter().map(|(name, _)| *name).collect();
        let breakdown: Vec<Row> = self.rows.iter().map(breakdown_row).collect();
        write_atomic(
            &self.dir.join(MEMORY_BREAKDOWN_CSV),
            &to_csv_bytes(&columns, &breakdown),
        )
    }
}

impl RowSink for ScanOutputs {
    fn push(&mut self, row: &Row) -> replay_core::Result<()> {
        self.full.append(row)?;
        self.rows.push(row.clone());
        self.rewrite()
    }
}

fn breakdown_row(row: &Row) -> Row {
    BREAKDOWN.iter().fold(Row::new(), |out, (name, from)| {
        out.with(name, row.get(from).cloned().unwrap_or(Value::Null))
    })
}

/// The seed's heatmap data: per `<backend>_<semiring>_<phase>_T<T>`, the (K, C) cells with
/// their status, and peak and time for measured ones.
pub fn heatmap(rows: &[Row]) -> Value {
    let mut out = Map::new();
    let text = |row: &Row, column: &str| {
        row.get(column)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let value = |row: &Row, column: &str| row.get(column).cloned().unwrap_or(Value::Null);
    for row in rows {
        let (backend, semiring, phase) = (
            text(row, "backend"),
            text(row, "semiring"),
            text(row, "phase"),
        );
        let t = value(row, "T");
        let key = format!("{backend}_{semiring}_{phase}_T{t}");
        let ok = row
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(crate::suites::scan::status::is_success);
        let entry = out.entry(key).or_insert_with(|| {
            json!({
                "backend": backend,
                "semiring": semiring,
                "phase": phase,
                "T": t,
                "cells": [],
            })
        });
        if let Some(cells) = entry.get_mut("cells").and_then(Value::as_array_mut) {
            cells.push(json!({
                "K": value(row, "K"),
                "C": value(row, "C"),
                "KC": value(row, "KC"),
                "status": value(row, "status"),
                "peak_gb": if ok { value(row, "peak_allocated_gb") } else { Value::Null },
                "time_ms": if ok { value(row, "time_ms_median") } else { Value::Null },
            }));
        }
    }
    Value::Object(out)
}
