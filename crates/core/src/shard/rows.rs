//! Merging a suite's row file (`CsvRows`): each shard's CSV holds one row per item it
//! covered, in the order it covered them; the merged rows are every item's row in the work
//! list's order. A suite's merger then hands them to its own writers.

use std::path::Path;

use serde_json::Value;

use super::plan::Part;
use super::{MergePlan, ShardError};
use crate::export::rows::Row;

/// Every part's `file` (a CSV under `columns`), its rows put in work-list order.
pub fn ordered_rows(
    plan: &MergePlan,
    file: &str,
    columns: &[&'static str],
) -> Result<Vec<Row>, ShardError> {
    ordered_rows_from(plan, |part| part.dir.join(file), columns)
}

/// [`ordered_rows`] for a suite whose row file is named per run (`results_<time>.csv`):
/// `file_of` says where a part's is (from its shard.json's `files`).
pub fn ordered_rows_from(
    plan: &MergePlan,
    file_of: impl Fn(&Part) -> std::path::PathBuf,
    columns: &[&'static str],
) -> Result<Vec<Row>, ShardError> {
    let mut parts = Vec::with_capacity(plan.parts.len());
    for part in &plan.parts {
        let path = file_of(part);
        let rows = read_rows(&path, columns)?;
        if rows.len() != part.manifest.covered.len() {
            return Err(ShardError::BadPart {
                path,
                message: format!(
                    "holds {} rows, but its shard.json lists {} items",
                    rows.len(),
                    part.manifest.covered.len()
                ),
            });
        }
        parts.push(rows);
    }
    Ok(plan
        .order()
        .into_iter()
        .map(|(part, slot)| parts[part][slot].clone())
        .collect())
}

/// A CSV written by `CsvRows` under `columns`, read back into rows: numbers as numbers,
/// empty cells as missing, the rest as text, so the suite's writers see what they wrote.
pub fn read_rows(path: &Path, columns: &[&'static str]) -> Result<Vec<Row>, ShardError> {
    let (header, records) = read_cells(path)?;
    if header != columns {
        return Err(ShardError::BadPart {
            path: path.to_path_buf(),
            message: format!(
                "its header is {}, this replay writes {}",
                header.join(","),
                columns.join(",")
            ),
        });
    }
    Ok(rows_under(records, columns))
}

/// Each record's cells as a row under `columns` (an empty cell left out).
fn rows_under(records: Vec<Vec<Option<Value>>>, columns: &[&'static str]) -> Vec<Row> {
    records
        .into_iter()
        .map(|record| {
            columns
                .iter()
                .zip(record)
                .filter_map(|(column, value)| Some((column, value?)))
                .fold(Row::new(), |row, (column, value)| row.with(column, value))
        })
        .collect()
}

/// A CSV's header and its rows of cells (`None`: an empty cell).
pub type Cells = (Vec<String>, Vec<Vec<Option<Value>>>);

/// Any CSV a suite wrote, whatever its columns: the header, and each row's cells as the row
/// had them ([`cell`]; an empty cell is `None`). The Python package's suite reader.
pub fn read_cells(path: &Path) -> Result<Cells, ShardError> {
    let bad = |message: String| ShardError::BadPart {
        path: path.to_path_buf(),
        message,
    };
    let reader = csv::Reader::from_path(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    cells_of(reader).map_err(bad)
}

/// The rows of a CSV held in memory (header first) under `columns`, as [`read_rows`] reads a
/// file: what `--resume` finds already written.
pub fn rows_from_bytes(bytes: &[u8], columns: &[&'static str]) -> Result<Vec<Row>, String> {
    let (_, records) = cells_of(csv::Reader::from_reader(bytes))?;
    Ok(rows_under(records, columns))
}

fn cells_of<R: std::io::Read>(mut reader: csv::Reader<R>) -> Result<Cells, String> {
    let bad = |message: String| message;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read its header: {e}")))?
        .iter()
        .map(str::to_owned)
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| bad(format!("cannot read a row: {e}")))?;
        rows.push(
            record
                .iter()
                .map(|text| (!text.is_empty()).then(|| cell(text)))
                .collect(),
        );
    }
    Ok((header, rows))
}

/// A cell's value as the row had it: an integer, a float, a boolean, else text.
fn cell(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(x) = text.parse::<f64>() {
        if x.is_finite() && text.chars().any(|c| c.is_ascii_digit()) {
            return Value::from(x);
        }
    }
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::rows::{to_csv_bytes, CsvRows};

    #[test]
    fn rows_read_back_write_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let columns = ["T", "backend", "time_ms", "ok", "error_msg"];
        let written = [
            Row::new()
                .with("T", 128)
                .with("backend", "cpu")
                .with("time_ms", 1.5)
                .with("ok", true),
            Row::new()
                .with("T", 256)
                .with("backend", "torch")
                .with("time_ms", 2.0)
                .with("error_msg", "out of memory, \"CUDA\""),
        ];
        let mut csv = CsvRows::open(&path, &columns).unwrap();
        for row in &written {
            csv.append(row).unwrap();
        }
        let read = read_rows(&path, &columns).unwrap();
        assert_eq!(read, written);
        assert_eq!(to_csv_bytes(&columns, &read), std::fs::read(&path).unwrap());
        let err = read_rows(&path, &["T"]).unwrap_err().to_string();
        assert!(err.contains("header"), "{err}");
    }

    #[test]
    fn cells_are_read_whatever_the_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("any.csv");
        std::fs::write(&path, "T,backend,time_ms,ok,note\n64,cpu,0.25,true,\n").unwrap();
        let (header, rows) = read_cells(&path).unwrap();
        assert_eq!(header, ["T", "backend", "time_ms", "ok", "note"]);
        assert_eq!(
            rows,
            vec![vec![
                Some(Value::from(64)),
                Some(Value::from("cpu")),
                Some(Value::from(0.25)),
                Some(Value::Bool(true)),
                None
            ]]
        );
        let missing = read_cells(&dir.path().join("none.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("none.csv") && missing.contains("cannot read it"),
            "{missing}"
        );
    }
}
