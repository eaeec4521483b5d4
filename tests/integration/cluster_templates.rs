//! The cluster templates' own shell, run here for real without a scheduler: the Kubernetes
//! Indexed Job's shard and merge scripts (taken from scripts/k8s/replay-indexed-job.yaml)
//! with JOB_COMPLETION_INDEX set as Kubernetes sets it, and the Slurm template's task and
//! merge stages with the variables of an array that starts at 0. Each set of shards must
//! merge into the single run's work list. (`make test-slurm` runs the Slurm template on a
//! real one-node cluster.)

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/release`, where `replay` and `replay-torch` are, first on PATH.
fn path_with_replay() -> String {
    let bin = assert_cmd::cargo::cargo_bin("replay");
    format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The `args: - |` blocks of the YAML, in order (the containers' scripts).
fn yaml_scripts(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut scripts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "- |" || !lines[i - 1].trim().starts_with("args:") {
            continue;
        }
        let indent = |l: &str| l.len() - l.trim_start().len();
        let block_indent = indent(lines[i + 1]);
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim().is_empty() || indent(l) >= block_indent)
            .map(|l| l.get(block_indent..).unwrap_or(""))
            .collect();
        scripts.push(body.join("\n"));
    }
    scripts
}

fn result_ids(path: &Path) -> Vec<(String, String)> {
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const ISOLATED: &str = "--device cpu --max-time-per-kernel 0.005 --rounds 1 --threads 1 -q";

fn single_run(dir: &Path) -> Vec<(String, String)> {
    let whole = dir.join("whole");
    common::replay()
        .arg("isolated")
        .arg("--kernels")
        .arg(root().join("signatures/h100_vit_infer.json"))
        .args(ISOLATED.split(' '))
        .arg("--output-dir")
        .arg(&whole)
        .assert()
        .success();
    result_ids(&whole.join("isolated.json"))
}

#[test]
fn the_kubernetes_indexed_jobs_scripts_shard_and_merge() {
    let yaml = std::fs::read_to_string(root().join("scripts/k8s/replay-indexed-job.yaml")).unwrap();
    let scripts = yaml_scripts(&yaml);
    assert_eq!(scripts.len(), 2, "{scripts:?}");
    assert!(yaml.contains("completionMode: Indexed"));
    assert!(yaml.contains("completions: 4") && yaml.contains("value: \"4\""));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let command = format!(
        "isolated --kernels {} {ISOLATED}",
        root().join("signatures/h100_vit_infer.json").display()
    );
    // Pods 0…2 of completions: 3, as Kubernetes numbers them.
    for index in 0..3 {
        let pod = Command::new("/bin/sh")
            .args(["-c", &scripts[0]])
            .env("PATH", path_with_replay())
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("REPLAY_SHARD_COUNT", "3")
            .env("REPLAY_OUT", &out)
            .env("REPLAY_COMMAND", &command)
            .env_remove("SLURM_ARRAY_TASK_ID")
            .output()
            .unwrap();
        assert!(
            pod.status.success(),
            "pod {index}: {}",
            String::from_utf8_lossy(&pod.stderr)
        );
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("shard-1/shard.json")).unwrap()).unwrap();
    assert_eq!(manifest["shard"]["index"], 1);
    assert!(manifest["shard_from"]
        .as_str()
        .unwrap()
        .contains("JOB_COMPLETION_INDEX=0"));
    let merge = Command::new("/bin/sh")
        .args(["-c", &scripts[1]])
        .env("PATH", path_with_replay())
        .env("REPLAY_SHARD_COUNT", "3")
        .env("REPLAY_OUT", &out)
        .env("REPLAY_MERGE_WAIT_S", "0")
        .output()
        .unwrap();
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    assert_eq!(
        result_ids(&out.join("merged/isolated.json")),
        single_run(dir.path())
    );
}

#[test]
fn the_slurm_templates_task_and_merge_stages_shard_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let sbatch = root().join("scripts/slurm/replay-array.sbatch");
    let kernels = root().join("signatures/h100_vit_infer.json");
    // An array given as --array=0-1: task ids 0 and 1 are shards 1 and 2.
    for id in ["0", "1"] {
        let run = Command::new("bash")
            .arg(&sbatch)
            .arg("isolated")
            .arg("--kernels")
            .arg(&kernels)
            .args(ISOLATED.split(' '))
            .env("REPLAY_STAGE", "task")
            .env("REPLAY_OUT", &out)
            .env("REPLAY_BIN", assert_cmd::cargo::cargo_bin("replay"))
            .env("SLURM_ARRAY_TASK_ID", id)
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_COUNT", "2")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "task {id}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    assert!(out.join("shard-1/shard.json").is_file());
    assert!(out.join("shard-2/shard.json").is_file());
    let merge = Command::new("bash")
        .arg(&sbatch)
        .arg("isolated")
        .env("REPLAY_STAGE", "merge")
        .env("REPLAY_OUT", &out)
        .env("REPLAY_BIN", assert_cmd::cargo::cargo_bin("replay"))
        .output()
        .unwrap();
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    assert_eq!(
        result_ids(&out.join("merged/isolated.json")),
        single_run(dir.path())
    );
}
