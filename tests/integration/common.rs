//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use assert_cmd::Command;

/// The core's test helpers (one file, shared with `crates/cli`'s tests): [`copy_dir`].
#[path = "../../crates/core/tests/torch_free/common.rs"]
mod shared;

pub use shared::copy_dir;

/// The project's Python (`.venv/bin/python`, which `make test` sets up).
pub fn venv_python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")
}

/// The built `replay` binary, with a clean environment for the things that change its output.
pub fn replay() -> Command {
    let mut cmd = Command::cargo_bin("replay").expect("the replay binary is built by cargo test");
    cmd.env_remove("NVCC");
    cmd
}

/// `../shared/traces/kineto`: real traces captured by others, beside the project root.
pub fn shared_traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/kineto")
}

/// Every shared trace (`*.json.gz`), sorted by name; all ten must be there.
pub fn all_shared_traces() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(shared_traces())
        .expect("shared traces directory is readable")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".json.gz"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 10,
        "expected the 10 shared traces, found {}",
        paths.len()
    );
    paths
}

/// Classifies the shared trace `name` (`h100_bert_small_infer.json.gz`) into `out` with the
/// built `replay`, as a user would before `isolated`.
pub fn classify_shared(name: &str, out: &std::path::Path) {
    replay()
        .args(["classify", "--trace"])
        .arg(shared_traces().join(name))
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// True when this machine has an NVIDIA driver; the no-GPU tests are skipped there.
/// The bloom-tiny CPU step and its Execution Trace recorded in the same step, with value
/// ranges (`crates/core/tests/data/et`): (Kineto trace, Execution Trace).
pub fn bloom_tiny_et_pair() -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/core/tests/data/et");
    (
        dir.join("bloom_tiny_cpu.json.gz"),
        dir.join("bloom_tiny_cpu.et.json.gz"),
    )
}

/// GPT-2 (tiny) on the CPU with its Execution Trace, as `replay capture --model gpt2-tiny.pt
/// --seq-len 5 --execution-trace` recorded them on 2026-11-30: a TorchScript model whose
/// Kineto events record values left on the interpreter's stack before an op's arguments
/// (`aten::linear`'s four inputs), and whose attention splits one tensor into query, key and
/// value (`aten::split`, a list output).
pub fn gpt2_tiny_et_pair() -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/core/tests/data/et");
    (
        dir.join("gpt2_tiny_cpu.json.gz"),
        dir.join("gpt2_tiny_cpu.et.json.gz"),
    )
}

pub fn has_nvidia_driver() -> bool {
    replay::device::cuda::driver_missing_reason().is_none()
}

/// A temporary folder of the caller's own holding `bloom-tiny.pt`, exported through `replay
/// export`: once for this test process (ten tests take the model, and each export starts
/// Python and torch), then copied, so that a test may write beside its model or change it
/// without another test seeing it.
pub fn exported_bloom_tiny() -> (tempfile::TempDir, PathBuf) {
    static EXPORTED: OnceLock<PathBuf> = OnceLock::new();
    let exported = EXPORTED.get_or_init(|| {
        // Exported under a name of this process's own and renamed into place, so that two
        // test processes at once never read a half-written file.
        let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("common");
        std::fs::create_dir_all(&scratch).unwrap();
        let partial = scratch.join(format!("bloom-tiny.{}.pt", std::process::id()));
        replay()
            .args(["export", "--model", "bloom-tiny", "--out"])
            .arg(&partial)
            .assert()
            .success();
        let model = scratch.join("bloom-tiny.pt");
        std::fs::rename(&partial, &model).unwrap();
        model
    });
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("bloom-tiny.pt");
    std::fs::copy(exported, &model).unwrap();
    (dir, model)
}

/// libtorch's random generator is one per process, and every test of this binary shares the
/// process: a test that seeds it or draws from it holds this turn meanwhile, so that no other
/// test's seed or draws come between its own seed and its draws.
pub fn torch_generator_turn() -> MutexGuard<'static, ()> {
    static GENERATOR: Mutex<()> = Mutex::new(());
    GENERATOR.lock().unwrap_or_else(|e| e.into_inner())
}

/// `replay isolated` of `sigs` into `out` on the CPU, quickly (one round, 10 ms an item, quiet),
/// with `extra` arguments, ended after two minutes at most.
pub fn quick_isolated(
    sigs: &std::path::Path,
    out: &std::path::Path,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time",
            "0.01",
            "--rounds",
            "1",
        ])
        .args(["--quiet", "--kernels"])
        .arg(sigs)
        .arg("--output-dir")
        .arg(out)
        .args(extra)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
}
