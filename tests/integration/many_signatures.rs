//! A signature file of very many signatures (issue 34: ten million in one file, streamed,
//! memory bounded). 150 000 copies of the shipped BERT file's memcpy signature, each marked not
//! replayable so that a unit costs nothing and what is measured is replay's own handling of
//! the file: every signature gets its row, and the peak RSS stays within a bound that a
//! whole-file read (the file's bytes, then the parsed signatures) would exceed. Files of more
//! than one window (8192 signatures) are read streaming and replayed a window at a time.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures/h100_bert_small_infer.json")
}

/// Writes `n` copies of the shipped file's memcpy signature, not replayable, with distinct
/// ids and names, streaming; returns the file's size.
fn generate(n: usize, path: &Path) -> u64 {
    let mut file: Value = serde_json::from_slice(&std::fs::read(shipped()).unwrap()).unwrap();
    let mut sig = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "memcpy")
        .expect("the BERT file has a memcpy")
        .clone();
    sig["replayable"] = Value::Bool(false);
    sig["reason"] = "many_signatures: not replayed".into();
    let name = sig["name"].as_str().unwrap().to_string();
    file["signatures"] = Value::Array(vec![]);
    let text = serde_json::to_string(&file).unwrap();
    let (before, after) = text.split_once("\"signatures\":[]").unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(out, "{before}\"signatures\":[").unwrap();
    for i in 0..n {
        sig["id"] = format!("{i:016x}").into();
        sig["name"] = format!("{name} [{i}]").into();
        if i > 0 {
            out.write_all(b",\n").unwrap();
        }
        serde_json::to_writer(&mut out, &sig).unwrap();
    }
    write!(out, "]{after}").unwrap();
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// `replay isolated` on `sigs` under /usr/bin/time: (exit status, peak RSS in bytes, stderr).
fn isolated(sigs: &Path, out: &Path, extra: &[&str]) -> (i32, u64, String) {
    let rss = out.with_extension("rss");
    let output = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(assert_cmd::cargo::cargo_bin("replay"))
        .args(["isolated", "--device", "cpu", "--max-time", "0.0001"])
        .args([
            "--rounds",
            "1",
            "--min-samples",
            "1",
            "--quiet",
            "--kernels",
        ])
        .arg(sigs)
        .arg("--output-dir")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let kib: u64 = std::fs::read_to_string(&rss)
        .unwrap()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("/usr/bin/time wrote the peak RSS");
    (
        output.status.code().unwrap_or(-1),
        kib * 1024,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn results(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("isolated.json")).unwrap()).unwrap()
}

#[test]
fn many_signatures_are_replayed_streaming_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (small, many) = (dir.path().join("small.json"), dir.path().join("many.json"));
    generate(100, &small);
    let n = 150_000;
    let bytes = generate(n, &many);
    let (rc, small_peak, err) = isolated(&small, &dir.path().join("small"), &[]);
    assert_eq!(rc, 0, "{err}");
    let out = dir.path().join("many");
    let (rc, peak, err) = isolated(&many, &out, &[]);
    assert_eq!(rc, 0, "{err}");

    let done = results(&out);
    assert_eq!(done["complete"], true);
    assert_eq!(done["signatures_total"], n);
    let rows = done["results"].as_array().unwrap();
    assert_eq!(rows.len(), n);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["id"], format!("{i:016x}"), "row {i} in order");
        assert_eq!(row["status"], "unsupported");
        assert_eq!(row["reason"], "many_signatures: not replayed");
    }
    let csv = std::fs::read_to_string(out.join("isolated.csv")).unwrap();
    assert_eq!(csv.lines().count(), n + 1);
    // A whole-file read holds the file's bytes and then its parsed signatures (several times
    // the bytes): the streaming run grows by less than the file over a 100-signature run
    // (one window, ~55 MB here, whatever the file).
    let growth = peak.saturating_sub(small_peak);
    assert!(
        growth < bytes,
        "peak RSS {peak} B vs {small_peak} B for 100 signatures: grew {growth} B for a {bytes}-byte file"
    );

    // --shard cannot split a windowed file yet: refused, saying why.
    let (rc, _, err) = isolated(&many, &dir.path().join("shard"), &["--shard", "1/2"]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("many.json") && err.contains("--shard"),
        "{err}"
    );

    // A run killed after its first window (the rows file cut back to it, with half a row of
    // the next) resumes from there to the same files.
    let rows_file = out.join("isolated.rows.jsonl");
    let text = std::fs::read_to_string(&rows_file).unwrap();
    let first_marker = text.find("{\"window\":0").unwrap();
    let cut = first_marker + text[first_marker..].find('\n').unwrap() + 1;
    let whole_json = std::fs::read(out.join("isolated.json")).unwrap();
    std::fs::write(&rows_file, format!("{}{{\"id\":\"0000", &text[..cut])).unwrap();
    std::fs::remove_file(out.join("isolated.json")).unwrap();
    let (rc, _, err) = isolated(&many, &out, &["--resume"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&rows_file).unwrap(), text);
    assert_eq!(
        std::fs::read(out.join("isolated.json")).unwrap(),
        whole_json
    );
}

#[test]
fn a_file_whose_window_cannot_fit_max_memory_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("many.json");
    generate(10_000, &sigs);
    let out = dir.path().join("out");
    let (rc, _, err) = isolated(&sigs, &out, &["--max-memory", "1M"]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("many.json")
            && err.contains("10000 signatures")
            && err.contains("--max-memory"),
        "{err}"
    );
    assert!(!out.join("isolated.json").exists());
}
