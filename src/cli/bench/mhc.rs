//! `replay bench mhc`: maps the seed's flags (`mHC_benchmark.py`) to the suite's command
//! (`replay::suites::mhc::command`), which the suite driver runs.

use std::path::PathBuf;

use crate::cli::timing_args::TimingArgs;
use crate::cli::value_parsers::positive_count;
use clap::Args;

use crate::cli::args::DeviceArgs;
use crate::cli::console::ConsoleObserver;
use replay::device::CudaDevice;
use replay::measure;
use replay::pipeline::drive;
use replay::shipped::{shipped_file, DEFAULT_GPU_PROFILE};
use replay::suites::mhc::command::{placement, MhcCommand};
use replay::suites::mhc::parallel::thread_count;
use replay::suites::mhc::run::{RunOptions, Timing};
use replay::suites::mhc::shape::{
    DEFAULT_BS, DEFAULT_DIM, DEFAULT_SEQ, DEFAULT_STREAMS, QUICK, SWEEP_BS,
};
use replay::suites::mhc::stages::{Impl, Placement};
use replay::suites::mhc::{MhcDtype, MhcError, MhcShape};
use replay_core::shard::Shard;

/// The seed's flags, with its defaults; the timing flags are the shared group's, under the
/// seed's names too (`--warmup`, `--iters`).
#[derive(Debug, Args)]
#[command(mut_arg("warmup", |a| a
    .default_value("3")
    .help("Untimed calls before each stage's samples")))]
#[command(mut_arg("min_samples", |a| a
    .visible_alias("iters")
    .default_value("10")
    .help("Timed calls per stage (the median is reported, with min and max); with --max-time, at least this many")))]
#[command(mut_arg("max_time", |a| a
    .visible_alias("until-stable")
    .help("Instead of exactly --iters samples: replay's stopping rule (at least --iters, then until the median is within 0.5 % or this many seconds per stage are spent)")))]
#[command(mut_arg("noise", |a| a.hide(true)))]
#[command(mut_arg("rounds", |a| a.hide(true)))]
#[command(mut_arg("cold", |a| a.hide(true)))]
#[command(mut_arg("device", |a| a
    .help("cpu (stages 1–3 on the host; the offload simulation when a CUDA GPU is present) or cuda[:N] (everything on the GPU)")))]
pub struct MhcArgs {
    /// Batch size B [default: 16]
    #[arg(long, value_parser = positive_count)]
    pub bs: Option<usize>,

    /// Run batch sizes 1, 2, 4, 8, 16, 32 (overrides --bs, with a warning) and answer at
    /// which one offloading to the CPU pays (offload_answer.md and .svg)
    #[arg(long, visible_alias = "sweep_bs")]
    pub sweep_bs: bool,

    /// Sequence length T [default: 4096]
    #[arg(long, value_parser = positive_count)]
    pub seq: Option<usize>,

    /// Model dimension D [default: 7168]
    #[arg(long, value_parser = positive_count)]
    pub dim: Option<usize>,

    /// Hyper-connection streams n (H_res is n×n)
    #[arg(long, visible_alias = "n_streams", default_value_t = DEFAULT_STREAMS, value_parser = positive_count)]
    pub n_streams: usize,

    /// Data type: bfloat16, float32 or float16
    #[arg(long, default_value = "bfloat16", value_parser = parse_dtype)]
    pub dtype: MhcDtype,

    #[command(flatten)]
    pub device: DeviceArgs,

    /// Implementations, comma-separated: torch (the seed's libtorch ops), fused (replay's
    /// kernels: Rust on the CPU, the CUDA Sinkhorn on a GPU)
    #[arg(long = "impl", value_delimiter = ',', default_value = "torch,fused", value_parser = parse_impl)]
    pub impls: Vec<Impl>,

    /// Worker threads of the fused CPU kernels (default: every CPU this process may use)
    #[arg(long, value_parser = positive_count)]
    pub threads: Option<usize>,

    /// A size that runs in seconds: B=2, T=256, D=1024 (refused with --bs, --seq or --dim)
    #[arg(long, conflicts_with_all = ["bs", "seq", "dim"])]
    pub quick: bool,

    /// Where benchmark_results.csv is appended to (and the offload answer written); the
    /// seed's place, the working directory, by default
    #[arg(long, default_value = ".")]
    pub output_dir: PathBuf,

    /// Calibration profile of the GPU the offload answer compares against when this machine
    /// has none (`replay calibrate` writes one) [default: the H100 SXM datasheet profile that
    /// ships with replay, profiles/h100_sxm_datasheet.json, found from any directory]
    #[arg(long, value_name = "FILE")]
    pub gpu_profile: Option<PathBuf>,

    /// Also write a Kineto (Chrome) trace of the torch pipeline's stages 1–3 that
    /// `replay classify` and `replay predict` read (log/mhc_benchmark/mhc_trace.json under
    /// --output-dir, the seed's profiler folder)
    #[arg(long)]
    pub profiler: bool,

    /// No per-stage lines or progress bar (the seed's console blocks are still printed)
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub timing: TimingArgs,

    #[command(flatten)]
    pub shard: replay_cli::ShardFlags,
}

/// The seed's warm-up calls and timed calls per stage (`--warmup`, `--iters` above).
pub const DEFAULT_WARMUP: u64 = 3;
pub const DEFAULT_ITERS: usize = 10;

fn parse_dtype(text: &str) -> Result<MhcDtype, String> {
    text.parse()
}

fn parse_impl(text: &str) -> Result<Impl, String> {
    text.parse()
}

pub fn run(a: MhcArgs) -> Result<(), replay::Error> {
    let (bs, seq, dim) = if a.quick {
        (QUICK.0, QUICK.1, QUICK.2)
    } else {
        (
            a.bs.unwrap_or(DEFAULT_BS),
            a.seq.unwrap_or(DEFAULT_SEQ),
            a.dim.unwrap_or(DEFAULT_DIM),
        )
    };
    if a.sweep_bs && a.bs.is_some() {
        // The seed's rule (its README: the sweep "overrides --bs"), said rather than silent.
        eprintln!(
            "warning: --bs {} is ignored: --sweep-bs runs batch sizes 1, 2, 4, 8, 16, 32",
            bs
        );
    }
    let gpu_profile = match a.gpu_profile {
        Some(path) if !path.exists() => {
            return Err(replay::Error::Core(replay_core::Error::BadInput {
                path,
                message: "--gpu-profile: no such file (`replay calibrate` writes one on the GPU it stands for)".into(),
            }))
        }
        Some(path) => path,
        None => shipped_file(DEFAULT_GPU_PROFILE),
    };
    let batches: Vec<usize> = if a.sweep_bs {
        SWEEP_BS.to_vec()
    } else {
        vec![bs]
    };
    let shapes = batches
        .iter()
        .map(|&b| MhcShape::new(b, seq, dim, a.n_streams, a.dtype))
        .collect::<Result<Vec<_>, MhcError>>()?;
    let (placement, gpu) = placement(&a.device.open()?);
    if let Some(threads) = a.threads {
        tch::set_num_threads(i32::try_from(threads).unwrap_or(i32::MAX));
    }
    a.timing.refuse("bench mhc", &["noise", "rounds", "cold"])?;
    let given = a
        .timing
        .resolve(measure::Timing::fixed(DEFAULT_WARMUP, DEFAULT_ITERS));
    let timing = match given.max_time {
        Some(budget) => Timing::UntilStable {
            iters: given.min_samples,
            budget,
        },
        None => Timing::Fixed {
            warmup: given.warmup,
            iters: given.min_samples,
        },
    };
    let mut command = MhcCommand {
        options: RunOptions {
            shapes,
            sweep: a.sweep_bs,
            placement,
            // A sweep on a machine with both devices measures the GPU side of the answer too.
            also_gpu: placement == Placement::Offload && a.sweep_bs,
            gpu_spec: gpu.as_ref().map(CudaDevice::spec),
            gpu,
            impls: dedup(a.impls),
            threads: thread_count(a.threads),
            timing,
            output_dir: a.output_dir,
            gpu_profile: Some(gpu_profile),
            shard: Shard::WHOLE,
        },
        profiler: a.profiler,
    };
    drive(
        &mut command,
        &a.shard.args(),
        &mut ConsoleObserver::new(a.quiet),
    )
}

fn dedup(impls: Vec<Impl>) -> Vec<Impl> {
    let mut out = Vec::new();
    for i in impls {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}
