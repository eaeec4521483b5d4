//! The rows file of a windowed `replay isolated` (a signature file too large to hold whole,
//! replayed a window of signatures at a time): each finished window's rows appended as JSON
//! lines and closed by a marker line, flushed to disk before the next window starts. It is
//! what a windowed run holds of its results instead of memory; `isolated.json` and
//! `isolated.csv` are assembled from it, streaming, whole or not at all
//! ([`assemble`]), and `--resume` takes its complete windows back ([`RowsFile::open`]).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::results::isolated::{IsolatedResults, SignatureResult};

/// The rows file's name in the output folder.
pub const ROWS_FILE: &str = "isolated.rows.jsonl";

/// The line that closes a window's rows.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    window: usize,
    rows: usize,
}

/// An open rows file.
pub struct RowsFile {
    path: PathBuf,
    file: File,
    /// Windows complete in the file.
    pub windows: usize,
    /// Rows in those windows.
    pub rows: usize,
}

impl RowsFile {
    /// Opens `dir`'s rows file: resuming, its complete windows are kept (rows after the last
    /// marker, a window the kill cut short, are cut off) and `visit` sees each of their rows;
    /// otherwise it starts empty.
    pub fn open(
        dir: &Path,
        resume: bool,
        mut visit: impl FnMut(&SignatureResult),
    ) -> Result<RowsFile> {
        let path = dir.join(ROWS_FILE);
        let (mut windows, mut rows, mut keep) = (0usize, 0usize, 0u64);
        if resume && path.exists() {
            let mut pending = Vec::new();
            let mut offset = 0u64;
            let reader =
                BufReader::new(File::open(&path).map_err(|e| Error::output(&path, "open", e))?);
            for line in reader.split(b'\n') {
                let line = line.map_err(|e| Error::output(&path, "read", e))?;
                offset += line.len() as u64 + 1;
                if let Ok(marker) = serde_json::from_slice::<Marker>(&line) {
                    if marker.window != windows || marker.rows != pending.len() {
                        return Err(bad(&path, "a window marker out of order"));
                    }
                    pending.iter().for_each(&mut visit);
                    rows += pending.len();
                    pending.clear();
                    windows += 1;
                    keep = offset;
                } else {
                    // A half-written last line is what a kill leaves: it is cut off below.
                    match serde_json::from_slice::<SignatureResult>(&line) {
                        Ok(row) => pending.push(row),
                        Err(_) => break,
                    }
                }
            }
        }
        super::ensure_output_dir(dir)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::output(&path, "open", e))?;
        file.set_len(keep)
            .map_err(|e| Error::output(&path, "cut back", e))?;
        Ok(RowsFile {
            path,
            file,
            windows,
            rows,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends window `self.windows`'s rows and its marker, whole or not at all, and syncs
    /// them to disk.
    pub fn append_window(&mut self, rows: &[SignatureResult]) -> Result<()> {
        let mut bytes = Vec::new();
        for row in rows.iter().map(serde_json::to_vec) {
            bytes.extend(row.map_err(|e| encoding(&self.path, e))?);
            bytes.push(b'\n');
        }
        let marker = Marker {
            window: self.windows,
            rows: rows.len(),
        };
        bytes.extend(serde_json::to_vec(&marker).map_err(|e| encoding(&self.path, e))?);
        bytes.push(b'\n');
        super::append::append_whole(&mut self.file, &bytes)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::output(&self.path, "write", e))?;
        self.windows += 1;
        self.rows += rows.len();
        Ok(())
    }
}

fn bad(path: &Path, message: &str) -> Error {
    Error::BadInput {
        path: path.to_path_buf(),
        message: format!("--resume: {message}; not the rows file of a windowed replay isolated"),
    }
}

fn encoding(path: &Path, e: serde_json::Error) -> Error {
    Error::Io {
        context: format!("encoding a row of {}", path.display()),
        source: std::io::Error::other(e),
    }
}

/// Every row of the complete windows of the rows file at `path`, in order.
pub fn for_each_row(
    path: &Path,
    mut each: impl FnMut(SignatureResult) -> Result<()>,
) -> Result<()> {
    let reader = BufReader::new(File::open(path).map_err(|e| Error::output(path, "open", e))?);
    let mut pending = Vec::new();
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| Error::output(path, "read", e))?;
        if serde_json::from_slice::<Marker>(&line).is_ok() {
            for row in pending.drain(..) {
                each(row)?;
            }
        } else if let Ok(row) = serde_json::from_slice::<SignatureResult>(&line) {
            pending.push(row);
        }
    }
    Ok(())
}

/// Writes `json` and `csv` from `header` (whose `results` are ignored) and the rows file at
/// `rows`, streaming: each is written beside itself and renamed over the old one, so that
/// what is on disk is always whole. The JSON is what [`super::json::to_bytes`] writes
/// of the same results.
pub fn assemble(header: &IsolatedResults, rows: &Path, json: &Path, csv: &Path) -> Result<()> {
    let empty = IsolatedResults {
        results: Vec::new(),
        ..header.clone()
    };
    let text = super::json::to_bytes(&empty);
    let text = String::from_utf8_lossy(&text);
    let Some((before, after)) = text.rsplit_once("\"results\": []") else {
        unreachable!("IsolatedResults always has results")
    };
    write_streaming(json, |out| {
        out.write_all(before.as_bytes())?;
        out.write_all(b"\"results\": [")?;
        let mut first = true;
        for_each_row(rows, |row| {
            let pretty = serde_json::to_string_pretty(&row).map_err(|e| encoding(rows, e))?;
            let sep = if first { "\n    " } else { ",\n    " };
            first = false;
            out.write_all(sep.as_bytes())
                .and_then(|()| out.write_all(pretty.replace('\n', "\n    ").as_bytes()))
                .map_err(|e| Error::output(json, "write", e))
        })
        .map_err(std::io::Error::other)?;
        out.write_all(if first { b"]" } else { b"\n  ]" })?;
        out.write_all(after.as_bytes())
    })?;
    write_streaming(csv, |out| {
        let mut writer = super::csv::isolated_writer(out);
        for_each_row(rows, |row| {
            writer
                .write_record(super::csv::isolated_row(&row))
                .map_err(|e| Error::output(csv, "write", std::io::Error::other(e)))
        })
        .map_err(std::io::Error::other)?;
        writer.flush()
    })
}

/// Writes `path` through `fill`, beside itself, synced, then renamed over it.
fn write_streaming(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let file = File::create(&tmp)?;
        let mut out = BufWriter::with_capacity(1 << 20, &file);
        fill(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(|e| Error::output(path, "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::isolated::{RunConfig, Status, ISOLATED_SCHEMA_VERSION};
    use crate::signature::schema::Tier;

    fn row(id: &str, status: Status) -> SignatureResult {
        SignatureResult {
            id: id.into(),
            tier: Tier::Copy,
            name: format!("copy \"{id}\"\nwith a newline"),
            op: Some("aten::copy_".into()),
            count: 3,
            trace_mean_us: 1.5,
            trace_total_us: 4.5,
            status,
            method: None,
            reason: Some("why".into()),
            replayed_as: id.into(),
            share: 1.0,
            predicted_us: None,
            host_us: None,
            stats: None,
            joules_per_invocation: None,
            energy: None,
            roofline: None,
        }
    }

    fn results(rows: Vec<SignatureResult>) -> IsolatedResults {
        IsolatedResults {
            schema_version: ISOLATED_SCHEMA_VERSION,
            tool: "replay test".into(),
            device: "cpu".into(),
            signatures_file: "s.json".into(),
            config: RunConfig {
                cold: false,
                max_time_per_kernel_s: 0.1,
                noise_target: 0.01,
                min_samples: 3,
                rounds: 2,
            },
            signatures_total: 5,
            complete: true,
            results: rows,
        }
    }

    #[test]
    fn assembled_files_are_the_bytes_the_whole_results_write() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            row("a", Status::Ok),
            row("b", Status::Unsupported),
            row("c", Status::Failed),
        ];
        let mut file = RowsFile::open(dir.path(), false, |_| {}).unwrap();
        file.append_window(&rows[..2]).unwrap();
        file.append_window(&rows[2..]).unwrap();
        let (json, csv) = (dir.path().join("i.json"), dir.path().join("i.csv"));
        let whole = results(rows.to_vec());
        assemble(&whole, file.path(), &json, &csv).unwrap();
        assert_eq!(
            std::fs::read(&json).unwrap(),
            crate::export::json::to_bytes(&whole)
        );
        assert_eq!(
            std::fs::read(&csv).unwrap(),
            crate::export::csv::isolated_to_bytes(&whole)
        );
        // No rows yet: still the whole results' bytes.
        let empty_rows = tempfile::tempdir().unwrap();
        let none = RowsFile::open(empty_rows.path(), false, |_| {}).unwrap();
        assemble(&results(vec![]), none.path(), &json, &csv).unwrap();
        assert_eq!(
            std::fs::read(&json).unwrap(),
            crate::export::json::to_bytes(&results(vec![]))
        );
    }

    #[test]
    fn resuming_keeps_complete_windows_and_cuts_a_half_written_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = RowsFile::open(dir.path(), false, |_| {}).unwrap();
        file.append_window(&[row("a", Status::Ok), row("b", Status::Ok)])
            .unwrap();
        drop(file);
        // A kill in the middle of the next window's append.
        let path = dir.path().join(ROWS_FILE);
        let mut text = std::fs::read(&path).unwrap();
        let whole = text.len() as u64;
        text.extend(serde_json::to_vec(&row("c", Status::Ok)).unwrap());
        text.extend(b"\n{\"id\": \"d\", \"ti");
        std::fs::write(&path, text).unwrap();
        let mut seen = Vec::new();
        let mut file = RowsFile::open(dir.path(), true, |r| seen.push(r.id.clone())).unwrap();
        assert_eq!((file.windows, file.rows), (1, 2));
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
        file.append_window(&[row("c", Status::Ok)]).unwrap();
        let mut ids = Vec::new();
        for_each_row(&path, |r| {
            ids.push(r.id);
            Ok(())
        })
        .unwrap();
        assert_eq!(ids, ["a", "b", "c"]);
        // Not resuming: empty.
        let file = RowsFile::open(dir.path(), false, |_| {}).unwrap();
        assert_eq!(
            (file.windows, std::fs::metadata(&path).unwrap().len()),
            (0, 0)
        );
    }
}
