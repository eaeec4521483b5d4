//! Result rows written as they are made: a CSV file whose header is written once and each row
//! appended and flushed at once, so a long grid that is stopped keeps every row it finished and
//! pandas reads the file at any moment.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};

/// One result row: column names and values, in the order of the suite's columns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub cells: Vec<(&'static str, Value)>,
}

impl Row {
    pub fn new() -> Row {
        Row::default()
    }

    /// Appends a column.
    pub fn with(mut self, column: &'static str, value: impl Into<Value>) -> Row {
        self.cells.push((column, value.into()));
        self
    }

    /// The value of `column`, if the row has it.
    pub fn get(&self, column: &str) -> Option<&Value> {
        self.cells
            .iter()
            .find(|(c, _)| *c == column)
            .map(|(_, v)| v)
    }
}

/// A CSV file of rows with a fixed header.
pub struct CsvRows {
    path: PathBuf,
    columns: Vec<&'static str>,
    file: File,
}

impl CsvRows {
    /// Opens `path` for `columns`. An existing file with the same header is appended to (as
    /// the original suites did, run after run); one with another header is a usage error
    /// naming it, never overwritten.
    pub fn open(path: &Path, columns: &[&'static str]) -> Result<CsvRows> {
        let header = columns.join(",");
        let io = |what: &'static str| move |error| Error::output(path, what, error);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            super::ensure_output_dir(dir)?;
        }
        let existing = match File::open(path) {
            Ok(f) => {
                let mut first = String::new();
                BufReader::new(f)
                    .read_line(&mut first)
                    .map_err(io("read"))?;
                Some(first.trim_end().to_owned())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io("open")(e)),
        };
        match existing.as_deref() {
            Some(found) if !found.is_empty() && found != header => {
                return Err(Error::BadInput {
                    path: path.to_path_buf(),
                    message: format!(
                        "holds rows with another header ({found}); give another output folder"
                    ),
                })
            }
            _ => {}
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io("open"))?;
        if existing.as_deref().is_none_or(str::is_empty) {
            writeln!(file, "{header}").map_err(io("write"))?;
        }
        Ok(CsvRows {
            path: path.to_path_buf(),
            columns: columns.to_vec(),
            file,
        })
    }

    /// The file's length now: where the next row starts.
    pub fn end(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|error| Error::output(&self.path, "read", error))
    }

    /// Appends `row` (its cells in header order; a missing column is empty) and flushes it.
    pub fn append(&mut self, row: &Row) -> Result<()> {
        let line = self
            .columns
            .iter()
            .map(|c| row.get(c).map(cell).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",");
        // Whole or not at all: a row the disk refused (ENOSPC) is taken back off the file.
        super::append::append_whole(&mut self.file, format!("{line}\n").as_bytes())
            .map_err(|error| Error::output(&self.path, "write", error))
    }
}

/// A whole CSV file of `rows` under `columns` (a missing column is empty), for files that are
/// rewritten whole rather than appended to.
pub fn to_csv_bytes(columns: &[&str], rows: &[Row]) -> Vec<u8> {
    let mut text = columns.join(",");
    text.push('\n');
    for row in rows {
        let line = columns
            .iter()
            .map(|c| row.get(c).map(cell).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",");
        text.push_str(&line);
        text.push('\n');
    }
    text.into_bytes()
}

/// A CSV field: numbers and booleans as JSON writes them, strings quoted when they must be.
fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) if s.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_once_rows_appended_and_quoted_and_another_header_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/bench.csv");
        let columns = ["T", "backend", "time_ms", "error_msg"];
        let mut rows = CsvRows::open(&path, &columns).unwrap();
        rows.append(
            &Row::new()
                .with("T", 128)
                .with("backend", "cpu")
                .with("time_ms", 1.5),
        )
        .unwrap();
        drop(rows);
        // A second run appends under the same header.
        let mut rows = CsvRows::open(&path, &columns).unwrap();
        rows.append(
            &Row::new()
                .with("T", 256)
                .with("backend", "torch")
                .with("error_msg", "out of memory, \"CUDA\""),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "T,backend,time_ms,error_msg\n128,cpu,1.5,\n256,torch,,\"out of memory, \"\"CUDA\"\"\"\n"
        );
        // The whole-file form writes the same lines.
        let rows = [
            Row::new().with("T", 128).with("time_ms", 1.5),
            Row::new().with("error_msg", "a, b"),
        ];
        assert_eq!(
            String::from_utf8(to_csv_bytes(&columns, &rows)).unwrap(),
            "T,backend,time_ms,error_msg\n128,,1.5,\n,,,\"a, b\"\n"
        );
        let err = CsvRows::open(&path, &["other"]).err().unwrap();
        assert!(err.to_string().contains("another header"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}
