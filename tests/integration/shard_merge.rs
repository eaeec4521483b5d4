//! Scale-out on real inputs: `replay isolated` over an H100 signature file and a small
//! `replay bench scan` grid, each run whole and in shards (`--shard I/N`), the shards merged
//! by `replay merge` into the same work list as the whole run (same items, same order,
//! every status ok); and the merges that must be refused (exit 2): parts of another
//! command, work list or device, a duplicated shard, and a missing one, whose message gives
//! the exact command that runs it; a shard killed mid-run leaves no shard.json. The quant and
//! mHC benches' shards are in `shard_merge_benches`.

use crate::common;

use std::path::{Path, PathBuf};

use common::{copy_dir, replay};
use serde_json::Value;

fn signatures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("signatures/h100_vit_infer.json")
}

/// `replay isolated` on the CPU with a small budget, plus `extra` (`--shard ...`).
fn isolated(out: &Path, extra: &[&str]) {
    let run = replay()
        .arg("isolated")
        .arg("--kernels")
        .arg(signatures())
        .args([
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.005",
            "--rounds",
            "1",
            "--threads",
            "1",
            "-q",
            "--output-dir",
        ])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

fn isolated_rows(dir: &Path) -> Vec<(String, String, String)> {
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("isolated.json")).unwrap()).unwrap();
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["replayed_as"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub(crate) fn merge(parts: &[PathBuf], out: &Path) -> std::process::Output {
    replay()
        .arg("merge")
        .args(parts)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs shards `1/count` .. `count/count` with `run(out, ["--shard", "i/count"])`, each into
/// `dir/{prefix}{i}`, and returns their folders.
pub(crate) fn run_shards(
    dir: &Path,
    prefix: &str,
    count: usize,
    run: impl Fn(&Path, &[&str]),
) -> Vec<PathBuf> {
    (1..=count)
        .map(|i| {
            let part = dir.join(format!("{prefix}{i}"));
            run(&part, &["--shard", &format!("{i}/{count}")]);
            part
        })
        .collect()
}

/// The `keys` cells of each row of the CSV at `path`, joined by spaces: what names a row and
/// its status (times differ from run to run).
pub(crate) fn csv_cells(path: &Path, keys: &[&str]) -> Vec<String> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let columns: Vec<usize> = keys
        .iter()
        .map(|k| header.iter().position(|h| h == *k).unwrap())
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            columns.iter().map(|&i| &r[i]).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn isolated_shards_merge_into_the_whole_runs_work_list_and_bad_sets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    isolated(&whole, &[]);
    assert!(
        !whole.join("shard.json").exists(),
        "no --shard, no manifest"
    );
    let parts = run_shards(dir.path(), "shard-", 3, isolated);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(parts[1].join("shard.json")).unwrap()).unwrap();
    assert_eq!(manifest["command"], "isolated");
    assert_eq!(manifest["shard"]["index"], 2);
    assert_eq!(manifest["shard"]["count"], 3);
    assert_eq!(manifest["work_list_hash"].as_str().unwrap().len(), 64);
    assert!(manifest["device"].as_str().unwrap().starts_with("cpu"));
    assert!(manifest["argv"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "2/3"));

    let merged = dir.path().join("merged");
    let out = merge(
        &[parts[2].clone(), parts[0].clone(), parts[1].clone()],
        &merged,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = isolated_rows(&whole);
    assert!(expected.len() >= 15);
    assert_eq!(isolated_rows(&merged), expected);
    assert!(expected.iter().all(|(_, _, s)| s == "ok"), "{expected:?}");
    let csv = std::fs::read_to_string(merged.join("isolated.csv")).unwrap();
    assert_eq!(csv.lines().count(), expected.len() + 1);
    assert!(merged.join("merge.json").is_file());

    // A duplicated shard.
    let out = merge(
        &[
            parts[0].clone(),
            parts[0].clone(),
            parts[1].clone(),
            parts[2].clone(),
        ],
        &dir.path().join("dup"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("duplicated shards: shard 1/3"),
        "{}",
        stderr(&out)
    );

    // A part run on another device (its manifest says so).
    let other = dir.path().join("other-device");
    copy_dir(&parts[1], &other);
    let mut m: Value =
        serde_json::from_slice(&std::fs::read(other.join("shard.json")).unwrap()).unwrap();
    m["device"] = Value::from("cuda:0 (NVIDIA H100 80GB HBM3, sm_90)");
    std::fs::write(other.join("shard.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    let out = merge(
        &[parts[0].clone(), other, parts[2].clone()],
        &dir.path().join("dev"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("differ in their device"),
        "{}",
        stderr(&out)
    );

    // A part of another work list: the other H100 signature file.
    let bert = dir.path().join("bert-shard-2");
    let run = replay()
        .arg("isolated")
        .arg("--kernels")
        .arg(signatures().with_file_name("h100_bert_small_infer.json"))
        .args([
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.005",
            "--rounds",
            "1",
            "-q",
        ])
        .args(["--shard", "2/3", "--output-dir"])
        .arg(&bert)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let out = merge(
        &[parts[0].clone(), bert, parts[2].clone()],
        &dir.path().join("list"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("differ in their work list"),
        "{}",
        stderr(&out)
    );
    assert!(
        !dir.path().join("list/isolated.json").exists(),
        "nothing merged"
    );

    // A missing shard: named, with the command that runs it, which then completes the set.
    let out = merge(
        &[parts[0].clone(), parts[2].clone()],
        &dir.path().join("missing"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("missing 1 of 3 shards: 2/3"), "{text}");
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.contains("&& replay isolated"))
        .unwrap_or_else(|| panic!("no command to re-run in {text}"));
    // `cd DIR && replay ...`: the folder the shards ran in, then the command.
    let (cd, command) = line.split_once(" && ").unwrap();
    assert_eq!(
        cd,
        format!("cd {}", std::env::current_dir().unwrap().display())
    );
    let command = command.to_string();
    assert!(command.contains("--shard 2/3"), "{command}");
    let rerun_dir = dir.path().join("shard-2");
    std::fs::remove_dir_all(&rerun_dir).unwrap();
    assert!(
        command.ends_with(&format!("--output-dir {}", rerun_dir.display())),
        "{command}"
    );
    let words: Vec<&str> = command.split_whitespace().collect();
    let rerun = replay().args(&words[1..]).output().unwrap();
    assert!(rerun.status.success(), "{command}: {}", stderr(&rerun));
    let again = dir.path().join("again");
    let out = merge(&parts, &again);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(isolated_rows(&again), expected);
}

const GRID: [&str; 16] = [
    "--device",
    "cpu",
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
    "--max-time-per-case",
    "0.01",
    "--repeats",
    "2",
];

fn scan(out: &Path, extra: &[&str]) {
    let run = replay()
        .args(["bench", "scan"])
        .args(GRID)
        .args(["--quiet", "--output-dir"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
}

/// The columns that name a case and its status (the times differ from run to run).
fn scan_rows(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("benchmark_full.csv"))
        .unwrap()
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            format!("{} {}", cells[..8].join(","), cells[14])
        })
        .collect()
}

#[test]
fn scan_shards_merge_into_the_whole_runs_rows_files_and_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    scan(&whole, &[]);
    let parts = run_shards(dir.path(), "part", 2, scan);
    let merged = dir.path().join("merged");
    let out = merge(&parts, &merged);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = scan_rows(&whole);
    assert_eq!(expected.len(), 9, "{expected:?}");
    assert_eq!(scan_rows(&merged), expected);
    assert!(
        expected[1..].iter().all(|r| r.ends_with(" success")),
        "{expected:?}"
    );
    // The merge counts the seed's `success` rows (not the core's `ok`).
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("8 cases, 8 success"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The run's other two files and the analysis, from the merged rows.
    let heatmap: Value =
        serde_json::from_slice(&std::fs::read(merged.join("heatmap_data.json")).unwrap()).unwrap();
    let whole_heatmap: Value =
        serde_json::from_slice(&std::fs::read(whole.join("heatmap_data.json")).unwrap()).unwrap();
    assert_eq!(
        heatmap.as_object().unwrap().keys().collect::<Vec<_>>(),
        whole_heatmap
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        std::fs::read_to_string(merged.join("memory_breakdown.csv"))
            .unwrap()
            .lines()
            .count(),
        9
    );
    assert!(merged.join("plots/index.html").is_file());

    // A scan part beside an isolated part: another command.
    let iso = dir.path().join("iso");
    isolated(&iso, &["--shard", "2/2"]);
    let out = merge(&[parts[0].clone(), iso], &dir.path().join("mixed"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("differ in their command"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_shard_killed_mid_run_leaves_no_manifest_and_is_named_missing() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("shard-1");
    isolated(&first, &["--shard", "1/2"]);
    // Shard 2 with a long budget, killed once it has written results for a signature.
    let second = dir.path().join("shard-2");
    let bin = assert_cmd::cargo::cargo_bin("replay");
    let mut child = std::process::Command::new(bin)
        .arg("isolated")
        .arg("--kernels")
        .arg(signatures())
        .args([
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "2",
            "--rounds",
            "1",
            "-q",
        ])
        .args(["--shard", "2/2", "--output-dir"])
        .arg(&second)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !second.join("isolated.json").exists() {
        assert!(started.elapsed().as_secs() < 60, "shard 2 wrote nothing");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(second.join("isolated.json").exists());
    assert!(!second.join("shard.json").exists());
    let out = merge(&[first, second.clone()], &dir.path().join("merged"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("missing 1 of 2 shards: 2/2"), "{text}");
    assert!(text.contains("without shard.json"), "{text}");
    assert!(text.contains("--shard 2/2 --output-dir"), "{text}");
    assert!(!dir.path().join("merged/isolated.json").exists());
}

#[test]
fn calibrate_shards_merge_into_the_whole_runs_profile() {
    let dir = tempfile::tempdir().unwrap();
    let calibrate = |output: &Path, extra: &[&str]| {
        let run = replay()
            .args([
                "calibrate",
                "--device",
                "cpu",
                "--quick",
                "--operations",
                "memory,host",
            ])
            .args(["--threads", "1", "-q", "--output"])
            .arg(output)
            .args(extra)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr(&run));
    };
    let keys = |path: &Path| -> Vec<String> {
        let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        json["operation_profiles"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let whole = dir.path().join("whole/profile.json");
    calibrate(&whole, &[]);
    let first = dir.path().join("s1");
    calibrate(&first.join("profile.json"), &["--shard", "1/2"]);
    // Alone, shard 1 is missing shard 2, whose command keeps the profile's name.
    let out = merge(std::slice::from_ref(&first), &dir.path().join("merged"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let second = dir.path().join("s2");
    assert!(
        stderr(&out).contains(&format!(
            "--shard 2/2 --output {}",
            second.join("profile.json").display()
        )),
        "{}",
        stderr(&out)
    );
    calibrate(&second.join("profile.json"), &["--shard", "2/2"]);
    let merged = dir.path().join("merged");
    let out = merge(&[first.clone(), second.clone()], &merged);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = keys(&whole);
    assert_eq!(expected.len(), 6, "{expected:?}");
    assert_eq!(keys(&merged.join("profile.json")), expected);
    // The host section is one item of the work list, measured by one shard: merged in.
    let host = |path: &Path| -> Value {
        let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        json["host"].clone()
    };
    assert!(host(&whole)["dispatch_us_per_op"].as_f64().unwrap() > 0.0);
    let parts = [
        host(&first.join("profile.json")),
        host(&second.join("profile.json")),
    ];
    let measured: Vec<&Value> = parts.iter().filter(|h| !h.is_null()).collect();
    assert_eq!(measured.len(), 1, "{parts:?}");
    assert_eq!(&host(&merged.join("profile.json")), measured[0]);
}

#[test]
fn shards_that_cannot_be_resolved_and_merges_into_a_part_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // --shard auto outside an array job or an Indexed Job.
    let out = replay()
        .arg("isolated")
        .arg("--kernels")
        .arg(signatures())
        .args(["--device", "cpu", "--shard", "auto", "--output-dir"])
        .arg(dir.path().join("auto"))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("pass --shard I/N"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("auto/isolated.json").exists());
    // An array task without its count.
    let out = replay()
        .args(["bench", "scan", "--shard", "auto", "--output-dir"])
        .arg(dir.path().join("scan"))
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env_remove("SLURM_ARRAY_TASK_COUNT")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("SLURM_ARRAY_TASK_COUNT"),
        "{}",
        stderr(&out)
    );
    // 0-based or past the count.
    for bad in ["0/2", "3/2"] {
        let out = replay()
            .args(["calibrate", "--shard", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("between 1 and the count"),
            "{}",
            stderr(&out)
        );
    }
    // The merged files never go into a part's folder.
    let part = dir.path().join("shard-1");
    isolated(&part, &["--shard", "1/1"]);
    let before = std::fs::read(part.join("isolated.json")).unwrap();
    let out = merge(std::slice::from_ref(&part), &part);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is one of the parts"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(part.join("isolated.json")).unwrap(), before);
}
