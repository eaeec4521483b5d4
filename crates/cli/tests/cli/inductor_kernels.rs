//! Reading `inductor/kernels.json` (the kept Inductor cache's index) and naming, on each
//! tier-4 signature, where its kernel's code is.
//!
//! `tests/data/compiled/inductor/` is written by hand for these tests (the real ones come
//! from `replay capture --compile`): its `kernels.json` names the kernels of the real
//! `mlp_kernel_profile.json.gz` beside it, and the files it points to exist so that the
//! reader's checks pass; they are not the real cache's contents (the `.so` is no library).

use std::path::{Path, PathBuf};

use replay_core::inductor::{self, read_kernels, KernelArg};
use replay_core::signature::{GeneratedKind, Tier};
use replay_core::trace;

use crate::common;

fn compiled_data() -> PathBuf {
    common::repo_root().join("crates/core/tests/data/compiled")
}

fn fixture() -> PathBuf {
    compiled_data().join("inductor/kernels.json")
}

/// A copy of the fixture folder to break, with the kernels.json text `edit` makes.
fn broken_copy(edit: impl FnOnce(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
    common::edited_kernels_copy(
        &compiled_data().join("inductor"),
        "inductor",
        "inductor/kernels.json",
        edit,
    )
}

fn problem(path: &Path) -> String {
    let error = read_kernels(path).expect_err("a bad kernels.json is refused");
    assert_eq!(error.path, path, "the error names the file");
    let text = error.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    text
}

#[test]
fn the_fixture_reads_with_every_argument_kind() {
    let kernels = read_kernels(&fixture()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kernels.file.format, inductor::KERNELS_FORMAT);
    assert_eq!(kernels.file.version, 1);
    assert_eq!(kernels.dir, compiled_data().join("inductor"));
    assert!(!kernels.file.kernels.is_empty());
    for kernel in &kernels.file.kernels {
        assert_eq!(kernel.kind, GeneratedKind::InductorCpp);
        assert!(kernel.trace_name.ends_with(&kernel.name), "{}", kernel.name);
        assert!(kernels.resolve(&kernel.source).is_file());
        assert!(!kernel.calls.is_empty());
    }
    let args: Vec<&KernelArg> = kernels
        .file
        .kernels
        .iter()
        .flat_map(|k| k.calls.iter().flat_map(|c| &c.args))
        .collect();
    assert!(args
        .iter()
        .any(|a| matches!(a, KernelArg::Tensor(t) if t.values.is_some())));
    assert!(args.iter().any(|a| matches!(a, KernelArg::Int(_))));
    assert!(args.iter().any(|a| matches!(a, KernelArg::Float(_))));
}

#[test]
fn missing_keys_are_named() {
    let (_dir, path) = broken_copy(|v| {
        v["kernels"][0]
            .as_object_mut()
            .unwrap()
            .remove("trace_name");
    });
    assert!(problem(&path).contains("missing field `trace_name`"));
    let (_dir, path) = broken_copy(|v| {
        v["kernels"][0].as_object_mut().unwrap().remove("library");
    });
    let text = problem(&path);
    assert!(text.contains("missing `library`"), "{text}");
}

#[test]
fn another_version_or_format_is_refused_as_such() {
    let (_dir, path) = broken_copy(|v| v["version"] = serde_json::json!(2));
    let text = problem(&path);
    assert!(
        text.contains("version 2; this replay reads version 1"),
        "{text}"
    );
    let (_dir, path) = broken_copy(|v| v["format"] = serde_json::json!("something-else"));
    assert!(problem(&path).contains("format \"something-else\""));
    let (_dir, path) = broken_copy(|v| {
        v.as_object_mut().unwrap().remove("format");
    });
    assert!(problem(&path).contains("no \"format\""));
}

#[test]
fn paths_outside_the_folder_or_missing_are_refused() {
    for (bad, says) in [
        ("../kernels_elsewhere.py", "is outside the folder"),
        ("/etc/hostname", "is outside the folder"),
        ("cache/not_there.py", "cannot be opened"),
        ("cache", "is not a file"),
        ("", "is empty"),
    ] {
        let (_dir, path) = broken_copy(|v| v["kernels"][0]["source"] = serde_json::json!(bad));
        let text = problem(&path);
        assert!(text.contains(says), "{bad:?}: {text}");
        assert!(text.contains("source"), "the key is named: {text}");
    }
}

#[cfg(unix)]
#[test]
fn a_link_that_leads_outside_the_folder_is_refused() {
    let (dir, path) = broken_copy(|v| v["kernels"][0]["source"] = serde_json::json!("out.py"));
    let outside = dir.path().join("outside.py");
    std::fs::write(&outside, "x = 1\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.path().join("inductor/out.py")).unwrap();
    assert!(problem(&path).contains("leads outside the folder"));
}

#[test]
fn classify_finds_the_cache_beside_the_trace_and_names_each_kernels_code() {
    let trace_path = compiled_data().join("mlp_kernel_profile.json.gz");
    let loaded = trace::load(&trace_path).unwrap_or_else(|e| panic!("{e}"));
    let bare = replay_core::signature::classify(&loaded, &trace_path);
    let file = inductor::classify_with_cache(&loaded, &trace_path, None).unwrap();
    let kernels = read_kernels(&fixture()).unwrap();
    let generated: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .collect();
    assert!(!generated.is_empty());
    for (sig, before) in generated
        .iter()
        .zip(bare.signatures.iter().filter(|s| s.tier == Tier::Generated))
    {
        assert_eq!(sig.id, before.id);
        assert!(!before.replayable, "no cache: not replayable");
        assert!(before
            .reason
            .as_deref()
            .unwrap()
            .contains("--inductor-cache DIR"));
        let kernel = kernels.by_trace_name(&sig.name).expect("in the fixture");
        let source = sig.generated.as_ref().unwrap().source.as_deref().unwrap();
        assert_eq!(Path::new(source), kernels.resolve(&kernel.source));
        assert!(sig.replayable, "{:?}", sig.reason);
        assert_eq!(sig.reason, None);
    }
    // Without generated kernels nothing changes; the same cache is simply not needed.
    let plain_path = compiled_data().join("mlp_plain.json.gz");
    let plain = trace::load(&plain_path).unwrap();
    assert_eq!(
        inductor::classify_with_cache(&plain, &plain_path, None).unwrap(),
        replay_core::signature::classify(&plain, &plain_path)
    );
}

#[test]
fn a_cache_without_the_traces_kernels_is_refused() {
    let (dir, _) = broken_copy(|v| {
        v["kernels"].as_array_mut().unwrap().truncate(1);
    });
    let trace_path = compiled_data().join("mlp_kernel_profile.json.gz");
    let loaded = trace::load(&trace_path).unwrap();
    let cache = dir.path().join("inductor");
    let error = inductor::classify_with_cache(&loaded, &trace_path, Some(&cache)).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("does not hold the trace's generated kernel(s)"),
        "{text}"
    );
    assert!(text.starts_with(&cache.join("kernels.json").display().to_string()));
    // A folder without kernels.json is named too.
    let empty = tempfile::tempdir().unwrap();
    let error =
        inductor::classify_with_cache(&loaded, &trace_path, Some(empty.path())).unwrap_err();
    assert!(
        error.to_string().contains("no kernels.json here"),
        "{error}"
    );
}

#[test]
fn classify_with_a_bad_cache_exits_2_naming_the_file() {
    let (dir, path) = broken_copy(|v| v["version"] = serde_json::json!(7));
    let out = dir.path().join("sigs.json");
    let output = common::replay()
        .args(["classify", "--trace"])
        .arg(compiled_data().join("mlp_kernel_profile.json.gz"))
        .arg("--out")
        .arg(&out)
        .arg("--inductor-cache")
        .arg(dir.path().join("inductor"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("version 7"), "{stderr}");
    assert!(!out.exists());

    // And with the good one (given as the folder holding inductor/), it writes the sources.
    let output = common::replay()
        .args(["classify", "--trace"])
        .arg(compiled_data().join("mlp_kernel_profile.json.gz"))
        .arg("--out")
        .arg(&out)
        .arg("--inductor-cache")
        .arg(compiled_data())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let written = replay_core::signature::read_file(&out).unwrap();
    assert!(written
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .all(|s| s.generated.as_ref().unwrap().source.is_some()));
}

/// The wrapper a capture timed without the profiler (`kernels.json`'s `wrapper`) reaches the
/// signature file's compiled code; a kernels.json without one (the fixture, an older capture)
/// leaves it absent, and the file writes as before.
#[test]
fn the_captures_compiled_step_reaches_the_compiled_code() {
    let trace_path = compiled_data().join("mlp_kernel_profile.json.gz");
    let loaded = trace::load(&trace_path).unwrap_or_else(|e| panic!("{e}"));
    let without = inductor::classify_with_cache(&loaded, &trace_path, None).unwrap();
    let compiled = without.compiled_code.as_ref().expect("a compiled trace");
    assert!(compiled.wrapper.is_none());
    assert!(!serde_json::to_string(&without)
        .unwrap()
        .contains("\"wrapper\""));

    let (_dir, kernels) = broken_copy(|doc| {
        doc["wrapper"] = serde_json::json!({"median_us": 38.25, "p10_us": 36.0, "p90_us": 41.5,
            "runs": 400, "method": "no-op kernels", "kernels_stubbed": 4, "externs_stubbed": 2,
            "torch_ops_calls_left_real": 0, "graph_breaks": 0, "usable": true,
            "why_not_usable": null});
    });
    let cache = kernels.parent().unwrap();
    let with = inductor::classify_with_cache(&loaded, &trace_path, Some(cache)).unwrap();
    let wrapper = with
        .compiled_code
        .as_ref()
        .unwrap()
        .wrapper
        .as_ref()
        .unwrap();
    assert_eq!((wrapper.median_us, wrapper.runs), (38.25, 400));
    assert_eq!(wrapper.counted_us(), Some(38.25));
    let text = replay_core::report::unseen_in_file(&with);
    assert!(
        text.contains("its wrapper measured by the capture without the profiler: 38.2"),
        "{text}"
    );
}
