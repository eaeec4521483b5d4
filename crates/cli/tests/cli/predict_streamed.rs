//! The streamed predict (`predict::stream`: events sorted on disk beyond a budget, routed
//! to their steps, each step predicted from a small trace of its events) against the
//! in-memory predict: the same output, byte for byte, on every shared trace and fixture, on
//! a generated trace of many steps and on a hand-made one with what crosses step
//! boundaries; from standard input too. What it cannot do is refused or done in memory,
//! saying so.

use std::path::{Path, PathBuf};

use replay_core::predict::stream::{
    predict_streamed, predict_streamed_with, StreamError, StreamOptions,
};
use replay_core::predict::Skeleton;
use replay_core::predict::{predict_trace, PredictRequest};
use replay_core::trace::{self, Platform};
use replay_tracegen::{generate, Length, Options};

use crate::common;
use crate::common::every_kineto_trace;

/// The in-memory prediction as `replay predict --json` prints its fields.
fn in_memory(path: &Path) -> String {
    let whole = trace::load(path).unwrap();
    let out = predict_trace(&whole, path, &PredictRequest::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::to_string_pretty(&out.prediction).unwrap()
}

/// The streamed prediction with segments of `records_in_memory` records, when it streams.
fn streamed(path: &Path, records_in_memory: usize, spill: &Path) -> Option<String> {
    let options = StreamOptions {
        records_in_memory,
        spill_dir: spill.to_path_buf(),
        block_bytes: None,
    };
    match predict_streamed(path, &options) {
        Ok(prediction) => Some(serde_json::to_string_pretty(&prediction).unwrap()),
        Err(StreamError::NotStreamable { .. }) => None,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn assert_same(path: &Path, got: &str, expected: &str, what: &str) {
    if got == expected {
        return;
    }
    let at = got
        .bytes()
        .zip(expected.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(expected.len()));
    let from = at.saturating_sub(300);
    panic!(
        "{} ({what}): differs at byte {at}:\nstreamed: {}\nin memory: {}",
        path.display(),
        &got[from..(at + 300).min(got.len())],
        &expected[from..(at + 300).min(expected.len())],
    );
}

/// Compares the two on `path` with everything in memory and with segments of 1024 records;
/// whether it streamed.
fn compare(path: &Path, spill: &Path) -> bool {
    let expected = in_memory(path);
    let mut streams = false;
    for records_in_memory in [usize::MAX / 2, 1] {
        if let Some(got) = streamed(path, records_in_memory, spill) {
            assert_same(
                path,
                &got,
                &expected,
                &format!("{records_in_memory} records"),
            );
            streams = true;
        }
    }
    streams
}

/// Each step of `skeleton` as JSON, its signatures named by id rather than by index (a
/// step built alone numbers the signatures it meets in its own order).
fn steps_by_id(skeleton: &Skeleton) -> Vec<serde_json::Value> {
    fn rename(value: &mut serde_json::Value, ids: &[String]) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    if key == "signature" {
                        if let Some(index) = field.as_u64() {
                            *field = serde_json::Value::String(ids[index as usize].clone());
                        }
                    } else {
                        rename(field, ids);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| rename(v, ids)),
            _ => {}
        }
    }
    skeleton
        .steps
        .iter()
        .map(|step| {
            let mut value = serde_json::to_value(step).unwrap();
            rename(&mut value, &skeleton.signature_ids);
            value
        })
        .collect()
}

/// Every step skeleton the streamed predict builds (segments of 1024 records) is the
/// in-memory builder's step: structure, durations and every measured delay (which the
/// trace's own durations do not show in the prediction: a what-if on them would).
fn assert_same_skeletons(path: &Path, spill: &Path) {
    let whole = trace::load(path).unwrap();
    let expected = steps_by_id(&replay_core::predict::skeleton(&whole).unwrap());
    let mut got = Vec::new();
    let options = StreamOptions {
        records_in_memory: 1,
        spill_dir: spill.to_path_buf(),
        block_bytes: None,
    };
    predict_streamed_with(path, &options, &mut |step| got.extend(steps_by_id(step)))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got.len(), expected.len(), "{}", path.display());
    for (index, (got, expected)) in got.iter().zip(&expected).enumerate() {
        assert!(
            got == expected,
            "{} step {index}: the streamed skeleton differs:\nstreamed: {}\nin memory: {}",
            path.display(),
            &got.to_string()[..2000.min(got.to_string().len())],
            &expected.to_string()[..2000.min(expected.to_string().len())]
        );
    }
}

#[test]
fn the_streamed_steps_are_the_in_memory_skeletons() {
    let spill = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for path in every_kineto_trace() {
        if streamed(&path, usize::MAX / 2, spill.path()).is_some() {
            assert_same_skeletons(&path, spill.path());
            compared += 1;
        }
    }
    assert!(compared >= 8, "only {compared} traces compared");
}

#[test]
fn the_streamed_predict_is_the_in_memory_one_on_every_trace() {
    let spill = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for path in every_kineto_trace() {
        if compare(&path, spill.path()) {
            compared += 1;
        } else {
            // Only a CPU-only trace or one without a step span is not streamed.
            let whole = trace::load(&path).unwrap();
            let steps = predict_trace(&whole, &path, &PredictRequest::default())
                .unwrap()
                .prediction
                .measured_from;
            assert!(
                whole.platform == Platform::Cpu
                    || steps == replay_core::predict::StepSource::ProfiledWindow,
                "{} was not streamed",
                path.display()
            );
        }
    }
    assert!(compared >= 8, "only {compared} traces streamed");
    // Nothing is left behind in the spill folder.
    assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0);
}

#[test]
fn a_generated_trace_of_many_steps_streams_to_the_same_prediction() {
    let dir = tempfile::tempdir().unwrap();
    for (layout, seed) in [
        (replay_tracegen::Layout::Kineto, 4),
        (replay_tracegen::Layout::Steps, 5),
    ] {
        let path = dir.path().join(format!("generated_{seed}.json"));
        let file = std::fs::File::create(&path).unwrap();
        let options = Options {
            length: Length::Steps(12),
            layers: 4,
            seed,
            layout,
            ..Options::default()
        };
        generate(&options, std::io::BufWriter::new(file)).unwrap();
        assert!(compare(&path, dir.path()), "generated trace not streamed");
        assert_same_skeletons(&path, dir.path());
    }
}

/// A trace from `(cat, name, pid, tid, ts_us, dur_us, args)` rows.
fn write_trace(path: &Path, rows: &[(&str, &str, i64, i64, f64, f64, &str)]) {
    let events: Vec<String> = rows
        .iter()
        .map(|(cat, name, pid, tid, ts, dur, args)| {
            format!(
                "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \
                 \"tid\": {tid}, \"ts\": {ts}, \"dur\": {dur}, \"args\": {{{args}}}}}"
            )
        })
        .collect();
    let json = format!("{{\"traceEvents\": [\n{}\n]}}", events.join(",\n"));
    std::fs::write(path, json).unwrap();
}

#[test]
fn what_crosses_a_step_boundary_is_predicted_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crossing.json");
    write_trace(
        &path,
        &[
            // Three steps on thread 1; the third shares the second's name; a span on thread 9
            // overlaps the second and third, and thread 9 has ops in no other step.
            ("user_annotation", "ProfilerStep#1", 1, 1, 0.0, 100.0, ""),
            ("user_annotation", "ProfilerStep#2", 1, 1, 100.0, 100.0, ""),
            ("user_annotation", "ProfilerStep#2", 1, 1, 200.0, 100.0, ""),
            ("user_annotation", "ProfilerStep#9", 1, 9, 150.0, 100.0, ""),
            ("cpu_op", "aten::early", 1, 9, 10.0, 5.0, ""),
            // A compiled region and an op across the first boundary.
            ("user_annotation", "Torch-Compiled Region: 0/0", 1, 1, 60.0, 80.0, ""),
            ("cpu_op", "aten::mm", 1, 1, 90.0, 20.0, ""),
            // Step 1 launches work that runs well into step 2, on two streams.
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 80.0, 4.0, "\"correlation\": 1"),
            ("kernel", "k_long", 0, 7, 85.0, 60.0, "\"correlation\": 1, \"stream\": 7"),
            ("cuda_runtime", "cudaEventRecord", 1, 1, 86.0, 1.0, "\"correlation\": 2"),
            // Step 2 waits on step 1's event, launches after it, syncs the stream.
            (
                "cuda_runtime",
                "cudaStreamWaitEvent",
                1,
                1,
                105.0,
                1.0,
                "\"correlation\": 3",
            ),
            (
                "cuda_sync",
                "Stream Wait Event",
                0,
                8,
                105.5,
                0.5,
                "\"correlation\": 3, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 2",
            ),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 110.0, 5.0, "\"correlation\": 4"),
            ("kernel", "k_after", 0, 8, 146.0, 10.0, "\"correlation\": 4, \"stream\": 8"),
            // An activity no call launched, in step 2, on the busy stream.
            ("kernel", "k_orphan", 0, 7, 150.0, 5.0, "\"correlation\": 999, \"stream\": 7"),
            ("cuda_runtime", "cudaMemcpyAsync", 1, 1, 160.0, 30.0, "\"correlation\": 5"),
            (
                "gpu_memcpy",
                "Memcpy DtoH (Device -> Pageable)",
                0,
                7,
                170.0,
                10.0,
                "\"correlation\": 5, \"stream\": 7",
            ),
            (
                "cuda_runtime",
                "cudaStreamSynchronize",
                1,
                1,
                192.0,
                6.0,
                "\"correlation\": 6",
            ),
            ("cuda_sync", "Stream Sync", 0, 7, 192.5, 5.0, "\"correlation\": 6"),
            // Step 3: a call that reuses correlation id 4 (its kernel is the first call's),
            // ops on thread 9, a device sync.
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 210.0, 5.0, "\"correlation\": 4"),
            ("cpu_op", "aten::add", 1, 9, 220.0, 10.0, ""),
            ("cuda_runtime", "cudaLaunchKernel", 1, 9, 222.0, 3.0, "\"correlation\": 7"),
            ("kernel", "k_three", 0, 7, 226.0, 20.0, "\"correlation\": 7, \"stream\": 7"),
            (
                "cuda_runtime",
                "cudaDeviceSynchronize",
                1,
                1,
                240.0,
                20.0,
                "\"correlation\": 8",
            ),
        ],
    );
    assert!(
        compare(&path, dir.path()),
        "the hand-made trace did not stream"
    );
}

/// `replay predict` with `args`, its standard input from `stdin` when given.
fn predict(args: &[&str], stdin: Option<&Path>, tmp: &Path) -> (Option<i32>, String, String) {
    let mut cmd = common::replay();
    cmd.arg("predict").args(args).env("TMPDIR", tmp);
    if let Some(path) = stdin {
        cmd.pipe_stdin(path).unwrap();
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `path` as plain JSON in `dir` (a gzip inflated).
fn plain_json(path: &Path, dir: &Path) -> PathBuf {
    let bytes = std::fs::read(path).unwrap();
    let json = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut json = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
            &mut json,
        )
        .unwrap();
        json
    } else {
        bytes
    };
    let out = dir.join("trace.json");
    std::fs::write(&out, json).unwrap();
    out
}

#[test]
fn the_command_prints_the_same_streamed_from_a_file_or_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut streamed = 0;
    for path in every_kineto_trace() {
        let name = path.display().to_string();
        let file = path.to_str().unwrap();
        for flags in [&["--json"][..], &[], &["--steps", "all"]] {
            let whole = predict(&[&["--trace", file], flags].concat(), None, tmp.path());
            let budget = [&["--trace", file, "--memory-budget", "1K"], flags].concat();
            let small = predict(&budget, None, tmp.path());
            assert_eq!(whole.0, Some(0), "{name}: {}", whole.2);
            assert_eq!(
                (&whole.0, &whole.1),
                (&small.0, &small.1),
                "{name} {flags:?}"
            );
            if flags.is_empty() && !small.2.contains("predicting it in memory") {
                streamed += 1;
                // A budget below what the streamed pass needs is followed, and said to be.
                assert!(
                    small
                        .2
                        .contains("a budget of 1 KB is followed where it can be"),
                    "{name}: {}",
                    small.2
                );
            }
        }
        // Standard input: in memory without a budget, streamed with one.
        let json = plain_json(&path, dir.path());
        let piped = predict(&["--trace", "-", "--json"], Some(&json), tmp.path());
        let budget = ["--trace", "-", "--json", "--memory-budget", "1K"];
        let piped_small = predict(&budget, Some(&json), tmp.path());
        let whole = trace::load(&path).unwrap();
        let profiled_window = !whole.events.iter().any(|e| {
            e.category == trace::Category::UserAnnotation
                && whole.name(e).starts_with("ProfilerStep#")
                && e.dur_ns > 0
        });
        if whole.platform == Platform::Cpu || profiled_window {
            assert_eq!(piped_small.0, Some(2), "{name}: {}", piped_small.2);
            assert!(
                piped_small.2.contains("predicted in memory"),
                "{name}: {}",
                piped_small.2
            );
        } else {
            assert_eq!(
                (&piped.0, &piped.1),
                (&piped_small.0, &piped_small.1),
                "{name}"
            );
        }
    }
    assert!(streamed >= 8, "only {streamed} traces streamed");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn what_the_streamed_predict_cannot_do_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::shared_traces().join("h100_vit_infer.json.gz");
    let file = path.to_str().unwrap();
    for flags in [
        &["--what-if", "tier2*0.5"][..],
        &["--isolated", "x.json"],
        &["--perfetto", "p.json"],
        &["--profile", "profiles/h100_sxm.json"],
    ] {
        let args = [&["--trace", file, "--memory-budget", "1K"], flags].concat();
        let (status, _, stderr) = predict(&args, None, dir.path());
        assert_eq!(status, Some(2), "{flags:?}: {stderr}");
        assert!(
            stderr.contains(flags[0]) && stderr.contains("without --memory-budget"),
            "{flags:?}: {stderr}"
        );
    }
    // Several ranks are predicted in memory: a budget for them is refused.
    let args = ["--trace", file, file, "--memory-budget", "1K"];
    let (status, _, stderr) = predict(&args, None, dir.path());
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("--memory-budget"), "{stderr}");
}

#[test]
fn a_truncated_trace_streamed_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = plain_json(
        &common::shared_traces().join("h100_bert_small_infer.json.gz"),
        dir.path(),
    );
    let bytes = std::fs::read(&json).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let cut_arg = cut.to_str().unwrap();
    let (status, stdout, stderr) = predict(
        &["--trace", cut_arg, "--memory-budget", "1K"],
        None,
        dir.path(),
    );
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains(cut_arg), "{stderr}");
    let (status, _, stderr) = predict(
        &["--trace", "-", "--memory-budget", "1K"],
        Some(&cut),
        dir.path(),
    );
    assert_eq!(status, Some(2), "{stderr}");
}
