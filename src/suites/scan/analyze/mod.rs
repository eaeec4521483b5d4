//! `replay bench scan analyze`: the seed's analysis (`benchmarks/analyze_benchmarks.py` of
//! torch-semimarkov) of a `benchmark_full.csv`: its derived metrics, its five tables, its plots
//! as SVG, and one `index.html` that shows them all.

pub mod formats;
mod page;
pub mod plots;
pub mod results;
mod stats;
mod summary;
pub mod tables;

use std::path::Path;

use replay_core::export::rows::to_csv_bytes;
use replay_core::export::{ensure_output_dir, write_atomic};

use super::ScanError;
use stats::{distinct, group_by, mean, median};
pub use summary::AnalyzeSummary;
use tables::Table;

fn io_error(path: &Path, e: impl std::fmt::Display) -> ScanError {
    ScanError::File {
        path: path.to_path_buf(),
        problem: format!("cannot write: {e}"),
    }
}

/// `f` of each backend's `values`, in backend order.
fn per_backend<'a, T: 'a>(
    items: impl IntoIterator<Item = &'a T>,
    backend: impl Fn(&'a T) -> &'a str,
    value: impl Fn(&T) -> f64,
    f: impl Fn(Vec<f64>) -> f64,
) -> Vec<(String, f64)> {
    group_by(items, backend)
        .into_iter()
        .map(|(b, g)| (b.to_string(), f(g.into_iter().map(&value).collect())))
        .collect()
}

/// The baseline when none is named: our `torch`, or the seed's name for it.
pub const DEFAULT_BASELINES: [&str; 2] = ["torch", "linear_scan_streaming"];

/// The backend every ratio is taken against: `named` if the file has successful rows of it
/// (otherwise a usage error naming the backends it has), else the first of
/// [`DEFAULT_BASELINES`] that it has (`torch` when none: no ratios).
fn resolve_baseline(
    input: &Path,
    rows: &[results::Measured],
    named: Option<&str>,
) -> Result<String, ScanError> {
    let backends = distinct(rows.iter().map(|r| r.backend.as_str()));
    match named {
        Some(name) if backends.contains(&name) => Ok(name.to_string()),
        Some(name) => Err(ScanError::File {
            path: input.to_path_buf(),
            problem: format!(
                "--baseline {name}: no successful row of backend '{name}' (its backends: {})",
                backends.join(", ")
            ),
        }),
        None => Ok(DEFAULT_BASELINES
            .into_iter()
            .find(|b| backends.contains(b))
            .unwrap_or(DEFAULT_BASELINES[0])
            .to_string()),
    }
}

/// Analyses `input` into `output_dir` against `baseline` (`None`: [`DEFAULT_BASELINES`]),
/// every plot as SVG and in each of `extra_formats` too.
pub fn run(
    input: &Path,
    output_dir: &Path,
    baseline: Option<&str>,
    extra_formats: &[formats::PlotFormat],
) -> Result<AnalyzeSummary, ScanError> {
    let rows = results::load(input)?;
    if rows.is_empty() {
        return Err(ScanError::File {
            path: input.to_path_buf(),
            problem: "no row with status success: nothing to analyse".to_string(),
        });
    }
    let baseline = resolve_baseline(input, &rows, baseline)?;
    let baseline = baseline.as_str();
    ensure_output_dir(output_dir).map_err(|e| io_error(output_dir, e))?;

    let (bf_table, bf_pairs) = tables::backward_forward_ratios(&rows);
    let (overhead_table, overheads) = tables::semiring_overhead(&rows);
    let (baseline_table, baseline_ratios) = tables::baseline_ratios(&rows, baseline);
    // The seed writes summary_stats always and the others only when they have rows.
    let all_tables = [
        tables::summary_stats(&rows),
        bf_table,
        overhead_table,
        tables::crossover_points(&rows),
        baseline_table,
    ];
    let written_tables: Vec<&Table> = all_tables
        .iter()
        .enumerate()
        .filter(|(i, t)| *i == 0 || !t.rows.is_empty())
        .map(|(_, t)| t)
        .collect();
    let mut files = Vec::new();
    for table in &written_tables {
        let path = output_dir.join(table.file);
        write_atomic(&path, &to_csv_bytes(&table.columns, &table.rows))
            .map_err(|e| io_error(&path, e))?;
        files.push(path);
    }

    let semirings = distinct(rows.iter().map(|r| r.semiring.as_str()));
    let phases = distinct(rows.iter().map(|r| r.phase.as_str()));
    let chart_error = |e: replay_core::plot::charts::ChartError| ScanError::Backend(e.to_string());
    let mut drawn = Vec::new();
    for semiring in &semirings {
        for phase in &phases {
            drawn.extend(
                plots::per_semiring_phase(&rows, &baseline_ratios, baseline, semiring, phase)
                    .map_err(chart_error)?,
            );
        }
        drawn.extend(plots::backward_forward(&bf_pairs, semiring).map_err(chart_error)?);
    }
    for phase in &phases {
        drawn.extend(plots::semiring_overhead(&overheads, phase).map_err(chart_error)?);
    }
    for plot in &drawn {
        let path = output_dir.join(&plot.file);
        write_atomic(&path, plot.svg.as_bytes()).map_err(|e| io_error(&path, e))?;
        files.push(path);
        for format in extra_formats
            .iter()
            .filter(|f| **f != formats::PlotFormat::Svg)
        {
            let path = output_dir
                .join(&plot.file)
                .with_extension(format.extension());
            let bytes = format.render(&plot.svg).map_err(|e| io_error(&path, e))?;
            write_atomic(&path, &bytes).map_err(|e| io_error(&path, e))?;
            files.push(path);
        }
    }

    let mut throughput = per_backend(&rows, |r| &r.backend, |r| r.positions_per_sec(), median);
    throughput.sort_by(|a, b| b.1.total_cmp(&a.1));
    let backward_forward = per_backend(
        &bf_pairs,
        |p| &p.backend,
        |p| p.ratio,
        |v| mean(&v).unwrap_or(f64::NAN),
    );
    let against_baseline = per_backend(
        baseline_ratios.iter().filter(|r| r.backend != baseline),
        |r| &r.backend,
        |r| r.time_ratio,
        median,
    );
    let summary = AnalyzeSummary {
        rows: rows.len(),
        files: files.clone(),
        throughput,
        backward_forward,
        against_baseline,
        baseline: baseline.to_string(),
    };

    let index = output_dir.join("index.html");
    let html = page::render(input, &summary, &written_tables, &drawn);
    write_atomic(&index, html.as_bytes()).map_err(|e| io_error(&index, e))?;
    let mut summary = summary;
    summary.files.push(index);
    Ok(summary)
}
