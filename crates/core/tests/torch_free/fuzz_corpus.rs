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

/// Found by fuzzing (isolated_json): without serde_json's float_roundtrip, `10.927999999999998`
/// read and written back came out `10.927999999999997`, and again `...995`: a merged or
/// resumed isolated.json drifted from the rows it was made of.
#[test]
fn a_float_read_back_from_isolated_json_is_the_float_written() {
    let regression =
        fuzz_dir().join("regressions/isolated_json/crash-624cb11a468afd2cc2e9f52dc2145ac402829a08");
    let bytes = std::fs::read(&regression).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("\"min_us\": 10.927999999999998"));
    let read =
        replay_core::results::isolated::IsolatedResults::from_bytes(&bytes, &regression).unwrap();
    assert_eq!(
        read.results[0].stats.as_ref().unwrap().min,
        10.927999999999998
    );
    let written = replay_core::export::json::to_bytes(&read);
    let again =
        replay_core::results::isolated::IsolatedResults::from_bytes(&written, &regression).unwrap();
    assert_eq!(
        again.results[0].stats.as_ref().unwrap().min,
        10.927999999999998
    );
    assert_eq!(replay_core::export::json::to_bytes(&again), written);
}

/// Found reviewing the shard_manifest target (fuzz/regressions/shard_manifest/review-*): a
/// manifest's shard is read as written, so `replay merge` divided by a count of 0, listed
/// every one of 10^18 missing shards, and counted a shard's share of a 10^15-item work list
/// by listing its positions. Each is now refused or answered at once.
#[test]
fn hostile_shard_manifests_are_refused_without_walking_their_numbers() {
    use replay_core::shard::{MergePlan, ShardManifest};
    let read = |name: &str| {
        let path = fuzz_dir().join("regressions/shard_manifest").join(name);
        ShardManifest::from_bytes(&std::fs::read(&path).unwrap(), &path)
    };
    let zero = read("review-count-zero").unwrap_err().to_string();
    assert!(zero.contains("shard 1/0"), "{zero}");

    let started = std::time::Instant::now();
    let huge = read("review-count-huge").unwrap();
    let plan = MergePlan::from_manifests(vec![("part1".into(), Some(huge))]);
    let message = plan.unwrap_err().to_string();
    assert!(
        message.contains(
            "missing 999999999999999999 of 1000000000000000000 shards: 2/1000000000000000000"
        ) && message.contains("and 999999999999999967 more"),
        "{message}"
    );
    let many = read("review-work-items-huge").unwrap();
    let message = MergePlan::from_manifests(vec![("part1".into(), Some(many))])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(
            "covers 1 items, but shard 1/1 of a list of 1000000000000000 has 1000000000000000"
        ),
        "{message}"
    );
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}
