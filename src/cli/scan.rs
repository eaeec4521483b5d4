//! `replay scan`: the semiring scan of a semi-Markov CRF on a user's own potentials.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use replay::device::Device;
use replay::measure::Timing;
use replay::suites::scan::tool::{self, ToolRequest};
use replay::suites::scan::{backends, Phase, Semiring};

use super::args::DeviceArgs;
use super::timing_args::TimingArgs;

/// `--time`'s budget by default, in seconds (`--max-time`'s default below).
pub const DEFAULT_TIME_BUDGET_S: f64 = 1.0;

/// The timing flag is the shared group's `--max-time` (also under its former name
/// `--time-budget`); the others are the measurement core's defaults, refused when given.
#[derive(Debug, Args, Clone)]
#[command(mut_arg("max_time", |a| a
    .visible_alias("time-budget")
    .default_value("1")
    .value_name("SECONDS")
    .help("Time budget of --time, in seconds")))]
#[command(mut_arg("warmup", |a| a.hide(true)))]
#[command(mut_arg("min_samples", |a| a.hide(true)))]
#[command(mut_arg("noise", |a| a.hide(true)))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
pub struct ScanArgs {
    /// Edge log-potentials, .npy float32 [B, T-1, K, C, C]: edge[b, n, k, c, c'] scores a
    /// segment of duration k starting at position n, from label c' to label c (duration
    /// slice 0 is unused unless K = 1; float64 is converted)
    #[arg(long, value_name = "FILE.npy")]
    pub edge: PathBuf,

    /// Sequence lengths, .npy int32/int64 [B], each in 1..=T (default: every sequence T long)
    #[arg(long, value_name = "FILE.npy")]
    pub lengths: Option<PathBuf>,

    /// log (log-partition; gradient = edge marginals), max (Viterbi score; gradient = the best
    /// segmentation's edges) or entropy (entropy of the segmentation distribution)
    #[arg(long, default_value = "log", value_parser = parse_semiring)]
    pub semiring: Semiring,

    /// Write the gradient of the summed values with respect to the edge here (.npy float32, the
    /// edge's shape); runs the backward (implies --phase both unless --phase backward)
    #[arg(long, value_name = "OUT.npy")]
    pub grad: Option<PathBuf>,

    /// What to run and time: forward (values only), backward (the backward alone after an
    /// untimed forward) or both [default: forward, or both with --grad]
    #[arg(long, value_parser = parse_phase)]
    pub phase: Option<Phase>,

    /// Backend: cpu (replay's Rust kernel), torch (the seed's streaming reference in
    /// libtorch ops) or cuda (replay's CUDA kernel) [default: cpu on --device cpu, cuda on a GPU]
    #[arg(long)]
    pub backend: Option<String>,

    /// Time the phase with replay's measurement core (warm-up, batching, stopping rule) and
    /// add the median and quartiles to the output
    #[arg(long)]
    pub time: bool,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub device: DeviceArgs,
}

fn parse_semiring(text: &str) -> Result<Semiring, String> {
    text.parse()
        .map_err(|e: replay::suites::scan::ScanError| e.to_string())
}

fn parse_phase(text: &str) -> Result<Phase, String> {
    text.parse()
        .map_err(|e: replay::suites::scan::ScanError| e.to_string())
}

/// Runs the scan and prints the report as JSON on stdout.
pub fn run(args: ScanArgs) -> Result<(), replay::Error> {
    args.timing.refuse(
        "scan",
        &["warmup", "min-samples", "noise", "rounds", "cold"],
    )?;
    let device = args.device.open()?;
    let backend_name = args.backend.clone().unwrap_or_else(|| {
        match device {
            Device::Cpu(_) => "cpu",
            Device::Cuda(_) => "cuda",
        }
        .to_string()
    });
    let backend = backends::open_backend(&backend_name, &device)?;
    let phase = args.phase.unwrap_or(if args.grad.is_some() {
        Phase::Both
    } else {
        Phase::Forward
    });
    let request = ToolRequest {
        edge: args.edge,
        lengths: args.lengths,
        semiring: args.semiring,
        phase,
        grad_out: args.grad,
        timing: args.time.then(|| {
            args.timing.to_config(Timing::alone(Duration::from_secs_f64(
                DEFAULT_TIME_BUDGET_S,
            )))
        }),
    };
    let report = tool::run(&request, backend.as_ref(), device.describe())?;
    let text =
        serde_json::to_string_pretty(&report).map_err(|e| replay::Error::Failed(e.to_string()))?;
    println!("{text}");
    Ok(())
}
