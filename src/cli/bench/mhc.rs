//! `replay bench mhc`: parses the seed's flags (`mHC_benchmark.py`) and runs
//! `crate::suites::mhc::run`, printing what it reports.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::value_parsers::{positive_count, positive_seconds};
use clap::Args;

use crate::device::DeviceSpec;
use crate::pipeline::options::DEFAULT_DEVICE;
use crate::suites::mhc::parallel::thread_count;
use crate::suites::mhc::rows::RESULTS_CSV;
use crate::suites::mhc::run::{
    configurations, run as run_mhc, shard_settings, work_list, RunOptions, Timing, COMMAND,
};
use crate::suites::mhc::shape::{
    DEFAULT_BS, DEFAULT_DIM, DEFAULT_SEQ, DEFAULT_STREAMS, QUICK, SWEEP_BS,
};
use crate::suites::mhc::stages::{Impl, Placement};
use crate::suites::mhc::{MhcDtype, MhcError, MhcShape};
use replay_core::shard::Shard;

#[derive(Debug, Args)]
pub struct MhcArgs {
    /// Batch size B
    #[arg(long, default_value_t = DEFAULT_BS, value_parser = positive_count)]
    pub bs: usize,

    /// Run batch sizes 1, 2, 4, 8, 16, 32 (overrides --bs) and answer at which one
    /// offloading to the CPU pays (offload_answer.md and .svg)
    #[arg(long)]
    pub sweep_bs: bool,

    /// Sequence length T
    #[arg(long, default_value_t = DEFAULT_SEQ, value_parser = positive_count)]
    pub seq: usize,

    /// Model dimension D
    #[arg(long, default_value_t = DEFAULT_DIM, value_parser = positive_count)]
    pub dim: usize,

    /// Hyper-connection streams n (H_res is n×n)
    #[arg(long, default_value_t = DEFAULT_STREAMS, value_parser = positive_count)]
    pub n_streams: usize,

    /// Data type: bfloat16, float32 or float16
    #[arg(long, default_value = "bfloat16", value_parser = parse_dtype)]
    pub dtype: MhcDtype,

    /// cpu (stages 1–3 on the host; the offload simulation when a CUDA GPU is present) or
    /// cuda[:N] (everything on the GPU)
    #[arg(long, default_value_t = DEFAULT_DEVICE, value_parser = crate::cli::parse_device)]
    pub device: DeviceSpec,

    /// Untimed calls before each stage's samples
    #[arg(long, default_value_t = 3)]
    pub warmup: u64,

    /// Timed calls per stage (the median is reported, with min and max)
    #[arg(long, default_value_t = 10, value_parser = positive_count)]
    pub iters: usize,

    /// Instead of exactly --iters samples: replay's stopping rule (at least --iters, then
    /// until the median is within 0.5 % or this many seconds per stage are spent)
    #[arg(long, value_name = "S", value_parser = positive_seconds)]
    pub until_stable: Option<f64>,

    /// Implementations, comma-separated: torch (the seed's libtorch ops), fused (replay's
    /// kernels: Rust on the CPU, the CUDA Sinkhorn on a GPU)
    #[arg(long = "impl", value_delimiter = ',', default_value = "torch,fused", value_parser = parse_impl)]
    pub impls: Vec<Impl>,

    /// Worker threads of the fused CPU kernels (default: every CPU this process may use)
    #[arg(long, value_parser = positive_count)]
    pub threads: Option<usize>,

    /// A size that runs in seconds: B=2, T=256, D=1024 (overrides --bs, --seq, --dim)
    #[arg(long)]
    pub quick: bool,

    /// Where benchmark_results.csv is appended to (and the offload answer written)
    #[arg(long, default_value = "results/mhc")]
    pub output_dir: PathBuf,

    /// Calibration profile of the GPU the offload answer compares against when this machine
    /// has none (`replay calibrate` writes one)
    #[arg(long, default_value = "profiles/h100_sxm_datasheet.json")]
    pub gpu_profile: PathBuf,

    /// Also write a Kineto (Chrome) trace of the torch pipeline's stages 1–3 that
    /// `replay classify` and `replay predict` read (trace/mhc_trace.json under --output-dir)
    #[arg(long)]
    pub profiler: bool,

    #[command(flatten)]
    pub shard: replay_core::shard::ShardArgs,
}

fn parse_dtype(text: &str) -> Result<MhcDtype, String> {
    text.parse()
}

fn parse_impl(text: &str) -> Result<Impl, String> {
    text.parse()
}

/// Where `--device` puts the stages: `cpu` becomes the offload simulation when the driver
/// reports a CUDA GPU (asked through `device::cuda`, which never touches cudarc without
/// libcuda); `cuda:N` must open.
fn placement(spec: DeviceSpec) -> anyhow::Result<(Placement, Option<usize>)> {
    match spec {
        DeviceSpec::Cpu => {
            let gpu = crate::device::cuda::inventory()
                .ok()
                .filter(|inv| !inv.devices.is_empty())
                .map(|_| 0);
            Ok(match gpu {
                Some(gpu) => (Placement::Offload { gpu }, Some(gpu)),
                None => (Placement::CpuOnly, None),
            })
        }
        DeviceSpec::Cuda(index) => {
            crate::device::Device::open(spec)?;
            Ok((Placement::Gpu { gpu: index }, None))
        }
    }
}

pub fn run(a: MhcArgs) -> anyhow::Result<()> {
    let shard_run = a.shard.resolve().map_err(crate::Error::from)?;
    let shard = shard_run.as_ref().map_or(Shard::WHOLE, |s| s.shard);
    let (bs, seq, dim) = if a.quick {
        (QUICK.0, QUICK.1, QUICK.2)
    } else {
        (a.bs, a.seq, a.dim)
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
    let (placement, gpu) = placement(a.device)?;
    if let Some(threads) = a.threads {
        tch::set_num_threads(i32::try_from(threads).unwrap_or(i32::MAX));
    }
    let timing = match a.until_stable {
        Some(s) => Timing::UntilStable {
            iters: a.iters,
            budget: Duration::from_secs_f64(s),
        },
        None => Timing::Fixed {
            warmup: a.warmup,
            iters: a.iters,
        },
    };
    let options = RunOptions {
        shapes,
        sweep: a.sweep_bs,
        placement,
        // A sweep on a machine with both devices measures the GPU side of the answer too.
        also_gpu: gpu.filter(|_| a.sweep_bs),
        impls: dedup(a.impls),
        threads: thread_count(a.threads),
        timing,
        output_dir: a.output_dir.clone(),
        gpu_profile: Some(a.gpu_profile.clone()),
        shard,
    };
    if let Some(shard_run) = &shard_run {
        // A stale shard.json must not vouch for this run's rows if it dies.
        shard_run.begin(&a.output_dir)?;
        println!(
            "shard {} of {} configurations",
            shard_run.shard,
            configurations(&options).len()
        );
    }
    if placement == Placement::CpuOnly {
        println!(
            "No CUDA GPU on this machine: stages 1-3 run on the CPU; 0 (D2H) and 4 (H2D) are not applicable and reported as such."
        );
    }
    let outcome = run_mhc(&options, &mut |text| println!("{text}"))?;
    if a.profiler {
        let trace =
            crate::suites::mhc::profile::write_trace(&options, &a.output_dir.join("trace"))?;
        println!("profiler trace: {}", trace.display());
    }
    println!("results appended to {}", outcome.csv.display());
    if let Some((md, svg)) = outcome.answer {
        println!("offload answer: {} and {}", md.display(), svg.display());
    }
    if outcome.failed_rows > 0 {
        println!(
            "{} row(s) failed; see their Status and Note",
            outcome.failed_rows
        );
    }
    if let Some(shard_run) = &shard_run {
        // Written last: a shard that dies before here leaves no shard.json.
        let manifest = shard_run.finish(replay_core::shard::args::Finished {
            command: COMMAND,
            device: placement.key(),
            work_list: &work_list(&options),
            settings: shard_settings(&options),
            output_dir: &a.output_dir,
            files: vec![RESULTS_CSV.to_string()],
        })?;
        println!("{}", manifest.summary("configurations", &a.output_dir));
    }
    Ok(())
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
