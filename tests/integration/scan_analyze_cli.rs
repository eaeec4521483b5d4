//! `replay bench scan analyze` on a grid that `replay bench scan` has just run (cpu and torch
//! backends, both semirings' forward and backward): every table and plot of the seed, each SVG
//! a document, index.html showing each plot; and the bad inputs that exit 2 naming the file.

use crate::common;

use common::replay;

#[test]
fn a_real_run_is_analysed_into_every_table_plot_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("scan");
    let out = replay()
        .args([
            "bench",
            "scan",
            "--T",
            "16,32",
            "--K",
            "3,4",
            "--C",
            "2",
            "--B",
            "2",
            "--backends",
            "cpu,torch",
            "--phases",
            "forward,backward",
            "--semirings",
            "Log,Max",
            "--max-time-per-case",
            "0.02",
            "--quiet",
            "--output-dir",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plots = dir.path().join("plots");
    let out = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(run.join("benchmark_full.csv"))
        .arg("--output-dir")
        .arg(&plots)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("analysed 32 timed configurations"),
        "{stdout}"
    );
    assert!(stdout.contains("time ratio vs torch"), "{stdout}");

    for table in [
        "summary_stats.csv",
        "backward_forward_ratios.csv",
        "semiring_overhead.csv",
        "crossover_points.csv",
        "baseline_ratios.csv",
    ] {
        let text = std::fs::read_to_string(plots.join(table)).unwrap();
        assert!(text.lines().count() >= 2, "{table} has no rows:\n{text}");
    }
    // summary_stats: one row per backend x semiring x phase, the seed's columns.
    let summary = std::fs::read_to_string(plots.join("summary_stats.csv")).unwrap();
    assert!(summary.starts_with("backend,semiring,phase,time_ms_median_mean,time_ms_median_std,"));
    assert_eq!(summary.lines().count(), 1 + 2 * 2 * 2);
    // backward/forward: one row per backend x semiring x (T, K, C) = 2 x 2 x 4.
    let ratios = std::fs::read_to_string(plots.join("backward_forward_ratios.csv")).unwrap();
    assert_eq!(ratios.lines().count(), 1 + 16);

    let index = std::fs::read_to_string(plots.join("index.html")).unwrap();
    let mut svgs = 0;
    for entry in std::fs::read_dir(&plots).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".svg") {
            svgs += 1;
            let svg = std::fs::read_to_string(plots.join(&name)).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
                "{name}"
            );
            assert!(
                index.contains(&format!("src=\"{name}\"")),
                "index.html does not show {name}"
            );
        }
    }
    // Per semiring and phase (2 x 2): scalability T and KC, throughput, memory efficiency, time
    // and memory ratio, two heatmaps; per semiring the backward/forward ratio; per phase the
    // semiring overhead.
    assert_eq!(svgs, 4 * 8 + 2 + 2);
    for name in [
        "scalability_T_Log_forward.svg",
        "semiring_overhead_backward.svg",
        "backward_forward_ratio_Max.svg",
        "time_ratio_heatmap_Max_backward.svg",
    ] {
        assert!(plots.join(name).exists(), "{name}");
    }
}

#[test]
fn bad_inputs_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let out = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(&missing)
        .arg("--output-dir")
        .arg(dir.path().join("plots"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.csv"), "{stderr}");

    let no_status = dir.path().join("no_status.csv");
    std::fs::write(&no_status, "T,K,C,B,KC,backend,semiring,phase,time_ms_median,peak_allocated_gb\n128,4,3,4,12,cpu,Log,forward,0.2,\n").unwrap();
    let out = replay()
        .args(["bench", "scan", "analyze", "--input"])
        .arg(&no_status)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no_status.csv") && stderr.contains("no column 'status'"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}
