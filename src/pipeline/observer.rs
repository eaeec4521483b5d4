//! What the pipeline tells its caller while it runs: stages, progress, warnings and results.
//! The pipeline never prints; the console front end, selftest and tests each decide where
//! this goes.

use std::fmt;

/// A step of the pipeline, as the user sees it in `==> capture: ...` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Profiling a forward pass of the model into a trace.
    Capture,
    /// Finding the trace's signatures.
    Classify,
    /// Replaying every signature alone.
    Isolated,
    /// Timing the whole model (in compare: one chunk of runs after each isolated round).
    Full,
    /// Measuring the device's power between kernels, for energy along the timeline.
    Energy,
    /// Re-running the trace's step in order (`replay sequence`).
    Sequence,
    /// Measuring the host's costs without the profiler (the host model's section).
    Host,
    /// A suite command working through its cases (`bench scan`, `calibrate`, ...): its
    /// name, as the user typed it.
    Suite(&'static str),
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Capture => "capture",
            Stage::Classify => "classify",
            Stage::Isolated => "isolated",
            Stage::Full => "full",
            Stage::Energy => "energy",
            Stage::Sequence => "sequence",
            Stage::Host => "host",
            Stage::Suite(name) => name,
        })
    }
}

/// One step of the isolated replay's progress.
#[derive(Debug, Clone, Copy)]
pub struct Tick<'a> {
    /// Steps done so far, of `steps` (all signatures over all rounds).
    pub step: usize,
    pub steps: usize,
    /// The round under way (0-based), of `rounds`.
    pub round: u32,
    pub rounds: u32,
    /// The signature being replayed.
    pub name: &'a str,
}

/// Receives the pipeline's progress. Only `result` carries the command's output proper (the
/// table a user pipes elsewhere); everything else is for the person watching.
pub trait Observer {
    /// A stage begins; `detail` says what it works on ("3 signatures on cpu").
    fn stage_started(&mut self, stage: Stage, detail: &str);
    /// The stage that began last is over.
    fn stage_finished(&mut self, _stage: Stage) {}
    /// The isolated replay or a suite moved on.
    fn progress(&mut self, _tick: Tick<'_>) {}
    /// One item of a long run is done (a case of a suite's grid): a line for the person
    /// watching, which `--quiet` leaves out.
    fn item(&mut self, _line: &str) {}
    /// Something the run went on without (no Perfetto file without a trace, ...).
    fn warning(&mut self, message: &str);
    /// Text for the person watching that is not a stage: a helper script's own report.
    fn info(&mut self, text: &str);
    /// The command's result: the comparison table, a summary, the files written.
    fn result(&mut self, text: &str);
}

/// Forwards everything to another observer but turns results into information: for a
/// pipeline run inside another command (selftest's compare run), whose own result is not the
/// outer command's.
pub struct ResultsAsInfo<'a>(pub &'a mut dyn Observer);

impl Observer for ResultsAsInfo<'_> {
    fn stage_started(&mut self, stage: Stage, detail: &str) {
        self.0.stage_started(stage, detail);
    }
    fn stage_finished(&mut self, stage: Stage) {
        self.0.stage_finished(stage);
    }
    fn progress(&mut self, tick: Tick<'_>) {
        self.0.progress(tick);
    }
    fn item(&mut self, line: &str) {
        self.0.item(line);
    }
    fn warning(&mut self, message: &str) {
        self.0.warning(message);
    }
    fn info(&mut self, text: &str) {
        self.0.info(text);
    }
    fn result(&mut self, text: &str) {
        self.0.info(text);
    }
}

/// Keeps everything it is told, in order: for tests and for programs that show the run their
/// own way.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recorder {
    pub stages: Vec<(Stage, String)>,
    pub items: Vec<String>,
    pub warnings: Vec<String>,
    pub info: String,
    pub results: String,
}

impl Observer for Recorder {
    fn stage_started(&mut self, stage: Stage, detail: &str) {
        self.stages.push((stage, detail.to_string()));
    }
    fn item(&mut self, line: &str) {
        self.items.push(line.to_string());
    }
    fn warning(&mut self, message: &str) {
        self.warnings.push(message.to_string());
    }
    fn info(&mut self, text: &str) {
        self.info.push_str(text);
    }
    fn result(&mut self, text: &str) {
        self.results.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_run_hands_its_results_on_as_information() {
        let mut outer = Recorder::default();
        {
            let mut inner = ResultsAsInfo(&mut outer);
            inner.stage_started(Stage::Capture, "model.pt on cpu");
            inner.warning("no timeline");
            inner.result("the table\n");
        }
        assert_eq!(
            outer.stages,
            vec![(Stage::Capture, "model.pt on cpu".to_string())]
        );
        assert_eq!(outer.warnings, vec!["no timeline".to_string()]);
        assert_eq!(outer.info, "the table\n");
        assert_eq!(outer.results, "");
    }

    #[test]
    fn stages_read_as_the_console_shows_them() {
        let names: Vec<String> = [
            Stage::Capture,
            Stage::Classify,
            Stage::Isolated,
            Stage::Full,
            Stage::Energy,
            Stage::Suite("bench scan"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            names,
            [
                "capture",
                "classify",
                "isolated",
                "full",
                "energy",
                "bench scan"
            ]
        );
    }
}
