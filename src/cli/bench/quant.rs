//! `replay bench quant`: maps the seed's YAML config and the flags to the suite's command
//! (`crate::suites::quant::QuantCommand`), which the suite driver runs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::cli::console::ConsoleObserver;
use crate::cli::timing_args::TimingArgs;
use crate::pipeline::drive;
use crate::suites::quant::config;
use crate::suites::quant::timing::{TimingMode, SEED_CALLS};
use crate::suites::quant::{QuantCommand, QuantError, QuantSettings, QuantSuite};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimingChoice {
    /// The seed's: warm-up calls, then the mean of the timed calls (--runs each)
    Seed,
    /// replay's stopping rule: the median, sampled until within 0.5 % or --max-time-per-model
    Replay,
}

/// The seed's config and flags; the timing flags are the shared group's (`--max-time` also
/// under its former name `--max-time-per-model`).
#[derive(Debug, Args)]
#[command(mut_arg("max_time", |a| a
    .visible_alias("max-time-per-model")
    .default_value("0.5")
    .help("replay timing: time budget per model, in seconds")))]
#[command(mut_arg("warmup", |a| a
    .help("Seed timing: warm-up calls before the timed ones [default: --runs]")))]
#[command(mut_arg("min_samples", |a| a.hide(true)))]
#[command(mut_arg("noise", |a| a.hide(true)))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
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
    #[arg(long, value_name = "N", default_value_t = SEED_CALLS, value_parser = crate::cli::value_parsers::positive::<u64>)]
    pub runs: u64,

    /// libtorch intra-op threads while timing (the seed's Timer uses 1)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cli::value_parsers::positive::<u32>)]
    pub threads: u32,

    /// No progress bar or per-case lines (the table is still printed)
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub timing_flags: TimingArgs,

    #[command(flatten)]
    pub shard: replay_cli::ShardFlags,
}

/// replay timing's budget per model by default (`--max-time`'s default above).
pub const DEFAULT_MAX_TIME_PER_MODEL_S: f64 = 0.5;

pub fn run(args: QuantArgs) -> Result<(), crate::Error> {
    let (config, warnings) = config::load(&args.config)?;
    for key in &warnings.unknown_keys {
        eprintln!(
            "warning: {}: unknown key `{key}` ignored",
            args.config.display()
        );
    }
    args.timing_flags
        .refuse("bench quant", &["min-samples", "noise", "rounds", "cold"])?;
    let timing = match args.timing {
        TimingChoice::Seed => TimingMode::Seed {
            warmup: args.timing_flags.warmup.unwrap_or(args.runs),
            runs: args.runs as usize,
        },
        TimingChoice::Replay => TimingMode::Replay {
            budget: Duration::from_secs_f64(
                args.timing_flags
                    .max_time
                    .unwrap_or(DEFAULT_MAX_TIME_PER_MODEL_S),
            ),
        },
    };
    tch::set_num_threads(args.threads as i32);
    let settings = QuantSettings {
        timing,
        threads: args.threads as usize,
        output_dir: args.output_dir.unwrap_or_else(|| config.output_dir.clone()),
    };
    let suite = QuantSuite::new(config, settings);
    if let Some((entry, why)) = suite.device_problems().into_iter().next() {
        // As `--device cuda` everywhere else: a device that does not open is the user's to
        // fix (exit 2), not a run of skipped rows that exits 0.
        return Err(QuantError::Config {
            path: args.config,
            message: format!(
                "model_params[{entry}].device: {} cannot be used here: {why} (set `device: cpu`, \
                 or run on a machine with that GPU)",
                suite.config().model_params[entry].device.short_name()
            ),
        }
        .into());
    }
    let mut command = QuantCommand::new(suite, args.config);
    drive(
        &mut command,
        &args.shard.args(),
        &mut ConsoleObserver::new(args.quiet),
    )
}
