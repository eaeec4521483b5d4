//! The `replay` command line. The commands that read files only (`classify`, `predict`) run
//! here, in a process that never loads libtorch; the ones that replay, time or run a model
//! are handed to the `replay-torch` executable installed beside this one ([`forward`]), the
//! way git and cargo run their subcommands. `replay --help` lists both kinds.

mod classify;
pub mod exit;
pub mod forward;
pub mod merge;
mod merge_signatures;
pub mod parse;
mod predict;
mod predict_ranks;
mod predict_streamed;
pub mod shard_flags;

use clap::{Args, Parser, Subcommand};

pub use classify::default_output as default_signature_path;
pub use shard_flags::ShardFlags;

/// What `replay --help` says about replay.
pub const ABOUT: &str =
    "Replay every unique GPU kernel of a model alone, time it, and predict the model's latency from the parts";
pub const LONG_ABOUT: &str =
    "replay finds the unique kernels of a PyTorch model (from a TorchScript model or a \
profiler trace), sorts them into four tiers (1: CUDA runtime memcpy/memset, 2: cuBLAS \
GEMM, 3: everything else through libtorch, 4: the kernels torch.compile generated), replays each one alone on a CPU or CUDA \
device, times it soundly, predicts the whole model's latency from the parts and \
compares the prediction with the real model.\n\nEvery command works with --device cpu; \
--device cuda[:N] needs an NVIDIA driver and never falls back to the CPU silently.";

#[derive(Debug, Parser)]
#[command(name = "replay", version, about = ABOUT, long_about = LONG_ABOUT, disable_help_subcommand = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The arguments of a command that `replay-torch` parses (its `--help` included).
#[derive(Debug, Args)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub args: Vec<std::ffi::OsString>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the CPU, libtorch and every CUDA device replay can use (or why there is none)
    #[command(disable_help_flag = true)]
    Devices(Forwarded),
    /// Read a PyTorch profiler trace and write its unique kernels, sorted into the four tiers
    Classify(classify::ClassifyArgs),
    /// Replay every signature of a signature file alone on a device and time it
    #[command(disable_help_flag = true)]
    Isolated(Forwarded),
    /// Re-run a trace's step in order, every op with inputs of its own, and time each op in
    /// its place (a trace recorded on one device re-runs on any)
    #[command(disable_help_flag = true)]
    Sequence(Forwarded),
    /// Run one replay per tier on a device and check the numbers against libtorch on the CPU;
    /// with --model, also the whole model and a small compare pipeline on that device
    #[command(disable_help_flag = true)]
    Selftest(Forwarded),
    /// Time the whole model (TorchScript, or an AOTInductor package .pt2): R forward passes
    /// after W warm-ups
    #[command(disable_help_flag = true)]
    Full(Forwarded),
    /// Write a TorchScript model of the zoo (BLOOM, GPT-2, BERT, T5, ResNet-50; random weights),
    /// or with --format pt2 a torch.export program (--aoti: an AOTInductor package)
    #[command(disable_help_flag = true)]
    Export(Forwarded),
    /// Profile one forward pass of a model (TorchScript, a torch.export ExportedProgram or a zoo
    /// model, optionally compiled with torch.compile) into a trace
    #[command(disable_help_flag = true)]
    Capture(Forwarded),
    /// Predict the model's latency from its replayed kernels and compare with the real model
    #[command(disable_help_flag = true)]
    Compare(Forwarded),
    /// Benchmark suites, each checked against a reference and timed on the measurement core:
    /// scan (semi-Markov semiring scan), quant (quantized Linear layers), mhc (mHC offload)
    #[command(disable_help_flag = true)]
    Bench(Forwarded),
    /// Predict a trace's step time from its own durations with the timeline model, and check it
    Predict(predict::PredictArgs),
    /// Semiring scan of a semi-Markov CRF on your own potentials (.npy): log-partition,
    /// Viterbi score or entropy per sequence, and the gradient
    #[command(disable_help_flag = true)]
    Scan(Forwarded),
    /// Measure the device into a calibration profile: matmul GFLOPS, memory bandwidth and
    /// peaks (JSON, the seed's fields)
    #[command(disable_help_flag = true)]
    Calibrate(Forwarded),
    /// Merge the shards of one run (`--shard I/N`) into the files a single run writes,
    /// refusing parts of other runs and naming missing shards; re-runs nothing
    Merge(merge::MergeArgs),
}

/// Runs the parsed command; a forwarded one replaces this process and does not return
/// unless `replay-torch` cannot be started.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let (name, forwarded) = match cli.command {
        Command::Classify(args) => return classify::run(args),
        Command::Predict(args) => return predict::run(args),
        Command::Merge(args) => {
            let core = merge::core_mergers();
            let mergers: Vec<&dyn merge::CommandMerger> = core.iter().map(|m| m.as_ref()).collect();
            if merge::run_with(&args, &mergers)? {
                return Ok(());
            }
            // The command's writers live in replay-torch (the bench suites).
            return Err(forward::exec("merge", &args.to_args()));
        }
        Command::Devices(f) => ("devices", f),
        Command::Isolated(f) => ("isolated", f),
        Command::Sequence(f) => ("sequence", f),
        Command::Selftest(f) => ("selftest", f),
        Command::Full(f) => ("full", f),
        Command::Export(f) => ("export", f),
        Command::Capture(f) => ("capture", f),
        Command::Compare(f) => ("compare", f),
        Command::Bench(f) => ("bench", f),
        Command::Scan(f) => ("scan", f),
        Command::Calibrate(f) => ("calibrate", f),
    };
    Err(forward::exec(name, &forwarded.args))
}
