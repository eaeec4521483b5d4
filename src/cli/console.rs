//! The console [`Observer`]: stages as `==> stage: detail` lines and the isolated replay's
//! progress bar on standard error, results on standard output.

use std::io::{IsTerminal as _, Write as _};

use indicatif::{ProgressBar, ProgressStyle};

use replay::pipeline::{Observer, Stage, Tick};

pub struct ConsoleObserver {
    quiet: bool,
    /// Shown only when standard error is a terminal and not quiet; made at the first tick.
    bar: Option<ProgressBar>,
}

impl ConsoleObserver {
    /// `quiet`: no stage lines and no progress bar; warnings and results still print.
    pub fn new(quiet: bool) -> ConsoleObserver {
        ConsoleObserver { quiet, bar: None }
    }

    /// Prints a line on standard error without tearing the progress bar.
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl Observer for ConsoleObserver {
    fn stage_started(&mut self, stage: Stage, detail: &str) {
        if !self.quiet {
            self.line(&format!("==> {stage}: {detail}"));
        }
    }

    fn stage_finished(&mut self, stage: Stage) {
        if matches!(stage, Stage::Isolated | Stage::Suite(_)) {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
        }
    }

    fn progress(&mut self, tick: Tick<'_>) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} (ETA {eta}) {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            // One item can take minutes: keep the clock and the spinner moving.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        bar.set_length(tick.steps as u64);
        bar.set_position(tick.step as u64);
        let name: String = tick.name.chars().take(60).collect();
        if tick.rounds > 1 {
            bar.set_message(format!("round {}/{} {name}", tick.round + 1, tick.rounds));
        } else {
            bar.set_message(name);
        }
    }

    fn item(&mut self, line: &str) {
        if !self.quiet {
            self.line(line);
        }
    }

    fn warning(&mut self, message: &str) {
        self.line(&format!("warning: {message}"));
    }

    fn info(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprint!("{text}")),
            None => eprint!("{text}"),
        }
    }

    fn result(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

impl Drop for ConsoleObserver {
    fn drop(&mut self) {
        // A run that failed part-way must not leave its bar on the terminal.
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
