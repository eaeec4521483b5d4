//! `replay bench SUITE`: the benchmark suites (issue 15's semiring scan first).

pub mod mhc;
pub mod quant;
pub mod scan;
pub mod scan_analyze;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub suite: BenchSuite,
}

#[derive(Debug, Subcommand)]
pub enum BenchSuite {
    /// Semiring scan of a semi-Markov CRF (Log, Max, Entropy; forward and backward) over
    /// the seed's T × K × C grid on the cpu, torch and cuda backends
    // Boxed: its many flags make it far larger than the other variants.
    Scan(Box<scan::ScanArgs>),
    /// torchao's quantization microbenchmarks from its YAML config: shapes x model types x
    /// recipes (int8wo, int8dq, int4wo-<g>, float8wo, float8dq-tensor/row) as libtorch ops,
    /// baseline and quantized times, speedup and SQNR per row
    Quant(quant::QuantArgs),
    /// mHC hyper-connection residual mixing stage by stage (RMSNorm+Linear, Sinkhorn-Knopp,
    /// n×n application, D2H/H2D copies) and whether offloading it to the CPU pays; torch's
    /// ops against replay's fused kernels
    Mhc(mhc::MhcArgs),
}

pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    // Each suite's errors reach main as the library's error type, which knows which are the
    // user's to fix.
    match args.suite {
        BenchSuite::Scan(args) => scan::run(*args)?,
        BenchSuite::Quant(args) => quant::run(args)?,
        BenchSuite::Mhc(args) => mhc::run(args)?,
    }
    Ok(())
}
