//! `replay isolated` on a signature file too large to hold whole (issue 34: ten million
//! signatures): the file is read streaming ([`replay_core::signature::stream`]) and replayed
//! a window of [`WINDOW_SIGNATURES`] signatures at a time, every round of a window before
//! the next, so that memory holds one window, never the file.
//!
//! Each finished window's rows are appended to `isolated.rows.jsonl` and synced; the journal
//! then starts afresh for the next window, so it holds the window in progress only.
//! `isolated.json` and `isolated.csv` are assembled from the rows file, streaming and whole or
//! not at all, whenever the rows have doubled since the last time and at the end: what is on
//! disk is always valid, and the run writes O(n) bytes in all (a whole run rewrites its
//! results after every unit, O(n^2)). `--resume` takes the complete windows of the rows file
//! back and the window in progress from the journal.
//!
//! A file of at most one window is replayed whole, exactly as before. In a larger one,
//! replay units are formed within a window: kernels of one op call whose signatures fall in
//! two windows are replayed as two units (each sharing the op's time among its own kernels).
//! `--shard` is refused for such files (the shards' interleaved slices would each need the
//! whole file's units).

use std::ops::ControlFlow;
use std::path::Path;

use crate::device::Device;
use crate::export::{OutputDir, OutputFile};
use crate::replay::isolated::{IsolatedResults, ISOLATED_SCHEMA_VERSION};
use crate::replay::isolated_journal::IsolatedJournal;
use crate::replay::registry::replay_units;
use crate::signature::schema::SignatureFile;
use replay_core::export::isolated_rows::{assemble, RowsFile};
use replay_core::memory_size::size_text;
use replay_core::shard::work_list::IdHasher;
use replay_core::signature::stream::{self, Scan};

use super::isolated_summary::Tally;
use super::observer::Observer;
use super::options::IsolatedOptions;

/// Signatures per window: a file of at most this many is replayed whole.
pub const WINDOW_SIGNATURES: usize = 8192;

/// Bytes of memory one byte of a signature's JSON takes once read (measured on copies of the
/// shipped signatures; `Signature` holds its strings and recorded inputs as owned values).
pub const MEMORY_PER_JSON_BYTE: u64 = 8;

/// A signature file to replay in windows.
#[derive(Debug)]
pub struct Windowed {
    pub scan: Scan,
    /// Its replay units, once counted.
    pub units: Option<usize>,
}

/// How a signature file is to be read.
#[derive(Debug)]
pub enum Reading {
    /// Whole, as always: at most one window.
    Whole,
    Windowed(Box<Windowed>),
}

/// Scans `path` (streaming) and decides how to read it: refused (exit 2, with the numbers)
/// when even one window of it would not fit the memory `--max-memory` allows.
pub fn open(path: &Path, window: usize) -> Result<Reading, crate::Error> {
    let limit = crate::replay::memory_limit::limit();
    let scan = match stream::scan(path, window) {
        Ok(scan) => scan,
        Err(e) => {
            // A file small enough to read whole is reported as the whole read reports it.
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            if bytes.saturating_mul(MEMORY_PER_JSON_BYTE) <= limit {
                return Ok(Reading::Whole);
            }
            return Err(crate::Error::from(e));
        }
    };
    let (span, first) = scan.largest_window;
    let needs = span.saturating_mul(MEMORY_PER_JSON_BYTE);
    if needs > limit {
        return Err(crate::Error::from(replay_core::Error::BadInput {
            path: path.to_path_buf(),
            message: format!(
                "{} signatures, read {} at a time: the {} from signature {first} on span {span} bytes of JSON, about {} once read, more than the {} replay allows itself (--max-memory); give more with --max-memory or split the file",
                scan.signatures,
                scan.window,
                scan.window.min(scan.signatures - first),
                size_text(needs),
                size_text(limit)
            ),
        }));
    }
    if scan.signatures <= window {
        return Ok(Reading::Whole);
    }
    Ok(Reading::Windowed(Box::new(Windowed { scan, units: None })))
}

/// The window's signatures as a file of their own (the header is the whole file's).
fn window_file(
    header: &SignatureFile,
    signatures: Vec<crate::signature::schema::Signature>,
) -> SignatureFile {
    SignatureFile {
        signatures,
        ..header.clone()
    }
}

/// The work list's length and hash, read window by window: its units' lead ids in order.
pub fn work_list_hash(path: &Path, windowed: &Windowed) -> Result<(usize, String), crate::Error> {
    let mut hasher = IdHasher::new(replay_core::shard::isolated::COMMAND);
    stream::stream(path, windowed.scan.window, 0, |window| {
        let file = window_file(&windowed.scan.header, window.signatures);
        for unit in replay_units(&file) {
            hasher.add(&file.signatures[unit.lead].id);
        }
        ControlFlow::Continue(())
    })?;
    Ok((hasher.count, hasher.finish()))
}

/// How a windowed run ended.
pub struct Outcome {
    pub complete: bool,
    /// Rows written (of every window done).
    pub rows: usize,
    /// What `replay isolated` reports.
    pub summary: String,
}

/// What replays one window (`pipeline::isolated::replay` with the window's journal), with
/// the results it measured.
pub type ReplayWindow<'r> = dyn FnMut(
        &SignatureFile,
        &Device,
        Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
        &mut dyn Observer,
        &mut IsolatedJournal,
    ) -> crate::Result<IsolatedResults>
    + 'r;

/// Replays `windowed` window by window with `replay` (from the first window not in the rows
/// file when `resumed`); `config` is the run's settings as the results record them.
pub fn run(
    options: &IsolatedOptions,
    windowed: &Windowed,
    resumed: bool,
    op_timeout: Option<std::time::Duration>,
    config: crate::replay::isolated::RunConfig,
    observer: &mut dyn Observer,
    replay: &mut ReplayWindow<'_>,
) -> Result<Outcome, crate::Error> {
    let scan = &windowed.scan;
    let device = Device::open(options.device)?.with_blocking_kernel(options.blocking_kernel);
    let mut probe = options.energy.open()?;
    let mut tally = Tally::default();
    let mut rows = RowsFile::open(&options.output_dir, resumed, |r| tally.add(r))?;
    let mut journal = IsolatedJournal::open(&options.output_dir, resumed)?;
    journal.windowed = true;
    journal.watchdog = op_timeout.map(|timeout| {
        crate::replay::op_watchdog::OpWatchdog::start(timeout, journal.path().to_path_buf())
    });
    let windows = scan.windows();
    observer.info(&format!(
        "==> isolated: {} signatures, replayed in {windows} windows of {}{}\n",
        scan.signatures,
        scan.window,
        if resumed {
            format!(
                "; {} windows already in {}, {} unit rounds of the next in {}",
                rows.windows,
                rows.path().display(),
                journal.found(),
                journal.path().display()
            )
        } else {
            String::new()
        }
    ));
    let mut header = IsolatedResults {
        schema_version: ISOLATED_SCHEMA_VERSION,
        tool: format!("replay {}", env!("CARGO_PKG_VERSION")),
        device: device.describe(),
        signatures_file: options.kernels.display().to_string(),
        config,
        signatures_total: scan.signatures,
        complete: false,
        results: Vec::new(),
    };
    let files = OutputDir::new(&options.output_dir);
    let (json, csv) = (
        files.path(OutputFile::IsolatedJson),
        files.path(OutputFile::IsolatedCsv),
    );
    let mut failed: Option<crate::Error> = None;
    let mut first = true;
    let mut assembled_at = 0usize;
    let whole = stream::stream(&options.kernels, scan.window, rows.windows, |window| {
        // The journal holds the window in progress: the one a resumed run found first, then
        // each new one from empty.
        if !first {
            if let Err(e) = journal.restart() {
                failed = Some(e.into());
                return ControlFlow::Break(());
            }
        }
        first = false;
        observer.info(&format!(
            "==> window {}/{windows}: signatures {} to {}\n",
            window.index + 1,
            window.first,
            window.first + window.signatures.len() - 1
        ));
        let file = window_file(&scan.header, window.signatures);
        let results = match replay(&file, &device, probe.as_deref_mut(), observer, &mut journal) {
            Ok(results) => results,
            Err(e) => {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        };
        // Stopped by a signal or a journal the disk refused: the window's units stay in the
        // journal for --resume.
        if !results.complete {
            return ControlFlow::Break(());
        }
        let written = rows.append_window(&results.results).and_then(|()| {
            results.results.iter().for_each(|r| tally.add(r));
            // Assembled each time the rows have doubled: O(n) bytes written in all.
            if rows.rows >= 2 * assembled_at.max(1) {
                assembled_at = rows.rows;
                assemble(&header, rows.path(), &json, &csv)
            } else {
                Ok(())
            }
        });
        match written {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e.into());
                ControlFlow::Break(())
            }
        }
    })?;
    if let Some(e) = failed.or_else(|| journal.error.take().map(crate::Error::from)) {
        return Err(e);
    }
    header.complete = whole;
    assemble(&header, rows.path(), &json, &csv)?;
    Ok(Outcome {
        complete: whole,
        rows: rows.rows,
        summary: tally.text(
            &header.device,
            &replay_core::report::unseen_in_file(&scan.header),
            &options.output_dir,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::observer::Recorder;
    use crate::replay::isolated::SignatureResult;

    fn shipped() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures/h100_bert_small_infer.json")
    }

    /// The shipped BERT file (16 signatures) on the CPU, whole and in windows of 5: the same
    /// rows in the same order, with the same statuses and methods; a unit that lies within one
    /// window is replayed as the whole run replays it (same lead, same shares), and one whose
    /// kernels fall in two windows is replayed once per window, within its window.
    #[test]
    fn windows_give_the_rows_the_whole_run_gives() {
        let dir = tempfile::tempdir().unwrap();
        let options = |name: &str| IsolatedOptions {
            kernels: shipped(),
            output_dir: dir.path().join(name),
            max_time_per_kernel_s: 0.002,
            rounds: 2,
            min_samples: 1,
            ..IsolatedOptions::default()
        };
        let whole_options = options("whole");
        let file = crate::signature::read_file(&shipped()).unwrap();
        let device = Device::open(whole_options.device).unwrap();
        let whole = crate::pipeline::isolated::replay(
            &whole_options,
            &file,
            &device,
            None,
            &mut Recorder::default(),
            |_, _| ControlFlow::Continue(()),
            None,
        )
        .unwrap();

        let window = 5;
        let Reading::Windowed(windowed) = open(&shipped(), window).unwrap() else {
            panic!("16 signatures are more than a window of 5");
        };
        assert_eq!(windowed.scan.windows(), 4);
        let windowed_options = options("windowed");
        let mut observer = Recorder::default();
        let outcome = run(
            &windowed_options,
            &windowed,
            false,
            None,
            crate::pipeline::isolated::run_config(&windowed_options),
            &mut observer,
            &mut |file, device, probe, observer, journal| {
                crate::pipeline::isolated::replay(
                    &windowed_options,
                    file,
                    device,
                    probe,
                    observer,
                    |_, _| ControlFlow::Continue(()),
                    Some(journal),
                )
            },
        )
        .unwrap();
        assert!(outcome.complete);
        assert_eq!(outcome.rows, 16);
        let written =
            IsolatedResults::read(&windowed_options.output_dir.join("isolated.json")).unwrap();
        assert!(written.complete);
        assert_eq!(written.signatures_total, 16);
        assert!(
            outcome.summary.contains("replayed 16 signatures on"),
            "{}",
            outcome.summary
        );
        assert!(
            observer.info.contains("==> window 4/4"),
            "{}",
            observer.info
        );

        let index = |id: &str| file.signatures.iter().position(|s| s.id == id).unwrap();
        let within_one_window: Vec<bool> = replay_units(&file)
            .iter()
            .flat_map(|u| {
                let all: Vec<usize> = u
                    .members
                    .iter()
                    .map(|m| m.0)
                    .chain(u.included.iter().copied())
                    .collect();
                let one = all.iter().all(|&i| i / window == all[0] / window);
                all.into_iter().map(move |i| (i, one))
            })
            .fold(vec![true; 16], |mut v, (i, one)| {
                v[i] = one;
                v
            });
        let key = |r: &SignatureResult| (r.id.clone(), r.tier, r.count, r.status, r.method.clone());
        assert_eq!(written.results.len(), whole.results.len());
        for (w, r) in written.results.iter().zip(&whole.results) {
            assert_eq!(key(w), key(r));
            assert_eq!(w.stats.is_some(), r.stats.is_some(), "{}", w.id);
            let i = index(&w.id);
            if within_one_window[i] {
                assert_eq!(
                    (&w.replayed_as, w.share),
                    (&r.replayed_as, r.share),
                    "{}",
                    w.id
                );
            } else {
                assert_eq!(index(&w.replayed_as) / window, i / window, "{}", w.id);
            }
        }
    }
}
