//! The streamed classify (`signature::fold`: records sorted on disk beyond a budget, one
//! sweep of the host ranges, a merge by correlation id) against the in-memory classify on
//! every shared trace and every Kineto fixture with GPU activity: the same signature file,
//! byte for byte, whether the sorters kept everything in memory or wrote segments of 1024
//! records; a trace without GPU activity is refused, saying so.

use replay_core::signature::classify;
use replay_core::signature::fold::{classify_streamed, FoldError, FoldOptions};
use replay_core::trace::{self, Platform};

use crate::common::every_kineto_trace;

#[test]
fn the_streamed_classify_writes_the_in_memory_file_on_every_trace() {
    let spill = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for path in every_kineto_trace() {
        let whole = trace::load(&path).unwrap();
        let expected = serde_json::to_string_pretty(&classify(&whole, &path)).unwrap();
        for records_in_memory in [usize::MAX / 2, 1024] {
            let options = FoldOptions {
                records_in_memory,
                spill_dir: spill.path().to_path_buf(),
                block_bytes: None,
            };
            match classify_streamed(&path, &options) {
                Ok(file) => {
                    let got = serde_json::to_string_pretty(&file).unwrap();
                    if got != expected {
                        let at = got
                            .bytes()
                            .zip(expected.bytes())
                            .position(|(a, b)| a != b)
                            .unwrap_or(got.len().min(expected.len()));
                        let from = at.saturating_sub(300);
                        panic!(
                            "{} (segments of {records_in_memory}): differs at byte {at}:\nstreamed: {}\nin memory: {}",
                            path.display(),
                            &got[from..(at + 300).min(got.len())],
                            &expected[from..(at + 300).min(expected.len())],
                        );
                    }
                    compared += 1;
                }
                Err(FoldError::NoGpuActivity { .. }) => {
                    assert_eq!(whole.platform, Platform::Cpu, "{}", path.display());
                }
                Err(e) => panic!("{}: {e}", path.display()),
            }
        }
    }
    assert!(compared >= 16, "only {compared} comparisons");
    // Nothing is left behind in the spill folder.
    assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0);
}
