//! bloom-tiny of the zoo compiled with torch.compile on the CPU, captured once for this test
//! process: `replay capture --compile --zoo bloom-tiny --device cpu` into a folder of cargo's
//! scratch space emptied first, so that this is the process's one cold compile of the model
//! (a minute of Inductor's C++ compiles; issue 52's `make test` time).
//!
//! `compiled_capture` reads the capture's trace, `inductor/` and output; `compiled_compare`
//! starts its own capture of the same model from a copy of its Inductor cache (a warm
//! compile: it asserts nothing about the compile). Under `make test`, `REPLAY_TEST_SHARE` names
//! the run's scratch folder (emptied by the Makefile each run, never the user's Inductor
//! cache): the cache is also left there, at [`SHARED_CACHE`], for `scripts/test_compile.py`'s
//! capture of the same model.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{copy_dir, replay};

/// Where, under `$REPLAY_TEST_SHARE`, the cache is left for the Python tests (the same path
/// as `scripts/test_compile.py`'s `SHARED_BLOOM_TINY_CACHE`).
pub const SHARED_CACHE: &str = "bloom-tiny-compiled/inductor/cache";

/// The one capture and what it printed.
pub struct CompiledCapture {
    /// The trace; `inductor/` (kernels.json, the libraries, the cache) is beside it.
    pub trace: PathBuf,
    pub stdout: String,
}

impl CompiledCapture {
    /// The `inductor/` folder beside the trace.
    pub fn inductor(&self) -> PathBuf {
        self.trace.parent().unwrap().join("inductor")
    }
}

/// The capture, made by the first test that asks (the others wait for it). Read it, do not
/// write into its folder: copy what a test changes ([`common::copy_dir`]).
pub fn capture() -> &'static CompiledCapture {
    static CAPTURE: OnceLock<CompiledCapture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compiled_bloom_tiny");
        // An earlier run's cache would make this compile a warm one.
        let _ = std::fs::remove_dir_all(&folder);
        let trace = folder.join("results").join("t.json");
        let output = replay()
            .args([
                "capture",
                "--compile",
                "--zoo",
                "bloom-tiny",
                "--device",
                "cpu",
                "--warmup",
                "1",
                "--candidates",
                "1",
                "--out",
            ])
            .arg(&trace)
            .assert()
            .success()
            .get_output()
            .clone();
        let capture = CompiledCapture {
            trace,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        };
        if let Some(share) = std::env::var_os("REPLAY_TEST_SHARE") {
            share_cache(&capture.inductor().join("cache"), Path::new(&share));
        }
        capture
    })
}

/// Copies the capture's Inductor cache into the `inductor/` folder `into` (made if missing),
/// where a capture whose trace goes beside it compiles the same model from a warm cache.
pub fn seed_cache(into: &Path) {
    copy_dir(&capture().inductor().join("cache"), &into.join("cache"));
}

/// Leaves `cache` at `share`/[`SHARED_CACHE`]: copied beside it, then renamed into place, so
/// that a reader never finds half a cache.
fn share_cache(cache: &Path, share: &Path) {
    let target = share.join(SHARED_CACHE);
    let partial = target.with_extension(format!("partial.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    copy_dir(cache, &partial);
    let _ = std::fs::remove_dir_all(&target);
    std::fs::rename(&partial, &target).unwrap();
}
