//! `replay full`: time the whole model (TorchScript, or an AOTInductor package).

use std::path::PathBuf;

use clap::Args;

use replay::model::input_spec::InputSpec;
use replay::pipeline::options::{
    DEFAULT_BATCH, DEFAULT_FULL_RUNS, DEFAULT_FULL_WARMUP, DEFAULT_SEQ_LEN,
};
use replay::pipeline::FullOptions;

use super::args::{DeviceArgs, OutputArgs, ThreadsArgs};
use super::console::ConsoleObserver;
use super::timing_args::TimingArgs;

/// The timing flags are the shared group's: `--warmup` and, as `--runs`, `--min-samples` (a
/// fixed-runs measurement); `replay compare` shows `--max-time`, `--rounds` and `--cold` too.
#[derive(Debug, Args, Clone)]
#[command(mut_arg("output_dir", |a| a.help("Where full_model_timing.json goes")))]
#[command(mut_arg("warmup", |a| a
    .value_name("WARMUP")
    .default_value("10")
    .help("Untimed forward passes first (TorchScript optimises itself during the first few)")))]
#[command(mut_arg("min_samples", |a| a
    .long("runs")
    .value_name("RUNS")
    .default_value("100")
    .help("Timed forward passes")))]
#[command(mut_arg("noise", |a| a.hide(true)))]
#[command(mut_arg("max_time", |a| a.hide(true)))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
pub struct FullArgs {
    /// TorchScript model (write one with `replay export`), or an AOTInductor package (.pt2,
    /// `replay export --format pt2 --aoti`), which runs on the input it was compiled for
    #[arg(long, value_name = "FILE", required = true)]
    pub model: Option<PathBuf>,

    /// Tokens in the input sequence
    #[arg(long, default_value_t = DEFAULT_SEQ_LEN, value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub seq_len: i64,

    /// Sequences per forward pass
    #[arg(long, default_value_t = DEFAULT_BATCH, value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub batch: i64,

    /// One input tensor of the model instead of token ids of --batch x --seq-len, repeated
    /// for each input in order: DTYPE[d0,d1,...] with an optional :LO..HI for integers, e.g.
    /// float32[1,3,224,224] or int64[1,128]:0..50257 (integers without a range: [0, vocab))
    #[arg(long = "input", value_name = "SPEC", value_parser = replay::model::input_spec::parse_input_spec)]
    pub inputs: Vec<InputSpec>,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub device: DeviceArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    #[command(flatten)]
    pub energy: super::energy_args::EnergyArgs,

    /// Switch TorchScript's fuser on for the CPU before the model is loaded (off by default;
    /// on a GPU it is on), so its element-wise chains run as fusion groups, as `replay capture
    /// --fuse-on-cpu` runs them
    #[arg(long)]
    pub fuse_on_cpu: bool,
}

impl From<FullArgs> for FullOptions {
    fn from(args: FullArgs) -> Self {
        FullOptions {
            // Required on the command line; `replay compare --zoo` goes without.
            model: args.model.unwrap_or_default(),
            seq_len: args.seq_len,
            batch: args.batch,
            inputs: args.inputs,
            // A pass count past u32 (4·10⁹ forward passes) is none a run finishes.
            warmup: args.timing.warmup.map_or(DEFAULT_FULL_WARMUP, |w| {
                u32::try_from(w).unwrap_or(u32::MAX)
            }),
            runs: args
                .timing
                .min_samples
                .map_or(DEFAULT_FULL_RUNS, |r| u32::try_from(r).unwrap_or(u32::MAX)),
            device: args.device.device,
            output_dir: args.output.output_dir,
            threads: args.threads.threads,
            energy: args.energy.into(),
            fuse_on_cpu: args.fuse_on_cpu,
        }
    }
}

pub fn run(args: FullArgs) -> anyhow::Result<()> {
    args.timing
        .refuse("full", &["noise", "max-time", "rounds", "cold"])?;
    let mut console = ConsoleObserver::new(args.output.quiet);
    replay::pipeline::full::run(&args.into(), &mut console)?;
    Ok(())
}
