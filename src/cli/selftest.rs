//! `replay selftest` (see [`replay::pipeline::selftest`]); this module only reads its command
//! line.

use std::path::PathBuf;

use clap::Args;

use replay::pipeline::options::DEFAULT_SEQ_LEN;
use replay::pipeline::SelftestOptions;

use super::args::DeviceArgs;
use super::console::ConsoleObserver;

#[derive(Debug, Args)]
#[command(mut_arg("device", |a| a
    .help("Device to test: cpu (the host paths; the default, as for every command) or cuda[:N] (the GPU paths)")))]
pub struct SelftestArgs {
    #[command(flatten)]
    pub device: DeviceArgs,

    /// Also check this TorchScript model (from `replay export`) on the device: its output
    /// against the CPU, its timing, and a small `replay compare` run in a temporary folder
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Tokens in the model's input sequence (with --model)
    #[arg(long, default_value_t = DEFAULT_SEQ_LEN, requires = "model", value_parser = crate::cli::value_parsers::positive::<i64>)]
    pub seq_len: i64,

    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

impl From<SelftestArgs> for SelftestOptions {
    fn from(args: SelftestArgs) -> Self {
        SelftestOptions {
            device: args.device.device,
            model: args.model,
            seq_len: args.seq_len,
            json: args.json,
        }
    }
}

pub fn run(args: SelftestArgs) -> anyhow::Result<()> {
    // Stages and compare's own table on standard error, the selftest's report on standard
    // output.
    let mut console = ConsoleObserver::new(false);
    replay::pipeline::selftest::run(&args.into(), &mut console)?;
    Ok(())
}
