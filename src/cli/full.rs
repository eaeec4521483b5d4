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

#[derive(Debug, Args, Clone)]
#[command(mut_arg("output_dir", |a| a.help("Where full_model_timing.json goes")))]
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

    /// Untimed forward passes first (TorchScript optimises itself during the first few)
    #[arg(long, default_value_t = DEFAULT_FULL_WARMUP, value_parser = crate::cli::value_parsers::whole::<u32>)]
    pub warmup: u32,

    /// Timed forward passes
    #[arg(long, default_value_t = DEFAULT_FULL_RUNS, value_parser = crate::cli::value_parsers::positive::<u32>)]
    pub runs: u32,

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
            warmup: args.warmup,
            runs: args.runs,
            device: args.device.device,
            output_dir: args.output.output_dir,
            threads: args.threads.threads,
            energy: args.energy.into(),
            fuse_on_cpu: args.fuse_on_cpu,
        }
    }
}

pub fn run(args: FullArgs) -> anyhow::Result<()> {
    let mut console = ConsoleObserver::new(args.output.quiet);
    replay::pipeline::full::run(&args.into(), &mut console)?;
    Ok(())
}
