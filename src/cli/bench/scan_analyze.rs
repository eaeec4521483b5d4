//! `replay bench scan analyze`: parses the seed's analysis flags and prints its summary; the
//! work is `replay::suites::scan::analyze`'s.

use std::path::PathBuf;

use clap::Args;

use replay::suites::scan::analyze;
use replay::suites::scan::analyze::formats::PlotFormat;

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
    /// crossover_points.csv, baseline_ratios.csv), the plots and index.html go
    #[arg(long, default_value = "results/scan/plots", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// Backend that every time and memory ratio is computed against; it must have successful
    /// rows in the file (default: torch, or the seed's linear_scan_streaming)
    #[arg(long, value_name = "BACKEND")]
    pub baseline: Option<String>,

    /// The plots' format, the seed's: svg, pdf or png (each plot is always written as SVG
    /// too, for index.html)
    #[arg(long, value_name = "FORMAT", default_value = "svg")]
    pub format: PlotFormat,
}

pub fn run(args: AnalyzeArgs) -> Result<(), replay::Error> {
    let summary = analyze::run(
        &args.input,
        &args.output_dir,
        args.baseline.as_deref(),
        &[args.format],
    )?;
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
            "no ratios against {}: no other backend has a successful configuration in common with it",
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
