//! `replay --help`, `replay devices` and `--device` handling, through the real binary.

use crate::common;

use common::{has_nvidia_driver, replay};
use predicates::prelude::*;

#[test]
fn help_lists_the_commands() {
    replay()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("devices"))
        .stdout(predicate::str::contains("four tiers"));
}

#[test]
fn version_prints() {
    replay()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("replay "));
}

#[test]
fn devices_mentions_the_cpu_and_libtorch() {
    let out = replay()
        .arg("devices")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("cpu "), "{text}");
    assert!(text.contains("logical"), "{text}");
    assert!(text.contains("libtorch"), "{text}");
    assert!(
        text.contains("kernels    blocking, l2_flush"),
        "the CUDA kernels must be embedded: {text}"
    );
}

#[test]
fn devices_json_is_machine_readable() {
    let out = replay()
        .args(["devices", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(json["cpu"]["logical_cores"].as_u64().unwrap() >= 1);
    assert_eq!(json["embedded_kernels"]["available"], true);
    assert!(json["embedded_kernels"]["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "sm_90"));
}

#[test]
fn devices_says_why_there_is_no_cuda_device() {
    if has_nvidia_driver() {
        // Only meaningful without a GPU. With one, selftest check "CUDA device attributes"
        // holds what `devices` lists for the device against what a real GPU has.
        return;
    }
    replay()
        .arg("devices")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "no CUDA device: libcuda.so not found: no NVIDIA driver on this machine",
        ));
}

#[test]
fn device_cuda_without_a_gpu_exits_2_with_the_reason() {
    if has_nvidia_driver() {
        // With a GPU, selftest check "cuda:N past the last device refused" opens a device
        // that is not there and wants the usage error (exit 2) with the device count.
        return;
    }
    for spec in ["cuda", "cuda:0", "cuda:3"] {
        replay()
            .args(["devices", "--device", spec])
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(
                "libcuda.so not found: no NVIDIA driver on this machine",
            ))
            .stderr(predicate::str::contains("panicked").not());
    }
}

#[test]
fn device_cpu_opens() {
    replay()
        .args(["devices", "--device", "cpu"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("cpu ("));
}

#[test]
fn bad_device_values_exit_2_with_a_message() {
    for bad in ["tpu", "cuda:x", "cpu:1", ""] {
        replay()
            .args(["devices", "--device", bad])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("expected cpu, cuda or cuda:N"));
    }
}

#[test]
fn selftest_on_cpu_passes_every_tier() {
    replay()
        .args(["selftest", "--device", "cpu"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tier 1  pass"))
        .stdout(predicate::str::contains("tier 2  pass"))
        .stdout(predicate::str::contains("tier 3  pass"))
        .stdout(predicate::str::contains(
            "cpu scan kernel, Entropy forward and backward",
        ))
        .stdout(predicate::str::contains(
            "mhc fused CPU stages vs torch, bfloat16",
        ))
        .stdout(predicate::str::contains("13 passed, 0 failed"));
}

#[test]
fn selftest_on_cuda_without_a_gpu_says_so() {
    if has_nvidia_driver() {
        // With a GPU the CUDA selftest runs instead; what the device it opened must look
        // like is selftest check "CUDA device attributes".
        return;
    }
    replay()
        .args(["selftest", "--device", "cuda"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("libcuda.so not found"));
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // `replay ... | head` closes the pipe early: the rest of the output must not panic.
    use std::io::Read as _;
    use std::process::{Command, Stdio};
    let trace = common::shared_traces().join("h100_vit_infer.json.gz");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("replay"))
        .args(["classify", "--json", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("sigs.json"))
        .arg("--trace")
        .arg(&trace)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}
