//! `replay sequence`'s step in real time on the CPU: the rebuilt ops called back to back with
//! one timing around the whole step, beside the per-op runs, and replay's own cost per op
//! measured; on bloom-tiny's step (91 ops, none a fifth of it) with its own inputs
//! and with the model's data flow, and on the one-layer GPT-2 recorded on this CPU.

use std::path::Path;

use crate::common::{bloom_tiny_et_pair, replay};
use predicates::prelude::*;
use replay_core::results::sequence::SequenceResults;

/// `replay sequence` on the CPU on one thread (two OpenMP workers on this 2-core machine
/// fight whatever else runs for the cores, in 8 ms time slices), with `extra` arguments.
fn sequence(trace: &Path, out: &Path, extra: &[&std::ffi::OsStr]) -> assert_cmd::assert::Assert {
    replay()
        .args([
            "sequence",
            "--device",
            "cpu",
            "--threads",
            "1",
            "--max-time",
            "2",
        ])
        .args(["--min-samples", "5", "--trace"])
        .arg(trace)
        .args(extra)
        .arg("--output-dir")
        .arg(out)
        .assert()
}

/// `sequence.json` read as the core's type, and the same file as plain JSON: it round-trips.
fn read_back(dir: &Path) -> SequenceResults {
    let bytes = std::fs::read(dir.join("sequence.json")).unwrap();
    let typed: SequenceResults = serde_json::from_slice(&bytes).unwrap();
    let plain: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), plain, "round trip");
    typed
}

/// The real-time step against the per-op runs of the same ops.
fn check_real_time(rerun: &SequenceResults) {
    let rt = rerun.real_time.as_ref().expect("a step in real time");
    let ran = rerun
        .entries
        .iter()
        .filter(|e| e.in_context.is_some())
        .count();
    assert_eq!(rt.ops, ran);
    let step = &rt.step_us;
    assert!(step.median_us.is_finite() && step.median_us > 0.0, "{rt:?}");
    assert!(
        step.p10_us <= step.median_us && step.median_us <= step.p90_us,
        "{rt:?}"
    );
    assert!(step.samples >= 5, "{rt:?}");
    assert!(rt.warmup_runs >= 1, "{rt:?}");
    assert_eq!(rt.timer, "monotonic clock");
    assert_eq!(
        rt.host_us, rt.step_us,
        "on the CPU the host's time is the step"
    );
    // The same ops timed each in its place: the loop timed them all, within a sane ratio (a
    // loop that timed none, or half of these ops, falls below a half).
    let ops: f64 = rerun
        .entries
        .iter()
        .filter_map(|e| e.in_context.map(|s| s.median_us))
        .sum();
    let ratio = step.median_us / ops;
    assert!(
        (0.5..3.0).contains(&ratio),
        "real time {step:?} vs ops {ops}"
    );
    assert!((rt.ops_host_us - ops).abs() < 1e-6 * ops, "{rt:?} vs {ops}");
    let per_op = (rt.host_us.median_us - rt.ops_host_us) / rt.ops as f64;
    assert!(
        (rt.step_minus_ops_us_per_op - per_op).abs() < 1e-9,
        "{rt:?}"
    );
    // Replay's own cost per op: measured, not zero, below 50 us; the loop alone below it.
    assert!(
        rt.replay_overhead_us_per_op > 0.0 && rt.replay_overhead_us_per_op < 50.0,
        "{rt:?}"
    );
    assert!(rt.loop_us_per_op >= 0.0 && rt.loop_us_per_op < rt.replay_overhead_us_per_op);
    assert_eq!(rt.empty_op, "aten::size.int");
    assert!((rt.step_ops_us - (step.median_us + rerun.unrebuilt_trace_us)).abs() < 1e-9);
}

#[test]
fn the_bloom_tiny_step_runs_in_real_time_with_and_without_its_data_flow() {
    let (trace, et) = bloom_tiny_et_pair();
    for flow in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let extra: Vec<&std::ffi::OsStr> = if flow {
            vec!["--execution-trace".as_ref(), et.as_os_str()]
        } else {
            vec![]
        };
        sequence(&trace, dir.path(), &extra)
            .success()
            .stdout(predicate::str::contains("the step in real time"))
            .stdout(predicate::str::contains("replay's own cost per op"))
            .stdout(predicate::str::contains("one timing around the 91 ops"));
        let rerun = read_back(dir.path());
        assert_eq!(rerun.data_flow, flow);
        assert_eq!(rerun.entries.len(), 91);
        // No op of the step is a fifth of it, so a loop that timed only some of them would
        // show in the ratio `check_real_time` bounds. (The largest, the last `aten::linear`,
        // is 7.6-11.4 % of the ops' sum on this 2-core machine, the more under load: a tenth
        // failed when other builds ran beside the test.)
        let ops: f64 = rerun.entries.iter().map(|e| e.step_us()).sum();
        let largest = rerun
            .entries
            .iter()
            .map(|e| e.step_us())
            .fold(0.0, f64::max);
        assert!(largest < 0.2 * ops, "largest op {largest} us of {ops} us");
        check_real_time(&rerun);
    }
}

#[test]
fn the_gpt2_step_recorded_on_this_cpu_runs_in_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpt2_1layer_cpu_seq16.json.gz");
    sequence(&trace, dir.path(), &[]).success();
    let rerun = read_back(dir.path());
    check_real_time(&rerun);
    assert_eq!(rerun.real_time.as_ref().map(|r| r.ops), Some(53));
}
