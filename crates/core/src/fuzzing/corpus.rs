//! Replaying a target's saved inputs (`fuzz/corpus/NAME/`, the fuzzer's minimised corpus, and
//! `fuzz/regressions/NAME/`, every input that once crashed it) through its body on stable
//! Rust, as `make test` does.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use super::target::Target;

/// What a replay of one target's saved inputs found.
#[derive(Debug, Default)]
pub struct Replayed {
    /// Inputs run (corpus and regressions).
    pub inputs: usize,
    pub regressions: usize,
    /// `FILE: panic message` of each input that panicked.
    pub failures: Vec<String>,
}

/// Runs every file of `fuzz_dir/corpus/NAME/` and `fuzz_dir/regressions/NAME/` through
/// `target`, each caught on its own so that one failure names its file and the rest still run.
pub fn replay(fuzz_dir: &Path, target: &Target) -> Replayed {
    let mut replayed = Replayed::default();
    for (folder, is_regression) in [("corpus", false), ("regressions", true)] {
        for file in files(&fuzz_dir.join(folder).join(target.name)) {
            let Ok(data) = std::fs::read(&file) else {
                replayed
                    .failures
                    .push(format!("{}: unreadable", file.display()));
                continue;
            };
            replayed.inputs += 1;
            replayed.regressions += usize::from(is_regression);
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (target.run)(&data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                replayed
                    .failures
                    .push(format!("{}: {message}", file.display()));
            }
        }
    }
    replayed
}

/// The plain files of `dir`, sorted (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}
