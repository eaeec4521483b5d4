//! `replay bench quant`: reads the seed's YAML config, prints progress and the seed's table;
//! the grid, the checks, the timing and the CSV are `crate::suites::quant`'s.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use replay_core::measure::MonotonicClock;
use replay_core::shard::Shard;
use replay_core::suite::{CaseStatus, Suite};

use crate::cli::progress::Progress;
use crate::suites::quant::config;
use crate::suites::quant::output::{open_results, table};
use crate::suites::quant::timing::{TimingMode, SEED_CALLS};
use crate::suites::quant::{QuantSettings, QuantSuite, COMMAND};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimingChoice {
    /// The seed's: warm-up calls, then the mean of the timed calls (--runs each)
    Seed,
    /// replay's stopping rule: the median, sampled until within 0.5 % or --max-time-per-model
    Replay,
}

#[derive(Debug, Args)]
pub struct QuantArgs {
    /// The seed's YAML config (benchmark_mode, quantization_config_recipe_names,
    /// sparsity_config_recipe_names, output_dir, model_params)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// Where results_<DDMMYYYY_HHMMSS>.csv, profiler/ and memory_profiler/ go (default: the
    /// config's output_dir)
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// How each model is timed; the CSV's `timing` column says which
    #[arg(long, value_enum, default_value_t = TimingChoice::Seed)]
    pub timing: TimingChoice,

    /// Seed timing: warm-up calls and timed calls (the seed's 100 each)
    #[arg(long, value_name = "N", default_value_t = SEED_CALLS, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,

    /// replay timing: time budget per model, in seconds
    #[arg(long, value_name = "S", default_value_t = 0.5)]
    pub max_time_per_model: f64,

    /// libtorch intra-op threads while timing (the seed's Timer uses 1)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,

    /// No progress bar or per-case lines (the table is still printed)
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub shard: replay_core::shard::ShardArgs,
}

pub fn run(args: QuantArgs) -> anyhow::Result<()> {
    let shard_run = args.shard.resolve().map_err(crate::Error::from)?;
    let shard = shard_run.as_ref().map_or(Shard::WHOLE, |s| s.shard);
    let (config, warnings) = config::load(&args.config)?;
    for key in &warnings.unknown_keys {
        eprintln!(
            "warning: {}: unknown key `{key}` ignored",
            args.config.display()
        );
    }
    if !(args.max_time_per_model.is_finite() && args.max_time_per_model > 0.0) {
        return Err(crate::suites::quant::QuantError::Config {
            path: args.config.clone(),
            message: format!(
                "--max-time-per-model {} is not a positive number of seconds",
                args.max_time_per_model
            ),
        }
        .into());
    }
    let timing = match args.timing {
        TimingChoice::Seed => TimingMode::Seed {
            warmup: args.runs,
            runs: args.runs as usize,
        },
        TimingChoice::Replay => TimingMode::Replay {
            budget: Duration::from_secs_f64(args.max_time_per_model),
        },
    };
    tch::set_num_threads(args.threads as i32);
    let output_dir = args.output_dir.unwrap_or_else(|| config.output_dir.clone());
    let settings = QuantSettings {
        timing,
        threads: args.threads as usize,
        output_dir: output_dir.clone(),
    };
    // What every shard of one run shares, besides the work list (which holds the config's
    // shapes, model types, recipes and devices).
    let shard_settings = serde_json::json!({
        "timing": timing.describe(args.threads as usize),
        "threads": args.threads,
    });
    let suite = QuantSuite::new(config, settings);
    if let Some(shard_run) = &shard_run {
        // A stale shard.json must not vouch for this run's rows if it dies.
        shard_run.begin(&output_dir)?;
    }
    let (mut csv, csv_path) = open_results(&output_dir, &suite.columns())?;
    let grid_total = suite.cases().len();
    let cases = shard.slice(&suite.cases());
    let console = Progress::new(args.quiet, cases.len());
    console.line(&format!(
        "==> bench quant: {} cases{} from {}, {}, writing {}",
        cases.len(),
        shard_run
            .as_ref()
            .map(|s| format!(" (shard {} of the grid's {grid_total})", s.shard))
            .unwrap_or_default(),
        args.config.display(),
        timing.describe(args.threads as usize),
        csv_path.display()
    ));
    for (entry, why) in suite.device_problems() {
        // Said even with --quiet: these rows have no numbers, and why must not be missed.
        println!(
            "model_params[{entry}] ({}): {why}; its rows are skipped",
            suite.config().model_params[entry].device
        );
    }
    if let Some(first) = cases.first() {
        console.current(&first.describe());
    }
    let started = Instant::now();
    let mut rows = Vec::new();
    let tally = replay_core::suite::run_shard(
        &suite,
        shard,
        &(),
        &timing.measure_config(),
        &MonotonicClock::new(),
        &mut csv,
        |p| {
            let row = suite.last_row();
            let outcome = match p.status {
                CaseStatus::Ok => {
                    let number =
                        |c: &str| row.as_ref().and_then(|r| r.get(c)).and_then(|v| v.as_f64());
                    let ms = |c: &str| {
                        number(c)
                            .map(|v| format!("{v:.3} ms"))
                            .unwrap_or("-".into())
                    };
                    let sqnr = match row.as_ref().and_then(|r| r.get("sqnr_db")) {
                        Some(serde_json::Value::Null) | None => String::new(),
                        Some(v) => format!(
                            ", SQNR {} dB",
                            v.as_str().map(str::to_owned).unwrap_or(v.to_string())
                        ),
                    };
                    format!(
                        "ok: baseline {}, quantized {}, speedup {}x{sqnr}",
                        ms("baseline_inference_time_in_ms"),
                        ms("quantized_inference_time_in_ms"),
                        number("speedup")
                            .map(|v| format!("{v:.2}"))
                            .unwrap_or("-".into()),
                    )
                }
                status => format!(
                    "{}: {}",
                    status.as_str(),
                    row.as_ref()
                        .and_then(|r| r.get("error_msg"))
                        .and_then(|m| m.as_str())
                        .unwrap_or_default()
                ),
            };
            console.line(&format!(
                "[{}/{}] {}: {outcome}",
                p.index + 1,
                p.total,
                p.case.describe()
            ));
            if let Some(r) = row {
                rows.push(r);
            }
            console.advance(cases.get(p.index + 1).map(|c| c.describe()));
        },
    )?;
    console.finish();
    println!("\nBenchmark Results:\n{}", table(&rows));
    println!(
        "\nbench quant: {} cases in {:.1} s: {} ok, {} not implemented, {} skipped, {} error, {} oom",
        cases.len(),
        started.elapsed().as_secs_f64(),
        tally.ok,
        tally.not_implemented,
        tally.skipped,
        tally.error,
        tally.oom
    );
    println!("Results saved to {}", csv_path.display());
    if let Some(shard_run) = &shard_run {
        // Written last: a shard that dies before here leaves no shard.json.
        let work_list = replay_core::suite::work_list(&suite, COMMAND);
        let file = csv_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let manifest = shard_run.finish(replay_core::shard::args::Finished {
            command: COMMAND,
            device: config_devices(&suite),
            work_list: &work_list,
            settings: shard_settings,
            output_dir: &output_dir,
            files: vec![file],
        })?;
        println!("{}", manifest.summary("cases", &output_dir));
    }
    Ok(())
}

/// The devices of the config's `model_params` entries, in order, once each ("cpu",
/// "cpu,cuda"): what every shard of a run must have run on.
fn config_devices(suite: &QuantSuite) -> String {
    let mut devices: Vec<String> = Vec::new();
    for entry in &suite.config().model_params {
        let device = entry.device.to_string();
        if !devices.contains(&device) {
            devices.push(device);
        }
    }
    devices.join(",")
}
