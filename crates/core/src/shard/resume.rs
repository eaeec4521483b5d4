//! `--resume`: a grid command killed part-way (SIGKILL, a lost node, a Slurm preemption)
//! continues from the rows it had written. Every grid run leaves `resume.json` in its output
//! folder before its first item: the command, its work list's length and hash (the ones a
//! shard's `shard.json` records), the shard and the settings. `--resume` reads it back and
//! refuses (exit 2) a run of anything else: another command, another work list (another
//! grid, another signature file), another shard or other settings. Where the run's rows went
//! (`rows`: a file and the byte it started at, for suites that append to a file earlier
//! runs also wrote) is recorded by the command once it knows.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Shard, ShardError, WorkList};

/// The file's name in a run's output folder.
pub const RESUME_FILE: &str = "resume.json";
/// The format this version writes and reads.
pub const RESUME_FORMAT: &str = "replay-resume/1";

/// The variable `replay` hands `replay-torch` its own name in, so that a command line shown
/// to the user starts with what they typed.
pub const ARGV0_VAR: &str = "REPLAY_ARGV0";

/// This process's command line as the user typed it.
pub fn command_line() -> Vec<String> {
    let mut argv: Vec<String> = std::env::args().collect();
    if let (Some(first), Ok(typed)) = (argv.first_mut(), std::env::var(ARGV0_VAR)) {
        *first = typed;
    }
    argv
}

/// Where a run's rows are: a file in the output folder, from byte `start` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsFile {
    pub file: String,
    pub start: u64,
}

/// What identifies a run: resuming is allowed only into the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub format: String,
    pub command: String,
    pub work_items: usize,
    pub work_list_hash: String,
    pub shard: Shard,
    pub settings: serde_json::Value,
    /// The command line that started the run (shown when it is refused).
    pub argv: Vec<String>,
    #[serde(default)]
    pub rows: Option<RowsFile>,
}

impl RunRecord {
    /// The record of a run of `work_list` (whose command it names) on `shard`.
    pub fn new(work_list: &WorkList, shard: Shard, settings: serde_json::Value) -> RunRecord {
        RunRecord::of_hash(
            &work_list.command,
            work_list.ids.len(),
            work_list.hash(),
            shard,
            settings,
        )
    }

    /// The record of a run of a work list known by its length and hash only (one too long
    /// to hold: [`super::work_list::IdHasher`]).
    pub fn of_hash(
        command: &str,
        work_items: usize,
        work_list_hash: String,
        shard: Shard,
        settings: serde_json::Value,
    ) -> RunRecord {
        RunRecord {
            format: RESUME_FORMAT.into(),
            command: command.into(),
            work_items,
            work_list_hash,
            shard,
            settings,
            argv: command_line(),
            rows: None,
        }
    }

    /// Writes `dir/resume.json` whole or not at all.
    pub fn write(&self, dir: &Path) -> crate::Result<()> {
        crate::export::write_atomic(&dir.join(RESUME_FILE), &crate::export::json::to_bytes(self))
    }

    /// Reads `dir/resume.json`; a missing one says there is nothing to resume.
    pub fn read(dir: &Path) -> Result<RunRecord, ShardError> {
        let path = dir.join(RESUME_FILE);
        let bytes = std::fs::read(&path).map_err(|e| {
            ShardError::Resume(if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "--resume: {} holds no run to resume (no {RESUME_FILE}); run without --resume",
                    dir.display()
                )
            } else {
                format!("--resume: cannot read {}: {e}", path.display())
            })
        })?;
        let record: RunRecord =
            serde_json::from_slice(&bytes).map_err(|e| ShardError::BadPart {
                path: path.clone(),
                message: format!("not a resume record of replay: {e}"),
            })?;
        if record.format != RESUME_FORMAT {
            return Err(ShardError::BadPart {
                path,
                message: format!(
                    "format '{}', this replay reads '{RESUME_FORMAT}'",
                    record.format
                ),
            });
        }
        Ok(record)
    }

    /// The record in `dir` if it is a run of the same work as `self`, else why not.
    pub fn resumable(&self, dir: &Path) -> Result<RunRecord, ShardError> {
        let previous = RunRecord::read(dir)?;
        let refuse = |what: String| {
            Err(ShardError::Resume(format!(
                "--resume: {} holds another run ({what}); it was started by `{}`. Resume with that command, or run without --resume into another folder",
                dir.display(),
                previous.argv.join(" ")
            )))
        };
        if previous.command != self.command {
            return refuse(format!("of `{}`, not `{}`", previous.command, self.command));
        }
        if previous.work_list_hash != self.work_list_hash || previous.work_items != self.work_items
        {
            return refuse(format!(
                "its work list is {} items with hash {}, this one {} items with hash {}",
                previous.work_items,
                short(&previous.work_list_hash),
                self.work_items,
                short(&self.work_list_hash)
            ));
        }
        if previous.shard != self.shard {
            return refuse(format!(
                "shard {}, this one shard {}",
                previous.shard, self.shard
            ));
        }
        if previous.settings != self.settings {
            return refuse(format!(
                "other settings: {} there, {} here",
                previous.settings, self.settings
            ));
        }
        Ok(previous)
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// How a command starts: afresh (its record written before the first item) or resuming
/// the run whose record is in the folder.
#[derive(Debug, Clone)]
pub struct RunStart {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub resumed: bool,
}

impl RunStart {
    /// Starts the run of `record` in `dir`: with `resume`, the previous run's record must
    /// match (and is kept); without, `record` is written now.
    pub fn begin(dir: &Path, record: RunRecord, resume: bool) -> crate::Result<RunStart> {
        if resume {
            let previous = record.resumable(dir)?;
            return Ok(RunStart {
                dir: dir.to_path_buf(),
                record: previous,
                resumed: true,
            });
        }
        crate::export::ensure_output_dir(dir)?;
        record.write(dir)?;
        Ok(RunStart {
            dir: dir.to_path_buf(),
            record,
            resumed: false,
        })
    }

    /// A run that is not resumable (the command has nothing to record): nothing is written.
    pub fn none(dir: &Path, record: RunRecord) -> RunStart {
        RunStart {
            dir: dir.to_path_buf(),
            record,
            resumed: false,
        }
    }

    /// Records where this run's rows go (`file` in the folder, from byte `start`); a resumed
    /// run keeps the record it found.
    pub fn remember_rows(&mut self, file: &str, start: u64) -> crate::Result<()> {
        if self.resumed {
            return Ok(());
        }
        self.record.rows = Some(RowsFile {
            file: file.into(),
            start,
        });
        self.record.write(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(command: &str, ids: &[&str]) -> WorkList {
        WorkList::new(command, ids.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn only_the_same_run_is_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let settings = serde_json::json!({"budget": 1});
        let record = RunRecord::new(
            &list("bench scan", &["a", "b"]),
            Shard::WHOLE,
            settings.clone(),
        );
        let missing = RunStart::begin(dir.path(), record.clone(), true).unwrap_err();
        assert!(missing.to_string().contains("no resume.json"), "{missing}");
        let mut start = RunStart::begin(dir.path(), record.clone(), false).unwrap();
        start.remember_rows("rows.csv", 17).unwrap();
        let again = RunStart::begin(dir.path(), record.clone(), true).unwrap();
        assert!(again.resumed);
        assert_eq!(
            again.record.rows,
            Some(RowsFile {
                file: "rows.csv".into(),
                start: 17
            })
        );
        for (other, why) in [
            (
                RunRecord::new(
                    &list("bench quant", &["a", "b"]),
                    Shard::WHOLE,
                    settings.clone(),
                ),
                "of `bench scan`, not `bench quant`",
            ),
            (
                RunRecord::new(
                    &list("bench scan", &["a", "c"]),
                    Shard::WHOLE,
                    settings.clone(),
                ),
                "work list",
            ),
            (
                RunRecord::new(
                    &list("bench scan", &["a", "b"]),
                    Shard::new(1, 2).unwrap(),
                    settings.clone(),
                ),
                "shard 1/1, this one shard 1/2",
            ),
            (
                RunRecord::new(
                    &list("bench scan", &["a", "b"]),
                    Shard::WHOLE,
                    serde_json::json!({"budget": 2}),
                ),
                "other settings",
            ),
        ] {
            let err = RunStart::begin(dir.path(), other, true).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(why), "{text}");
            assert!(err.is_usage_error(), "{text}");
        }
    }
}
