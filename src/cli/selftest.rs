//! `replay selftest`: one replay per tier on a device, checked against libtorch on the CPU;
//! with `--model`, the whole model too (its output against the CPU, its timing, and a small
//! `replay compare` run whose report must hold together).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Args, Parser};

use crate::device::{Device, DeviceSpec};
use crate::report::comparison::ComparisonReport;
use crate::selftest::{self, model_check, Check, ModelReference};

use super::compare::CompareArgs;

/// `replay compare`'s options on their own, to parse the pipeline stage's arguments.
#[derive(Debug, Parser)]
#[command(name = "compare")]
struct CompareCommand {
    #[command(flatten)]
    args: CompareArgs,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Device to test: cuda[:N] (the GPU paths) or cpu (the host paths)
    #[arg(long, default_value = "cuda", value_parser = super::parse_device)]
    pub device: DeviceSpec,

    /// Also check this TorchScript model (from `replay export`) on the device: its output
    /// against the CPU, its timing, and a small `replay compare` run in a temporary folder
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Tokens in the model's input sequence (with --model)
    #[arg(long, default_value_t = 5, requires = "model")]
    pub seq_len: i64,

    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// The compare run of the model stage: small, so the selftest stays quick.
const PIPELINE_WARMUP: u32 = 3;
const PIPELINE_RUNS: u32 = 10;
const PIPELINE_MAX_TIME_PER_KERNEL_S: f64 = 0.02;

pub fn run(args: SelftestArgs) -> anyhow::Result<()> {
    let device = Device::open(args.device)?;
    // A model that cannot be loaded or run on the CPU is the user's to fix (exit 2), and is
    // found before any check runs.
    let reference = args
        .model
        .as_deref()
        .map(|path| ModelReference::load(path, args.seq_len))
        .transpose()?;
    let mut checks = selftest::run(&device);
    if let Some(reference) = &reference {
        checks.extend(selftest::model_checks(&device, reference));
        checks.push(pipeline_check(&device, &reference.path, args.seq_len));
    }
    let failed = checks.iter().filter(|c| !c.passed).count();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "device": device.describe(), "checks": checks })
            )?
        );
    } else {
        println!("selftest on {}", device.describe());
        for c in &checks {
            let label = match c.stage {
                selftest::Stage::Model => "model ".to_string(),
                selftest::Stage::Replay if c.tier == 0 => "tier -".to_string(),
                selftest::Stage::Replay => format!("tier {}", c.tier),
            };
            println!(
                "  {label}  {:<4}  {:<45} {}",
                if c.passed { "pass" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        println!("{} passed, {} failed", checks.len() - failed, failed);
    }
    if failed > 0 {
        anyhow::bail!("{failed} selftest check(s) failed on {}", device.describe());
    }
    Ok(())
}

const PIPELINE_CHECK: &str = "compare pipeline end to end";

/// `replay compare` on `model` and `device` into a temporary folder (capture through
/// `scripts/capture_trace.py`, classify, isolated with a short budget, full, report), then the
/// report's invariants. The folder is removed when the check passes and kept when it fails.
fn pipeline_check(device: &Device, model: &Path, seq_len: i64) -> Check {
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
    let dir = scratch.path().to_path_buf();
    // Through compare's own argument parser, as a user would type it: every option not named
    // here keeps compare's default.
    let args = match CompareCommand::try_parse_from(
        [
            "compare".into(),
            "--model".into(),
            model.as_os_str().to_owned(),
            "--output-dir".into(),
            dir.as_os_str().to_owned(),
        ]
        .into_iter()
        .chain(
            [
                "--device".to_string(),
                device.spec().to_string(),
                "--seq-len".into(),
                seq_len.to_string(),
                "--warmup".into(),
                PIPELINE_WARMUP.to_string(),
                "--runs".into(),
                PIPELINE_RUNS.to_string(),
                "--max-time-per-kernel".into(),
                PIPELINE_MAX_TIME_PER_KERNEL_S.to_string(),
            ]
            .map(OsString::from),
        ),
    ) {
        Ok(parsed) => parsed.args,
        Err(e) => return model_check(PIPELINE_CHECK, Err(e.to_string())),
    };
    let result = {
        // compare prints its table, and the capture script its summary, on standard output;
        // here they go to standard error, so standard output stays the selftest's own (--json).
        let _redirect = StdoutToStderr::new();
        super::compare::run(args)
    }
    .map_err(|e| format!("{e:#}"))
    .and_then(|()| {
        let path =
            crate::export::OutputDir::new(&dir).path(crate::export::OutputFile::ComparisonReport);
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

/// While alive, the process's standard output (file descriptor 1, inherited by child
/// processes too) is its standard error; dropping it restores standard output.
struct StdoutToStderr {
    #[cfg(unix)]
    saved: Option<std::os::fd::OwnedFd>,
}

impl StdoutToStderr {
    fn new() -> StdoutToStderr {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        #[cfg(unix)]
        {
            use std::os::fd::{AsFd as _, AsRawFd as _};
            let saved = std::io::stdout().as_fd().try_clone_to_owned().ok();
            // SAFETY: dup2 on two descriptors this process owns for its whole life; the copy
            // of the original standard output is kept in `saved` and put back on drop.
            let redirected = saved.is_some()
                && unsafe { libc::dup2(std::io::stderr().as_fd().as_raw_fd(), 1) } == 1;
            StdoutToStderr {
                saved: if redirected { saved } else { None },
            }
        }
        #[cfg(not(unix))]
        StdoutToStderr {}
    }
}

impl Drop for StdoutToStderr {
    fn drop(&mut self) {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            use std::os::fd::AsRawFd as _;
            // SAFETY: as in `new`; `saved` is open until after this call.
            unsafe { libc::dup2(saved.as_raw_fd(), 1) };
        }
    }
}
