//! `replay bench SUITE`: the benchmark suites (scan, quant, mhc).

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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn parse(args: &[&str]) -> BenchSuite {
        let mut all = vec!["bench"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap().bench.suite
    }

    /// Each suite's timing defaults, written as text for clap, are its constants, and the
    /// seed's spellings reach the shared flags.
    #[test]
    fn each_suite_gives_the_shared_timing_flags_its_seeds_defaults_and_names() {
        let BenchSuite::Scan(scan) = parse(&["scan"]) else {
            panic!()
        };
        assert_eq!(scan.run.timing.min_samples, Some(scan::DEFAULT_REPEATS));
        assert_eq!(
            scan.run.timing.max_time,
            Some(scan::DEFAULT_MAX_TIME_PER_CASE_S)
        );
        let BenchSuite::Scan(scan) = parse(&["scan", "--repeats", "9", "--max-time-per-case", "1"])
        else {
            panic!()
        };
        assert_eq!(
            (scan.run.timing.min_samples, scan.run.timing.max_time),
            (Some(9), Some(1.0))
        );
        let BenchSuite::Mhc(mhc) = parse(&["mhc"]) else {
            panic!()
        };
        assert_eq!(mhc.timing.warmup, Some(mhc::DEFAULT_WARMUP));
        assert_eq!(mhc.timing.min_samples, Some(mhc::DEFAULT_ITERS));
        assert_eq!(mhc.timing.max_time, None);
        let BenchSuite::Mhc(mhc) = parse(&["mhc", "--iters", "4", "--until-stable", "2"]) else {
            panic!()
        };
        assert_eq!(
            (mhc.timing.min_samples, mhc.timing.max_time),
            (Some(4), Some(2.0))
        );
        let BenchSuite::Quant(quant) = parse(&["quant", "--config", "c.yml"]) else {
            panic!()
        };
        assert_eq!(
            quant.timing_flags.max_time,
            Some(quant::DEFAULT_MAX_TIME_PER_MODEL_S)
        );
        assert_eq!(quant.timing_flags.warmup, None);
        let BenchSuite::Quant(quant) =
            parse(&["quant", "--config", "c.yml", "--max-time-per-model", "3"])
        else {
            panic!()
        };
        assert_eq!(quant.timing_flags.max_time, Some(3.0));
    }
}
