//! Helpers shared by the torch-free tests (the core's, and `crates/cli`'s through `#[path]`;
//! the root package's integration tests take [`copy_dir`] from here the same way).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (the package compiling this is `crates/core` or `crates/cli`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/traces/kineto`: real traces captured by others, beside the project root.
pub fn shared_traces() -> PathBuf {
    repo_root().join("../shared/traces/kineto")
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

/// True when this machine has an NVIDIA driver, that is when `libcuda` loads (the probe that
/// the libtorch package's `device::cuda` makes through cudarc, which this package may not
/// depend on); the no-GPU tests are skipped there.
pub fn has_nvidia_driver() -> bool {
    ["libcuda.so", "libcuda.so.1"].into_iter().any(|name| {
        // SAFETY: only tries to dlopen the driver library by its usual names, as cudarc does.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

/// A copy of the folder `from` in a temporary folder, at `into` inside it, with its
/// `kernels.json` (at `kernels`, relative to the temporary folder) changed by `edit`: an
/// Inductor cache to break. Returns the folder (kept while it lives) and that file's path.
pub fn edited_kernels_copy(
    from: &Path,
    into: &str,
    kernels: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(from, &dir.path().join(into));
    let path = dir.path().join(kernels);
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    (dir, path)
}

/// A copy of the folder `from` at `to`, subfolders included.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every Kineto trace the tests have: the shared ones and the fixtures.
pub fn every_kineto_trace() -> Vec<PathBuf> {
    let mut traces = all_shared_traces();
    let root = repo_root();
    for fixture in [
        "../shared/traces/et/linear_kineto.json.gz",
        "../shared/traces/et/resnet_kineto.json.gz",
        "tests/data/gpt2_1layer_cpu_seq16.json.gz",
        "crates/core/tests/data/et/bloom_tiny_cpu.json.gz",
        "crates/core/tests/data/compiled/mlp_kernel_profile.json.gz",
        "crates/core/tests/data/compiled/mlp_plain.json.gz",
        "crates/core/tests/data/compiled/cpu_bloom_tiny_compiled.json.gz",
        "crates/core/tests/data/compiled/h200_gpt2_small/trace.json.gz",
        "crates/core/tests/data/compiled/h200_bloom_tiny/trace.json",
    ] {
        let path = root.join(fixture);
        assert!(path.is_file(), "fixture {} is missing", path.display());
        traces.push(path);
    }
    traces
}
