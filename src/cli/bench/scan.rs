//! `replay bench scan`: parses the seed's flags and opens the backends; the grid, the checks,
//! the timing and the files are `replay::suites::scan::bench`'s, run by the suite driver.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::timing_args::TimingArgs;
use crate::cli::value_parsers::positive_count;
use clap::Args;

use crate::cli::args::DeviceArgs;
use crate::cli::console::ConsoleObserver;
use replay::pipeline::drive;
use replay::suites::scan::backends::{
    accepted_names, canonical_backend, open_backend_with_threads,
};
use replay::suites::scan::bench::check::DEFAULT_CHECK_LIMIT;
use replay::suites::scan::bench::compile_friendly::{self, Sampling};
use replay::suites::scan::bench::inputs::{SeededInputs, SEED};
use replay::suites::scan::bench::{
    case_timing, BenchSettings, ScanBenchSuite, ScanCommand, ScanGrid,
};
use replay::suites::scan::{Phase, ScanError, Semiring};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ScanArgs {
    #[command(subcommand)]
    pub action: Option<ScanAction>,

    #[command(flatten)]
    pub run: ScanRunArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum ScanAction {
    /// The seed's tables and plots (SVG) from a benchmark_full.csv, and one index.html
    /// showing them all
    Analyze(super::scan_analyze::AnalyzeArgs),
}

/// The seed's flags (`benchmarks/benchmark_memory_analysis.py`), with its defaults; the
/// timing flags are the shared group's, under the seed's names too.
#[derive(Debug, Args)]
#[command(mut_arg("min_samples", |a| a
    .visible_alias("repeats")
    .default_value("5")
    .help("Timed samples per case, at least (after at least one warm-up call); more are taken while the median is noisy and --max-time is not spent")))]
#[command(mut_arg("max_time", |a| a
    .visible_alias("max-time-per-case")
    .default_value("0.25")
    .help("Time budget per case in seconds, warm-up included: sampling stops once --min-samples samples are taken and either the median is within 0.5 % or this is spent")))]
#[command(mut_arg("warmup", |a| a.hide(true)))]
#[command(mut_arg("noise", |a| a.hide(true)))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
#[command(mut_arg("device", |a| a
    .help("Device: cpu, cuda or cuda:N; the cpu backend always runs on the host, torch and cuda on this device")))]
pub struct ScanRunArgs {
    #[command(flatten)]
    pub device: DeviceArgs,

    /// Sequence lengths T, comma-separated
    #[arg(long = "T", value_name = "LIST", value_delimiter = ',', default_value = "128,256,512,1024", value_parser = positive_count)]
    pub t: Vec<usize>,

    /// Maximum segment durations K (durations 1..K−1), comma-separated
    #[arg(long = "K", value_name = "LIST", value_delimiter = ',', default_value = "4,8,12,16,20,24", value_parser = positive_count)]
    pub k: Vec<usize>,

    /// Label counts C, comma-separated
    #[arg(long = "C", value_name = "LIST", value_delimiter = ',', default_value = "3,6,9,12", value_parser = positive_count)]
    pub c: Vec<usize>,

    /// Batch size B (sequences per scan)
    #[arg(long = "B", value_name = "N", default_value_t = 4, value_parser = positive_count)]
    pub b: usize,

    /// Phases, comma-separated: forward (the value only), backward (the backward alone,
    /// after an untimed forward), both (forward then backward)
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "both", value_parser = parse_phase)]
    pub phases: Vec<Phase>,

    /// Semirings, comma-separated, any case: Log (log-partition), Max (Viterbi), Entropy
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "Log", value_parser = parse_semiring)]
    pub semirings: Vec<Semiring>,

    /// Backends, comma-separated: cpu (the Rust CPU kernel), torch (the seed's streaming
    /// scan in libtorch ops, the baseline), cuda (our CUDA kernel; needs --device cuda); the
    /// seed's names too: linear_scan_streaming (= torch), triton, triton_pytorch,
    /// triton_checkpointing (counterpart: cuda; on the CPU their rows are not_implemented)
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "cpu,torch", value_parser = parse_backend)]
    pub backends: Vec<String>,

    /// Where benchmark_full.csv, heatmap_data.json and memory_breakdown.csv go; a run
    /// replaces the three files there, as the seed does
    #[arg(long, value_name = "DIR", default_value = "results/scan")]
    pub output_dir: PathBuf,

    /// Skip a configuration whose estimated memory (the seed's formulas) is larger
    #[arg(long, value_name = "GB", default_value_t = 40.0, value_parser = parse_non_negative)]
    pub max_memory_gb: f64,

    /// Worker threads of the cpu backend, and libtorch's intra-op threads for torch
    /// (default: every core for cpu, libtorch's own choice for torch)
    #[arg(long, value_name = "N", value_parser = positive_count)]
    pub threads: Option<usize>,

    /// Check a case against the float64 reference only when its edge tensor (B·(T−1)·K·C²
    /// values) is at most this large; larger ones are timed unchecked, and the log says so
    #[arg(long, value_name = "VALUES", default_value_t = DEFAULT_CHECK_LIMIT, value_parser = crate::cli::value_parsers::whole::<usize>)]
    pub check_limit: usize,

    /// A grid that runs in seconds: T = 64,128, K = 4,8, C = 3,6 (refused with --T, --K or --C),
    /// as `calibrate --quick` and `bench mhc --quick`
    #[arg(long, conflicts_with_all = ["t", "k", "c"])]
    pub quick: bool,

    /// No progress bar or per-case lines (the summary is still printed)
    #[arg(long, short)]
    pub quiet: bool,

    /// The seed's compile-friendly sampling: configurations grouped into canonical shapes
    /// (T bucket × K·C bucket), at most --max-canonical-shapes shapes, evenly spaced, and
    /// --samples-per-shape configurations each. Replay compiles nothing at run time: here it
    /// only reduces the grid
    #[arg(long)]
    pub compile_friendly: bool,

    /// With --compile-friendly: canonical shapes kept at most
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = positive_count)]
    pub max_canonical_shapes: usize,

    /// With --compile-friendly: configurations run per canonical shape at most
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = positive_count)]
    pub samples_per_shape: usize,

    #[command(flatten)]
    pub compile_cache: SeedCompileFlags,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub shard: replay_cli::ShardFlags,
}

/// `--quick`'s grid: sequence lengths, maximum durations and label counts.
const QUICK_T: [usize; 2] = [64, 128];
const QUICK_K: [usize; 2] = [4, 8];
const QUICK_C: [usize; 2] = [3, 6];

/// The seed's torch.compile flags: accepted so that its command lines run, with a note that
/// there is nothing to compile (replay's kernels are built with the binary).
#[derive(Debug, Args)]
pub struct SeedCompileFlags {
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, hide = true)]
    pub skip_precompile: bool,
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, value_name = "DIR", hide = true)]
    pub compile_cache_dir: Option<PathBuf>,
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, value_name = "GB", hide = true)]
    pub compile_cache_size_gb: Option<f64>,
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, value_name = "N", hide = true)]
    pub compile_threads: Option<usize>,
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, hide = true, overrides_with = "no_use_compile")]
    pub use_compile: bool,
    /// Accepted for the seed's command lines; nothing to compile here
    #[arg(long, hide = true)]
    pub no_use_compile: bool,
}

impl SeedCompileFlags {
    /// The flags given, as the seed spells them.
    fn given(&self) -> Vec<&'static str> {
        [
            (self.skip_precompile, "--skip-precompile"),
            (self.compile_cache_dir.is_some(), "--compile-cache-dir"),
            (
                self.compile_cache_size_gb.is_some(),
                "--compile-cache-size-gb",
            ),
            (self.compile_threads.is_some(), "--compile-threads"),
            (self.use_compile, "--use-compile"),
            (self.no_use_compile, "--no-use-compile"),
        ]
        .into_iter()
        .filter_map(|(given, name)| given.then_some(name))
        .collect()
    }
}

/// Seconds per case by default (`--max-time`'s default above): the cpu cases stop at this,
/// the slow torch cases at their --repeats samples; the default grid then takes about 5
/// minutes on a 2-core machine.
pub const DEFAULT_MAX_TIME_PER_CASE_S: f64 = 0.25;
/// Samples per case at least by default (`--min-samples`' default above): the seed's repeats.
pub const DEFAULT_REPEATS: usize = 5;

fn parse_non_negative(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("'{text}' is not a number of at least 0")),
    }
}

fn parse_phase(text: &str) -> Result<Phase, String> {
    text.parse::<Phase>()
        .map_err(|_| format!("unknown phase '{text}' (accepted: forward, backward, both)"))
}

fn parse_semiring(text: &str) -> Result<Semiring, String> {
    text.trim()
        .parse::<Semiring>()
        .map_err(|_| format!("unknown semiring '{text}' (accepted: Log, Max, Entropy)"))
}

fn parse_backend(text: &str) -> Result<String, String> {
    let name = text.trim().to_ascii_lowercase();
    if canonical_backend(&name).is_some() {
        Ok(name)
    } else {
        Err(format!(
            "unknown backend '{text}' (accepted: {})",
            accepted_names().join(", ")
        ))
    }
}

pub fn run(args: ScanArgs) -> Result<(), replay::Error> {
    if let Some(ScanAction::Analyze(analyze)) = args.action {
        return super::scan_analyze::run(analyze);
    }
    let a = args.run;
    a.timing
        .refuse("bench scan", &["warmup", "noise", "rounds", "cold"])?;
    let timing = a.timing.resolve(case_timing(
        DEFAULT_REPEATS,
        Duration::from_secs_f64(DEFAULT_MAX_TIME_PER_CASE_S),
    ));
    let repeats = timing.min_samples;
    let max_time_per_case = a.timing.max_time.unwrap_or(DEFAULT_MAX_TIME_PER_CASE_S);
    let device = a.device.open()?;
    if let Some(threads) = a.threads {
        tch::set_num_threads(i32::try_from(threads).unwrap_or(i32::MAX));
    }
    let backends = a
        .backends
        .iter()
        .map(|name| {
            open_backend_with_threads(name, &device, a.threads).map_err(|e| {
                ScanError::Backend(format!(
                    "cannot open the {name} backend on {}: {e}",
                    device.describe()
                ))
            })
        })
        .collect::<Result<Vec<_>, ScanError>>()?;
    let given = a.compile_cache.given();
    if !given.is_empty() {
        eprintln!(
            "note: {} accepted for the seed's command line: replay has nothing to compile (its kernels are built with the binary)",
            given.join(", ")
        );
    }
    let sampling = a.compile_friendly.then_some(Sampling {
        max_canonical_shapes: a.max_canonical_shapes,
        samples_per_shape: a.samples_per_shape,
    });
    let (ts, ks, cs) = if a.quick {
        (QUICK_T.to_vec(), QUICK_K.to_vec(), QUICK_C.to_vec())
    } else {
        (a.t, a.k, a.c)
    };
    let grid = ScanGrid {
        sampling,
        ts,
        ks,
        cs,
        batch: a.b,
        backends: a.backends,
        semirings: a.semirings,
        phases: a.phases,
    };
    if sampling.is_some() {
        let full = ScanGrid {
            sampling: None,
            ..grid.clone()
        }
        .configs();
        let kept = grid.configs();
        eprintln!(
            "compile-friendly sampling: {} of {} (T, K, C) configurations, from {} of {} canonical shapes (T bucket x K*C bucket); nothing is compiled",
            kept.len(),
            full.len(),
            compile_friendly::shapes(&kept).len(),
            compile_friendly::shapes(&full).len()
        );
    }
    let bench_settings = BenchSettings {
        max_memory_gb: a.max_memory_gb,
        check_limit: a.check_limit,
    };
    let mut command = ScanCommand {
        suite: ScanBenchSuite::new(grid, backends, bench_settings, SeededInputs::new(SEED))?,
        config: timing.config(),
        device: device.describe(),
        output_dir: a.output_dir,
        settings: serde_json::json!({
            "repeats": repeats,
            "max_time_per_case": max_time_per_case,
            "max_memory_gb": a.max_memory_gb,
            "check_limit": a.check_limit,
            "threads": a.threads,
            "compile_friendly": sampling.map(|s| serde_json::json!({
                "max_canonical_shapes": s.max_canonical_shapes,
                "samples_per_shape": s.samples_per_shape,
            })),
        }),
    };
    drive(
        &mut command,
        &a.shard.args(),
        &mut ConsoleObserver::new(a.quiet),
    )
}
