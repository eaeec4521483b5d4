//! Missing, misplaced and malformed input files given to `replay full`, `export`, `capture` and
//! `classify`, through the real binary: each exits 2 with a message naming the file and what is
//! wrong, panics nowhere, tracebacks nowhere, and leaves what was already written as it was.

use crate::common;

use std::path::{Path, PathBuf};

use common::{replay, shared_traces};
use predicates::prelude::*;

/// What an existing output file holds before a run that must not touch it.
const KEPT: &[u8] = b"written by an earlier run\n";

/// The bad inputs every command meets: each a path, a name for messages, and what the message
/// must say is wrong with it.
struct BadInputs {
    dir: tempfile::TempDir,
}

impl BadInputs {
    fn new() -> BadInputs {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("a-folder")).unwrap();
        std::fs::write(root.join("empty.pt"), b"").unwrap();
        std::fs::write(root.join("notes.txt"), b"these are my notes, not a model\n").unwrap();
        std::fs::write(root.join("hello.json"), b"{\"hello\": 1}\n").unwrap();
        BadInputs { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A folder holding a file called `name` with `KEPT` in it: the output a failed run must
    /// leave alone.
    fn kept_output(&self, name: &str) -> (tempfile::TempDir, PathBuf) {
        let out = tempfile::tempdir().unwrap();
        let path = out.path().join(name);
        std::fs::write(&path, KEPT).unwrap();
        (out, path)
    }
}

/// Runs `replay ARGS` and checks the usage error: exit 2, the file and `problem` on standard
/// error, no panic and no Python traceback.
fn assert_rejected(args: &[&std::ffi::OsStr], file: &Path, problem: &str) {
    let output = replay().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = || format!("replay {args:?}\nstderr:\n{stderr}");
    assert_eq!(output.status.code(), Some(2), "{}", shown());
    let name = file.file_name().unwrap().to_string_lossy();
    assert!(stderr.contains(name.as_ref()), "names {name}: {}", shown());
    assert!(
        stderr.to_lowercase().contains(&problem.to_lowercase()),
        "says {problem:?}: {}",
        shown()
    );
    assert!(!stderr.contains("panicked"), "{}", shown());
    assert!(!stderr.contains("Traceback"), "{}", shown());
}

/// `output` still holds `KEPT`, and nothing else (no temporary file) is in its folder.
fn assert_kept(output: &Path) {
    assert_eq!(
        std::fs::read(output).unwrap(),
        KEPT,
        "{} was overwritten",
        output.display()
    );
    let others: Vec<String> = std::fs::read_dir(output.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| Path::new(name) != output.file_name().unwrap())
        .collect();
    assert!(others.is_empty(), "left behind: {others:?}");
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// A real TorchScript model that loads but does not take token ids (its forward wants two
/// tensors), saved by the project's Python.
fn model_that_does_not_take_token_ids(dir: &Path) -> PathBuf {
    let path = dir.join("two_inputs.pt");
    let script = format!(
        "import torch\n\
         class TwoInputs(torch.nn.Module):\n\
         \x20   def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n\
         \x20       return x + y\n\
         torch.jit.script(TwoInputs()).save({:?})\n",
        path.display().to_string()
    );
    let py = dir.join("make_two_inputs.py");
    std::fs::write(&py, script).unwrap();
    let status = std::process::Command::new(replay::model::python::interpreter())
        .arg(&py)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the project's Python saves a TorchScript model"
    );
    path
}

#[test]
fn full_rejects_bad_model_files_and_keeps_the_timing_file() {
    let bad = BadInputs::new();
    let (out, timing) = bad.kept_output("full_model_timing.json");
    let two_inputs = model_that_does_not_take_token_ids(bad.dir.path());
    for (model, problem) in [
        (bad.path("missing.pt"), "no such model file"),
        (bad.path("a-folder"), "is a folder"),
        (bad.path("empty.pt"), "is empty"),
        (bad.path("notes.txt"), "not a TorchScript model"),
        (bad.path("hello.json"), "not a TorchScript model"),
        (two_inputs, "does not run on token ids [1, 5]"),
    ] {
        assert_rejected(
            &[
                os("full"),
                os("--device"),
                os("cpu"),
                os("--warmup"),
                os("0"),
                os("--runs"),
                os("2"),
                os("--model"),
                model.as_os_str(),
                os("--output-dir"),
                out.path().as_os_str(),
            ],
            &model,
            problem,
        );
        assert_kept(&timing);
    }
}

#[test]
fn full_rejects_bad_sizes_and_an_output_folder_that_is_a_file_before_timing() {
    let (dir, model) = common::exported_bloom_tiny();
    for (option, value) in [("--seq-len", "0"), ("--batch", "0")] {
        replay()
            .args(["full", "--device", "cpu", "--warmup", "0", "--runs", "2"])
            .arg("--model")
            .arg(&model)
            .args([option, value])
            .arg("--output-dir")
            .arg(dir.path().join("results"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(option))
            .stderr(predicate::str::contains("panicked").not());
    }
    // A file where the output folder should be: refused before a single run is timed.
    let not_a_folder = dir.path().join("results-file");
    std::fs::write(&not_a_folder, KEPT).unwrap();
    let output = replay()
        .args(["full", "--device", "cpu", "--warmup", "0", "--runs", "2"])
        .arg("--model")
        .arg(&model)
        .arg("--output-dir")
        .arg(&not_a_folder)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("results-file") && stderr.contains("not a folder"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "nothing timed: {output:?}");
    assert_eq!(std::fs::read(&not_a_folder).unwrap(), KEPT);
}

#[test]
fn export_rejects_bad_config_and_weights_and_keeps_the_model_file() {
    let bad = BadInputs::new();
    let write = |name: &str, text: &str| {
        let path = bad.path(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let not_json = write("config-not-json.json", "n_layer = 2\n");
    let a_list = write("config-list.json", "[2, 64, 4, 1000]");
    let lacks_heads = write(
        "config-no-heads.json",
        r#"{"n_layer": 2, "hidden_size": 64, "vocab_size": 1000}"#,
    );
    let negative = write(
        "config-negative.json",
        r#"{"n_layer": -2, "hidden_size": 64, "n_head": 4, "vocab_size": 1000}"#,
    );
    let null_epsilon = write(
        "config-null-epsilon.json",
        r#"{"n_layer": 2, "hidden_size": 64, "n_head": 4, "vocab_size": 1000, "layer_norm_epsilon": null}"#,
    );
    let (out, model) = bad.kept_output("model.pt");
    for (config, problem) in [
        (bad.path("missing.json"), "No such file"),
        (bad.path("a-folder"), "Is a directory"),
        (bad.path("empty.pt"), "bad config file"),
        (not_json, "bad config file"),
        (a_list, "must be a JSON object"),
        (lacks_heads, "lacks n_head"),
        (negative, "n_layer must be a positive integer"),
        (null_epsilon, "layer_norm_epsilon must be a number"),
    ] {
        assert_rejected(
            &[
                os("export"),
                os("--config"),
                config.as_os_str(),
                os("--out"),
                model.as_os_str(),
            ],
            &config,
            problem,
        );
        assert_kept(&model);
    }

    // A checkpoint folder whose .safetensors file is not one.
    let weights = bad.path("checkpoint");
    std::fs::create_dir(&weights).unwrap();
    let garbage = weights.join("model.safetensors");
    std::fs::write(&garbage, b"this is not a safetensors file at all").unwrap();
    for (folder, file, problem) in [
        (
            bad.path("no-such-checkpoint"),
            bad.path("no-such-checkpoint"),
            "no *.safetensors",
        ),
        (weights.clone(), garbage.clone(), "not a safetensors file"),
    ] {
        assert_rejected(
            &[
                os("export"),
                os("--model"),
                os("bloom-tiny"),
                os("--weights"),
                folder.as_os_str(),
                os("--out"),
                model.as_os_str(),
            ],
            &file,
            problem,
        );
        assert_kept(&model);
    }

    // --out naming a folder: refused, and no half-written model left beside it.
    let folder = out.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    assert_rejected(
        &[
            os("export"),
            os("--model"),
            os("bloom-tiny"),
            os("--out"),
            folder.as_os_str(),
        ],
        &folder,
        "is a folder",
    );
    std::fs::remove_dir(&folder).unwrap();
    assert_kept(&model);
}

#[test]
fn capture_rejects_bad_model_files_and_keeps_the_trace_file() {
    let bad = BadInputs::new();
    let (out, trace) = bad.kept_output("trace.json");
    let two_inputs = model_that_does_not_take_token_ids(bad.dir.path());
    for (model, problem) in [
        (bad.path("missing.pt"), "model file not found"),
        (bad.path("a-folder"), "is a folder"),
        (bad.path("empty.pt"), "cannot load"),
        (bad.path("notes.txt"), "cannot load"),
        (bad.path("hello.json"), "cannot load"),
        (two_inputs, "does not run on token ids [1, 5]"),
    ] {
        assert_rejected(
            &[
                os("capture"),
                os("--device"),
                os("cpu"),
                os("--candidates"),
                os("1"),
                os("--model"),
                model.as_os_str(),
                os("--out"),
                trace.as_os_str(),
            ],
            &model,
            problem,
        );
        assert_kept(&trace);
    }

    // --out naming a folder, or inside a file: refused before anything is profiled.
    let (_dir, model) = common::exported_bloom_tiny();
    let folder = out.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    for (target, named, problem) in [
        (folder.clone(), folder.clone(), "is a folder"),
        (trace.join("trace.json"), trace.clone(), "not a folder"),
    ] {
        assert_rejected(
            &[
                os("capture"),
                os("--device"),
                os("cpu"),
                os("--candidates"),
                os("1"),
                os("--model"),
                model.as_os_str(),
                os("--out"),
                target.as_os_str(),
            ],
            &named,
            problem,
        );
    }
    std::fs::remove_dir(&folder).unwrap();
    assert_kept(&trace);
}

#[test]
fn classify_rejects_files_that_are_not_traces_and_keeps_the_signature_file() {
    let bad = BadInputs::new();
    let (out, signatures) = bad.kept_output("signatures.json");
    let (_dir, model) = common::exported_bloom_tiny();
    for (trace, problem) in [
        (bad.path("missing.json"), "cannot read file"),
        (bad.path("a-folder"), "Is a directory"),
        (bad.path("empty.pt"), "file is empty"),
        (bad.path("notes.txt"), "invalid JSON"),
        (bad.path("hello.json"), "no `traceEvents` key"),
        (model, "invalid JSON"),
    ] {
        assert_rejected(
            &[
                os("classify"),
                os("--trace"),
                trace.as_os_str(),
                os("--out"),
                signatures.as_os_str(),
            ],
            &trace,
            problem,
        );
        assert_kept(&signatures);
    }

    // A real trace, but --out names a folder or lies inside a file: exit 2 naming it, and no
    // temporary file left behind.
    let trace = shared_traces().join("cpu_only.json.gz");
    let folder = out.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    for (target, named, problem) in [
        (folder.clone(), folder.clone(), "is a folder"),
        (
            signatures.join("x.json"),
            signatures.clone(),
            "not a folder",
        ),
    ] {
        assert_rejected(
            &[
                os("classify"),
                os("--trace"),
                trace.as_os_str(),
                os("--out"),
                target.as_os_str(),
            ],
            &named,
            problem,
        );
    }
    assert!(
        std::fs::read_dir(&folder).unwrap().next().is_none(),
        "nothing written into the folder"
    );
    std::fs::remove_dir(&folder).unwrap();
    assert_kept(&signatures);
}
