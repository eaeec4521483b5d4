//! `replay bench quant` end to end through the real binary: the CPU example at a tiny size,
//! the seed's CSV columns plus sqnr_db and status, a status row for what is not implemented,
//! and the config errors (exit 2, naming the key, line and file).

use crate::common;

use common::replay;
use predicates::prelude::*;

const HEADER: &str = "name,quantization,sparsity,shape_name,m,k,n,high_precision_dtype,\
torch_compile_mode,device,model_type,output_dir,enable_profiler,enable_memory_profiler,\
baseline_inference_time_in_ms,quantized_inference_time_in_ms,speedup,\
baseline_compiled_inference_time_in_ms,quantized_compiled_inference_time_in_ms,\
compiled_speedup,compile_status,profiler_json_path,memory_profile_path,\
memory_visualization_path,memory_stats,sqnr_db,timing,status,error_msg,warmup_calls,\
timed_calls";

fn results(dir: &std::path::Path) -> (String, Vec<csv::StringRecord>) {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with("results_") && name.ends_with(".csv")
        })
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let header = text.lines().next().unwrap().to_string();
    let rows = csv::Reader::from_path(&files[0])
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect();
    (header, rows)
}

#[test]
fn the_cpu_example_at_a_tiny_size_writes_one_checked_row_per_case() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tiny.yml");
    let out = dir.path().join("out");
    std::fs::write(
        &config,
        format!(
            "benchmark_mode: inference\n\
             quantization_config_recipe_names: [int8wo, int8dq, int4wo-32, int4wo-64-hqq, \
             float8wo, float8dq-tensor, float8dq-row]\n\
             sparsity_config_recipe_names: [semi-sparse]\n\
             output_dir: {}\n\
             model_params:\n\
             \x20 - matrix_shapes: [{{name: custom, shapes: [[32, 128, 64], [16, 64, 128]]}}]\n\
             \x20   high_precision_dtype: torch.bfloat16\n\
             \x20   device: cpu\n\
             \x20   model_type: linear\n\
             \x20   enable_memory_profiler: true\n\
             \x20   tint: red\n",
            out.display()
        ),
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--runs", "3", "--quiet"])
        .assert()
        .success()
        .stderr(predicate::str::contains("unknown key").and(predicate::str::contains("tint")))
        .stdout(
            predicate::str::contains("Benchmark Results:")
                .and(predicate::str::contains("Results saved to")),
        );
    let (header, rows) = results(&out);
    assert_eq!(header, HEADER);
    // baseline + 7 recipes + (baseline, int8dq, float8dq-tensor, float8dq-row) x semi-sparse,
    // each on two shapes.
    assert_eq!(rows.len(), 24);
    let col = |name: &str| HEADER.split(',').position(|c| c == name).unwrap();
    let mut statuses = std::collections::BTreeMap::new();
    for r in &rows {
        let quant = &r[col("quantization")];
        let status = &r[col("status")];
        *statuses.entry(status.to_string()).or_insert(0) += 1;
        if status == "ok" {
            let base: f64 = r[col("baseline_inference_time_in_ms")].parse().unwrap();
            let q: f64 = r[col("quantized_inference_time_in_ms")].parse().unwrap();
            assert!(base > 0.0 && q > 0.0, "{r:?}");
            assert!(
                r[col("timing")].starts_with("seed: mean of 3 calls"),
                "{r:?}"
            );
            // Three calls of a tiny model fit the budget per case: the counts asked for.
            assert_eq!(
                (&r[col("warmup_calls")], &r[col("timed_calls")]),
                ("3", "3")
            );
            assert!(
                r[col("memory_stats")].contains("peak_allocated_bytes"),
                "{r:?}"
            );
            assert!(std::path::Path::new(&r[col("memory_profile_path")]).is_file());
            if quant == "baseline" {
                // One measurement of one model: no speedup of a model against itself.
                assert_eq!(base, q, "{r:?}");
                assert_eq!(&r[col("speedup")], "1.0", "{r:?}");
            } else {
                let sqnr: f64 = r[col("sqnr_db")].parse().unwrap();
                assert!(sqnr > 15.0, "{quant}: {sqnr} dB");
                assert!(
                    r[col("error_msg")].contains("dequantize-then-matmul"),
                    "{r:?}"
                );
            }
        } else {
            assert_eq!(status, "not_implemented", "{r:?}");
            assert_eq!((&r[col("warmup_calls")], &r[col("timed_calls")]), ("", ""));
            assert!(
                quant == "int4wo-64-hqq" || !r[col("sparsity")].is_empty(),
                "{r:?}"
            );
        }
    }
    assert_eq!(statuses.get("ok"), Some(&14), "{statuses:?}");
    assert_eq!(statuses.get("not_implemented"), Some(&10), "{statuses:?}");
    let hqq = rows
        .iter()
        .find(|r| &r[col("quantization")] == "int4wo-64-hqq")
        .unwrap();
    assert!(hqq[col("error_msg")].contains("HQQ"), "{hqq:?}");
    assert_eq!(
        &rows[0][col("name")],
        "benchmark_baseline_linear_m32_k128_n64"
    );
}

#[test]
fn a_case_whose_seed_counts_do_not_fit_the_budget_is_announced_and_cut() {
    // float8dq-row has no float8 compute on a CPU: at (256, 4096, 1024) a call takes tens of
    // ms here (36.7 ms in the CPU table), so the seed's 100 + 100 calls take seconds, well
    // past a 0.5 s budget; the baseline's bfloat16 GEMM (4.3 ms) too.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("slow.yml");
    let out = dir.path().join("out");
    std::fs::write(
        &config,
        format!(
            "benchmark_mode: inference\n\
             quantization_config_recipe_names: [float8dq-row]\n\
             output_dir: {}\n\
             model_params:\n\
             \x20 - matrix_shapes: [{{name: custom, shapes: [[256, 4096, 1024]]}}]\n\
             \x20   high_precision_dtype: torch.bfloat16\n\
             \x20   device: cpu\n\
             \x20   model_type: linear\n",
            out.display()
        ),
    )
    .unwrap();
    let output = replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--case-budget", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let (_, rows) = results(&out);
    assert_eq!(rows.len(), 2);
    let col = |name: &str| HEADER.split(',').position(|c| c == name).unwrap();
    let row = &rows[1];
    assert_eq!(
        (&row[col("quantization")], &row[col("status")]),
        ("float8dq-row", "ok")
    );
    // The timing column says what was asked; the counts what ran: fewer, at least one each.
    assert!(row[col("timing")].starts_with("seed: mean of 100 calls after 100 warm-up calls"));
    let count = |c: &str| row[col(c)].parse::<u64>().unwrap();
    let (warmup, timed) = (count("warmup_calls"), count("timed_calls"));
    assert!(
        (1..100).contains(&warmup) && (1..100).contains(&timed),
        "{row:?}"
    );
    let q: f64 = row[col("quantized_inference_time_in_ms")].parse().unwrap();
    // The timing kept to its budget: the calls it made fit in 0.5 s and a call's length
    // (twice over: calls on a shared machine vary).
    assert!(
        (warmup + timed) as f64 * q <= 1000.0 + 2.0 * q,
        "{warmup} + {timed} calls of {q} ms"
    );
    // Announced before it ran, and said in its line.
    let announced = stderr
        .find("float8dq-row custom (256, 4096, 1024): the model's timing takes about")
        .unwrap_or_else(|| panic!("{stderr}"));
    let finished = stderr.find("[2/2] float8dq-row").unwrap();
    assert!(announced < finished, "{stderr}");
    assert!(stderr[announced..].contains("cut to the 0.5 s budget per case"));
    assert!(
        stderr.contains(&format!(
            "mean of {timed} calls after {warmup} warm-up calls (cut to the 0.5 s budget per case)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("(at most 0.5 s a case)"), "{stderr}");
}

#[test]
fn the_shipped_cpu_example_and_the_seeds_example_parse() {
    // Their full runs are the README's benchmark; here, that they are valid configs: a
    // config error would exit 2 before any case runs, so an unusable device path is enough.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["seed_example.yml", "cpu_example.yml", "llama.yml"] {
        let path = root.join("configs/quant").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = replay::suites::quant::config::parse(&text, &path);
        assert!(parsed.is_ok(), "{name}: {parsed:?}");
    }
}

#[test]
fn config_errors_exit_2_naming_the_key_line_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.yml");
    std::fs::write(
        &config,
        "model_params:\n  matrix_shapes: [{name: llama}]\n  enable_profiler: sometimes\n",
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("bad.yml")
                .and(predicate::str::contains("enable_profiler"))
                .and(predicate::str::contains("line 3")),
        );
    std::fs::write(
        &config,
        "benchmark_mode: training\nmodel_params:\n  matrix_shapes: [{name: llama}]\n",
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not supported yet"));
    replay()
        .args(["bench", "quant", "--config"])
        .arg(dir.path().join("missing.yml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.yml"));
}

/// `enable_profiler` writes a Kineto trace per row that `replay classify` reads, and
/// `compile` times the same model under torch.compile beside the eager times (or says why
/// not). Both go through the project's Python (`scripts/quant_torch.py`).
#[test]
fn the_profiler_trace_is_read_by_classify_and_compile_reports_its_times() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("profile.yml");
    let out = dir.path().join("out");
    std::fs::write(
        &config,
        format!(
            "quantization_config_recipe_names: []\n\
             output_dir: {}\n\
             model_params:\n\
             \x20 matrix_shapes: [{{name: custom, shapes: [[32, 128, 64]]}}]\n\
             \x20 high_precision_dtype: torch.float32\n\
             \x20 compile: default\n\
             \x20 enable_profiler: true\n",
            out.display()
        ),
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--runs", "3", "--quiet"])
        .assert()
        .success();
    let (header, rows) = results(&out);
    let col = |name: &str| header.split(',').position(|c| c == name).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(&row[col("status")], "ok", "{row:?}");
    assert_eq!(&row[col("torch_compile_mode")], "default");
    assert!(row[col("name")].ends_with("_compile"), "{row:?}");
    let compile_status = &row[col("compile_status")];
    if compile_status == "ok" {
        let compiled: f64 = row[col("quantized_compiled_inference_time_in_ms")]
            .parse()
            .unwrap();
        assert!(compiled > 0.0, "{row:?}");
        // The baseline row's two compiled models are one, timed once: no speedup of a model
        // against itself (timed twice, it was the noise between two runs).
        assert_eq!(
            &row[col("baseline_compiled_inference_time_in_ms")],
            &row[col("quantized_compiled_inference_time_in_ms")],
            "{row:?}"
        );
        assert_eq!(&row[col("compiled_speedup")], "1.0", "{row:?}");
    } else {
        // A machine where inductor cannot build says so in the row, never a number.
        assert!(compile_status.starts_with("unavailable: "), "{row:?}");
        assert!(row[col("quantized_compiled_inference_time_in_ms")].is_empty());
    }
    let trace = std::path::PathBuf::from(&row[col("profiler_json_path")]);
    assert!(trace.is_file(), "{row:?}");
    let signatures = dir.path().join("signatures.json");
    replay()
        .args(["classify", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(&signatures)
        .assert()
        .success()
        .stdout(predicate::str::contains("GEMM"));
}

/// The seed README's example config as written (one `model_params` mapping, its recipes,
/// `compile`, both profilers), at a small size on the CPU and without torch.compile (minutes
/// here): the CSV read back with the seed's column names.
#[test]
fn the_seeds_readme_example_runs_and_reads_with_its_column_names() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("seed.yml");
    let out = dir.path().join("results");
    std::fs::write(
        &config,
        format!(
            "# Sample configuration for inference benchmarks\n\
             benchmark_mode: \"inference\"\n\
             quantization_config_recipe_names:\n  - \"baseline\"\n  - \"int8wo\"\n  - \"float8wo\"\n  - \"float8dq-tensor\"\n\n\
             output_dir: \"{}\"\n\n\
             model_params:\n\
             \x20 matrix_shapes:\n\
             \x20   - name: \"custom\"\n\
             \x20     shapes: [\n\
             \x20       [16, 64, 32],  # [m, k, n]\n\
             \x20       [32, 128, 64]\n\
             \x20     ]\n\
             \x20 high_precision_dtype: \"torch.bfloat16\"\n\
             \x20 compile: \"false\" # Options: \"default\", \"max-autotune\", \"false\"\n\
             \x20 device: \"cpu\"  # Options: \"cuda\", \"mps\", \"xpu\", \"cpu\"\n\
             \x20 model_type: \"linear\"  # Options: \"linear\", \"ln_linear_sigmoid\"\n\
             \x20 enable_profiler: false\n\
             \x20 enable_memory_profiler: true\n",
            out.display()
        ),
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--runs", "3", "--quiet"])
        .assert()
        .success();
    let (_, rows) = results(&out);
    let header: Vec<&str> = HEADER.split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    assert_eq!(rows.len(), 8, "four recipes × two shapes");
    for r in &rows {
        assert_eq!(&r[col("status")], "ok", "{r:?}");
        assert_eq!(&r[col("device")], "cpu");
        assert_eq!(&r[col("model_type")], "linear");
        assert_eq!(&r[col("high_precision_dtype")], "torch.bfloat16");
        let base: f64 = r[col("baseline_inference_time_in_ms")].parse().unwrap();
        let q: f64 = r[col("quantized_inference_time_in_ms")].parse().unwrap();
        let speedup: f64 = r[col("speedup")].parse().unwrap();
        assert!(base > 0.0 && q > 0.0);
        assert!(
            (speedup - (base / q * 100.0).round() / 100.0).abs() < 0.011,
            "{r:?}"
        );
    }
    let recipes: Vec<&str> = rows.iter().map(|r| &r[col("quantization")]).collect();
    assert!(recipes.contains(&"int8wo") && recipes.contains(&"float8dq-tensor"));
}

#[test]
fn a_recipe_name_with_a_typo_exits_2_listing_the_accepted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("typo.yml");
    std::fs::write(
        &config,
        "quantization_config_recipe_names:\n  - \"int8w0\"\nmodel_params:\n  matrix_shapes: [{name: custom, shapes: [[16, 64, 32]]}]\n  device: cpu\n",
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--output-dir"])
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("\"int8w0\" is not a recipe name")
                .and(predicate::str::contains("int8wo"))
                .and(predicate::str::contains("line 2"))
                .and(predicate::str::contains("typo.yml")),
        );
    assert!(!dir.path().join("out").exists(), "refused before any row");
}

/// `device: cuda` on a machine without a GPU, or past its last GPU: the same refusal as
/// `--device cuda` elsewhere (cuda:99 fails to open on every machine, so nothing is skipped).
#[test]
fn a_config_device_that_cannot_open_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cuda.yml");
    std::fs::write(
        &config,
        "quantization_config_recipe_names: [int8wo]\nmodel_params:\n  matrix_shapes: [{name: custom, shapes: [[16, 64, 32]]}]\n  device: cuda:99\n",
    )
    .unwrap();
    replay()
        .args(["bench", "quant", "--config"])
        .arg(&config)
        .args(["--output-dir"])
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("model_params[0].device: cuda"));
}
