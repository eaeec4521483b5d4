//! A job's rank traces: `classify` and `predict` of several ranks, `replay merge` of per-rank
//! signature files, and the job checks, on the shared traces.
//!
//! `../shared/traces` holds one rank of a two-rank NCCL job (`a100_nccl_2rank`: rank 0 of
//! world size 2, its own NCCL kernels only). Its second rank is made here from it: the same
//! file with `distributedInfo.rank` set to 1 (the job's other rank ran the same program);
//! where a test needs the ranks to differ, rank 1's clock is stretched by 10 % in memory.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use replay_core::predict::{self, step_stats::StepStatistics};
use replay_core::ranks::collectives::{self, CollectiveKernel};
use replay_core::ranks::matching::MatchedBy;
use replay_core::ranks::straggler::{JobPrediction, RankPrediction};
use replay_core::signature::SignatureFile;
use replay_core::trace;
use serde_json::Value;

use crate::common::{replay, shared_traces};

fn nccl_rank0() -> PathBuf {
    shared_traces().join("a100_nccl_2rank.json.gz")
}

/// The shared rank-0 trace with `distributedInfo.rank` set to `rank`, gzipped into `to`.
fn as_rank(rank: u32, to: &Path) {
    let bytes = std::fs::read(nccl_rank0()).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    let info = text.find("\"distributedInfo\"").unwrap();
    let at = info + text[info..].find("\"rank\": 0").unwrap();
    text.replace_range(at..at + "\"rank\": 0".len(), &format!("\"rank\": {rank}"));
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(to).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

/// A folder with the job's two rank traces, `rank0.json.gz` and `rank1.json.gz`.
fn two_ranks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(nccl_rank0(), dir.path().join("rank0.json.gz")).unwrap();
    as_rank(1, &dir.path().join("rank1.json.gz"));
    dir
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = replay().current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "replay {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run_refused(dir: &Path, args: &[&str]) -> String {
    let out = replay().current_dir(dir).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "replay {args:?} should exit 2");
    String::from_utf8(out.stderr).unwrap()
}

fn read(path: &Path) -> SignatureFile {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn classifying_both_ranks_at_once_equals_each_alone_then_merged() {
    let dir = two_ranks();
    let d = dir.path();
    // The glob is quoted: replay expands it.
    run_ok(
        d,
        &["classify", "--trace", "rank*.json.gz", "--out", "job.json"],
    );
    for rank in ["0", "1"] {
        run_ok(
            d,
            &[
                "classify",
                "--trace",
                &format!("rank{rank}.json.gz"),
                "--out",
                &format!("s{rank}.json"),
            ],
        );
    }
    // Any order of the parts, named or globbed.
    run_ok(d, &["merge", "s1.json", "s0.json", "--out", "merged.json"]);
    run_ok(d, &["merge", "s*.json", "--out", "globbed.json"]);
    let job = std::fs::read(d.join("job.json")).unwrap();
    assert_eq!(job, std::fs::read(d.join("merged.json")).unwrap());
    // Each rank streamed under a budget (signature::fold): the same file, and a budget under
    // what the streamed pass needs is said to be, as each rank's share.
    let args = [
        "classify",
        "--trace",
        "rank*.json.gz",
        "--out",
        "streamed.json",
        "--memory-budget",
        "1K",
    ];
    let out = replay().current_dir(d).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is followed where it can be") && stderr.contains("ranks read at once"),
        "{stderr}"
    );
    assert_eq!(job, std::fs::read(d.join("streamed.json")).unwrap());
    assert_eq!(job, std::fs::read(d.join("globbed.json")).unwrap());

    // One signature per work, its counts the ranks' sum, each rank's share kept.
    let one = read(&d.join("s0.json"));
    let merged = read(&d.join("job.json"));
    assert_eq!(merged.signatures.len(), one.signatures.len());
    assert_eq!(merged.ranks.len(), 2);
    assert_eq!(merged.ranks[1].source.path, "rank1.json.gz");
    assert_eq!(merged.ranks[0].total, one.summary.total);
    assert_eq!(
        merged.summary.total.invocations,
        2 * one.summary.total.invocations
    );
    for (signature, alone) in merged.signatures.iter().zip(&one.signatures) {
        assert_eq!(signature.id, alone.id);
        assert_eq!(signature.count, 2 * alone.count);
        assert_eq!(signature.ranks.len(), 2);
        assert_eq!(signature.ranks[1].rank, 1);
        assert_eq!(signature.ranks[1].count, alone.count);
        assert_eq!(signature.ranks[1].total_us, alone.trace_total_us);
        assert_eq!(signature.trace_mean_us, alone.trace_mean_us);
    }
    assert_eq!(
        merged.source.linking.gpu_activities,
        merged.summary.total.invocations
    );
    // A single trace's file has no per-rank lists: it reads and writes as before.
    let text: Value = serde_json::from_slice(&std::fs::read(d.join("s0.json")).unwrap()).unwrap();
    assert!(text.get("ranks").is_none());
    assert!(text["signatures"][0].get("ranks").is_none());
}

#[test]
fn merging_merged_files_equals_merging_their_ranks_at_once() {
    // Three traces that record no rank: the order given is the rank order.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = [
        "h100_bert_small_infer",
        "h100_vit_infer",
        "a100_triton_example",
    ];
    for (i, name) in names.iter().enumerate() {
        std::fs::copy(
            shared_traces().join(format!("{name}.json.gz")),
            d.join(format!("r{i}.json.gz")),
        )
        .unwrap();
    }
    run_ok(
        d,
        &[
            "classify",
            "--trace",
            "r0.json.gz",
            "r1.json.gz",
            "r2.json.gz",
            "--out",
            "all.json",
        ],
    );
    run_ok(
        d,
        &[
            "classify",
            "--trace",
            "r0.json.gz",
            "r1.json.gz",
            "--out",
            "first_two.json",
        ],
    );
    run_ok(
        d,
        &["classify", "--trace", "r2.json.gz", "--out", "third.json"],
    );
    run_ok(
        d,
        &[
            "merge",
            "first_two.json",
            "third.json",
            "--out",
            "merged.json",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("all.json")).unwrap(),
        std::fs::read(d.join("merged.json")).unwrap()
    );
    let all = read(&d.join("all.json"));
    let ranks: Vec<u32> = all.ranks.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, [0, 1, 2]);
    assert_eq!(all.ranks[2].source.path, "r2.json.gz");
}

#[test]
fn another_jobs_trace_a_rank_claimed_twice_and_an_empty_glob_exit_2_naming_the_file() {
    let dir = two_ranks();
    let d = dir.path();
    let other = shared_traces().join("a100_train_cudagraph_rank0.json.gz");
    let other = other.to_str().unwrap();
    let err = run_refused(
        d,
        &[
            "classify",
            "--trace",
            "rank0.json.gz",
            other,
            "--out",
            "job.json",
        ],
    );
    assert!(err.contains("a100_train_cudagraph_rank0.json.gz"), "{err}");
    assert!(err.contains("world_size is 16"), "{err}");
    assert!(!d.join("job.json").exists(), "nothing half-written");

    // The same rank in a file of other bytes (recompressed).
    let bytes = std::fs::read(d.join("rank1.json.gz")).unwrap();
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut plain).unwrap();
    std::fs::write(d.join("again1.json"), plain).unwrap();
    let err = run_refused(d, &["predict", "--trace", "rank*.json.gz", "again1.json"]);
    assert!(err.contains("again1.json: claims rank 1"), "{err}");

    let err = run_refused(d, &["classify", "--trace", "node*.json.gz"]);
    assert!(err.contains("node*.json.gz: no file matches"), "{err}");

    let err = run_refused(
        d,
        &[
            "predict",
            "--trace",
            "rank*.json.gz",
            "--what-if",
            "tier2*0.5",
        ],
    );
    assert!(err.contains("--what-if works on one trace"), "{err}");

    // Per-rank files of another job are refused by merge as well.
    run_ok(
        d,
        &["classify", "--trace", "rank0.json.gz", "--out", "s0.json"],
    );
    run_ok(d, &["classify", "--trace", other, "--out", "other.json"]);
    let err = run_refused(d, &["merge", "s0.json", "other.json", "--out", "m.json"]);
    assert!(err.contains("other.json: a trace of another job"), "{err}");
    assert!(!d.join("m.json").exists());
}

#[test]
fn predict_over_ranks_matches_the_nccl_collectives_by_group_and_order() {
    let dir = two_ranks();
    let text = run_ok(
        dir.path(),
        &["predict", "--trace", "rank*.json.gz", "--json"],
    );
    let job: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(job["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(job["ranks"][1]["rank"], 1);
    // Both ranks ran the same program: no one trails.
    assert_eq!(job["straggler"]["behind_median_us"], 0.0);
    let collectives = &job["collectives"];
    // The trace records process groups but no Seq (PyTorch 2.0): matched by order.
    assert_eq!(collectives["matched_by"], "order");
    let group = &collectives["process_groups"][0];
    assert_eq!(group["name"], "0");
    assert_eq!(group["ranks"], serde_json::json!([0, 1]));
    // 15 all-reduces and 6 broadcasts on each rank.
    assert_eq!(group["matched"], 21);
    assert_eq!(group["unmatched"], 0);
    assert_eq!(job["steps"].as_array().unwrap().len(), 3);

    let text = run_ok(dir.path(), &["predict", "--trace", "rank*.json.gz"]);
    assert!(text.contains("straggler: rank 0"), "{text}");
    assert!(text.contains("21 matched across the ranks"), "{text}");
}

/// Rank 1 of the job, made from rank 0 with its clock 10 % slower from its first event:
/// every step takes 10 % longer, and each collective starts and ends later.
fn stretched(trace: &trace::Trace) -> trace::Trace {
    let mut slow = trace.clone();
    let t0 = slow.events.iter().map(|e| e.ts_ns).min().unwrap();
    let stretch = |t: i64| t0 + (t - t0) * 11 / 10;
    for event in &mut slow.events {
        let end = stretch(event.end_ns());
        event.ts_ns = stretch(event.ts_ns);
        event.dur_ns = end - event.ts_ns;
    }
    slow
}

#[test]
fn a_rank_ten_percent_slower_is_the_straggler_of_every_step() {
    let rank0 = trace::load(&nccl_rank0()).unwrap();
    let rank1 = stretched(&rank0);
    let kernels0 = collectives::read(&nccl_rank0()).unwrap();
    assert_eq!(kernels0.len(), 21);
    assert!(kernels0
        .iter()
        .all(|k| k.process_group.as_deref() == Some("0") && k.seq.is_none()));
    let base = rank0.metadata.base_time_ns.unwrap_or(0);
    let t0 = base + rank0.events.iter().map(|e| e.ts_ns).min().unwrap();
    let kernels1: Vec<CollectiveKernel> = kernels0
        .iter()
        .map(|k| CollectiveKernel {
            start_ns: t0 + (k.start_ns - t0) * 11 / 10,
            end_ns: t0 + (k.end_ns - t0) * 11 / 10,
            ..k.clone()
        })
        .collect();
    let rank = |n: u32, trace: &trace::Trace, kernels: Vec<CollectiveKernel>| {
        let prediction = predict::self_check(trace).unwrap();
        RankPrediction {
            rank: n,
            trace: format!("rank{n}"),
            step_statistics: Some(StepStatistics::of(&prediction)),
            prediction,
            collectives: kernels,
        }
    };
    let job = JobPrediction::new(vec![rank(1, &rank1, kernels1), rank(0, &rank0, kernels0)]);
    assert_eq!(job.ranks[0].rank, 0);
    let straggler = &job.straggler;
    assert_eq!(straggler.rank, 1);
    // Slowest 1.1, median (1 + 1.1) / 2: 4.76 % behind it.
    assert!(
        (straggler.behind_median_percent - 100.0 * (1.1 / 1.05 - 1.0)).abs() < 0.01,
        "{straggler:?}"
    );
    assert!(job.steps.iter().all(|s| s.slowest_rank == 1));
    assert_eq!(job.collectives.matched_by, MatchedBy::Order);
    assert_eq!(job.collectives.process_groups[0].matched, 21);
    // Rank 1's collectives end later and later: its clock offset is positive.
    assert!(job.collectives.ranks[1].clock_offset_us > 0.0);
    let text = job.summary();
    assert!(text.contains("straggler: rank 1"), "{text}");
}

#[test]
fn predict_steps_all_names_the_outlying_step_of_the_cudagraph_trace() {
    let trace = shared_traces().join("a100_train_cudagraph_rank0.json.gz");
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        dir.path(),
        &[
            "predict",
            "--trace",
            trace.to_str().unwrap(),
            "--steps",
            "all",
            "--json",
        ],
    );
    let out: Value = serde_json::from_str(&text).unwrap();
    let stats = &out["step_statistics"];
    assert_eq!(stats["steps"], 5);
    // ProfilerStep#550..554 measure 209748, 216483, 216119, 215467, 216216 us.
    assert_eq!(stats["median_measured_us"], 216119.0);
    assert_eq!(stats["min_measured_us"], 209748.0);
    let outliers = stats["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 1, "{stats}");
    assert_eq!(outliers[0]["step"], 550);
    // Without --steps all, the report is as before.
    let plain = run_ok(
        dir.path(),
        &["predict", "--trace", trace.to_str().unwrap(), "--json"],
    );
    assert!(!plain.contains("step_statistics"));
    let text = run_ok(
        dir.path(),
        &[
            "predict",
            "--trace",
            trace.to_str().unwrap(),
            "--steps",
            "all",
        ],
    );
    assert!(
        text.contains("outlier: step 550 (ProfilerStep#550)"),
        "{text}"
    );
}
