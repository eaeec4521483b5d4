//! The seed's `benchmark_results.csv` row and console block.
//!
//! Columns: the seed's eleven (`Device … BW(GB/s)`, `SGL_Available` always `False`: replay
//! never loads sgl_kernel), then `Impl` and `Status`, then the spread of the samples the
//! median came from and a note. `Size(MB)` = bytes/1024², `BW(GB/s)` = (bytes/1024³)/(ms/1000),
//! as the seed computes them, on the copy stages only.

use replay_core::export::rows::Row;
use replay_core::suite::CaseOutcome;

use super::shape::MhcShape;
use super::stages::{Impl, Stage};

pub const RESULTS_CSV: &str = "benchmark_results.csv";

pub const COLUMNS: [&str; 17] = [
    "Device",
    "BatchSize",
    "SeqLen",
    "Dim",
    "NumStreams",
    "Dtype",
    "SGL_Available",
    "Case",
    "Time(ms)",
    "Size(MB)",
    "BW(GB/s)",
    "Impl",
    "Status",
    "Time_min(ms)",
    "Time_max(ms)",
    "Samples",
    "Note",
];

/// A stage's status word when it has no time because it does not apply here.
pub const NOT_APPLICABLE: &str = "not_applicable";

/// Bytes a copy stage moves: x_streams (B, T, n, D) in the dtype.
pub fn copy_bytes(shape: &MhcShape) -> u64 {
    shape.stream_bytes()
}

/// The seed's bandwidth: GiB per second.
pub fn bandwidth_gib_s(bytes: u64, ms: f64) -> f64 {
    (bytes as f64 / (1u64 << 30) as f64) / (ms / 1000.0)
}

pub fn size_mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// What one case of the suite is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MhcCase {
    pub imp: Impl,
    pub stage: Stage,
}

/// The seed's CSV row of `case` on `device` (its `Device` column,
/// `stages::Placement::device_name`).
pub fn row(
    shape: &MhcShape,
    device: &str,
    case: &MhcCase,
    outcome: &CaseOutcome,
    note: &str,
) -> Row {
    let mut row = Row::new()
        .with("Device", device)
        .with("BatchSize", shape.batch)
        .with("SeqLen", shape.seq)
        .with("Dim", shape.dim)
        .with("NumStreams", shape.streams)
        .with("Dtype", shape.dtype.name())
        .with("SGL_Available", "False")
        .with("Case", case.stage.case_name());
    match outcome {
        CaseOutcome::Measured(m) => {
            // The core's summaries are in microseconds.
            let ms = m.summary.median / 1000.0;
            row = row.with("Time(ms)", round(ms, 4));
            if case.stage.is_copy() {
                let bytes = copy_bytes(shape);
                row = row
                    .with("Size(MB)", round(size_mib(bytes), 2))
                    .with("BW(GB/s)", round(bandwidth_gib_s(bytes, ms), 2));
            }
            row.with("Impl", case.imp.name())
                .with("Status", "ok")
                .with("Time_min(ms)", round(m.summary.min / 1000.0, 4))
                .with("Time_max(ms)", round(m.summary.max / 1000.0, 4))
                .with("Samples", m.summary.samples)
                .with("Note", csv_text(note))
        }
        CaseOutcome::Failed(e) => {
            let status = if e.message.starts_with("not applicable") {
                NOT_APPLICABLE
            } else {
                e.status.as_str()
            };
            row.with("Impl", case.imp.name())
                .with("Status", status)
                .with("Note", csv_text(&e.message))
        }
    }
}

/// Notes go in one CSV cell: no commas or line breaks (the writer does not quote).
fn csv_text(text: &str) -> String {
    text.replace([',', '\n', '\r'], ";")
}

/// The seed's console block for one implementation's rows: its header line, then the
/// implementation after it (`------------------ Benchmark Results ---------------- (torch)`), e.g.
/// `1. H_res Gen (Linear)              : 5.67 ms` and `| BW: 22.10 GB/s` on the copies.
pub fn console_block(imp: Impl, rows: &[(Stage, Row)]) -> String {
    let mut text = format!(
        "------------------ Benchmark Results ---------------- ({})\n",
        imp.name()
    );
    for (stage, row) in rows {
        let label = format!("{:<35}", stage.label());
        let time = row.get("Time(ms)").and_then(|v| v.as_f64());
        let line = match time {
            Some(ms) => {
                let spread = match (
                    row.get("Time_min(ms)").and_then(|v| v.as_f64()),
                    row.get("Time_max(ms)").and_then(|v| v.as_f64()),
                ) {
                    (Some(lo), Some(hi)) => format!(" (min {lo:.2}, max {hi:.2})"),
                    _ => String::new(),
                };
                let bw = row
                    .get("BW(GB/s)")
                    .and_then(|v| v.as_f64())
                    .map(|bw| format!(" | BW: {bw:.2} GB/s"))
                    .unwrap_or_default();
                format!("{label}: {ms:.2} ms{bw}{spread}")
            }
            None => {
                let status = row.get("Status").and_then(|v| v.as_str()).unwrap_or("?");
                let note = row.get("Note").and_then(|v| v.as_str()).unwrap_or("");
                match note.strip_prefix("not applicable: ") {
                    Some(why) => format!("{label}: n/a ({why})"),
                    None => format!("{label}: {status} ({note})"),
                }
            }
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::stages::Placement;
    use super::*;
    use crate::suites::mhc::shape::MhcDtype;
    use replay_core::measure::{
        measure_detailed, MeasureConfig, MeasureError, SyntheticClock, SyntheticStream, Target,
    };
    use replay_core::suite::{CaseError, CaseStatus};

    /// Three samples of exactly `us` each, through the core's own runner.
    fn measured(us: f64) -> CaseOutcome {
        struct Fixed(std::time::Duration, SyntheticStream);
        impl Target for Fixed {
            fn placement(&self) -> replay_core::measure::Placement<'_> {
                replay_core::measure::Placement::Stream(&self.1)
            }
            fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
                let t = self.0 * calls as u32;
                self.1.device().advance(t);
                self.1.host().advance(t);
                Ok(())
            }
        }
        let mut target = Fixed(
            std::time::Duration::from_secs_f64(us / 1e6),
            SyntheticStream::new(),
        );
        let m = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(1, 3),
            &SyntheticClock::new(),
        )
        .unwrap();
        CaseOutcome::Measured(Box::new(m))
    }

    #[test]
    fn a_copy_row_has_the_seeds_size_and_bandwidth() {
        let shape = MhcShape::new(16, 4096, 7168, 4, MhcDtype::Bfloat16).unwrap();
        let case = MhcCase {
            imp: Impl::Torch,
            stage: Stage::D2hCopy,
        };
        // 3.5 GiB in 175 ms: 20 GiB/s.
        let r = row(&shape, "cpu", &case, &measured(175_000.0), "");
        assert_eq!(r.get("Size(MB)").unwrap().as_f64(), Some(3584.0));
        assert_eq!(r.get("BW(GB/s)").unwrap().as_f64(), Some(20.0));
        assert_eq!(r.get("Time(ms)").unwrap().as_f64(), Some(175.0));
        assert_eq!(r.get("SGL_Available").unwrap(), "False");
        assert_eq!(r.get("Case").unwrap(), "D2H Copy (GPU->CPU)");
        let block = console_block(Impl::Torch, &[(Stage::D2hCopy, r)]);
        assert!(
            block.contains("0. D2H Copy (GPU->CPU)             : 175.00 ms | BW: 20.00 GB/s"),
            "{block}"
        );
    }

    #[test]
    fn a_stage_that_does_not_apply_is_a_status_row_without_a_time() {
        let shape = MhcShape::new(1, 8, 16, 4, MhcDtype::Float32).unwrap();
        let case = MhcCase {
            imp: Impl::Fused,
            stage: Stage::H2dCopy,
        };
        let why = Placement::CpuOnly.not_applicable(Stage::H2dCopy).unwrap();
        let outcome = CaseOutcome::Failed(CaseError::new(CaseStatus::Skipped, why));
        let r = row(&shape, "cpu", &case, &outcome, "");
        assert_eq!(r.get("Device").unwrap(), "cpu");
        assert_eq!(r.get("Status").unwrap(), NOT_APPLICABLE);
        assert_eq!(r.get("Time(ms)"), None);
        assert!(!r.get("Note").unwrap().as_str().unwrap().contains(','));
        let columns: Vec<&str> = r.cells.iter().map(|(c, _)| *c).collect();
        assert!(columns.iter().all(|c| COLUMNS.contains(c)));
    }
}
