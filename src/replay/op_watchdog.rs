//! `--op-timeout SECONDS` for `replay isolated`: a per-op watchdog. A libtorch op cannot be
//! cancelled from inside its thread, and running every op in a child process would cost a
//! process start per signature; so the watchdog leans on `--resume`. While a unit is being
//! measured the watchdog is armed with its deadline; if the unit runs past it, the watchdog
//! journals that (round, unit) as `failed: timed out after S s` (a line of the run's journal,
//! like any finished unit) and replaces the process with the same command plus `--resume`
//! (`execv`): the runaway op's thread ends with the old process image, the resumed run takes
//! every unit finished so far from the journal (the timed-out one as failed, not tried again)
//! and goes on. The price is one process start per op that times out, none for the others.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

/// What the watchdog watches: the unit being measured now.
struct Armed {
    round: u32,
    unit: String,
    deadline: Instant,
}

/// A watchdog thread for one run.
#[derive(Clone)]
pub struct OpWatchdog {
    state: Arc<(Mutex<Option<Armed>>, Condvar)>,
    timeout: Duration,
}

impl OpWatchdog {
    /// Starts the watchdog of a run whose journal is `journal`.
    pub fn start(timeout: Duration, journal: std::path::PathBuf) -> OpWatchdog {
        let dog = OpWatchdog {
            state: Arc::new((Mutex::new(None), Condvar::new())),
            timeout,
        };
        let watched = dog.clone();
        std::thread::Builder::new()
            .name("replay-op-watchdog".into())
            .spawn(move || watched.watch(&journal))
            .expect("the watchdog thread starts");
        dog
    }

    /// From now until [`Self::disarm`], round `round` of `unit` must end within the timeout.
    pub fn arm(&self, round: u32, unit: &str) {
        let (lock, wake) = &*self.state;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = Some(Armed {
            round,
            unit: unit.into(),
            deadline: Instant::now() + self.timeout,
        });
        wake.notify_all();
    }

    /// The unit ended in time. (A watchdog that has fired holds the lock until the process
    /// is replaced, so a unit ending at that moment waits here and is never journaled twice.)
    pub fn disarm(&self) {
        let (lock, _) = &*self.state;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn watch(&self, journal: &std::path::Path) {
        let (lock, wake) = &*self.state;
        let mut armed = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let wait = match armed.as_ref() {
                None => Duration::from_secs(3600),
                Some(a) => match a.deadline.checked_duration_since(Instant::now()) {
                    Some(left) => left,
                    None => {
                        let a = armed.take().expect("armed");
                        fire(journal, a.round, &a.unit, self.timeout);
                        // Reached only when the process could not be replaced.
                        continue;
                    }
                },
            };
            armed = wake
                .wait_timeout(armed, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Journals the unit as timed out and replaces the process with the resumed command.
fn fire(journal: &std::path::Path, round: u32, unit: &str, timeout: Duration) {
    let reason = format!(
        "timed out after {} s (--op-timeout): the op was abandoned and the run resumed in a fresh process",
        timeout.as_secs_f64()
    );
    eprintln!("==> isolated: {unit} (round {}) {reason}", round + 1);
    let entry = json!({"round": round, "unit": unit, "outcome": {"failed": reason}});
    let mut line = entry.to_string().into_bytes();
    line.push(b'\n');
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(journal)
        .and_then(|mut f| replay_core::export::append::append_whole(&mut f, &line));
    if let Err(e) = written {
        eprintln!(
            "error: {}: cannot journal the timed-out op ({e}); ending the run",
            journal.display()
        );
        std::process::exit(1);
    }
    let mut args = std::env::args_os();
    let Some(program) = std::env::current_exe()
        .ok()
        .or_else(|| args.next().map(Into::into))
    else {
        std::process::exit(1);
    };
    let mut rest: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if !rest.iter().any(|a| a == "--resume") {
        rest.push("--resume".into());
    }
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(&program).args(&rest).exec();
    eprintln!(
        "error: cannot restart {} to resume after the timed-out op: {error}",
        program.display()
    );
    std::process::exit(1);
}
