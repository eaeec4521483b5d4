//! `replay-tracegen`'s synthetic traces (issue 33's benchmark input) load with `replay
//! classify` as it is: a 20 MB trace classifies with every GPU activity linked to its launch
//! and op, every step gives the same set of signatures, and each signature's count is the
//! number of steps times its count in one step.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use replay_tracegen::{generate, Length, Options};
use serde_json::Value;

fn write_trace(path: &Path, options: &Options) -> u64 {
    let file = std::fs::File::create(path).expect("create the trace");
    let summary = generate(options, std::io::BufWriter::new(file)).expect("generate");
    summary.steps
}

/// `replay classify` on `trace`: the signature file it wrote.
fn classify(trace: &Path, out: &Path) -> Value {
    let done = common::replay()
        .args(["classify", "--trace"])
        .arg(trace)
        .arg("--out")
        .arg(out)
        .output()
        .expect("runs replay");
    assert!(
        done.status.success(),
        "replay classify {}: {}",
        trace.display(),
        String::from_utf8_lossy(&done.stderr)
    );
    serde_json::from_slice(&std::fs::read(out).expect("signature file")).expect("signature JSON")
}

fn counts(file: &Value) -> BTreeMap<String, u64> {
    file["signatures"]
        .as_array()
        .expect("signatures")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().expect("id").to_owned(),
                s["count"].as_u64().expect("count"),
            )
        })
        .collect()
}

#[test]
fn a_20_mb_generated_trace_classifies_and_every_step_has_the_same_signatures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = |length| Options {
        length,
        seed: 9,
        ..Options::default()
    };
    let one_path = dir.path().join("one_step.json");
    write_trace(&one_path, &options(Length::Steps(1)));
    let big_path = dir.path().join("twenty_mb.json");
    let steps = write_trace(&big_path, &options(Length::Bytes(20_000_000)));
    assert!(std::fs::metadata(&big_path).expect("written").len() >= 20_000_000);
    assert!(steps >= 10, "{steps} steps");

    let one = classify(&one_path, &dir.path().join("one.sig.json"));
    let big = classify(&big_path, &dir.path().join("big.sig.json"));
    for file in [&one, &big] {
        let linking = &file["source"]["linking"];
        assert_eq!(linking["unattributed"], 0, "{linking}");
        assert_eq!(linking["with_op"], linking["gpu_activities"], "{linking}");
        assert_eq!(linking["external_id_contradicted"], 0, "{linking}");
    }
    let per_step = counts(&one);
    let all = counts(&big);
    // GEMMs, attention, elementwise kernels, copies and memsets: a real step's variety.
    assert!(
        per_step.len() >= 30,
        "{} signatures in a step",
        per_step.len()
    );
    let tiers: Vec<u64> = one["summary"]["tiers"]
        .as_array()
        .expect("tiers")
        .iter()
        .map(|t| t["unique"].as_u64().unwrap_or(0))
        .collect();
    assert!(
        tiers.iter().all(|&n| n > 0),
        "every tier has signatures: {tiers:?}"
    );
    assert_eq!(
        all.keys().collect::<Vec<_>>(),
        per_step.keys().collect::<Vec<_>>(),
        "the steps of the 20 MB trace have other signatures than one step"
    );
    for (id, count) in &per_step {
        assert_eq!(
            all[id],
            count * steps,
            "signature {id}: {} over {steps} steps, {count} in one",
            all[id]
        );
    }
}

#[test]
fn a_generated_rank_classifies_with_its_distributed_info_and_collectives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("rank3.json.gz");
    let options = Options {
        length: Length::Steps(2),
        ranks: Some(4),
        rank: 3,
        gzip_member: Some(1_000_000),
        ..Options::default()
    };
    write_trace(&path, &options);
    let file = classify(&path, &dir.path().join("rank3.sig.json"));
    let info = &file["source"]["distributed_info"];
    assert_eq!(info["rank"], 3, "{info}");
    assert_eq!(info["world_size"], 4, "{info}");
    let collectives = file["source"]["linking"]["collective"]
        .as_u64()
        .expect("collective count");
    // 24 layers in buckets of 4, and the embedding's: 7 all-reduces a step.
    assert_eq!(collectives, 14);
}
