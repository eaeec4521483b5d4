//! Helpers shared by the torch-free tests.
#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;

/// The repository root (this package is `crates/core`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built `replay` binary, with a clean environment for the things that change its output.
pub fn replay() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replay"));
    cmd.env_remove("NVCC");
    cmd
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
