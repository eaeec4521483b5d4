//! What `replay isolated` reports at the end, tallied row by row, so that a windowed run
//! (whose rows are on disk, not in memory) reports as a whole one does.

use std::fmt::Write as _;

use crate::export::{OutputDir, OutputFile};
use crate::replay::isolated::{SignatureResult, Status};

/// The counts and sums of the summary, added up one row at a time.
#[derive(Debug, Default)]
pub struct Tally {
    rows: usize,
    /// Rows per status, in [`STATUSES`] order.
    statuses: [usize; 6],
    trace_total: f64,
    covered: f64,
    predicted: f64,
    energy_rows: usize,
    energy_measured: usize,
    first_energy_error: Option<String>,
    /// The first ten failed or oom rows: id, name, reason.
    failures: Vec<(String, String, String)>,
}

const STATUSES: [Status; 6] = [
    Status::Ok,
    Status::Included,
    Status::Unsupported,
    Status::Failed,
    Status::Oom,
    Status::Estimated,
];

impl Tally {
    pub fn add(&mut self, r: &SignatureResult) {
        self.rows += 1;
        if let Some(i) = STATUSES.iter().position(|&s| s == r.status) {
            self.statuses[i] += 1;
        }
        self.trace_total += r.trace_total_us;
        if matches!(r.status, Status::Ok | Status::Included) {
            self.covered += r.trace_total_us;
        }
        if let Some(p) = r.predicted_us {
            self.predicted += p * r.count as f64;
        }
        if let Some(e) = &r.energy {
            self.energy_rows += 1;
            match e {
                Ok(_) => self.energy_measured += 1,
                Err(e) => {
                    self.first_energy_error.get_or_insert_with(|| e.clone());
                }
            }
        }
        if matches!(r.status, Status::Failed | Status::Oom) && self.failures.len() < 10 {
            self.failures.push((
                r.id.clone(),
                r.name.clone(),
                r.reason.clone().unwrap_or_default(),
            ));
        }
    }

    fn count(&self, s: Status) -> usize {
        STATUSES
            .iter()
            .position(|&x| x == s)
            .map_or(0, |i| self.statuses[i])
    }

    /// The summary text: statuses, coverage (`unseen`: what the file says replay could not
    /// see), the sum of the parts, energy, the first failures and where the files are.
    pub fn text(&self, device: &str, unseen: &str, output_dir: &std::path::Path) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "replayed {} signatures on {}: {} ok, {} included, {} unsupported, {} failed, {} oom{}",
            self.rows,
            device,
            self.count(Status::Ok),
            self.count(Status::Included),
            self.count(Status::Unsupported),
            self.count(Status::Failed),
            self.count(Status::Oom),
            match self.count(Status::Estimated) {
                0 => String::new(),
                n => format!(", {n} estimated by the roofline of --profile"),
            }
        );
        if self.trace_total > 0.0 {
            let _ = writeln!(
                out,
                "coverage: {} of the trace's time replayed{unseen}",
                replay_core::percent::percent_text(self.covered / self.trace_total),
            );
        }
        // An empty sum is -0.0, which would print as "-0.0 us".
        let predicted = self.predicted + 0.0;
        let _ = writeln!(out, "sum of isolated medians x counts: {predicted:.1} us");
        // A probe that failed part-way leaves the signatures measured before it with energy
        // and the rest without: say so here, not only in the results' rows.
        if self.energy_rows > 0 {
            let _ = writeln!(
                out,
                "energy: measured for {} of {} signatures",
                self.energy_measured, self.energy_rows
            );
            if let Some(first) = &self.first_energy_error {
                let _ = writeln!(out, "  energy failed: {first}");
            }
        }
        for (id, name, reason) in &self.failures {
            let _ = writeln!(out, "  {id} {name}: {reason}");
        }
        let files = OutputDir::new(output_dir);
        let _ = writeln!(
            out,
            "results: {} and {}",
            files.path(OutputFile::IsolatedJson).display(),
            files.path(OutputFile::IsolatedCsv).display()
        );
        out
    }
}
