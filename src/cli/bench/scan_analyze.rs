//! `replay bench scan analyze`: parses the seed's analysis flags and prints its summary; the
//! work is `crate::suites::scan::analyze`'s.

use std::path::PathBuf;

use clap::Args;

use crate::suites::scan::analyze;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// benchmark_full.csv written by `replay bench scan`
    #[arg(
        long,
        default_value = "results/scan/benchmark_full.csv",
        value_name = "FILE"
    )]
    pub input: PathBuf,

    /// Where the tables (summary_stats.csv, backward_forward_ratios.csv, semiring_overhead.csv,
    /// crossover_points.csv, baseline_ratios.csv), the plots (SVG; the seed's --format
    /// pdf/png is not offered: browsers and papers take SVG) and index.html go
    #[arg(long, default_value = "results/scan/plots", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// Backend that every time and memory ratio is computed against
    #[arg(long, default_value = "torch")]
    pub baseline: String,
}

pub fn run(args: AnalyzeArgs) -> Result<(), crate::Error> {
    let summary = analyze::run(&args.input, &args.output_dir, &args.baseline)?;
    println!(
        "analysed {} timed configurations of {}",
        summary.rows,
        args.input.display()
    );
    println!("backends by median throughput (positions/s):");
    for (backend, pps) in &summary.throughput {
        println!("  {backend:<10} {:.3}M pos/s", pps / 1e6);
    }
    if !summary.backward_forward.is_empty() {
        println!("backward/forward time ratio (mean):");
        for (backend, ratio) in &summary.backward_forward {
            println!("  {backend:<10} {ratio:.2}x");
        }
    }
    if summary.against_baseline.is_empty() {
        println!(
            "no ratios: the baseline '{}' has no ok row in the file",
            summary.baseline
        );
    } else {
        println!(
            "time ratio vs {} (median across configurations):",
            summary.baseline
        );
        for (backend, ratio) in &summary.against_baseline {
            let words = if *ratio < 1.0 {
                format!("{:.1}x faster", 1.0 / ratio)
            } else {
                format!("{ratio:.2}x slower")
            };
            println!("  {backend:<10} {ratio:.4} ({words})");
        }
    }
    println!(
        "wrote {} files to {} (open index.html)",
        summary.files.len(),
        args.output_dir.display()
    );
    Ok(())
}
