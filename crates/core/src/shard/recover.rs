//! What a killed run left: the complete rows of a row file (a CSV written by `CsvRows`) and
//! the complete entries of a journal (JSON lines). A row is complete when its line ended
//! (`\n` outside quotes) and it has the header's number of cells; anything after the last
//! complete row (a row half-written when the process died or the disk filled) is cut off
//! the file, so the next row is appended where it belongs. Rows before it are never touched.

use std::fs::OpenOptions;
use std::path::Path;

use crate::error::{Error, Result};
use crate::export::rows::Row;

/// A row file's rows from byte `start` on, as far as they are whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    pub rows: Vec<Row>,
    /// Bytes cut off the end: a half-written row (0 when the file ended on a row).
    pub dropped_bytes: u64,
}

/// The complete rows of `path` from byte `start` (the first row after the header, or after
/// the rows of earlier runs), in groups of `group` rows (a work item that writes several
/// rows is kept only when all of them are): the file is cut after the last whole group.
pub fn recover_rows(
    path: &Path,
    start: u64,
    columns: &[&'static str],
    group: usize,
) -> Result<Recovered> {
    let bytes = std::fs::read(path).map_err(|e| Error::BadInput {
        path: path.to_path_buf(),
        message: format!("--resume: cannot read the rows so far: {e}"),
    })?;
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    if start > bytes.len() {
        return Err(Error::BadInput {
            path: path.to_path_buf(),
            message: format!(
                "--resume: holds {} bytes, but the run's rows started at byte {start} (the file was replaced)",
                bytes.len()
            ),
        });
    }
    let ends = complete_lines(&bytes[start..], columns.len());
    let whole = ends.len() / group.max(1) * group.max(1);
    let end = ends.get(whole.wrapping_sub(1)).map_or(start, |e| start + e);
    let mut text = columns.join(",").into_bytes();
    text.push(b'\n');
    text.extend_from_slice(&bytes[start..end]);
    let rows = super::rows::rows_from_bytes(&text, columns).map_err(|message| Error::BadInput {
        path: path.to_path_buf(),
        message: format!("--resume: {message}"),
    })?;
    let dropped_bytes = (bytes.len() - end) as u64;
    if dropped_bytes > 0 {
        cut(path, end as u64)?;
    }
    Ok(Recovered {
        rows,
        dropped_bytes,
    })
}

/// The end offsets (one past each `\n`) of the complete CSV lines of `bytes` holding
/// `cells` cells each; the first incomplete or malformed line ends the list.
fn complete_lines(bytes: &[u8], cells: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let (mut quoted, mut commas) = (false, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => commas += 1,
            b'\n' if !quoted => {
                if commas + 1 != cells {
                    break;
                }
                ends.push(i + 1);
                commas = 0;
            }
            _ => {}
        }
    }
    ends
}

/// The complete entries of a journal (`path`, one JSON value a line); a half-written last
/// line is cut off the file. A missing journal has none.
pub fn recover_journal(path: &Path) -> Result<Vec<serde_json::Value>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::BadInput {
                path: path.to_path_buf(),
                message: format!("--resume: cannot read the journal: {e}"),
            })
        }
    };
    let mut entries = Vec::new();
    let mut end = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if line.last() != Some(&b'\n') {
            break;
        }
        match serde_json::from_slice(line) {
            Ok(value) => entries.push(value),
            Err(_) => break,
        }
        end += line.len();
    }
    if end < bytes.len() {
        cut(path, end as u64)?;
    }
    Ok(entries)
}

fn cut(path: &Path, len: u64) -> Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::output(path, "cut the half-written row off", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COLUMNS: [&str; 3] = ["n", "status", "error_msg"];

    #[test]
    fn whole_rows_are_kept_and_a_half_written_one_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let kept = "n,status,error_msg\n1,ok,\n2,error,\"a, \"\"quoted\"\"\nmessage\"\n";
        std::fs::write(&path, format!("{kept}3,o")).unwrap();
        let got = recover_rows(&path, 19, &COLUMNS, 1).unwrap();
        assert_eq!(got.rows.len(), 2);
        assert_eq!(got.rows[0].get("n"), Some(&json!(1)));
        assert_eq!(
            got.rows[1].get("error_msg"),
            Some(&json!("a, \"quoted\"\nmessage"))
        );
        assert_eq!(got.dropped_bytes, 3);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), kept);
        // A quote left open is half a row too, and groups keep whole work items only.
        std::fs::write(&path, format!("{kept}3,error,\"cut\n")).unwrap();
        let got = recover_rows(&path, 19, &COLUMNS, 2).unwrap();
        assert_eq!(got.rows.len(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), kept);
        let got = recover_rows(&path, 19, &COLUMNS, 3).unwrap();
        assert!(got.rows.is_empty());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "n,status,error_msg\n"
        );
        let err = recover_rows(&path, 1000, &COLUMNS, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("replaced"), "{err}");
    }

    #[test]
    fn a_journal_keeps_its_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        assert!(recover_journal(&path).unwrap().is_empty());
        std::fs::write(&path, "{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
        let entries = recover_journal(&path).unwrap();
        assert_eq!(entries, vec![json!({"a":1}), json!({"a":2})]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"a\":2}\n"
        );
    }
}
