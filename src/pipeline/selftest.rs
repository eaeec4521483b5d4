//! Selftest: one replay per tier on a device, checked against libtorch on the CPU; with a
//! model, the whole model too (its output against the CPU, its timing, and a small compare
//! run whose report must hold together).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::device::Device;
use crate::report::comparison::ComparisonReport;
use crate::selftest::{self, model_check, Check, ModelReference};

use super::observer::{Observer, ResultsAsInfo};
use super::options::{CompareOptions, FullOptions, SelftestOptions};

/// The compare run of the model stage: small, so the selftest stays quick.
pub const PIPELINE_WARMUP: u32 = 3;
pub const PIPELINE_RUNS: u32 = 10;
pub const PIPELINE_MAX_TIME_PER_KERNEL_S: f64 = 0.02;

const PIPELINE_CHECK: &str = "compare pipeline end to end";

/// Runs every check, hands the report (text, or JSON with `options.json`) to `observer` as
/// the result, and fails when a check failed.
pub fn run(options: &SelftestOptions, observer: &mut dyn Observer) -> crate::Result<Vec<Check>> {
    let device = Device::open(options.device)?;
    // A model that cannot be loaded or run on the CPU is the user's to fix (exit 2), and is
    // found before any check runs.
    let reference = options
        .model
        .as_deref()
        .map(|path| ModelReference::load(path, options.seq_len))
        .transpose()?;
    let mut checks = selftest::run(&device);
    if let Some(reference) = &reference {
        checks.extend(selftest::model_checks(&device, reference));
        checks.push(pipeline_check(
            &device,
            &reference.path,
            options.seq_len,
            observer,
        ));
    }
    let failed = checks.iter().filter(|c| !c.passed).count();
    let report = if options.json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(
                &serde_json::json!({ "device": device.describe(), "checks": checks })
            )
            .map_err(|e| crate::Error::Failed(format!("the selftest report as JSON: {e}")))?
        )
    } else {
        render(&device.describe(), &checks)
    };
    observer.result(&report);
    if failed > 0 {
        return Err(crate::Error::Failed(format!(
            "{failed} selftest check(s) failed on {}",
            device.describe()
        )));
    }
    Ok(checks)
}

/// The checks as text, one line each.
fn render(device: &str, checks: &[Check]) -> String {
    let failed = checks.iter().filter(|c| !c.passed).count();
    let mut out = format!("selftest on {device}\n");
    for c in checks {
        let label = match c.stage {
            selftest::Stage::Model => "model ".to_string(),
            selftest::Stage::Replay if c.tier == 0 => "tier -".to_string(),
            selftest::Stage::Replay => format!("tier {}", c.tier),
        };
        let _ = writeln!(
            out,
            "  {label}  {:<4}  {:<45} {}",
            if c.passed { "pass" } else { "FAIL" },
            c.name,
            c.detail
        );
    }
    let _ = writeln!(out, "{} passed, {} failed", checks.len() - failed, failed);
    out
}

/// The options of the model stage's compare run: compare's defaults but for the model, the
/// device, the folder and a small budget.
fn pipeline_options(device: &Device, model: &Path, seq_len: i64, dir: PathBuf) -> CompareOptions {
    CompareOptions {
        run: FullOptions {
            model: model.to_path_buf(),
            seq_len,
            warmup: PIPELINE_WARMUP,
            runs: PIPELINE_RUNS,
            device: device.spec(),
            output_dir: dir,
            ..FullOptions::default()
        },
        max_time_per_kernel_s: PIPELINE_MAX_TIME_PER_KERNEL_S,
        ..CompareOptions::default()
    }
}

/// Compare on `model` and `device` into a temporary folder (capture through
/// `scripts/capture_trace.py`, classify, isolated with a short budget, full, report), then the
/// report's invariants. Its stages reach `observer` as they happen; its table and the capture
/// script's report are information, not the selftest's result (which stays the only thing on
/// standard output, so `--json` can be piped). The folder is removed when the check passes
/// and kept when it fails.
fn pipeline_check(
    device: &Device,
    model: &Path,
    seq_len: i64,
    observer: &mut dyn Observer,
) -> Check {
    let scratch = match tempfile::Builder::new()
        .prefix("replay-selftest-")
        .tempdir()
    {
        Ok(scratch) => scratch,
        Err(e) => {
            return model_check(
                PIPELINE_CHECK,
                Err(format!("cannot make a temporary folder: {e}")),
            )
        }
    };
    let options = pipeline_options(device, model, seq_len, scratch.path().to_path_buf());
    let result = super::compare::run(&options, &mut ResultsAsInfo(observer))
        .map_err(|e| e.with_causes())
        .and_then(|_| {
            // The report as written, not only as returned: the file is what users read.
            let path = crate::export::OutputDir::new(scratch.path())
                .path(crate::export::OutputFile::ComparisonReport);
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let report: ComparisonReport = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a comparison report: {e}", path.display()))?;
            report.check_invariants()
        });
    let result = match result {
        // Dropping the folder removes it.
        Ok(detail) => Ok(detail),
        Err(e) => Err(format!("{e} (files kept in {})", scratch.keep().display())),
    };
    model_check(PIPELINE_CHECK, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compare_run_keeps_compares_defaults_but_for_its_budget() {
        let device = Device::open(crate::device::DeviceSpec::Cpu).unwrap();
        let options = pipeline_options(&device, Path::new("m.pt"), 7, "tmp".into());
        let defaults = CompareOptions::default();
        assert_eq!(options.run.runs, PIPELINE_RUNS);
        assert_eq!(options.run.warmup, PIPELINE_WARMUP);
        assert_eq!(options.run.seq_len, 7);
        assert_eq!(options.run.batch, defaults.run.batch);
        assert_eq!(options.rounds, defaults.rounds);
        assert_eq!(
            options.max_time_per_kernel_s,
            PIPELINE_MAX_TIME_PER_KERNEL_S
        );
        assert_eq!(options.trace, None);
        assert_eq!(options.kernels, None);
    }

    #[test]
    fn the_text_report_counts_passes_and_failures() {
        let checks = vec![
            selftest::check(1, "memcpy", Ok("fine".into())),
            model_check("output", Err("off by 3".into())),
        ];
        let text = render("cpu (test)", &checks);
        assert!(text.starts_with("selftest on cpu (test)\n"), "{text}");
        assert!(text.contains("tier 1  pass  memcpy"), "{text}");
        assert!(text.contains("model   FAIL  output"), "{text}");
        assert!(text.ends_with("1 passed, 1 failed\n"), "{text}");
    }
}
