//! `replay-tracegen`: writes a synthetic Kineto trace of about `--size` bytes (or `--steps`
//! steps) to a file or to standard output, for `make bench-huge`.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use replay_tracegen::{generate, parse_size, Layout, Length, Options, Summary};

/// `--layout`'s values.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum LayoutArg {
    /// As Kineto writes a trace of many steps (the shared traces' order): every step's host
    /// ops first, then every runtime call with the activity it launched, then the GPU's step
    /// spans.
    Kineto,
    /// Each step's events together, host then GPU: a reader can finish the trace step by step.
    Steps,
}

/// Write a synthetic PyTorch profiler (Kineto) trace: training steps of a bfloat16
/// GPT-style model on an H100 (ops with shapes, launches, GEMMs and elementwise kernels on
/// several streams, copies, memsets, NCCL all-reduces when there are several ranks), with
/// fresh correlation and External ids throughout. Deterministic for a seed.
#[derive(Parser, Debug)]
#[command(name = "replay-tracegen", version)]
struct Args {
    /// Bytes of JSON to write, about: steps are added until this is reached (`30G`, `20M`,
    /// `1GiB`; decimal unless `iB`). The default when --steps is not given: 100M.
    #[arg(long, value_parser = parse_size_arg, conflicts_with = "steps")]
    size: Option<u64>,
    /// Exactly this many steps instead of --size.
    #[arg(long)]
    steps: Option<u64>,
    /// World size of the job: writes `distributedInfo` and gradient all-reduces on NCCL's
    /// stream when above 1.
    #[arg(long)]
    ranks: Option<u64>,
    /// This trace's rank (0 .. ranks-1).
    #[arg(long, default_value_t = 0, requires = "ranks")]
    rank: u64,
    /// Transformer blocks per step (a step's size grows with it: ~50 KB of JSON each; 24 make a 1.26 MB step).
    #[arg(long, default_value_t = 24)]
    layers: u64,
    /// Seed of every duration and of the step variants.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Gzip the output (members of about --gzip-member JSON bytes each, one after another).
    #[arg(long)]
    gzip: bool,
    /// JSON bytes per gzip member.
    #[arg(long, default_value = "64M", value_parser = parse_size_arg)]
    gzip_member: u64,
    /// The first step's number (`ProfilerStep#N`).
    #[arg(long, default_value_t = 1)]
    first_step: u64,
    /// The order of the events in the file.
    #[arg(long, value_enum, default_value = "kineto")]
    layout: LayoutArg,
    /// Where to write: a file, or `-` for standard output.
    #[arg(long, default_value = "-")]
    out: PathBuf,
    /// Print nothing on standard error.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_size_arg(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

fn options(args: &Args) -> Result<Options> {
    if let Some(ranks) = args.ranks {
        if ranks == 0 {
            bail!("--ranks must be at least 1");
        }
        if args.rank >= ranks {
            bail!("--rank {} is not below --ranks {ranks}", args.rank);
        }
    }
    if args.layers == 0 {
        bail!("--layers must be at least 1");
    }
    let length = match (args.steps, args.size) {
        (Some(0), _) => bail!("--steps must be at least 1"),
        (Some(steps), _) => Length::Steps(steps),
        (None, size) => Length::Bytes(size.unwrap_or(100_000_000)),
    };
    Ok(Options {
        length,
        ranks: args.ranks,
        rank: args.rank,
        seed: args.seed,
        layers: args.layers,
        gzip_member: args.gzip.then_some(args.gzip_member),
        first_step: args.first_step,
        layout: match args.layout {
            LayoutArg::Kineto => Layout::Kineto,
            LayoutArg::Steps => Layout::Steps,
        },
    })
}

/// Writes to FILE.partial and renames it when complete, so that a failed run leaves no
/// half-written trace under the name asked for.
fn write_file(options: &Options, path: &PathBuf) -> Result<Summary> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let file =
        File::create(&partial).with_context(|| format!("cannot create {}", partial.display()))?;
    match generate(options, BufWriter::with_capacity(1 << 20, file)) {
        Ok(summary) => {
            std::fs::rename(&partial, path).with_context(|| {
                format!("cannot rename {} to {}", partial.display(), path.display())
            })?;
            Ok(summary)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error).with_context(|| format!("writing {}", path.display()))
        }
    }
}

fn run(args: &Args, options: &Options) -> Result<Summary> {
    if args.out.as_os_str() == "-" {
        // A pipe of 1 MiB instead of 64 KiB: a quarter as many wake-ups of the reader per GB.
        // Where the kernel refuses (not a pipe, above its limit), the pipe stays as it is.
        // SAFETY: fcntl on standard output's descriptor, no memory passed.
        unsafe {
            libc::fcntl(1, libc::F_SETPIPE_SZ, 1 << 20);
        }
        let stdout = io::stdout();
        generate(options, stdout.lock()).context("writing to standard output")
    } else {
        write_file(options, &args.out)
    }
}

fn main() -> ExitCode {
    // SAFETY: restoring the default SIGPIPE action before any thread starts, so that
    // `replay-tracegen | head` ends quietly when the reader goes away.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = Args::parse();
    let options = match options(&args) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("replay-tracegen: {error:#}");
            return ExitCode::from(2);
        }
    };
    match run(&args, &options) {
        Ok(summary) => {
            if !args.quiet {
                eprintln!(
                    "replay-tracegen: {} bytes of JSON, {} steps{} to {}",
                    summary.json_bytes,
                    summary.steps,
                    if summary.gzip_members > 0 {
                        format!(", gzipped in {} members", summary.gzip_members)
                    } else {
                        String::new()
                    },
                    args.out.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("replay-tracegen: {error:#}");
            ExitCode::from(1)
        }
    }
}
