//! The saved inputs of the fuzz targets of this crate's readers (quant YAML, `.npy`,
//! `--input`: replay::fuzzing) replayed through the bodies the libFuzzer binaries run.

use std::path::Path;

use replay::fuzzing::TARGETS;
use replay_core::fuzzing::corpus;

#[test]
fn every_saved_input_of_every_torch_target_runs_clean() {
    let fuzz_dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"));
    let mut failures = Vec::new();
    for target in TARGETS {
        let replayed = corpus::replay(fuzz_dir, target);
        assert!(
            replayed.inputs > 0,
            "fuzz/corpus/{}/ is empty or missing",
            target.name
        );
        failures.extend(replayed.failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
