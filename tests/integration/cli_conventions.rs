//! Every command speaks the same way (issue 29): an output that cannot be written exits 2 and
//! names the path the user gave (never a temporary file of ours) without repeating its cause;
//! a count out of range, negative ones included, is refused in one form; a timing flag a
//! command does not use is refused; the old output-flag spellings still work.

use crate::common::{replay, shared_traces};

/// Runs `replay ARGS`, expecting exit status 2, and returns standard error.
fn refused(args: &[&str]) -> String {
    let out = replay().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "replay {args:?}: {stderr}");
    stderr
}

#[test]
fn an_unwritable_output_exits_2_naming_the_users_path_once() {
    let trace = shared_traces().join("h100_vit_infer.json.gz");
    let trace = trace.to_str().unwrap();
    // /proc refuses new files and folders even to root, which a read-only folder does not.
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "classify",
                "--trace",
                trace,
                "--out",
                "/proc/replay-t/sig.json",
            ],
            "/proc/replay-t: cannot create the folder",
        ),
        (
            vec!["classify", "--trace", trace, "--out", "/proc/self/sig.json"],
            "/proc/self/sig.json: cannot create",
        ),
        (
            vec![
                "predict",
                "--trace",
                trace,
                "--perfetto",
                "/proc/self/p.json",
            ],
            "/proc/self/p.json: cannot create",
        ),
        (
            vec![
                "bench",
                "scan",
                "--T",
                "16",
                "--K",
                "4",
                "--C",
                "3",
                "--backends",
                "cpu",
                "-q",
                "--output-dir",
                "/proc/replay-t",
            ],
            "/proc/replay-t: cannot create the folder",
        ),
    ];
    for (args, says) in cases {
        let stderr = refused(&args);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            !stderr.contains(".tmp-"),
            "{args:?} names our temporary file: {stderr}"
        );
        assert!(
            !stderr.contains("caused by"),
            "{args:?} repeats its cause: {stderr}"
        );
    }
    // A file where a folder should be: the message says which component it is.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    std::fs::write(&file, "kept").unwrap();
    let under = file.join("deeper/sig.json");
    let stderr = refused(&[
        "classify",
        "--trace",
        trace,
        "--out",
        under.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains(&format!("{}: is not a folder", file.display())),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
}

#[test]
fn counts_out_of_range_are_refused_in_one_form() {
    for (args, value) in [
        (vec!["full", "--model", "m.pt", "--runs", "-5"], "-5"),
        (vec!["full", "--model", "m.pt", "--runs", "0"], "0"),
        (vec!["bench", "scan", "--repeats", "0"], "0"),
        (vec!["bench", "mhc", "--iters", "-1"], "-1"),
        (
            vec!["isolated", "--kernels", "k.json", "--rounds", "0"],
            "0",
        ),
        (
            vec!["bench", "quant", "--config", "c.yml", "--runs", "-3"],
            "-3",
        ),
    ] {
        let stderr = refused(&args);
        assert!(
            stderr.contains(&format!("'{value}' is not a whole number of at least 1")),
            "{args:?}: {stderr}"
        );
    }
    let stderr = refused(&["full", "--model", "m.pt", "--warmup", "-1"]);
    assert!(
        stderr.contains("'-1' is not a whole number of at least 0"),
        "{stderr}"
    );
}

#[test]
fn a_timing_flag_a_command_does_not_use_is_refused() {
    let stderr = refused(&[
        "bench", "scan", "--T", "16", "--K", "4", "--C", "3", "--rounds", "3",
    ]);
    assert!(
        stderr.contains("--rounds") && stderr.contains("bench scan"),
        "{stderr}"
    );
    let stderr = refused(&["bench", "mhc", "--quick", "--cold"]);
    assert!(stderr.contains("--cold"), "{stderr}");
    // full, scan and compare take the shared flags too: what they do not use is named.
    let stderr = refused(&["full", "--model", "m.pt", "--max-time", "1"]);
    assert!(
        stderr.contains("--max-time") && stderr.contains("`full` does not take"),
        "{stderr}"
    );
    let stderr = refused(&["scan", "--edge", "e.npy", "--rounds", "2"]);
    assert!(
        stderr.contains("--rounds") && stderr.contains("`scan` does not take"),
        "{stderr}"
    );
    let stderr = refused(&["compare", "--model", "m.pt", "--noise", "0.1"]);
    assert!(
        stderr.contains("--noise") && stderr.contains("`compare` does not take"),
        "{stderr}"
    );
}

#[test]
fn a_time_budget_is_checked_when_parsed_under_every_name() {
    for args in [
        vec!["scan", "--edge", "e.npy", "--time", "--max-time", "0"],
        vec!["scan", "--edge", "e.npy", "--time", "--time-budget", "-1"],
        vec!["compare", "--model", "m.pt", "--max-time", "0"],
        vec!["compare", "--model", "m.pt", "--max-time-per-kernel", "nan"],
        vec!["isolated", "--kernels", "k.json", "--max-time", "0"],
    ] {
        let stderr = refused(&args);
        assert!(
            stderr.contains("is not a positive number of seconds"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn every_device_flag_is_parsed_alike() {
    for args in [
        vec![
            "export",
            "--model",
            "bloom-tiny",
            "--out",
            "m.pt2",
            "--format",
            "pt2",
        ],
        vec!["devices"],
        vec!["selftest"],
        vec!["bench", "mhc", "--quick"],
        vec!["bench", "scan", "--quick"],
        vec!["full", "--model", "m.pt"],
    ] {
        let mut args = args;
        args.extend(["--device", "tpu"]);
        let stderr = refused(&args);
        assert!(
            stderr.contains(
                "invalid device 'tpu': unknown device kind (expected cpu, cuda or cuda:N)"
            ),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn the_former_output_flag_names_still_parse() {
    // `merge --out` (now --output-dir): the parts are checked, so a missing one is the error.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    for flag in ["--out", "--output-dir"] {
        let stderr = refused(&[
            "merge",
            missing.to_str().unwrap(),
            flag,
            dir.path().join("m").to_str().unwrap(),
        ]);
        assert!(!stderr.contains("unexpected argument"), "{flag}: {stderr}");
    }
}
