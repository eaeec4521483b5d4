//! `replay bench SUITE`: the benchmark suites (issue 15's semiring scan first).

pub mod scan;

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
    Scan(scan::ScanArgs),
}

pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.suite {
        BenchSuite::Scan(args) => scan::run(args),
    }
}
