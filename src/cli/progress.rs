//! The progress bar of long runs (suites' grids, calibrations) on a terminal, and their
//! one-line-per-item log on standard error; nothing at all with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// The progress bar (on a terminal) and the per-item lines on standard error.
pub struct Progress {
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(quiet: bool, total: usize) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} (ETA {eta}) {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            // One item can take minutes: keep the clock and the spinner moving.
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress { quiet, bar }
    }

    pub fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    pub fn current(&self, case: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(case.to_string());
        }
    }

    pub fn advance(&self, next: Option<String>) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(next.unwrap_or_default());
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
