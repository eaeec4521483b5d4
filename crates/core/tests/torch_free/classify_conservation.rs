//! Every real trace classifies, and the signatures account for every GPU activity:
//! counts add up exactly and times add up to the trace's total GPU time.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use replay_core::signature::{self, SignatureFile, Tier, Unit, WorkKind};
use replay_core::trace::{self, Category, Trace};

fn load_and_classify(path: &Path) -> (Trace, SignatureFile) {
    let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
    let file = signature::classify(&trace, path);
    (trace, file)
}

/// Every shared trace, loaded and classified once for all the tests of this file.
fn classified() -> &'static [(PathBuf, Trace, SignatureFile)] {
    static CLASSIFIED: OnceLock<Vec<(PathBuf, Trace, SignatureFile)>> = OnceLock::new();
    CLASSIFIED.get_or_init(|| {
        common::all_shared_traces()
            .into_iter()
            .map(|path| {
                let (trace, file) = load_and_classify(&path);
                (path, trace, file)
            })
            .collect()
    })
}

#[test]
fn every_gpu_activity_is_in_exactly_one_signature_or_unattributed() {
    for path in common::all_shared_traces() {
        let (trace, file) = load_and_classify(&path);
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let activities = trace.gpu_activity_count();
        if file.summary.unit == Unit::HostOp {
            assert_eq!(
                activities, 0,
                "{name}: host-op units only for CPU-only traces"
            );
            continue;
        }
        let in_signatures: u64 = file.signatures.iter().map(|s| s.count).sum();
        let unattributed: u64 = file.unattributed.iter().map(|u| u.count).sum();
        assert_eq!(in_signatures + unattributed, activities, "{name}: counts");
        assert_eq!(
            file.summary.total.invocations, activities,
            "{name}: summary total"
        );
        assert_eq!(
            file.summary.unattributed.invocations, unattributed,
            "{name}"
        );
        assert_eq!(file.source.linking.unattributed, unattributed, "{name}");

        // Per name, the signatures hold exactly the activities of that name: nothing is
        // counted twice under one name and missing under another.
        let mut expected: HashMap<&str, u64> = HashMap::new();
        for index in trace.gpu_activity_indices() {
            *expected
                .entry(trace.name(&trace.events[index]))
                .or_default() += 1;
        }
        let mut found: HashMap<&str, u64> = HashMap::new();
        for s in &file.signatures {
            *found.entry(s.name.as_str()).or_default() += s.count;
        }
        for u in &file.unattributed {
            *found.entry(u.name.as_str()).or_default() += u.count;
        }
        assert_eq!(found, expected, "{name}: per-name counts");

        let total_us = trace.gpu_activity_total_ns() as f64 / 1000.0;
        let classified_us: f64 = file
            .signatures
            .iter()
            .map(|s| s.trace_total_us)
            .sum::<f64>()
            + file.unattributed.iter().map(|u| u.total_us).sum::<f64>();
        assert!(
            (classified_us - total_us).abs() <= 0.001 * total_us,
            "{name}: classified {classified_us} us vs trace {total_us} us"
        );
        assert!(
            (file.summary.total.total_us - total_us).abs() <= 0.001 * total_us,
            "{name}"
        );
    }
}

#[test]
fn summaries_and_tiers_are_consistent_with_the_signatures() {
    for (path, _, file) in classified() {
        let name = path.display().to_string();
        assert_eq!(file.schema_version, signature::SCHEMA_VERSION);
        // Tiers 1-3 always; tier 4 only for a trace with generated kernels.
        let generated = file.signatures.iter().any(|s| s.tier == Tier::Generated);
        assert_eq!(
            file.summary.tiers.len(),
            if generated { 4 } else { 3 },
            "{name}"
        );
        for tier_summary in &file.summary.tiers {
            let of_tier: Vec<_> = file
                .signatures
                .iter()
                .filter(|s| s.tier == tier_summary.tier)
                .collect();
            assert_eq!(tier_summary.unique, of_tier.len() as u64, "{name}");
            assert_eq!(
                tier_summary.invocations,
                of_tier.iter().map(|s| s.count).sum::<u64>(),
                "{name}"
            );
        }
        for s in &file.signatures {
            let copy = matches!(s.kind, WorkKind::Memcpy | WorkKind::Memset);
            assert_eq!(
                copy,
                s.tier == Tier::Copy,
                "{name}: {} tier {}",
                s.name,
                s.tier
            );
            assert!(s.count > 0);
            assert!(
                s.trace_min_us <= s.trace_mean_us + 1e-9
                    && s.trace_mean_us <= s.trace_max_us + 1e-9
            );
            assert_eq!(s.replayable, s.reason.is_none(), "{name}: {}", s.name);
            if s.tier == Tier::Gemm && s.replayable {
                assert!(
                    s.gemm.is_some(),
                    "{name}: replayable GEMM {} has parameters",
                    s.name
                );
            }
            if s.kind == WorkKind::Memcpy && s.replayable {
                assert!(s.memcpy.is_some(), "{name}: {}", s.name);
            }
        }
        let mut ids: Vec<&str> = file.signatures.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), file.signatures.len(), "{name}: ids are unique");
        let table = file.summary_table();
        assert!(table.contains("total"), "{table}");
        assert_eq!(
            table
                .lines()
                .filter(|l| l.starts_with(['1', '2', '3']))
                .count(),
            3,
            "{table}"
        );
    }
}

#[test]
fn signature_files_round_trip_through_json() {
    for (path, _, file) in classified() {
        let json = serde_json::to_string(file).expect("serialises");
        let back: SignatureFile = serde_json::from_str(&json).expect("deserialises");
        assert_eq!(&back, file, "{}", path.display());
    }
}

#[test]
fn signature_files_read_back_from_disk() {
    let dir = std::env::temp_dir().join(format!("classify-read-back-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (path, _, file) in classified() {
        let out = dir
            .join(path.file_name().unwrap_or_default())
            .with_extension("signatures.json");
        std::fs::write(&out, serde_json::to_vec_pretty(file).expect("serialises")).expect("write");
        let back = signature::read_file(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&back, file, "{}", path.display());
    }

    let mut old = serde_json::to_value(&classified()[0].2).expect("serialises");
    old["schema_version"] = serde_json::json!(0);
    let out = dir.join("old.json");
    std::fs::write(&out, serde_json::to_vec(&old).expect("serialises")).expect("write");
    let error = signature::read_file(&out).expect_err("version 0 is refused");
    assert!(
        matches!(
            error,
            signature::SignatureFileError::UnsupportedVersion { found: 0, .. }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("old.json"), "{error}");

    let out = dir.join("not-signatures.json");
    std::fs::write(&out, br#"{"schema_version": 1, "signatures": 3}"#).expect("write");
    let error = signature::read_file(&out).expect_err("not a signature file");
    assert!(
        matches!(error, signature::SignatureFileError::Invalid { .. }),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn classification_is_deterministic() {
    let (path, _, first) = classified()
        .iter()
        .find(|(path, _, _)| path.ends_with("a100_train_cudagraph_rank0.json.gz"))
        .expect("the CUDA-graph trace");
    let (_, second) = load_and_classify(path);
    assert_eq!(
        serde_json::to_string(first).expect("serialises"),
        serde_json::to_string(&second).expect("serialises")
    );
}

#[test]
fn relative_timestamps_keep_their_base() {
    let trace = trace::load(&common::shared_traces().join("h100_bert_small_infer.json.gz"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.metadata.base_time_ns, Some(1_751_410_836_000_000_000));
    // `"ts": 1419247333430.849` on the first kernel: exact to the nanosecond.
    let first_kernel = trace
        .events
        .iter()
        .find(|e| e.category == Category::Kernel)
        .expect("a kernel");
    assert_eq!(first_kernel.ts_ns, 1_419_247_333_430_849);
    assert_eq!(first_kernel.dur_ns, 3_136);
    // 2025-07-01T23:00:36Z + 1419247.333430849 s = 2025-07-18T09:14:43Z, the capture day.
    assert_eq!(
        trace.absolute_ns(first_kernel.ts_ns),
        1_752_830_083_333_430_849
    );
    assert_eq!(
        trace.metadata.pytorch_version.as_deref(),
        Some("2.6.0+cu124")
    );
    assert_eq!(trace.metadata.cuda_runtime_version, Some(12040));
}
