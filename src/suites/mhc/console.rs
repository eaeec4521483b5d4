//! What the person watching a `bench mhc` run sees, and what the run keeps of each
//! configuration, told by the core's grid runner ([`GridEvents`]): the seed's console text (a
//! header per configuration, then one block per implementation) as results, one line per
//! finished stage and the bar, and each configuration's fastest totals for the offload answer.

use replay_core::export::rows::Row;
use replay_core::suite::{CaseProgress, GridEvents};

use super::grid::{GridCase, MhcGrid};
use super::offload::BatchResult;
use super::rows::console_block;
use super::shape::MhcShape;
use super::stages::{gpu_name, Impl, Placement, Stage};
use crate::device::DeviceSpec;
use crate::pipeline::{Observer, Tick};

/// What the person watching sees of the grid, and what the run keeps of each configuration:
/// the seed's console text (a header, then one block per implementation) as results, one
/// line per finished stage and the bar, and each configuration's numbers for the answer.
pub struct Console<'a> {
    pub observer: &'a mut dyn Observer,
    /// Every configuration of the run: its placement and shape index.
    pub configurations: &'a [(Placement, usize)],
    /// The GPU the placements use, as the console names it.
    pub gpu: Option<DeviceSpec>,
    /// The run's shapes, by index.
    pub shapes: &'a [MhcShape],
    pub impls: &'a [Impl],
    pub grid: &'a MhcGrid,
    /// Each shape's numbers for the offload answer.
    pub results: Vec<BatchResult>,
    /// Rows that failed so far.
    pub failed_rows: usize,
    pub per_configuration: usize,
    /// Rows in the run's slice, the bar's length.
    pub steps: usize,
}

impl Console<'_> {
    fn configuration(&self, case: &GridCase) -> Option<(Placement, usize, MhcShape)> {
        let (placement, index) = *self.configurations.get(case.configuration)?;
        Some((placement, index, *self.shapes.get(index)?))
    }
}

impl GridEvents<GridCase> for Console<'_> {
    fn group_started(&mut self, first: &GridCase) {
        let Some((placement, _, shape)) = self.configuration(first) else {
            return;
        };
        say(
            self.observer,
            &format!(
                "Benchmarking on {}... ({})",
                placement.device_name(self.gpu),
                shape.describe()
            ),
        );
        if placement == Placement::Offload {
            say(self.observer, &format!(
                "Offload simulation enabled: inputs on {}, D2H/H2D through pinned host memory.\n  D2H Copy Info: Shape=({}, {}, {}, {}), Size={:.2} MB",
                gpu_name(self.gpu),
                shape.batch, shape.seq, shape.streams, shape.dim,
                shape.stream_bytes() as f64 / (1u64 << 20) as f64
            ));
        }
    }

    fn case_finished(&mut self, p: CaseProgress<'_, GridCase>) {
        let Some((placement, _, shape)) = self.configuration(p.case) else {
            return;
        };
        let per = self.per_configuration.max(1);
        self.observer.item(&format!(
            "  [{}/{}] {} {}: {} ({:.1} s)",
            p.index % per + 1,
            per,
            p.case.case.imp.name(),
            p.case.case.stage.label(),
            match placement.not_applicable(p.case.case.stage) {
                Some(_) => "not applicable",
                None => p.status.as_str(),
            },
            p.elapsed.as_secs_f64()
        ));
        self.observer.progress(Tick {
            step: p.index + 1,
            steps: self.steps,
            round: 0,
            rounds: 1,
            name: &shape.describe(),
        });
    }

    fn group_finished(&mut self, last: &GridCase) {
        // The configuration's inputs are freed here, before the next one's are made.
        let rows = self.grid.finish_configuration();
        let Some((placement, index, _)) = self.configuration(last) else {
            return;
        };
        for imp in self.impls {
            let theirs: Vec<(Stage, Row)> = rows
                .iter()
                .filter(|(c, _)| c.imp == *imp)
                .map(|(c, r)| (c.stage, r.clone()))
                .collect();
            say(self.observer, &console_block(*imp, &theirs));
        }
        self.failed_rows += rows.iter().filter(|(_, r)| is_failed(r)).count();
        let pairs: Vec<((Impl, Stage), Row)> = rows
            .into_iter()
            .map(|(c, r)| ((c.imp, c.stage), r))
            .collect();
        record(&mut self.results[index], placement, &pairs);
    }
}

/// The seed's console text: a result line.
pub fn say(observer: &mut dyn Observer, text: &str) {
    observer.result(&format!("{text}\n"));
}

/// A row that failed (neither measured, nor not applicable, nor not implemented).
pub fn is_failed(row: &Row) -> bool {
    !matches!(status(row), "ok" | "not_applicable" | "not_implemented")
}

fn status(row: &Row) -> &str {
    row.get("Status").and_then(|v| v.as_str()).unwrap_or("")
}

fn time_ms(row: &Row) -> Option<f64> {
    row.get("Time(ms)").and_then(|v| v.as_f64())
}

/// Keeps the fastest implementation's totals of one configuration on one placement.
pub fn record(result: &mut BatchResult, placement: Placement, rows: &[((Impl, Stage), Row)]) {
    let faster = |slot: &mut Option<(f64, Impl)>, ms: f64, imp: Impl| {
        if slot.is_none_or(|(best, _)| ms < best) {
            *slot = Some((ms, imp));
        }
    };
    for ((imp, stage), row) in rows {
        if *stage != Stage::Total {
            continue;
        }
        let Some(ms) = time_ms(row) else {
            if result.failure.is_none() && !matches!(status(row), "not_implemented") {
                let note = row.get("Note").and_then(|v| v.as_str()).unwrap_or("");
                result.failure = Some(format!("{}: {note}", status(row)));
            }
            continue;
        };
        match placement {
            Placement::CpuOnly => faster(&mut result.cpu_compute_ms, ms, *imp),
            Placement::Offload => faster(&mut result.cpu_offloaded_ms, ms, *imp),
            Placement::Gpu => faster(&mut result.gpu_total_ms, ms, *imp),
        }
    }
    if placement == Placement::Offload {
        // Stages 1–3 of the offload run, for the table's compute column.
        for imp in [Impl::Torch, Impl::Fused] {
            let parts: Option<Vec<f64>> = [Stage::Linear, Stage::Sinkhorn, Stage::Apply]
                .iter()
                .map(|s| {
                    rows.iter()
                        .find(|((i, st), _)| *i == imp && st == s)
                        .and_then(|(_, r)| time_ms(r))
                })
                .collect();
            if let Some(parts) = parts {
                faster(&mut result.cpu_compute_ms, parts.iter().sum(), imp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::MhcDtype;

    fn row(status: &str, ms: Option<f64>) -> Row {
        let r = Row::new().with("Status", status).with("Note", "why");
        match ms {
            Some(ms) => r.with("Time(ms)", ms),
            None => r,
        }
    }

    fn empty(batch: usize) -> BatchResult {
        BatchResult {
            shape: MhcShape::new(batch, 8, 16, 4, MhcDtype::Float32).unwrap(),
            cpu_compute_ms: None,
            cpu_offloaded_ms: None,
            gpu_total_ms: None,
            failure: None,
        }
    }

    #[test]
    fn the_fastest_total_of_each_placement_is_kept() {
        let rows = vec![
            ((Impl::Torch, Stage::Linear), row("ok", Some(5.0))),
            ((Impl::Torch, Stage::Sinkhorn), row("ok", Some(2.0))),
            ((Impl::Torch, Stage::Apply), row("ok", Some(3.0))),
            ((Impl::Torch, Stage::Total), row("ok", Some(12.0))),
            ((Impl::Fused, Stage::Linear), row("ok", Some(1.0))),
            ((Impl::Fused, Stage::Sinkhorn), row("ok", Some(0.1))),
            ((Impl::Fused, Stage::Apply), row("ok", Some(0.9))),
            ((Impl::Fused, Stage::Total), row("ok", Some(6.0))),
        ];
        let mut r = empty(4);
        record(&mut r, Placement::Offload, &rows);
        assert_eq!(r.cpu_offloaded_ms, Some((6.0, Impl::Fused)));
        assert_eq!(r.cpu_compute_ms, Some((2.0, Impl::Fused)));
        let mut g = empty(4);
        record(&mut g, Placement::Gpu, &rows);
        assert_eq!(g.gpu_total_ms, Some((6.0, Impl::Fused)));
        assert_eq!(g.cpu_compute_ms, None);
    }

    #[test]
    fn a_failed_total_is_remembered_as_the_reason() {
        let rows = vec![((Impl::Torch, Stage::Total), row("oom", None))];
        let mut r = empty(32);
        record(&mut r, Placement::CpuOnly, &rows);
        assert_eq!(r.cpu_compute_ms, None);
        assert_eq!(r.failure.as_deref(), Some("oom: why"));
    }
}
