//! The fuzz targets' saved inputs (fuzz/corpus/, minimised by `make fuzz`, and
//! fuzz/regressions/, every input that once crashed a target) replayed through the same
//! bodies the libFuzzer binaries run (replay_core::fuzzing), on stable Rust.

use std::path::Path;

use replay_core::fuzzing::{corpus, TARGETS};

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz"))
}

#[test]
fn every_saved_input_of_every_torch_free_target_runs_clean() {
    let mut failures = Vec::new();
    for target in TARGETS {
        let replayed = corpus::replay(fuzz_dir(), target);
        // A target with no corpus would pass by replaying nothing.
        assert!(
            replayed.inputs > 0,
            "fuzz/corpus/{}/ is empty or missing",
            target.name
        );
        failures.extend(replayed.failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The replay itself reports a failing input, naming it (so the test above can fail).
#[test]
fn a_panicking_input_is_reported_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus/panics");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("bad"), b"x").unwrap();
    std::fs::write(corpus.join("good"), b"").unwrap();
    let target = replay_core::fuzzing::Target {
        name: "panics",
        run: |data| assert!(data.is_empty(), "non-empty input"),
    };
    let replayed = corpus::replay(dir.path(), &target);
    assert_eq!(replayed.inputs, 2);
    assert_eq!(replayed.failures.len(), 1);
    assert!(replayed.failures[0].contains("bad: non-empty input"));
}
