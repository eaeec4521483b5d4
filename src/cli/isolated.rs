//! `replay isolated`: replay every signature of a signature file alone and time it.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::device::cache_flush::{CpuCacheFlusher, CudaL2Flusher};
use crate::device::{Device, DeviceSpec};
use crate::export::{self, OutputDir, OutputFile};
use crate::kernels::KernelCache;
use crate::measure::{interleave, MeasureConfig, MonotonicClock};
use crate::replay::isolated::{self, ColdFlush, IsolatedResults, RunConfig, Status};
use crate::signature;

/// Rounds per signature unless `--rounds` says otherwise (see [`crate::measure::interleave`]).
pub const DEFAULT_ROUNDS: u32 = 5;

#[derive(Debug, Args)]
pub struct IsolatedArgs {
    /// Signature file written by `replay classify`
    #[arg(long, value_name = "FILE")]
    pub kernels: PathBuf,

    /// Device to replay on: cpu, cuda or cuda:N (a trace from one GPU can be replayed anywhere)
    #[arg(long, default_value = "cpu", value_parser = super::parse_device)]
    pub device: DeviceSpec,

    /// Where isolated.json and isolated.csv go (rewritten after every signature)
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// Flush the L2 (CUDA) or last-level cache (CPU) before every sample
    #[arg(long)]
    pub cold: bool,

    /// Time budget per signature, warm-up included, in seconds
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub max_time_per_kernel: f64,

    /// Stop sampling once the relative standard error of the median is below this
    #[arg(long, default_value_t = 0.005, value_name = "FRACTION")]
    pub noise: f64,

    /// Take at least this many samples (over all rounds)
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub min_samples: usize,

    /// Split each signature's budget into N rounds over all signatures, in a shuffled order
    /// after the first, and pool their samples: each median then spans the whole run instead
    /// of the moment the signature happened to be measured, which keeps runs comparable on a
    /// machine whose speed drifts (shared or cloud machines). 1 measures each signature in one go
    #[arg(long, default_value_t = DEFAULT_ROUNDS, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,

    /// libtorch intra-op threads (default: libtorch's own choice); match `replay full --threads`
    #[arg(long)]
    pub threads: Option<i32>,

    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub energy: super::energy_args::EnergyArgs,
}

pub fn run(args: IsolatedArgs) -> anyhow::Result<()> {
    let file = signature::read_file(&args.kernels).map_err(crate::Error::from)?;
    let device = Device::open(args.device)?;
    let mut probe = args.energy.open()?;
    let results = run_with(&args, &file, &device, probe.as_deref_mut(), |_| {
        std::ops::ControlFlow::Continue(())
    })?;
    print_summary(&results, &args);
    Ok(())
}

/// Replays `file` on `device`, writing results as they come; also used by `replay compare`,
/// which times the full model in `after_round` (see [`isolated::run`]).
pub fn run_with(
    args: &IsolatedArgs,
    file: &signature::schema::SignatureFile,
    device: &Device,
    probe: Option<&mut (dyn crate::energy::EnergyProbe + 'static)>,
    after_round: impl FnMut(u32) -> std::ops::ControlFlow<()>,
) -> anyhow::Result<IsolatedResults> {
    if args.max_time_per_kernel.is_nan() || args.max_time_per_kernel <= 0.0 {
        anyhow::bail!(crate::Error::from(replay_core::Error::BadInput {
            path: "--max-time-per-kernel".into(),
            message: "must be a positive number of seconds".into()
        }));
    }
    super::full::apply_threads(args.threads)?;
    // Each round gets its share of the budget and of the minimum sample count.
    let budget = isolated::budget(args.max_time_per_kernel);
    let round_budget = interleave::round_budget(budget, args.rounds);
    let mut config = MeasureConfig::with_time_budget(round_budget);
    config.stopping = std::sync::Arc::new(crate::measure::StopCriteria {
        noise: crate::measure::RelativeNoise {
            max_rse_of_median: args.noise,
        },
        min_samples: crate::measure::MinSamples(interleave::round_min_samples(
            args.min_samples,
            args.rounds,
        )),
        ..crate::measure::StopCriteria::with_budget(round_budget)
    });
    if args.cold {
        config = config.cold();
    }
    let run_config = RunConfig {
        cold: args.cold,
        max_time_per_kernel_s: args.max_time_per_kernel,
        noise_target: args.noise,
        min_samples: args.min_samples,
        rounds: args.rounds,
    };
    let cold_flush: Option<ColdFlush> = match (args.cold, device) {
        (false, _) => None,
        (true, Device::Cpu(info)) => {
            let mut flusher = CpuCacheFlusher::new(info.last_level_cache_bytes());
            Some(Box::new(move || {
                flusher.flush();
                Ok(())
            }))
        }
        (true, Device::Cuda(dev)) => {
            let cache = KernelCache::default();
            let mut flusher = CudaL2Flusher::new(dev, &cache)?;
            Some(Box::new(move || flusher.flush().map_err(|e| e.to_string())))
        }
    };

    let energy_config = args.energy.config();
    let files = OutputDir::new(&args.output_dir);
    let json_path = files.path(OutputFile::IsolatedJson);
    let csv_path = files.path(OutputFile::IsolatedCsv);
    let show_bar = !args.quiet && std::io::stderr().is_terminal();
    let bar = if show_bar {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} (ETA {eta}) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut write_error: Option<anyhow::Error> = None;
    let _no_grad = tch::no_grad_guard();
    let results = isolated::run(
        file,
        &args.kernels,
        device,
        &config,
        run_config,
        &MonotonicClock::new(),
        cold_flush,
        probe.map(|p| (p, &energy_config)),
        |p| {
            bar.set_length(p.steps as u64);
            bar.set_position(p.step as u64);
            let name: String = p.name.chars().take(60).collect();
            if p.rounds > 1 {
                bar.set_message(format!("round {}/{} {name}", p.round + 1, p.rounds));
            } else {
                bar.set_message(name);
            }
        },
        |results| {
            // Rewritten after every signature: an interrupted run keeps what it measured.
            let written = export::write_atomic(&json_path, &export::json::to_bytes(results))
                .and_then(|_| {
                    export::write_atomic(&csv_path, &export::csv::isolated_to_bytes(results))
                });
            if let Err(e) = written {
                write_error.get_or_insert(e.into());
            }
        },
        after_round,
    );
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e).context("writing isolated results");
    }
    Ok(results)
}

fn print_summary(results: &IsolatedResults, args: &IsolatedArgs) {
    let count = |s: Status| results.results.iter().filter(|r| r.status == s).count();
    println!(
        "replayed {} signatures on {}: {} ok, {} included, {} unsupported, {} failed, {} oom",
        results.results.len(),
        results.device,
        count(Status::Ok),
        count(Status::Included),
        count(Status::Unsupported),
        count(Status::Failed),
        count(Status::Oom)
    );
    let trace_total: f64 = results.results.iter().map(|r| r.trace_total_us).sum();
    let covered: f64 = results
        .results
        .iter()
        .filter(|r| matches!(r.status, Status::Ok | Status::Included))
        .map(|r| r.trace_total_us)
        .sum();
    if trace_total > 0.0 {
        println!(
            "coverage: {:.1}% of the trace's time replayed",
            100.0 * covered / trace_total
        );
    }
    let predicted: f64 = results
        .results
        .iter()
        .filter_map(|r| r.predicted_us.map(|p| p * r.count as f64))
        .sum();
    println!("sum of isolated medians x counts: {predicted:.1} us");
    // A probe that failed part-way leaves the signatures measured before it with energy and
    // the rest without: say so here, not only in the results' rows.
    let energy: Vec<&Result<_, String>> = results
        .results
        .iter()
        .filter_map(|r| r.energy.as_ref())
        .collect();
    if !energy.is_empty() {
        let measured = energy.iter().filter(|e| e.is_ok()).count();
        println!(
            "energy: measured for {measured} of {} signatures",
            energy.len()
        );
        if let Some(Err(first)) = energy.iter().find(|e| e.is_err()) {
            println!("  energy failed: {first}");
        }
    }
    for r in results
        .results
        .iter()
        .filter(|r| matches!(r.status, Status::Failed | Status::Oom))
        .take(10)
    {
        println!(
            "  {} {}: {}",
            r.id,
            r.name,
            r.reason.as_deref().unwrap_or("")
        );
    }
    println!(
        "results: {} and {}",
        OutputDir::new(&args.output_dir)
            .path(OutputFile::IsolatedJson)
            .display(),
        OutputDir::new(&args.output_dir)
            .path(OutputFile::IsolatedCsv)
            .display()
    );
}
