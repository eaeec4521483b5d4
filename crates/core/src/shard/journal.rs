//! A run's journal: one JSON line per finished work item, appended and flushed as each ends,
//! for the commands whose result files are rewritten whole (`isolated`, `calibrate`) and so
//! cannot say by themselves which items are done. `--resume` reads it back
//! ([`super::recover::recover_journal`]) and replays the items it holds instead of running
//! them again.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

/// An open journal.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens `path`: resuming, its complete entries are returned (a half-written last one is
    /// cut off) and new ones appended after them; otherwise it starts empty.
    pub fn open(path: &Path, resume: bool) -> Result<(Journal, Vec<serde_json::Value>)> {
        let entries = if resume {
            super::recover::recover_journal(path)?
        } else {
            Vec::new()
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::output(path, "open", e))?;
        if !resume {
            file.set_len(0)
                .map_err(|e| Error::output(path, "start afresh", e))?;
        }
        Ok((
            Journal {
                path: path.to_path_buf(),
                file,
            },
            entries,
        ))
    }

    /// Appends `entry` as one line and flushes it; a line the disk refused is taken back off
    /// the file, so the journal stays whole.
    pub fn append(&mut self, entry: &impl Serialize) -> Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(|e| Error::Io {
            context: format!("encoding an entry of {}", self.path.display()),
            source: std::io::Error::other(e),
        })?;
        line.push(b'\n');
        crate::export::append::append_whole(&mut self.file, &line)
            .map_err(|e| Error::output(&self.path, "write", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_come_back_when_resuming_and_a_fresh_run_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal.jsonl");
        let (mut journal, found) = Journal::open(&path, false).unwrap();
        assert!(found.is_empty());
        journal.append(&json!({"item": "a"})).unwrap();
        journal.append(&json!({"item": "b"})).unwrap();
        drop(journal);
        let (mut journal, found) = Journal::open(&path, true).unwrap();
        assert_eq!(found, vec![json!({"item": "a"}), json!({"item": "b"})]);
        journal.append(&json!({"item": "c"})).unwrap();
        drop(journal);
        assert_eq!(Journal::open(&path, true).unwrap().1.len(), 3);
        let (_, found) = Journal::open(&path, false).unwrap();
        assert!(found.is_empty());
        assert_eq!(std::fs::read(&path).unwrap().len(), 0);
    }
}
