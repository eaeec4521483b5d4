//! `replay bench scan` end to end on the cpu backend, through the real binary: the seed's
//! files and columns, one row per case in the seed's order, and its skip rule.

use crate::common;

use common::replay;
use predicates::prelude::*;

const SEED_HEADER: &str = "T,K,C,B,KC,backend,semiring,phase,time_ms_median,time_ms_iqr_low,\
time_ms_iqr_high,time_per_position_ms,peak_allocated_gb,peak_reserved_gb,status,error_msg,\
memory_potentials_gb,memory_dp_state_gb,memory_workspace_gb,memory_autograd_gb";

fn records(path: &std::path::Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(path)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_small_grid_writes_the_seeds_three_files_one_row_per_case() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scan");
    replay()
        .args([
            "bench", "scan", "--T", "8,16", "--K", "3,4", "--C", "1,2", "--B", "2",
        ])
        .args([
            "--backends",
            "CPU",
            "--phases",
            "forward,Both",
            "--semirings",
            "log,MAX",
        ])
        .args([
            "--repeats",
            "3",
            "--max-time-per-case",
            "0.02",
            "--output-dir",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("  success         32\n"))
        .stderr(predicate::str::contains(
            "[32/32] T=16 K=4 C=2 cpu/Max/both: success",
        ))
        .stderr(predicate::str::contains(
            "checked: values and gradient match the float64 reference",
        ));

    let text = std::fs::read_to_string(out.join("benchmark_full.csv")).unwrap();
    assert_eq!(text.lines().next(), Some(SEED_HEADER));
    let rows = records(&out.join("benchmark_full.csv"));
    // 2 semirings × 2 phases × 2 T × 2 K × 2 C, in the seed's order: semiring, phase, then
    // T, K, C with C innermost.
    let mut want = Vec::new();
    for semiring in ["Log", "Max"] {
        for phase in ["forward", "both"] {
            for t in ["8", "16"] {
                for k in ["3", "4"] {
                    for c in ["1", "2"] {
                        want.push([t, k, c, semiring, phase].map(String::from));
                    }
                }
            }
        }
    }
    let got: Vec<[String; 5]> = rows
        .iter()
        .map(|r| [0, 1, 2, 6, 7].map(|i| r[i].to_string()))
        .collect();
    assert_eq!(got, want);
    for r in &rows {
        assert_eq!((&r[3], &r[5], &r[14]), ("2", "cpu", "success"), "{r:?}");
        let num = |i: usize| r[i].parse::<f64>().unwrap();
        let (t, k, c) = (num(0), num(1), num(2));
        assert_eq!(num(4), k * c);
        let (median, low, high) = (num(8), num(9), num(10));
        assert!(0.0 < low && low <= median && median <= high, "{r:?}");
        // The seed's time per position: median / T (both rounded to 3 significant digits).
        assert!((num(11) - median / t).abs() <= 0.01 * median / t, "{r:?}");
        // The cpu backend's peak is measured (the counting allocator): some bytes, and as
        // much reserved as allocated (no caching allocator).
        assert!(num(12) > 0.0 && r[12] == r[13], "{r:?}");
        // The seed's streaming estimate, potentials: B·(T−1)·K·C²·4 bytes in GiB (3 digits).
        let potentials = 2.0 * (t - 1.0) * k * c * c * 4.0 / (1u64 << 30) as f64;
        assert!((num(16) - potentials).abs() <= 0.005 * potentials, "{r:?}");
    }

    let heatmap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("heatmap_data.json")).unwrap()).unwrap();
    let mut keys: Vec<&String> = heatmap.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "cpu_Log_both_T16",
            "cpu_Log_both_T8",
            "cpu_Log_forward_T16",
            "cpu_Log_forward_T8",
            "cpu_Max_both_T16",
            "cpu_Max_both_T8",
            "cpu_Max_forward_T16",
            "cpu_Max_forward_T8",
        ]
        .map(String::from)
        .iter()
        .collect::<Vec<_>>()
    );
    let entry = &heatmap["cpu_Max_both_T16"];
    assert_eq!(
        (
            &entry["backend"],
            &entry["semiring"],
            &entry["phase"],
            &entry["T"]
        ),
        (
            &serde_json::json!("cpu"),
            &serde_json::json!("Max"),
            &serde_json::json!("both"),
            &serde_json::json!(16)
        )
    );
    let cells = entry["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    assert_eq!(cells[3]["KC"], 8);
    assert_eq!(cells[3]["status"], "success");
    assert!(cells[3]["time_ms"].as_f64().unwrap() > 0.0);

    let breakdown = std::fs::read_to_string(out.join("memory_breakdown.csv")).unwrap();
    assert_eq!(
        breakdown.lines().next(),
        Some(
            "backend,semiring,phase,T,K,C,KC,status,peak_allocated_gb,peak_reserved_gb,\
est_potentials_gb,est_dp_state_gb,est_workspace_gb,est_autograd_gb"
        )
    );
    assert_eq!(breakdown.lines().count(), 1 + rows.len());
}

#[test]
fn the_memory_estimate_skips_what_is_over_max_memory_gb_and_entropy_has_a_backward() {
    let dir = tempfile::tempdir().unwrap();
    // Streaming estimate for B=2, K=3, C=2: 256·(T−1) + 208 bytes: 2 000 at T=8, 4 048 at
    // T=16. A limit of 3 000 bytes (2.794e-6 GiB) runs T=8 and skips T=16.
    replay()
        .args([
            "bench", "scan", "--T", "8,16", "--K", "3", "--C", "2", "--B", "2",
        ])
        .args([
            "--backends",
            "cpu",
            "--semirings",
            "Log,Entropy",
            "--phases",
            "both",
        ])
        .args(["--max-memory-gb", "0.000002794", "--repeats", "2"])
        .args(["--max-time-per-case", "0.01", "-q", "--output-dir"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("  success         2\n"))
        .stdout(predicate::str::contains("  not_tested      2\n"));
    let rows = records(&dir.path().join("benchmark_full.csv"));
    let got: Vec<_> = rows
        .iter()
        .map(|r| (r[0].to_string(), r[6].to_string(), r[14].to_string()))
        .collect();
    let want = [
        ("8", "Log", "success"),
        ("16", "Log", "not_tested"),
        ("8", "Entropy", "success"),
        ("16", "Entropy", "not_tested"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(got, want);
    assert!(
        rows[1][15].starts_with("predicted 3.77e-6GB > 2.794e-6GB limit"),
        "{:?}",
        rows[1]
    );
}

#[test]
fn unknown_names_exit_2_listing_the_accepted_values() {
    for (flag, value, accepted) in [
        (
            "--backends",
            "cpu,tritonx",
            "accepted: cpu, torch, cuda, linear_scan_streaming, triton",
        ),
        ("--semirings", "Log,Sum", "accepted: Log, Max, Entropy"),
        ("--phases", "fwd", "accepted: forward, backward, both"),
    ] {
        replay()
            .args([
                "bench",
                "scan",
                flag,
                value,
                "--output-dir",
                "/nonexistent/never",
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(accepted));
    }
}

/// `--quick`, as `calibrate --quick` and `bench mhc --quick`: T 64,128 × K 4,8 × C 3,6 on the
/// default backends, and refused beside a grid flag it would override.
#[test]
fn quick_runs_its_small_grid_and_is_refused_beside_a_grid_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scan");
    replay()
        .args([
            "bench",
            "scan",
            "--quick",
            "--backends",
            "cpu",
            "--phases",
            "forward",
        ])
        .args([
            "--repeats",
            "2",
            "--max-time-per-case",
            "0.01",
            "--output-dir",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("  success         8\n"));
    let rows = records(&out.join("benchmark_full.csv"));
    let shapes: std::collections::BTreeSet<(String, String, String)> = rows
        .iter()
        .map(|r| (r[0].to_owned(), r[1].to_owned(), r[2].to_owned()))
        .collect();
    assert_eq!(shapes.len(), 8, "{shapes:?}");
    assert!(shapes.contains(&("128".into(), "8".into(), "6".into())));
    replay()
        .args(["bench", "scan", "--quick", "--T", "8", "--output-dir"])
        .arg(dir.path().join("refused"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--quick").and(predicate::str::contains("--T")));
}
