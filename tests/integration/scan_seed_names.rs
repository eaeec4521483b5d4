//! Issue 29: the seed README's command lines run through replay as written (its backend
//! names, its compile-friendly flags, `analyze --format pdf`), and the result reads with the
//! seed's field names and status words; the cpu backend's peak grows with the potentials;
//! `analyze --baseline` of a backend not in the file exits 2; small memory is not rounded to 0.

use crate::common;

use common::replay;
use std::collections::HashMap;
use std::path::Path;

/// The rows of a CSV as maps from the seed's field names.
fn dict_rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn run_ok(args: &[&str], out: &Path) -> std::process::Output {
    let output = replay().args(args).arg(out).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The seed README's "Quick Triton vs Streaming Comparison", at a small size: its backend
/// names, its compile-friendly flags and phases, read back with its field names.
#[test]
fn the_seed_readme_quick_example_runs_with_its_names_and_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quick");
    let output = run_ok(
        &[
            "bench",
            "scan",
            "--backends",
            "triton,linear_scan_streaming",
            "--T",
            "64,128,256",
            "--K",
            "4,8",
            "--C",
            "3,6",
            "--B",
            "2",
            "--compile-friendly",
            "--max-canonical-shapes",
            "4",
            "--samples-per-shape",
            "1",
            "--phases",
            "forward",
            "--skip-precompile",
            "--max-time-per-case",
            "0.02",
            "--quiet",
            "--output-dir",
        ],
        &out,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing to compile"), "{stderr}");
    assert!(
        stderr.contains("compile-friendly sampling: 4 of 12"),
        "{stderr}"
    );
    let rows = dict_rows(&out.join("benchmark_full.csv"));
    // 4 sampled configurations × 2 backends.
    assert_eq!(rows.len(), 8, "{rows:?}");
    let streaming: Vec<_> = rows
        .iter()
        .filter(|r| r["backend"] == "linear_scan_streaming")
        .collect();
    let triton: Vec<_> = rows.iter().filter(|r| r["backend"] == "triton").collect();
    assert_eq!((streaming.len(), triton.len()), (4, 4));
    // The seed's filter finds the measured rows.
    for r in &streaming {
        assert_eq!(r["status"], "success", "{r:?}");
        assert!(r["time_ms_median"].parse::<f64>().unwrap() > 0.0);
        assert_eq!(r["phase"], "forward");
    }
    // No GPU kernel on the CPU: each triton row says so, as the seed does for a backend it
    // cannot run; the fused estimate is the seed's for triton.
    for r in &triton {
        assert_eq!(r["status"], "not_implemented", "{r:?}");
        assert!(
            r["error_msg"]
                .ends_with("needs a GPU: its counterpart is replay's cuda kernel (--device cuda)"),
            "{r:?}"
        );
        assert!(r["time_ms_median"].is_empty());
    }
    // The sampled configurations span the grid: the first and the last canonical shape.
    let configs: Vec<(String, String, String)> = streaming
        .iter()
        .map(|r| (r["T"].clone(), r["K"].clone(), r["C"].clone()))
        .collect();
    assert_eq!(configs[0], ("64".into(), "4".into(), "3".into()));
    assert_eq!(configs[3], ("256".into(), "8".into(), "6".into()));
    // heatmap_data.json and memory_breakdown.csv carry the same words.
    let breakdown = dict_rows(&out.join("memory_breakdown.csv"));
    assert!(breakdown.iter().any(|r| r["status"] == "success"));
    assert!(breakdown.iter().any(|r| r["status"] == "not_implemented"));
    let heatmap = std::fs::read_to_string(out.join("heatmap_data.json")).unwrap();
    assert!(heatmap.contains("\"success\"") && !heatmap.contains("\"ok\""));

    // The seed's analysis command as written (--format pdf), its baseline found by its name.
    let plots = dir.path().join("plots");
    let output = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(out.join("benchmark_full.csv"))
        .arg("--output-dir")
        .arg(&plots)
        .args(["--format", "pdf"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pdf = std::fs::read(plots.join("scalability_T_Log_forward.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    assert!(plots.join("scalability_T_Log_forward.svg").is_file());
    let summary = dict_rows(&plots.join("summary_stats.csv"));
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["backend"], "linear_scan_streaming");
}

/// The peak of the cpu backend counts the potentials it reads, as the seed's CUDA peak does:
/// it grows with T·K·C² (it did not: K=4, C=3 gave 1.78e-5 GB and C=6 8.49e-7 GB).
#[test]
fn the_cpu_peak_grows_with_the_potentials() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("memory");
    run_ok(
        &[
            "bench",
            "scan",
            "--backends",
            "cpu",
            "--T",
            "64,512",
            "--K",
            "4",
            "--C",
            "3,12",
            "--phases",
            "forward,both",
            "--max-time-per-case",
            "0.02",
            "--quiet",
            "--output-dir",
        ],
        &out,
    );
    let rows = dict_rows(&out.join("benchmark_full.csv"));
    let peak = |t: &str, c: &str, phase: &str| -> f64 {
        let r = rows
            .iter()
            .find(|r| r["T"] == t && r["C"] == c && r["phase"] == phase)
            .unwrap();
        assert_eq!(r["status"], "success");
        let peak: f64 = r["peak_allocated_gb"].parse().unwrap();
        let potentials: f64 = r["memory_potentials_gb"].parse().unwrap();
        assert!(peak >= potentials * 0.99, "{r:?}");
        peak
    };
    for phase in ["forward", "both"] {
        // 16 times the potentials (C 3 -> 12), 8 times (T 64 -> 512, T−1 63 -> 511).
        let ratio_c = peak("64", "12", phase) / peak("64", "3", phase);
        let ratio_t = peak("512", "3", phase) / peak("64", "3", phase);
        assert!(ratio_c > 8.0, "{phase}: C 3 -> 12 grew the peak {ratio_c}x");
        assert!(
            ratio_t > 4.0,
            "{phase}: T 64 -> 512 grew the peak {ratio_t}x"
        );
    }
}

/// A written CSV by hand: two backends, kB-scale memory.
fn small_csv(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("benchmark_full.csv");
    let header = "T,K,C,B,KC,backend,semiring,phase,time_ms_median,time_ms_iqr_low,time_ms_iqr_high,time_per_position_ms,peak_allocated_gb,peak_reserved_gb,status,error_msg,memory_potentials_gb,memory_dp_state_gb,memory_workspace_gb,memory_autograd_gb";
    let mut text = format!("{header}\n");
    for (backend, ms, gb) in [("cpu", 0.2, 0.0000186), ("torch", 4.0, 0.000123)] {
        for t in [128, 256] {
            text.push_str(&format!(
                "{t},4,3,4,12,{backend},Log,forward,{ms},{ms},{ms},0.001,{gb},{gb},success,,0.0000681,2.24e-7,7.15e-7,0.0000965\n"
            ));
        }
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_baseline_not_in_the_file_exits_2_and_small_memory_is_not_zero() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_csv(dir.path());
    let output = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(&csv)
        .arg("--output-dir")
        .arg(dir.path().join("bad"))
        .args(["--baseline", "triton"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--baseline triton") && stderr.contains("cpu, torch"),
        "{stderr}"
    );
    assert!(!dir.path().join("bad/index.html").exists());

    let plots = dir.path().join("plots");
    let output = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(&csv)
        .arg("--output-dir")
        .arg(&plots)
        .args(["--format", "png"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = dict_rows(&plots.join("summary_stats.csv"));
    let cpu = summary.iter().find(|r| r["backend"] == "cpu").unwrap();
    let mean: f64 = cpu["peak_allocated_gb_mean"].parse().unwrap();
    assert!((mean - 1.86e-5).abs() < 1e-9, "{cpu:?}");
    let png = std::fs::read(plots.join("scalability_T_Log_forward.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}
