//! The user's `replay` executable: the torch-free commands run in it, the libtorch ones are
//! handed to `replay-torch` with their arguments untouched.

use std::path::{Path, PathBuf};
use std::process::Command;

fn replay() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_replay"));
    cmd.env_remove("REPLAY_TORCH_BIN");
    cmd
}

fn shared_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/kineto")
        .join(name)
}

/// A stand-in `replay-torch` that prints its arguments one per line and exits with 7.
fn echo_torch_binary(dir: &Path) -> PathBuf {
    let path = dir.join("fake-replay-torch");
    std::fs::write(
        &path,
        "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\nexit 7\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn the_binary_does_not_link_libtorch() {
    // A dynamic dependency on libtorch would put its soname in the executable's string table.
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_replay")).unwrap();
    for soname in [
        &b"libtorch_cpu.so"[..],
        b"libc10.so",
        b"libcudart",
        b"libcuda.so",
    ] {
        assert!(
            !bytes.windows(soname.len()).any(|w| w == soname),
            "replay references {}",
            String::from_utf8_lossy(soname)
        );
    }
}

#[test]
fn libtorch_commands_are_forwarded_with_their_arguments_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let fake = echo_torch_binary(dir.path());
    let out = replay()
        .env("REPLAY_TORCH_BIN", &fake)
        .args(["compare", "--help", "--model", "a b.pt", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "compare\n--help\n--model\na b.pt\n-q\n"
    );
    for command in [
        "devices",
        "isolated",
        "selftest",
        "full",
        "export",
        "capture",
        "bench",
        "scan",
        "calibrate",
    ] {
        let out = replay()
            .env("REPLAY_TORCH_BIN", &fake)
            .arg(command)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{command}\n"));
    }
}

#[test]
fn a_missing_replay_torch_is_named_and_not_a_panic() {
    let out = replay()
        .env("REPLAY_TORCH_BIN", "/nonexistent/replay-torch")
        .args(["full", "--model", "m.pt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot run /nonexistent/replay-torch"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn trace_commands_run_here_without_replay_torch() {
    let dir = tempfile::tempdir().unwrap();
    let trace = shared_trace("h100_bert_small_infer.json.gz");
    let out = replay()
        .env("REPLAY_TORCH_BIN", "/nonexistent/replay-torch")
        .args(["predict", "--json", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let prediction: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(prediction["measured_us"].as_f64().unwrap() > 0.0);
    let signatures = dir.path().join("sigs.json");
    let out = replay()
        .env("REPLAY_TORCH_BIN", "/nonexistent/replay-torch")
        .args(["classify", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(&signatures)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(signatures.is_file());
}

#[test]
fn help_lists_every_command_and_version_is_the_workspace_version() {
    let out = replay().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for command in [
        "devices",
        "classify",
        "isolated",
        "selftest",
        "full",
        "export",
        "capture",
        "compare",
        "predict",
        "bench",
        "scan",
        "calibrate",
    ] {
        assert!(
            help.contains(&format!("  {command} ")),
            "{command} missing:\n{help}"
        );
    }
    let out = replay().arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("replay {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn predict_isolated_with_a_missing_or_foreign_file_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = shared_trace("h100_vit_infer.json.gz");
    let foreign = dir.path().join("not-isolated.json");
    std::fs::write(&foreign, "{\"results\": []}").unwrap();
    for (file, says) in [
        (dir.path().join("missing.json"), "cannot read it"),
        (foreign, "not an isolated.json"),
    ] {
        let out = replay()
            .args(["predict", "--trace"])
            .arg(&trace)
            .arg("--isolated")
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&file.display().to_string()) && stderr.contains(says),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}
