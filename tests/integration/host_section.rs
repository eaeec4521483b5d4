//! The calibration profile's `host` section (issue 50), measured for real on this CPU: through
//! `replay calibrate --host-only` as a user runs it (figures positive, finite and plausible,
//! the CUDA-only costs unmeasured, the profile read back by the core), and in process, where
//! the timed figures must follow the work timed (a module of 200 ops costs several times one of
//! 40): a measurement without its timer fails it.

use std::path::Path;

use crate::common::replay;
use predicates::prelude::*;
use replay::device::{CpuInfo, Device};
use replay::host::{interpreter, timing::Plan};
use replay_core::results::calibration::Profile;

fn plausible(what: &str, us: f64) {
    // A view is a TensorImpl made and freed: more than 10 ns, far less than 100 µs.
    assert!(
        us.is_finite() && us > 0.01 && us < 100.0,
        "{what}: {us} µs is no plausible host cost of one call"
    );
}

#[test]
fn calibrate_host_only_measures_the_host_on_the_cpu_into_a_profile_that_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profiles/host.json");
    replay()
        .args(["calibrate", "--host-only", "--device", "cpu", "-q", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "host, without the profiler (cpu on ",
        ))
        .stdout(predicate::str::contains("interpreter per op (TorchScript)"));
    let profile = Profile::read(&out).expect("the core reads the profile");
    // Resumed, the finished item is taken back from the journal, not measured again: the same
    // figures to the last bit.
    replay()
        .args([
            "calibrate",
            "--host-only",
            "--device",
            "cpu",
            "-q",
            "--resume",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(Profile::read(&out).unwrap().host, profile.host);
    assert!(profile.operation_profiles.is_empty() && profile.fusion_profiles.is_empty());
    assert!(profile.failures.is_empty(), "{:?}", profile.failures);
    let host = profile.host.expect("a host section");
    assert_eq!(host.machine.device, "cpu");
    assert_eq!(host.machine.cpu, CpuInfo::detect().model);
    assert!(!host.machine.torch.is_empty() && host.machine.driver.is_empty());
    assert!(
        host.source.starts_with("measured by replay calibrate"),
        "{}",
        host.source
    );
    assert!(host.is_usable(), "{host:?}");

    for op in [
        "aten::view",
        "aten::reshape",
        "aten::select",
        "aten::slice",
        "aten::t",
    ] {
        plausible(op, host.ops_us[op]);
    }
    assert_eq!(host.ops_us.len(), 14, "{:?}", host.ops_us.keys());
    for (op, us) in &host.ops_us {
        plausible(op, *us);
    }
    // One event for a view; an op that calls others records them too.
    assert_eq!(host.ops_events["aten::view"], 1.0);
    assert_eq!(host.ops_events["aten::reshape"], 2.0);
    assert_eq!(host.ops_events["aten::t"], 3.0);
    plausible("dispatch", host.dispatch_us_per_op.unwrap());
    plausible("interpreter", host.interpreter_us_per_op.unwrap());
    let per_event = host.profiler_us_per_cpu_event.unwrap();
    assert!(
        per_event.is_finite() && per_event > 0.0 && per_event < 1000.0,
        "{per_event}"
    );
    assert!(host.profiler_us_per_session.is_some_and(f64::is_finite));

    // What only a GPU has stays unmeasured on the CPU.
    for (what, cost) in [
        ("launch", host.launch_us),
        ("launching op", host.launch_op_us),
        ("sync", host.sync_us),
        ("pinned copy", host.copy_pinned_us),
        ("pageable copy", host.copy_pageable_us),
        ("runtime event", host.profiler_us_per_runtime_event),
    ] {
        assert_eq!(cost, None, "{what} on the CPU");
    }
    // Each figure says how it was had: its spread and its samples.
    for field in [
        "ops_us",
        "dispatch_us_per_op",
        "interpreter_us_per_op",
        "profiler_us_per_cpu_event",
    ] {
        let note = &host.notes[field];
        assert!(note.contains("µs"), "{field}: {note}");
    }
    assert!(host.notes["ops_us"].contains("p10–p90"));
    assert!(host.notes["interpreter_us_per_op"].contains("samples of"));
    assert!(host.notes["profiler_us_per_cpu_event"].contains("100 % of the op events with shapes"));
}

#[test]
fn host_only_refuses_other_operations_and_a_cuda_host_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    replay()
        .args([
            "calibrate",
            "--host-only",
            "--operations",
            "matmul",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--host-only"));
    if !crate::common::has_nvidia_driver() {
        replay()
            .args(["calibrate", "--host-only", "--device", "cuda", "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("libcuda.so not found"));
    }
    assert!(!Path::new(&out).exists());
}

#[test]
fn the_interpreter_figures_follow_the_work_they_time() {
    let plan = Plan {
        rounds: 2,
        ..Plan::SHORT_CALLS
    };
    let cost = interpreter::measure_interpreter(Device::host(), &plan).unwrap();
    // 200 ops against 40: about five times the work, timed as such (a figure that timed
    // nothing, or the wrong thing, fails here).
    for (what, short, long) in [
        ("scripted", &cost.scripted_short, &cost.scripted_long),
        ("direct", &cost.direct_short, &cost.direct_long),
    ] {
        let ratio = long.median_us / short.median_us;
        assert!((2.5..10.0).contains(&ratio), "{what}: {short:?} {long:?}");
        for f in [short, long] {
            assert!(f.p10_us <= f.median_us && f.median_us <= f.p90_us, "{f:?}");
            assert_eq!(f.round_medians_us.len(), 2);
            // Each round takes its minimum of samples unless the machine is so loaded that
            // the hard cap on time ends it first.
            assert!(f.samples >= 2, "{f:?}");
        }
    }
    // The interpreter costs something per op, and less than a whole op does called directly
    // plus the interpreter's own work on top.
    let per_op = cost.per_op.value;
    plausible("interpreter", per_op);
    assert!(
        per_op < cost.scripted_long.median_us / 200.0,
        "{per_op} µs per op of a forward at {} µs for 200 ops",
        cost.scripted_long.median_us
    );
}
