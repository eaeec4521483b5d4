//! The run's files and table: one `results_<DDMMYYYY_HHMMSS>.csv` per run in the output
//! folder (the seed's name, local time), written row by row; and the seed's printed table.

use std::path::{Path, PathBuf};

use replay_core::export::rows::{CsvRows, Row};

/// `results_%d%m%Y_%H%M%S.csv` for the local time `now` (seconds since the epoch).
pub fn results_file_name(now: i64) -> String {
    let t = now as libc::time_t;
    // SAFETY: `tm` is plain data that localtime_r fills; both pointers are live.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&t, &mut tm) }.is_null();
    if !ok {
        return format!("results_{now}.csv");
    }
    format!(
        "results_{:02}{:02}{:04}_{:02}{:02}{:02}.csv",
        tm.tm_mday,
        tm.tm_mon + 1,
        tm.tm_year + 1900,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Opens the run's CSV in `dir` (created if missing), named for the current time.
pub fn open_results(
    dir: &Path,
    columns: &[&'static str],
) -> replay_core::Result<(CsvRows, PathBuf)> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let path = dir.join(results_file_name(now));
    Ok((CsvRows::open(&path, columns)?, path))
}

fn text(row: &Row, column: &str) -> String {
    match row.get(column) {
        None | Some(serde_json::Value::Null) => "-".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// The number in `column` with `decimals` places and `unit`, or `-`.
fn fixed(row: &Row, column: &str, decimals: usize, unit: &str) -> String {
    row.get(column)
        .and_then(|v| v.as_f64())
        .map_or_else(|| "-".into(), |v| format!("{v:.decimals$}{unit}"))
}

/// The seed's table (name, quantization, sparsity, shape, times, speedup), with SQNR, the
/// compiled speedup and the status added.
pub fn table(rows: &[Row]) -> String {
    let headers = [
        "Quantization",
        "Sparsity",
        "Shape",
        "Model",
        "Baseline (ms)",
        "Quantized (ms)",
        "Speedup",
        "Compiled speedup",
        "SQNR (dB)",
        "Status",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                text(r, "quantization"),
                text(r, "sparsity"),
                format!(
                    "{} ({}, {}, {})",
                    text(r, "shape_name"),
                    text(r, "m"),
                    text(r, "k"),
                    text(r, "n")
                ),
                text(r, "model_type"),
                fixed(r, "baseline_inference_time_in_ms", 3, ""),
                fixed(r, "quantized_inference_time_in_ms", 3, ""),
                fixed(r, "speedup", 2, "x"),
                fixed(r, "compiled_speedup", 2, "x"),
                text(r, "sqnr_db"),
                text(r, "status"),
            ]
        })
        .collect();
    let widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            cells
                .iter()
                .map(|c| c[i].len())
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: Vec<String>| {
        values
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect::<Vec<_>>()
            .join(" | ")
            .trim_end()
            .to_string()
    };
    let mut out = line(headers.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    out.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-|-"),
    );
    for c in cells {
        out.push('\n');
        out.push_str(&line(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_named_as_the_seed_names_it() {
        let name = results_file_name(1_764_000_000);
        assert!(
            name.starts_with("results_") && name.ends_with(".csv"),
            "{name}"
        );
        // results_DDMMYYYY_HHMMSS.csv
        assert_eq!(name.len(), "results_25112025_160000.csv".len(), "{name}");
        assert!(name[8..16].chars().all(|c| c.is_ascii_digit()));
        assert!(name[17..23].chars().all(|c| c.is_ascii_digit()));
    }
}
