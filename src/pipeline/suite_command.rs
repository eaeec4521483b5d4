//! The one way a suite command runs (`bench scan`, `bench quant`, `bench mhc`, `calibrate`,
//! `isolated`): the command line maps its arguments to a [`SuiteCommand`], and [`drive`] does
//! the rest the same way for every suite: it resolves `--shard` (`I/N` or `auto`), clears a
//! stale shard.json before any row is written, runs the suite's slice with the one
//! [`Observer`] (a bar on a terminal, lines otherwise), and writes the shard's shard.json
//! last. Every error reaches the caller as the library's [`crate::Error`] (a suite's own
//! errors convert through `From`), so the exit status is decided in one place.
//!
//! A suite supplies its name, its work (which writes rows as they finish, through its own
//! writers), and what its shard.json records; its merger (`replay merge`) lives with it.

use std::path::{Path, PathBuf};

use replay_core::shard::{
    RunRecord, RunStart, Shard, ShardArgs, WorkList, MANIFEST_FILE, RESUME_FILE,
};

use super::observer::{Observer, Stage, Tick};

/// What a shard's shard.json records of its run besides the shard itself.
pub struct ShardRecord {
    /// The device every shard of the run must have run on (`replay merge` checks).
    pub device: String,
    /// Every item of the whole run, in order.
    pub work_list: WorkList,
    /// What makes two shards' numbers comparable (budgets, sizes, threads).
    pub settings: serde_json::Value,
    /// The files the shard wrote in [`SuiteCommand::output_dir`], by name.
    pub files: Vec<String>,
}

/// A suite as a command: what [`drive`] needs from it.
pub trait SuiteCommand {
    /// The command's name as typed and as shard.json and `replay merge` know it.
    fn command(&self) -> &'static str;

    /// What the work list's items are called ("cases", "configurations", ...).
    fn unit(&self) -> &'static str;

    /// Where the command's files and a shard's shard.json go.
    fn output_dir(&self) -> PathBuf;

    /// What identifies the run before it starts: its whole work list and the settings that
    /// make two runs' rows comparable (what `resume.json` records and `--resume` checks).
    fn identity(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<(WorkList, serde_json::Value), crate::Error>;

    /// The record `resume.json` keeps of the run on `slice`: by default the whole work list
    /// of [`SuiteCommand::identity`]; a command whose list is too long to hold gives its
    /// length and hash instead.
    fn run_record(
        &mut self,
        slice: Shard,
        observer: &mut dyn Observer,
    ) -> Result<RunRecord, crate::Error> {
        let (work_list, settings) = self.identity(observer)?;
        Ok(RunRecord::new(&work_list, slice, settings))
    }

    /// Runs `shard`'s items (all of them for [`Shard::WHOLE`]), writing results as they
    /// finish and telling `observer`; the command's result text goes to
    /// [`Observer::result`]. One failed item is a row, never the end of the run. A resumed
    /// run (`start.resumed`) keeps the rows it finds and runs the rest; a SIGINT or SIGTERM
    /// ends it between items ([`replay_core::shard::stop`]).
    fn run(
        &mut self,
        shard: Shard,
        start: &mut RunStart,
        observer: &mut dyn Observer,
    ) -> Result<(), crate::Error>;

    /// What shard.json records, once [`SuiteCommand::run`] returned; `None` when the run
    /// stopped before the end of its slice (no shard.json: `replay merge` names the shard
    /// missing).
    fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error>;

    /// True when the command's result on standard output is one JSON document: the shard's
    /// line then goes to the person watching instead.
    fn result_is_json(&self) -> bool {
        false
    }
}

/// Runs `command` under `--shard` (`shard`), reporting to `observer`.
pub fn drive(
    command: &mut dyn SuiteCommand,
    shard: &ShardArgs,
    observer: &mut dyn Observer,
) -> Result<(), crate::Error> {
    let sharded = shard.resolve()?;
    let slice = sharded.as_ref().map_or(Shard::WHOLE, |s| s.shard);
    let output_dir = command.output_dir();
    if let Some(run) = &sharded {
        // A stale shard.json must not vouch for this run's rows if it dies.
        run.begin(&output_dir)?;
    }
    let record = command.run_record(slice, observer)?;
    let mut start = RunStart::begin(&output_dir, record, shard.resume)?;
    if start.resumed {
        observer.info(&format!(
            "==> resuming the run in {} ({})\n",
            output_dir.display(),
            RESUME_FILE
        ));
    }
    // From here a SIGINT or SIGTERM stops the run at the next item, its files whole.
    replay_core::shard::stop::install();
    let ran = command.run(slice, &mut start, observer);
    if let (Err(e), Some(signal)) = (&ran, replay_core::shard::stop::requested()) {
        // However the suite carried it, a run a signal stopped ends as stopped (130, 143).
        let message = e.to_string();
        return Err(crate::Error::Core(replay_core::Error::Shard(
            replay_core::shard::ShardError::Stopped { signal, message },
        )));
    }
    ran?;
    let Some(run) = &sharded else {
        return Ok(());
    };
    // Written last: a shard that dies before here leaves no shard.json.
    let line = match command.shard_record()? {
        None => format!(
            "shard {}: stopped before its last round, no {MANIFEST_FILE} written",
            run.shard
        ),
        Some(record) => run
            .finish(replay_core::shard::args::Finished {
                command: command.command(),
                device: record.device,
                work_list: &record.work_list,
                settings: record.settings,
                output_dir: &output_dir,
                files: record.files,
            })?
            .summary(command.unit(), &output_dir),
    };
    if command.result_is_json() {
        observer.info(&format!("{line}\n"));
    } else {
        observer.result(&format!("{line}\n"));
    }
    Ok(())
}

/// How a suite's grid shows on the observer: a `==> NAME: header` line, one line per
/// finished case (`[i/n] case: outcome`) and the bar on the next case.
pub struct CaseReporter<'o> {
    observer: &'o mut dyn Observer,
    stage: Stage,
    /// Each case's description, in the order they run.
    names: Vec<String>,
}

impl<'o> CaseReporter<'o> {
    /// Announces `names.len()` cases of `command` with `header` ("12 cases on cpu, ...").
    pub fn start(
        observer: &'o mut dyn Observer,
        command: &'static str,
        header: &str,
        names: Vec<String>,
    ) -> CaseReporter<'o> {
        let stage = Stage::Suite(command);
        observer.stage_started(stage, header);
        let mut reporter = CaseReporter {
            observer,
            stage,
            names,
        };
        reporter.tick(0);
        reporter
    }

    /// Case `index` (0-based) is done: its line, then the bar moves to the next case.
    pub fn finished(&mut self, index: usize, outcome: &str) {
        let name = self
            .names
            .get(index)
            .map(String::as_str)
            .unwrap_or_default();
        self.observer.item(&format!(
            "[{}/{}] {name}: {outcome}",
            index + 1,
            self.names.len()
        ));
        self.tick(index + 1);
    }

    /// The observer, for text that is not a case line.
    pub fn observer(&mut self) -> &mut dyn Observer {
        &mut *self.observer
    }

    fn tick(&mut self, step: usize) {
        self.observer.progress(Tick {
            step,
            steps: self.names.len(),
            round: 0,
            rounds: 1,
            name: self.names.get(step).map(String::as_str).unwrap_or_default(),
        });
    }
}

impl Drop for CaseReporter<'_> {
    fn drop(&mut self) {
        self.observer.stage_finished(self.stage);
    }
}

/// `path`'s folder, `.` for a bare file name: where a command writing one file keeps its
/// shard.json.
pub fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::observer::Recorder;
    use replay_core::shard::ShardSpec;

    /// A suite of three items that writes one file and counts what it was asked to run.
    struct Three {
        dir: PathBuf,
        ran: Vec<usize>,
        complete: bool,
    }

    impl SuiteCommand for Three {
        fn command(&self) -> &'static str {
            "isolated"
        }
        fn unit(&self) -> &'static str {
            "items"
        }
        fn output_dir(&self) -> PathBuf {
            self.dir.clone()
        }
        fn identity(
            &mut self,
            _: &mut dyn Observer,
        ) -> Result<(WorkList, serde_json::Value), crate::Error> {
            Ok((three(), serde_json::json!({})))
        }
        fn run(
            &mut self,
            shard: Shard,
            _: &mut RunStart,
            observer: &mut dyn Observer,
        ) -> Result<(), crate::Error> {
            assert!(
                !self.dir.join(MANIFEST_FILE).exists(),
                "a stale shard.json is cleared before the run"
            );
            self.ran = shard.positions(3);
            observer.result("ran\n");
            std::fs::write(self.dir.join("rows.csv"), "x\n").map_err(|source| {
                crate::Error::Core(replay_core::Error::Io {
                    context: "writing rows.csv".into(),
                    source,
                })
            })?;
            Ok(())
        }
        fn shard_record(&self) -> Result<Option<ShardRecord>, crate::Error> {
            Ok(self.complete.then(|| ShardRecord {
                device: "cpu".into(),
                work_list: three(),
                settings: serde_json::json!({}),
                files: vec!["rows.csv".into()],
            }))
        }
    }

    fn three() -> WorkList {
        WorkList::new("isolated", vec!["a".into(), "b".into(), "c".into()])
    }

    fn shard(spec: &str) -> ShardArgs {
        ShardArgs {
            shard: Some(spec.parse::<ShardSpec>().unwrap()),
            resume: false,
        }
    }

    #[test]
    fn a_whole_run_writes_no_shard_json() {
        let dir = tempfile::tempdir().unwrap();
        let mut three = Three {
            dir: dir.path().into(),
            ran: vec![],
            complete: true,
        };
        let mut seen = Recorder::default();
        drive(&mut three, &ShardArgs::default(), &mut seen).unwrap();
        assert_eq!(three.ran, vec![0, 1, 2]);
        assert_eq!(seen.results, "ran\n");
        assert!(!dir.path().join(MANIFEST_FILE).exists());
    }

    #[test]
    fn a_shard_runs_its_slice_after_clearing_a_stale_manifest_and_writes_its_own_last() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), "stale").unwrap();
        let mut three = Three {
            dir: dir.path().into(),
            ran: vec![],
            complete: true,
        };
        let mut seen = Recorder::default();
        drive(&mut three, &shard("2/2"), &mut seen).unwrap();
        assert_eq!(three.ran, vec![1]);
        let manifest = std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap();
        assert!(manifest.contains("\"isolated\""), "{manifest}");
        assert!(
            seen.results
                .starts_with("ran\nshard 2/2 (--shard 2/2): 1 of 3 items, "),
            "{}",
            seen.results
        );
    }

    #[test]
    fn a_shard_that_stopped_early_leaves_no_manifest_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut three = Three {
            dir: dir.path().into(),
            ran: vec![],
            complete: false,
        };
        let mut seen = Recorder::default();
        drive(&mut three, &shard("1/2"), &mut seen).unwrap();
        assert!(!dir.path().join(MANIFEST_FILE).exists());
        assert_eq!(
            seen.results,
            "ran\nshard 1/2: stopped before its last round, no shard.json written\n"
        );
    }

    #[test]
    fn cases_show_as_a_header_lines_and_a_finished_stage() {
        let mut seen = Recorder::default();
        {
            let names = vec!["T=4".to_string(), "T=8".to_string()];
            let mut cases = CaseReporter::start(&mut seen, "bench scan", "2 cases", names);
            cases.finished(1, "ok 1.0 ms");
        }
        assert_eq!(
            seen.stages,
            vec![(Stage::Suite("bench scan"), "2 cases".to_string())]
        );
        assert_eq!(seen.items, vec!["[2/2] T=8: ok 1.0 ms".to_string()]);
    }
}
