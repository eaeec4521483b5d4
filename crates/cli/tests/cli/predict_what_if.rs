//! `replay predict --what-if` and `--perfetto` on a small Kineto trace whose timeline is
//! worked out by hand, each expression's step time derived in the comments; then the same
//! options through the real executable: the answers beside the original, malformed
//! expressions refused with what is accepted, and the Perfetto file read back by
//! `replay classify`.

use std::path::{Path, PathBuf};
use std::process::Command;

use replay_core::predict::{
    self, run_what_ifs, Durations, SignatureCatalog, Timeline, WhatIf, WhatIfTimeline,
};
use replay_core::signature::{self, SignatureFile, Tier};
use replay_core::trace::{self, Nanos, Trace};

const US: Nanos = 1000;

/// One thread, one stream (7), a 100 µs step:
/// - `aten::mm` launches a GEMM 10-15, which runs 16-56 (40 µs);
/// - `aten::relu` launches its kernel 25-30, which runs 56-76 (20 µs) behind the GEMM;
/// - `aten::copy_` launches a pinned device-to-host copy 40-45, which runs 76-86 (10 µs);
/// - `cudaStreamSynchronize` 60-88 waits for the copy (86) and returns 2 µs later;
/// - 12 µs of framework time end the step at 100.
///
/// The skeleton: gap 10, launch 5, gap 10, launch 5, gap 10, launch 5, gap 15, wait (2 µs
/// after), gap 12. The GEMM starts 1 µs after its launch (the trace's launch latency, which
/// the other two, held by the stream, take as their typical latency); the relu and the copy
/// start right behind the work before them on the stream.
const TRACE: &str = r#"{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 9, "dur": 7, "args": {"Input Dims": [[8, 16], [16, 32]], "Input type": ["float", "float"]}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x32_nn", "pid": 0, "tid": 7, "ts": 16, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 24, "dur": 7, "args": {"Input Dims": [[8, 32]], "Input type": ["float"]}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 25, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "vectorized_relu_kernel", "pid": 0, "tid": 7, "ts": 56, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 2}},
{"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": 39, "dur": 7, "args": {}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 40, "dur": 5, "args": {"correlation": 3}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 76, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 3, "bytes": 4096}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 60, "dur": 28, "args": {"correlation": 4}},
{"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 61, "dur": 25, "args": {"device": 0, "stream": 7, "correlation": 4}}
]}"#;

fn load() -> Trace {
    trace::load_bytes(TRACE.as_bytes().to_vec(), Path::new("what-if.json"))
        .unwrap_or_else(|e| panic!("hand-written trace: {e}"))
}

fn classified(trace: &Trace) -> SignatureFile {
    signature::classify(trace, Path::new("what-if.json"))
}

fn original(trace: &Trace) -> Timeline {
    let skeleton = predict::skeleton(trace).unwrap_or_else(|e| panic!("{e}"));
    Timeline::simulate("original", skeleton, &Durations::trace_own())
}

fn parse(expressions: &[&str]) -> Vec<WhatIf> {
    expressions
        .iter()
        .map(|e| e.parse().unwrap_or_else(|err| panic!("{e}: {err}")))
        .collect()
}

/// Each expression's answer (applied in order), as (predicted step µs, durations changed).
fn answers(expressions: &[&str]) -> Vec<(f64, u64)> {
    let trace = load();
    let catalog = SignatureCatalog::from_file(&classified(&trace));
    run_what_ifs(&original(&trace), &parse(expressions), &catalog)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|answer: &WhatIfTimeline| {
            let simulated = &answer.timeline.simulation.steps[0];
            (simulated.predicted_ns as f64 / US as f64, answer.changed)
        })
        .collect()
}

/// Each expression on its own.
fn alone(expression: &str) -> (f64, u64) {
    answers(&[expression])[0]
}

#[test]
fn the_hand_written_trace_is_what_the_comments_say() {
    let trace = load();
    let timeline = original(&trace);
    let simulated = &timeline.simulation.steps[0];
    let spans: Vec<(Nanos, Nanos)> = simulated
        .activities
        .iter()
        .map(|i| (i.start_ns / US, i.end_ns / US))
        .collect();
    assert_eq!(spans, vec![(16, 56), (56, 76), (76, 86)]);
    assert_eq!(simulated.predicted_ns, 100 * US);
    assert_eq!(timeline.skeleton.steps[0].threads[0].items.len(), 9);
    let tiers: Vec<(String, Tier)> = classified(&trace)
        .signatures
        .iter()
        .map(|s| (s.name.clone(), s.tier))
        .collect();
    assert!(
        tiers.contains(&("ampere_sgemm_64x32_nn".into(), Tier::Gemm)),
        "{tiers:?}"
    );
    assert!(
        tiers.contains(&("vectorized_relu_kernel".into(), Tier::Op)),
        "{tiers:?}"
    );
    assert!(
        tiers.contains(&("Memcpy DtoH (Device -> Pinned)".into(), Tier::Copy)),
        "{tiers:?}"
    );
}

#[test]
fn a_faster_tier_shortens_the_step_as_far_as_the_stream_lets_it() {
    // GEMM 20 µs: 16-36; relu 36-56 behind it; copy 56-66; the sync from 60 returns at
    // 68; 12 µs more: 80.
    assert_eq!(alone("tier2*0.5"), (80.0, 1));
    // The same GEMM chosen by its op, or by its kernel's name.
    assert_eq!(alone("op:aten::mm*0.5"), (80.0, 1));
    assert_eq!(alone("kernel:sgemm*0.5"), (80.0, 1));
    // relu 40 µs: 56-96; copy 96-106; the sync returns at 108; 120.
    assert_eq!(alone("kernel:relu*2"), (120.0, 1));
    assert_eq!(alone("tier3*2"), (120.0, 1));
    // The copy 30 µs: 76-106; the sync returns at 108; 120.
    assert_eq!(alone("tier1*3"), (120.0, 1));
    // A pattern that finds nothing changes nothing, and says so.
    assert_eq!(alone("op:aten::conv2d*0.5"), (100.0, 0));
}

#[test]
fn host_time_and_launches_move_the_work_they_release() {
    // Every host item halved: gap 0-5, launch 5-7.5 (GEMM 8.5-48.5), gap -12.5, launch
    // -15 (relu 48.5-68.5), gap -20, launch -22.5 (copy 68.5-78.5), gap -30, the sync
    // waits until 78.5 and returns 1 µs later (79.5), gap 6: 85.5. All 9 items changed.
    assert_eq!(alone("host*0.5"), (85.5, 9));
    // Launches free (CUDA Graphs): gap 0-10, the GEMM 11-51 (the GPU's 1 µs latency
    // stays), relu 51-71, copy 71-81; the host reaches the sync at 45, which returns at
    // 83; 95.
    assert_eq!(alone("launch=0"), (95.0, 3));
    assert_eq!(alone("launch*0"), (95.0, 3));
    // Launches 10 µs: GEMM 21-61 (launch 10-20), relu 61-81, copy 81-91; the host: gap
    // 10, launch 10, gap 10, launch 10, gap 10, launch 10, gap 15: the sync from 75 waits
    // until 91, returns at 93; 105.
    assert_eq!(alone("launch=10"), (105.0, 3));
}

#[test]
fn expressions_apply_in_order_each_on_top_of_the_ones_before() {
    // tier2*0.5 (80), then free launches on top: GEMM 11-31, relu 31-51, copy 51-61; the
    // sync from 45 returns at 63; 75.
    assert_eq!(
        answers(&["tier2*0.5", "launch=0"]),
        vec![(80.0, 1), (75.0, 3)]
    );
}

#[test]
fn a_factor_of_one_changes_nothing() {
    let trace = load();
    let original = original(&trace);
    let catalog = SignatureCatalog::from_file(&classified(&trace));
    for expression in [
        "tier1*1",
        "tier2*1",
        "tier3*1",
        "kernel:.*1",
        "op:aten*1",
        "host*1",
        "launch*1",
    ] {
        let answer = run_what_ifs(&original, &parse(&[expression]), &catalog)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            answer[0].timeline.simulation, original.simulation,
            "{expression}"
        );
        assert_eq!(
            answer[0].timeline.skeleton, original.skeleton,
            "{expression}"
        );
    }
}

/// An `isolated.json` in which the GEMM replayed in `gemm_us` and the relu is `unsupported`.
fn isolated_json(dir: &Path, trace: &Trace, gemm_us: f64) -> PathBuf {
    let file = classified(trace);
    let results: Vec<serde_json::Value> = file
        .signatures
        .iter()
        .filter(|s| s.tier != Tier::Copy)
        .map(|s| {
            let gemm = s.tier == Tier::Gemm;
            serde_json::json!({"id": s.id, "tier": s.tier, "name": s.name, "op": null,
                "count": s.count, "trace_mean_us": s.trace_mean_us,
                "trace_total_us": s.trace_total_us,
                "status": if gemm { "ok" } else { "unsupported" }, "method": "m",
                "reason": if gemm { None } else { Some("not replayable") },
                "replayed_as": s.id, "share": 1.0,
                "predicted_us": if gemm { Some(gemm_us) } else { None },
                "host_us": null, "stats": null})
        })
        .collect();
    let total = results.len();
    let json = serde_json::json!({"schema_version": 1, "tool": "replay", "device": "cpu",
        "signatures_file": "s.json", "config": {"cold": false, "max_time_per_kernel_s": 0.1,
        "noise_target": 0.005, "min_samples": 5, "rounds": 1}, "signatures_total": total,
        "complete": true, "results": results});
    let path = dir.join("isolated.json");
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    path
}

#[test]
fn durations_from_an_isolated_file_replace_the_replayed_signatures_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = isolated_json(dir.path(), &load(), 10.0);
    // GEMM 10 µs: 16-26; relu (not replayed: its trace's 20 µs) from its launch 31-51;
    // copy 51-61; the sync from 60 returns at 63; 75.
    assert_eq!(alone(&format!("durations={}", path.display())), (75.0, 1));
    // A file that is not there is the user's to fix.
    let trace = load();
    let missing = parse(&["durations=/nonexistent/isolated.json"]);
    let error = run_what_ifs(&original(&trace), &missing, &SignatureCatalog::default())
        .expect_err("a missing file");
    assert!(error.is_usage_error(), "{error}");
    assert!(
        error.to_string().contains("/nonexistent/isolated.json"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------------
// Through the executable
// ---------------------------------------------------------------------------------------

fn replay() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replay"));
    cmd.env_remove("REPLAY_TORCH_BIN");
    cmd
}

fn written_trace(dir: &Path) -> PathBuf {
    let path = dir.join("what-if.json");
    std::fs::write(&path, TRACE).unwrap();
    path
}

#[test]
fn predict_prints_each_answer_beside_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let trace = written_trace(dir.path());
    let out = replay()
        .arg("predict")
        .arg("--trace")
        .arg(&trace)
        .args(["--what-if", "tier2*0.5", "--what-if", "launch=0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |start: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}` line in:\n{stdout}"))
            .to_owned()
    };
    assert!(line("original").contains("100.0 us"), "{stdout}");
    let tier2 = line("tier2*0.5");
    assert!(
        tier2.contains("80.0 us") && tier2.contains("-20.0 %"),
        "{stdout}"
    );
    let launch = line("launch=0");
    assert!(
        launch.contains("75.0 us") && launch.contains("-25.0 %"),
        "{stdout}"
    );

    let out = replay()
        .arg("predict")
        .arg("--trace")
        .arg(&trace)
        .args(["--what-if", "tier2*0.5", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The prediction's own fields stay, the answers come beside them.
    assert_eq!(json["predicted_us"], 100.0);
    assert_eq!(json["measured_us"], 100.0);
    let answer = &json["what_ifs"][0];
    assert_eq!(answer["expression"], "tier2*0.5");
    assert_eq!(answer["predicted_us"], 80.0);
    assert_eq!(answer["original_us"], 100.0);
    assert_eq!(answer["change_percent"], -20.0);
    assert_eq!(answer["changed_durations"], 1);

    // Without a what-if the JSON is the prediction alone, as before.
    let out = replay()
        .arg("predict")
        .arg("--trace")
        .arg(&trace)
        .arg("--json")
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json.get("what_ifs").is_none(), "{json}");
}

#[test]
fn a_malformed_expression_exits_2_and_says_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let trace = written_trace(dir.path());
    for expression in [
        "tier4*0.5",
        "tier2",
        "kernel:(gemm*2",
        "host*-1",
        "launch=x",
    ] {
        let out = replay()
            .arg("predict")
            .arg("--trace")
            .arg(&trace)
            .args(["--what-if", expression])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{expression}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expression), "{expression}: {stderr}");
        assert!(
            stderr.contains(
                "accepted: tier1*F, tier2*F, tier3*F, kernel:REGEX*F, op:REGEX*F, host*F"
            ),
            "{expression}: {stderr}"
        );
    }
    // A durations file that is not there: exit 2, naming it.
    let out = replay()
        .arg("predict")
        .arg("--trace")
        .arg(&trace)
        .args(["--what-if", "durations=/nonexistent/isolated.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/isolated.json"));
}

#[test]
fn the_perfetto_file_is_a_trace_that_classify_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let trace = written_trace(dir.path());
    let exported = dir.path().join("timeline.json");
    let out = replay()
        .arg("predict")
        .arg("--trace")
        .arg(&trace)
        .args(["--what-if", "tier2*0.5", "--perfetto"])
        .arg(&exported)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&exported).unwrap()).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents");
    let of = |ph: &str, cat: &str, pid: u64| {
        events
            .iter()
            .filter(|e| e["ph"] == ph && (cat.is_empty() || e["cat"] == cat) && e["pid"] == pid)
            .collect::<Vec<_>>()
    };
    // The original and the what-if, side by side as two processes.
    let processes: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(processes.len(), 2, "{processes:?}");
    assert!(processes[1].contains("tier2*0.5"), "{processes:?}");
    for pid in [1, 2] {
        // Three launches, three pieces of GPU work, an arrow from each launch to its work.
        assert_eq!(of("X", "kernel", pid).len(), 2);
        assert_eq!(of("X", "gpu_memcpy", pid).len(), 1);
        assert_eq!(of("s", "ac2g", pid).len(), 3);
        assert_eq!(of("f", "ac2g", pid).len(), 3);
        // Every complete event has a place and a length.
        for event in of("X", "", pid) {
            assert!(
                event["ts"].as_f64().is_some() && event["dur"].as_f64().is_some(),
                "{event}"
            );
        }
        // The step is GPU-bound through its three pieces of work: all on the critical path.
        let critical = events
            .iter()
            .filter(|e| e["pid"] == pid && e["args"]["critical"] == true)
            .count();
        assert!(critical >= 3, "pid {pid}: {critical} critical events");
        assert!(!of("X", "critical_path", pid).is_empty());
    }
    // The what-if's GEMM is half the original's, where the simulation put it.
    let gemm = |pid| {
        of("X", "kernel", pid)
            .into_iter()
            .find(|e| e["name"] == "ampere_sgemm_64x32_nn")
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .unwrap()
    };
    assert_eq!(gemm(1), (16.0, 40.0));
    assert_eq!(gemm(2), (16.0, 20.0));

    // `replay classify` reads it back: the same three signatures, each twice (once per
    // process), their work linked to its launch call and op.
    let signatures = dir.path().join("readback.json");
    let out = replay()
        .arg("classify")
        .arg("--trace")
        .arg(&exported)
        .arg("--out")
        .arg(&signatures)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = replay_core::signature::read_file(&signatures).unwrap();
    let mut names: Vec<(String, u64, Option<String>)> = file
        .signatures
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.count,
                s.op.as_ref().map(|o| o.name.clone()),
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            (
                "Memcpy DtoH (Device -> Pinned)".to_owned(),
                2,
                Some("aten::copy_".to_owned())
            ),
            (
                "ampere_sgemm_64x32_nn".to_owned(),
                2,
                Some("aten::mm".to_owned())
            ),
            (
                "vectorized_relu_kernel".to_owned(),
                2,
                Some("aten::relu".to_owned())
            ),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// The shared traces
// ---------------------------------------------------------------------------------------

/// `../shared/traces/kineto/*.json.gz`, beside the project root; all ten must be there.
fn shared_traces() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kineto");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".json.gz"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 10,
        "expected the 10 shared traces: {paths:?}"
    );
    paths
}

#[test]
fn on_every_shared_trace_a_factor_of_one_changes_nothing_and_the_export_reads_back() {
    for path in shared_traces() {
        let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let file = signature::classify(&trace, &path);
        let catalog = SignatureCatalog::from_file(&file);
        let original = original(&trace);
        let unchanged = parse(&["tier1*1", "tier2*1", "tier3*1", "host*1", "launch*1"]);
        let answers = run_what_ifs(&original, &unchanged, &catalog).unwrap();
        for answer in &answers {
            assert_eq!(
                answer.timeline.simulation,
                original.simulation,
                "{}: {}",
                path.display(),
                answer.timeline.name
            );
        }
        // Every piece of GPU work (or top-level op) of every step, once per timeline.
        let halved = run_what_ifs(&original, &parse(&["tier3*0.5"]), &catalog).unwrap();
        let exported = replay_core::export::perfetto::chrome_trace(
            &[&original, &halved[0].timeline],
            &catalog,
        );
        let reread = trace::load_bytes(
            serde_json::to_vec(&exported).unwrap(),
            Path::new("exported.json"),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let units = |t: &Trace| -> u64 {
            signature::classify(t, Path::new("t.json"))
                .signatures
                .iter()
                .map(|s| s.count)
                .sum()
        };
        let steps = &original.skeleton.steps;
        let work: usize = steps
            .iter()
            .map(|s| s.activities.len() + s.host_op_count())
            .sum();
        assert_eq!(
            units(&reread),
            2 * work as u64,
            "{}: every activity once per timeline",
            path.display()
        );
    }
}
