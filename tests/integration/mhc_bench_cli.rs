//! `replay bench mhc` end to end on this machine: the seed's console block and CSV (header
//! once, appended run after run), the copy stages as not-applicable rows without a GPU,
//! the fused stages checked against torch, the offload answer of a sweep against a GPU
//! profile, and the refusals that exit 2.

use crate::common;

use std::path::Path;

use common::replay;

const SEED_COLUMNS: &str =
    "Device,BatchSize,SeqLen,Dim,NumStreams,Dtype,SGL_Available,Case,Time(ms),Size(MB),BW(GB/s),Impl,Status";

fn has_gpu() -> bool {
    std::process::Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

fn rows(csv: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn quick(dir: &Path) -> std::process::Output {
    replay()
        .args([
            "bench",
            "mhc",
            "--quick",
            "--warmup",
            "1",
            "--iters",
            "2",
            "--output-dir",
        ])
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn quick_runs_every_stage_and_appends_under_one_header() {
    let dir = tempfile::tempdir().unwrap();
    let out = quick(dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "------------------ Benchmark Results ---------------- (torch)",
        "------------------ Benchmark Results ---------------- (fused)",
        "1. H_res Gen (Linear)              : ",
        "2. H_res Gen (Sinkhorn-Knopp)      : ",
        "3. h_res App (BMM)                 : ",
        "5. Total                           : ",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    let csv = dir.path().join("benchmark_results.csv");
    let first = rows(&csv);
    assert!(
        first[0].join(",").starts_with(SEED_COLUMNS),
        "{:?}",
        first[0]
    );
    assert_eq!(first.len(), 1 + 12, "two implementations × six stages");
    let col = |name: &str| first[0].iter().position(|c| c == name).unwrap();
    for row in &first[1..] {
        assert_eq!(row[col("SGL_Available")], "False");
        assert_eq!(row[col("Dtype")], "bfloat16");
        assert_eq!(row[col("BatchSize")], "2");
        let case = &row[col("Case")];
        let copy = case.contains("Copy");
        if copy && !has_gpu() {
            // Never faked: no time, no bandwidth, a status that says why.
            assert_eq!(row[col("Status")], "not_applicable", "{row:?}");
            assert!(row[col("Time(ms)")].is_empty() && row[col("BW(GB/s)")].is_empty());
            assert!(row[col("Note")].contains("no CUDA GPU"), "{row:?}");
        } else {
            assert_eq!(row[col("Status")], "ok", "{row:?}");
            let t: f64 = row[col("Time(ms)")].parse().unwrap();
            let lo: f64 = row[col("Time_min(ms)")].parse().unwrap();
            let hi: f64 = row[col("Time_max(ms)")].parse().unwrap();
            assert!(t > 0.0 && lo <= t && t <= hi, "{row:?}");
            assert_eq!(row[col("Samples")], "2");
        }
        if row[col("Impl")] == "fused" && !copy && case != "Total" {
            assert!(row[col("Note")].starts_with("checked"), "{row:?}");
        }
    }
    // A second run appends below the same header.
    assert!(quick(dir.path()).status.success());
    let second = rows(&csv);
    assert_eq!(second.len(), 1 + 24);
    assert_eq!(
        second.iter().filter(|r| r[0] == "Device").count(),
        1,
        "the header is written once"
    );
}

#[test]
fn a_configuration_larger_than_memory_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay()
        .args([
            "bench",
            "mhc",
            "--bs",
            "100000",
            "--dtype",
            "float32",
            "--output-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("GiB of host memory") && stderr.contains("--quick"),
        "{stderr}"
    );
    assert!(!dir.path().join("benchmark_results.csv").exists());
}

#[test]
fn bad_flags_exit_2_naming_what_is_wrong() {
    for (args, says) in [
        (vec!["--dtype", "int8"], "unknown dtype"),
        (vec!["--impl", "sgl"], "unknown implementation"),
        (vec!["--n-streams", "17", "--quick"], "1 to 16 streams"),
        (vec!["--n_streams", "17", "--quick"], "1 to 16 streams"),
        // --quick sets B, T and D: a --bs beside it cannot apply (issue #29).
        (vec!["--quick", "--bs", "8"], "cannot be used with"),
        (vec!["--quick", "--seq", "8"], "cannot be used with"),
        (
            vec!["--quick", "--gpu-profile", "/nonexistent/h100.json"],
            "--gpu-profile: no such file",
        ),
    ] {
        let out = replay()
            .args(["bench", "mhc"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn cuda_without_a_gpu_says_so_and_exits_2() {
    if has_gpu() {
        return;
    }
    let out = replay()
        .args(["bench", "mhc", "--quick", "--device", "cuda"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
}

#[test]
fn a_sweep_answers_against_the_gpu_profile_and_names_what_is_missing() {
    if has_gpu() {
        return; // with a GPU the answer is measured (scripts/gpu_check.sh)
    }
    let dir = tempfile::tempdir().unwrap();
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h100_sxm_datasheet.json");
    let out = replay()
        .args([
            "bench",
            "mhc",
            "--sweep-bs",
            "--seq",
            "8",
            "--dim",
            "64",
            "--warmup",
            "0",
            "--iters",
            "1",
            "--impl",
            "fused",
            "--gpu-profile",
        ])
        .arg(&profile)
        .arg("--output-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = rows(&dir.path().join("benchmark_results.csv"));
    assert_eq!(csv.len(), 1 + 6 * 6, "six batch sizes × six stages");
    let md = std::fs::read_to_string(dir.path().join("offload_answer.md")).unwrap();
    for bs in ["| 1 |", "| 2 |", "| 4 |", "| 8 |", "| 16 |", "| 32 |"] {
        assert!(md.contains(bs), "{md}");
    }
    assert!(
        md.contains("host_to_device_gbps") && md.contains("missing: copy bandwidth"),
        "{md}"
    );
    assert!(md.contains("NVIDIA H100"), "{md}");
    let svg = std::fs::read_to_string(dir.path().join("offload_answer.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("batch size"),
        "{svg:.200}"
    );
}

#[test]
fn profiler_writes_a_trace_that_classify_and_predict_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay()
        .args([
            "bench",
            "mhc",
            "--quick",
            "--impl",
            "fused",
            "--warmup",
            "0",
            "--iters",
            "1",
            "--profiler",
            "--output-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = dir.path().join("log/mhc_benchmark/mhc_trace.json");
    let classified = replay()
        .args(["classify", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(dir.path().join("signatures.json"))
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&classified.stdout);
    assert!(classified.status.success(), "{table}");
    // The Linear is the pipeline's one GEMM; the Sinkhorn and einsum are top-level ops.
    assert!(
        table.contains("GEMM") && table.contains("top-level ops"),
        "{table}"
    );
    let predicted = replay()
        .args(["predict", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(predicted.status.success());
    assert!(String::from_utf8_lossy(&predicted.stdout).contains("predicted step time"));
}

/// The seed's README examples (`mHC_benchmark.py --bs 16 --seq 4096 --dim 7168 --dtype
/// bfloat16`, `--bs 16 --profiler`, `--sweep_bs --seq 4096 --dim 7168`) by its spellings at a
/// small size, run from a directory that is not the repository's: `benchmark_results.csv` and
/// the profiler folder where the seed puts them, read with the seed's column names, and the
/// shipped GPU profile still found for the sweep's answer.
#[test]
fn the_seeds_readme_examples_run_as_written_from_any_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay()
        .current_dir(dir.path())
        .args(["bench", "mhc", "--bs", "2", "--seq", "8", "--dim", "64"])
        .args(["--dtype", "bfloat16", "--n_streams", "4", "--profiler"])
        .args(["--warmup", "0", "--iters", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Benchmarking on cpu..."), "{stdout}");
    assert!(
        stdout.contains("------------------ Benchmark Results ----------------"),
        "{stdout}"
    );
    let mut reader = csv::Reader::from_path(dir.path().join("benchmark_results.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let seed = [
        "Device",
        "BatchSize",
        "SeqLen",
        "Dim",
        "NumStreams",
        "Dtype",
        "SGL_Available",
        "Case",
        "Time(ms)",
        "Size(MB)",
        "BW(GB/s)",
    ];
    assert_eq!(&header[..seed.len()], seed, "the seed's columns first");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 12, "six stages × torch and fused");
    for r in &records {
        assert_eq!(
            (&r[col("BatchSize")], &r[col("SeqLen")], &r[col("Dim")]),
            ("2", "8", "64")
        );
        assert_eq!((&r[col("NumStreams")], &r[col("Dtype")]), ("4", "bfloat16"));
    }
    let linear = records
        .iter()
        .find(|r| r[col("Case")].contains("Linear"))
        .unwrap();
    assert!(linear[col("Time(ms)")].parse::<f64>().unwrap() > 0.0);
    assert!(
        dir.path()
            .join("log/mhc_benchmark/mhc_trace.json")
            .is_file(),
        "the seed's profiler folder"
    );

    if has_gpu() {
        return; // with a GPU the sweep's answer is measured (scripts/gpu_check.sh)
    }
    let sweep = tempfile::tempdir().unwrap();
    let out = replay()
        .current_dir(sweep.path())
        .args([
            "bench",
            "mhc",
            "--sweep_bs",
            "--bs",
            "8",
            "--seq",
            "8",
            "--dim",
            "64",
        ])
        .args(["--impl", "fused", "--warmup", "0", "--iters", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("--bs 8 is ignored"), "{stderr}");
    let md = std::fs::read_to_string(sweep.path().join("offload_answer.md")).unwrap();
    assert!(
        md.contains("NVIDIA H100"),
        "the shipped GPU profile is found from any directory: {md}"
    );
    assert_eq!(
        rows(&sweep.path().join("benchmark_results.csv")).len(),
        1 + 6 * 6
    );
}
