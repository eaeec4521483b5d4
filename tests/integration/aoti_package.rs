//! AOTInductor packages end to end on the CPU: `replay export --model bloom-tiny --format pt2
//! --aoti` through the real binary (once for the module), `replay full` timing the package
//! from Rust, the package's outputs through replay's wrapper (`AotiPackage`) against eager
//! PyTorch on the same input, and the bad `.pt2` files that must exit 2. The CUDA path cannot
//! run here: only its device check (which reads the package's metadata) is tested.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::replay;
use predicates::prelude::*;
use replay::model::aoti_package::AotiPackage;
use replay::model::whole_model::WholeModel;

/// A folder of this test binary's own under cargo's scratch space.
fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("aoti_package");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// bloom-tiny compiled by AOTInductor for the CPU, exported once for every test here.
fn package() -> &'static Path {
    static PACKAGE: OnceLock<PathBuf> = OnceLock::new();
    PACKAGE.get_or_init(|| export_pt2("bloom-tiny.pt2", true, "AOTInductor package for cpu"))
}

/// The ExportedProgram of bloom-tiny (not compiled), exported once.
fn exported_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| export_pt2("bloom-tiny-program.pt2", false, "(ExportedProgram)"))
}

/// `replay export --model bloom-tiny --format pt2 [--aoti]` into the scratch folder as `name`;
/// its summary line must say `says`.
fn export_pt2(name: &str, aoti: bool, says: &str) -> PathBuf {
    let path = scratch().join(name);
    let _ = std::fs::remove_file(&path);
    replay()
        .args(["export", "--model", "bloom-tiny", "--format", "pt2"])
        .args(aoti.then_some("--aoti"))
        .arg("--out")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains(says));
    path
}

fn full(model: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    replay()
        .args(["full", "--model"])
        .arg(model)
        .args(["--device", "cpu", "--warmup", "2", "--runs", "6", "--quiet"])
        .args(extra)
        .arg("--output-dir")
        .arg(out)
        .assert()
}

#[test]
fn full_times_an_aoti_package_on_the_input_it_was_compiled_for() {
    let out = scratch().join("full");
    full(package(), &out, &[]).success();
    let timing: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("full_model_timing.json")).unwrap())
            .unwrap();
    assert_eq!(timing["model_format"], "aoti_package", "{timing}");
    assert_eq!(timing["inputs"], serde_json::json!(["int64[1,5]:0..1000"]));
    assert_eq!(timing["timer"], "monotonic clock", "{timing}");
    assert_eq!(
        (timing["warmup"].as_u64(), timing["runs"].as_u64()),
        (Some(2), Some(6))
    );
    let samples = timing["samples_us"].as_array().unwrap();
    assert_eq!(samples.len(), 6);
    assert!(
        samples.iter().all(|s| s.as_f64().unwrap() > 0.0),
        "{timing}"
    );
    let median = timing["median_us"].as_f64().unwrap();
    assert!(timing["p10_us"].as_f64().unwrap() <= median);
    assert!(median <= timing["p90_us"].as_f64().unwrap());
}

/// Eager bloom-tiny (seed 0, as export builds it) on fixed token ids: writes the ids and the
/// logits as .npy for the Rust side.
fn eager_reference(dir: &Path) -> (PathBuf, PathBuf) {
    let (input, output) = (dir.join("ids.npy"), dir.join("logits.npy"));
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let script = format!(
        "import sys\n\
         sys.path.insert(0, {scripts:?})\n\
         import numpy as np, torch, zoo\n\
         model = zoo.MODELS['bloom-tiny'].build(0)\n\
         ids = torch.randint(0, 1000, (1, 5), generator=torch.Generator().manual_seed(7))\n\
         with torch.no_grad():\n\
         \x20   logits = model(ids)\n\
         np.save({input:?}, ids.numpy())\n\
         np.save({output:?}, logits.numpy())\n",
        scripts = scripts.display().to_string(),
        input = input.display().to_string(),
        output = output.display().to_string(),
    );
    let py = dir.join("eager_reference.py");
    std::fs::write(&py, script).unwrap();
    let status = std::process::Command::new(replay::model::python::interpreter())
        .arg(&py)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the project's Python runs eager bloom-tiny"
    );
    (input, output)
}

#[test]
fn the_packages_outputs_agree_with_eager_pytorch() {
    let dir = scratch().join("reference");
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = eager_reference(&dir);
    let ids = tch::Tensor::read_npy(&input).unwrap();
    let want = tch::Tensor::read_npy(&output).unwrap();
    let package = AotiPackage::load(package(), replay::device::Device::host()).unwrap();
    assert_eq!(
        package.metadata().get("replay_input").map(String::as_str),
        Some("int64[1,5]:0..1000")
    );
    assert_eq!(package.format(), Some("aoti_package"));
    let outputs = package.run(&[ids]).unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].size(), want.size());
    let diff = (&outputs[0] - &want).abs().max().double_value(&[]);
    assert!(diff <= 1e-3, "max |AOTI - eager| = {diff}");
    // Not trivially equal: the logits vary across the vocabulary.
    assert!(want.std(true).double_value(&[]) > 1e-3);
}

#[test]
fn a_package_for_another_device_is_refused_before_it_loads() {
    // No GPU is needed: the device a package was compiled for is read from its metadata.
    let err = replay::model::aoti_package::check_compiled_for(
        package(),
        replay::device::DeviceSpec::Cuda(0),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("compiled for cpu, not for cuda") && text.contains("bloom-tiny.pt2"),
        "{text}"
    );
}

#[test]
fn bad_pt2_files_exit_2_naming_the_file_and_the_problem() {
    let dir = scratch().join("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("results");
    let not_zip = dir.join("garbage.pt2");
    std::fs::write(&not_zip, b"this is not a zip archive").unwrap();
    let missing = dir.join("missing.pt2");
    let empty = dir.join("empty.pt2");
    std::fs::write(&empty, b"").unwrap();
    let (_tmp, torchscript) = common::exported_bloom_tiny();
    let renamed = dir.join("torchscript.pt2");
    std::fs::copy(&torchscript, &renamed).unwrap();
    let cases: [(&Path, &[&str], &str); 6] = [
        (
            exported_program(),
            &[],
            "is a torch.export ExportedProgram, not an AOTInductor package",
        ),
        (&not_zip, &[], "not a PT2 archive"),
        (&missing, &[], "no such model file"),
        (&empty, &[], "is empty (0 bytes)"),
        (&renamed, &[], "not a PT2 archive (no archive_format)"),
        (
            package(),
            &["--input", "int64[1,7]"],
            "is compiled for the input int64[1,5]:0..1000, not int64[1,7]",
        ),
    ];
    for (model, extra, message) in cases {
        full(model, &out, extra)
            .code(2)
            .stderr(predicate::str::contains(message))
            .stderr(predicate::str::contains(
                model.file_name().unwrap().to_str().unwrap(),
            ));
    }
    // The ExportedProgram's refusal says what to do.
    full(exported_program(), &out, &[])
        .code(2)
        .stderr(predicate::str::contains(
            "replay export --format pt2 --aoti",
        ));
    // --seq-len other than the package's (and than the default) is refused, not ignored.
    full(package(), &out, &["--seq-len", "9"])
        .code(2)
        .stderr(predicate::str::contains("not int64[1,9]"));
    assert!(!out.join("full_model_timing.json").exists());
}
