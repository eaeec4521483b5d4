//! The libtorch commands (`replay-torch`, which users reach through `replay`): clap
//! definitions and dispatch to one module per subcommand, each of which turns its arguments
//! into the pipeline's options (`crate::pipeline`) and runs it with a console observer.
//! `classify` and `predict` are the torch-free core's (`replay_cli`).

pub mod args;
pub mod bench;
mod calibrate;
mod compare;
pub mod console;
mod devices;
pub mod energy_args;
pub mod full;
pub mod isolated;
pub mod merge;
mod scan;
pub mod scripts;
mod selftest;
pub mod sequence;
pub mod timing_args;
pub mod value_parsers;

use clap::{Parser, Subcommand};

use crate::device::DeviceSpec;

#[derive(Debug, Parser)]
#[command(
    name = "replay",
    bin_name = "replay",
    version,
    about = replay_cli::ABOUT,
    long_about = replay_cli::LONG_ABOUT
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the CPU, libtorch and every CUDA device replay can use (or why there is none)
    Devices(devices::DevicesArgs),
    /// Replay every signature of a signature file alone on a device and time it
    Isolated(isolated::IsolatedArgs),
    /// Re-run a trace's step in order, every op with inputs of its own, and time each op in
    /// its place (a trace recorded on one device re-runs on any)
    Sequence(sequence::SequenceArgs),
    /// Run one replay per tier on a device and check the numbers against libtorch on the CPU;
    /// with --model, also the whole model and a small compare pipeline on that device
    Selftest(selftest::SelftestArgs),
    /// Time the whole model (TorchScript, or an AOTInductor package .pt2): R forward passes
    /// after W warm-ups
    Full(full::FullArgs),
    /// Write a TorchScript model of the zoo (BLOOM, GPT-2, BERT, T5, ResNet-50; random weights),
    /// or with --format pt2 a torch.export program (--aoti: an AOTInductor package)
    Export(scripts::ExportArgs),
    /// Profile one forward pass of a model (TorchScript, a torch.export ExportedProgram or a zoo
    /// model, optionally compiled with torch.compile) into a trace
    Capture(scripts::CaptureArgs),
    /// Predict the model's latency from its replayed kernels and compare with the real model
    Compare(compare::CompareArgs),
    /// Benchmark suites, each checked against a reference and timed on the measurement core:
    /// scan (semi-Markov semiring scan), quant (quantized Linear layers), mhc (mHC offload)
    Bench(bench::BenchArgs),
    /// Semiring scan of a semi-Markov CRF on your own potentials (.npy): log-partition,
    /// Viterbi score or entropy per sequence, and the gradient
    Scan(scan::ScanArgs),
    /// Measure the device into a calibration profile: matmul GFLOPS, memory bandwidth and
    /// peaks (JSON, the seed's fields)
    Calibrate(calibrate::CalibrateArgs),
    /// Merge the shards of one run (`--shard I/N`) into the files a single run writes,
    /// refusing parts of other runs and naming missing shards; re-runs nothing
    Merge(replay_cli::merge::MergeArgs),
}

/// Parses a `--device` value for clap, with the library's own message on error.
pub fn parse_device(text: &str) -> Result<DeviceSpec, String> {
    text.parse::<DeviceSpec>().map_err(|e| e.to_string())
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Devices(args) => devices::run(args),
        Command::Isolated(args) => Ok(isolated::run(args)?),
        Command::Sequence(args) => sequence::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Full(args) => full::run(args),
        Command::Export(args) => scripts::export(args),
        Command::Capture(args) => scripts::capture(args),
        Command::Compare(args) => compare::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Scan(args) => Ok(scan::run(args)?),
        Command::Calibrate(args) => Ok(calibrate::run(args)?),
        Command::Merge(args) => merge::run(args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `replay --help` (the core's list) and `replay COMMAND --help` (this side's parser) must
    /// describe every libtorch command in the same words.
    #[test]
    fn the_core_lists_each_libtorch_command_as_it_describes_itself() {
        let core = replay_cli::Cli::command();
        let torch = super::Cli::command();
        let mut compared = 0;
        for sub in torch.get_subcommands() {
            let listed = core
                .find_subcommand(sub.get_name())
                .unwrap_or_else(|| panic!("replay --help does not list {}", sub.get_name()));
            assert_eq!(
                listed.get_about().map(|a| a.to_string()),
                sub.get_about().map(|a| a.to_string()),
                "{}",
                sub.get_name()
            );
            compared += 1;
        }
        assert_eq!(compared, 12);
    }
}
