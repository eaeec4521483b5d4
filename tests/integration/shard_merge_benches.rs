//! Scale-out of the two suites whose grids are configs: `replay bench quant` (torchao's YAML)
//! and `replay bench mhc`, each run whole and in shards (`--shard I/N`), the shards merged by
//! `replay merge` into the rows of the whole run. The other commands' shards, and the merges
//! that must be refused, are in `shard_merge`.

use std::path::{Path, PathBuf};

use crate::common::replay;
use crate::shard_merge::{csv_cells, merge, run_shards, stderr};

/// A tiny `replay bench quant` config writing to `out` (two shapes, three recipes, one not
/// implemented).
fn quant_config(dir: &Path, out: &Path) -> PathBuf {
    let config = dir.join(format!(
        "{}.yml",
        out.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(
        &config,
        format!(
            "benchmark_mode: inference\n\
             quantization_config_recipe_names: [baseline, int8wo, int8dq, int4wo-64-hqq]\n\
             output_dir: {}\n\
             model_params:\n\
             \x20 - matrix_shapes: [{{name: custom, shapes: [[16, 64, 32], [8, 32, 64]]}}]\n\
             \x20   high_precision_dtype: torch.float32\n\
             \x20   device: cpu\n\
             \x20   model_type: linear\n",
            out.display()
        ),
    )
    .unwrap();
    config
}

fn quant(dir: &Path, out: &Path, extra: &[&str]) {
    let run = replay()
        .args(["bench", "quant", "--config"])
        .arg(quant_config(dir, out))
        .args(["--runs", "2", "--quiet"])
        .args(extra)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
}

/// The cells that name a quant row and its status (the times differ from run to run).
fn quant_rows(dir: &Path) -> Vec<String> {
    let csv = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("results_") && name.ends_with(".csv")
        })
        .unwrap_or_else(|| panic!("no results_*.csv in {}", dir.display()));
    csv_cells(
        &csv,
        &["quantization", "m", "k", "n", "model_type", "status"],
    )
}

#[test]
fn quant_shards_merge_into_the_whole_runs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    quant(dir.path(), &whole, &[]);
    let parts = run_shards(dir.path(), "part", 3, |out, shard| {
        quant(dir.path(), out, shard)
    });
    assert!(parts.iter().all(|p| p.join("shard.json").is_file()));
    let merged = dir.path().join("merged");
    let out = merge(&parts, &merged);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = quant_rows(&whole);
    assert_eq!(expected.len(), 8, "{expected:?}");
    assert_eq!(quant_rows(&merged), expected);
    assert_eq!(
        expected
            .iter()
            .filter(|r| r.ends_with(" not_implemented"))
            .count(),
        2,
        "{expected:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("8 rows, 6 ok"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Missing the last shard: named, with the command that runs it.
    let out = merge(&parts[..2], &dir.path().join("incomplete"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--shard 3/3"), "{}", stderr(&out));
}

/// `replay bench mhc --sweep-bs` at a tiny size into `out`, plus `extra`.
fn mhc(out: &Path, extra: &[&str]) {
    let run = replay()
        .args(["bench", "mhc", "--sweep-bs", "--seq", "16", "--dim", "64"])
        .args(["--warmup", "1", "--iters", "2", "--gpu-profile"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h100_sxm_datasheet.json"))
        .arg("--output-dir")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
}

/// The cells that name an mhc row and its status (Device .. Case, Impl, Status).
fn mhc_rows(dir: &Path) -> Vec<String> {
    csv_cells(
        &dir.join("benchmark_results.csv"),
        &[
            "Device",
            "BatchSize",
            "SeqLen",
            "Dim",
            "Dtype",
            "Case",
            "Impl",
            "Status",
        ],
    )
}

#[test]
fn mhc_shards_merge_into_the_whole_runs_rows_and_offload_answer() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    mhc(&whole, &[]);
    let parts = run_shards(dir.path(), "part", 2, mhc);
    // A shard appends: rows of an earlier run in its folder are not its own.
    mhc(&parts[1], &["--shard", "2/2"]);
    let merged = dir.path().join("merged");
    let out = merge(&parts, &merged);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = mhc_rows(&whole);
    // Six batch sizes x (torch, fused) x six stages.
    assert_eq!(expected.len(), 72, "{expected:?}");
    assert_eq!(mhc_rows(&merged), expected);
    assert!(!whole.join("shard.json").exists());
    assert!(
        !parts[0].join("offload_answer.md").exists(),
        "a shard writes no answer"
    );
    let answer = std::fs::read_to_string(merged.join("offload_answer.md")).unwrap();
    let whole_answer = std::fs::read_to_string(whole.join("offload_answer.md")).unwrap();
    let batches = |text: &str| text.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(batches(&answer), batches(&whole_answer), "{answer}");
    assert!(merged.join("offload_answer.svg").is_file());
}
