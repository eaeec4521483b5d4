//! The console [`Observer`]: stages as `==> stage: detail` lines and the isolated replay's
//! progress on standard error (a bar on a terminal, plain lines elsewhere), results on
//! standard output.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use replay::pipeline::{Observer, Stage, Tick};

/// When standard error is not a terminal (a log, a pipe, CI), progress is a line at most this
/// often: the bar's redraws would be garbage there, and a line per tick would flood the log.
pub const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(5);

/// Progress as plain lines: one at a tick once [`PROGRESS_LINE_EVERY`] has passed since the
/// last line of any kind (a stage line, a case's line or a progress line), so a run whose
/// items finish quickly prints none, and a slow one says every few seconds where it is.
#[derive(Debug, Clone)]
pub struct ProgressLines {
    every: Duration,
    /// When the stage under way started and when the last line was printed (times since
    /// any fixed point: the console's start).
    stage_started: Duration,
    last_line: Duration,
}

impl ProgressLines {
    pub fn new(every: Duration, now: Duration) -> ProgressLines {
        ProgressLines {
            every,
            stage_started: now,
            last_line: now,
        }
    }

    /// A stage starts at `now` (its `==> ...` line is printed then).
    pub fn stage_started(&mut self, now: Duration) {
        self.stage_started = now;
        self.last_line = now;
    }

    /// Some other line was printed at `now`.
    pub fn printed(&mut self, now: Duration) {
        self.last_line = now;
    }

    /// The line for `tick` at `now`, if one is due.
    pub fn line(&mut self, tick: &Tick<'_>, now: Duration) -> Option<String> {
        if now.saturating_sub(self.last_line) < self.every {
            return None;
        }
        self.last_line = now;
        let secs = now.saturating_sub(self.stage_started).as_secs();
        let round = if tick.rounds > 1 {
            format!(", round {}/{}", tick.round + 1, tick.rounds)
        } else {
            String::new()
        };
        let name: String = tick.name.chars().take(60).collect();
        Some(format!(
            "  [{:02}:{:02}:{:02}] {}/{} done{round}: {name}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            tick.step,
            tick.steps,
        ))
    }
}

pub struct ConsoleObserver {
    quiet: bool,
    /// Shown only when standard error is a terminal and not quiet; made at the first tick.
    bar: Option<ProgressBar>,
    /// Whether standard error is a terminal (read once).
    terminal: bool,
    /// The console's start, the clock of `lines`.
    started: Instant,
    /// Progress as lines when standard error is not a terminal.
    lines: ProgressLines,
}

impl ConsoleObserver {
    /// `quiet`: no stage lines and no progress; warnings and results still print.
    pub fn new(quiet: bool) -> ConsoleObserver {
        ConsoleObserver {
            quiet,
            bar: None,
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            lines: ProgressLines::new(PROGRESS_LINE_EVERY, Duration::ZERO),
        }
    }

    /// Prints a line on standard error without tearing the progress bar.
    fn line(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
        self.lines.printed(self.started.elapsed());
    }
}

impl Observer for ConsoleObserver {
    fn stage_started(&mut self, stage: Stage, detail: &str) {
        self.lines.stage_started(self.started.elapsed());
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
        if self.quiet {
            return;
        }
        if !self.terminal {
            if let Some(line) = self.lines.line(&tick, self.started.elapsed()) {
                eprintln!("{line}");
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(step: usize, name: &str) -> Tick<'_> {
        Tick {
            step,
            steps: 80,
            round: 2,
            rounds: 5,
            name,
        }
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn progress_lines_come_every_few_seconds_never_per_tick() {
        let mut lines = ProgressLines::new(secs(5.0), secs(0.0));
        lines.stage_started(secs(1.0));
        // Ticks closer together than the interval print nothing.
        for (i, at) in [1.5, 2.0, 4.0, 5.9].into_iter().enumerate() {
            assert_eq!(lines.line(&tick(i, "aten::add"), secs(at)), None, "{at}");
        }
        // Past it, the tick under way is said, with the time since the stage began.
        assert_eq!(
            lines.line(&tick(12, "aten::addmm"), secs(6.0)).as_deref(),
            Some("  [00:00:05] 12/80 done, round 3/5: aten::addmm")
        );
        assert_eq!(lines.line(&tick(13, "aten::mm"), secs(10.0)), None);
        // Any other line (a case's) restarts the interval.
        lines.printed(secs(10.5));
        assert_eq!(lines.line(&tick(14, "aten::mm"), secs(11.5)), None);
        let late = lines.line(&tick(15, "aten::mm"), secs(3723.0)).unwrap();
        assert_eq!(late, "  [01:02:02] 15/80 done, round 3/5: aten::mm");
    }

    #[test]
    fn a_run_of_one_round_names_no_round() {
        let mut lines = ProgressLines::new(secs(5.0), secs(0.0));
        let one = Tick {
            rounds: 1,
            round: 0,
            ..tick(3, "float8dq-row custom (16, 1024, 1024)")
        };
        assert_eq!(
            lines.line(&one, secs(7.0)).as_deref(),
            Some("  [00:00:07] 3/80 done: float8dq-row custom (16, 1024, 1024)")
        );
    }
}
