//! The streaming reader (`trace::load_reader_in_blocks`: blocks of bounded size, each cut at
//! a proven event boundary) against the in-memory parse of the whole file
//! (`trace::load_bytes`) on every shared trace and every Kineto fixture: the same trace
//! (events, string ids, metadata, counts, SHA-256), from plain JSON, gzip of one member and
//! gzip of many (as `pigz`/`cat a.gz b.gz` write), at block sizes from 4 KiB (hundreds of
//! blocks, an event cut at almost every block end) to 1 MiB; and `replay classify` /
//! `replay predict` give byte-identical files either way, from a file or from standard
//! input.

use std::io::{Cursor, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use replay_core::trace::{self, Trace, BLOCK_BYTES_VARIABLE};

use crate::common::{every_kineto_trace, replay};

fn inflate(bytes: &[u8]) -> Vec<u8> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes.to_vec();
    }
    let mut json = Vec::new();
    MultiGzDecoder::new(bytes)
        .read_to_end(&mut json)
        .expect("inflate");
    json
}

/// `json` as `members` gzip members, cut at arbitrary bytes (inside events).
fn multi_member_gzip(json: &[u8], members: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in json.chunks(json.len().div_ceil(members).max(1)) {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(piece).expect("gzip");
        out.extend(encoder.finish().expect("gzip"));
    }
    out
}

fn assert_same(whole: &Trace, streamed: &Trace, what: &str) {
    assert_eq!(whole.source, streamed.source, "{what}: source");
    assert_eq!(whole.metadata, streamed.metadata, "{what}: metadata");
    assert_eq!(whole.platform, streamed.platform, "{what}: platform");
    assert_eq!(whole.counts, streamed.counts, "{what}: counts");
    assert_eq!(whole.events.len(), streamed.events.len(), "{what}: events");
    assert!(whole.events == streamed.events, "{what}: events differ");
    assert!(
        whole.strings.iter().eq(streamed.strings.iter()),
        "{what}: string ids differ"
    );
}

fn streamed(bytes: &[u8], path: &Path, block: usize) -> Trace {
    trace::load_reader_in_blocks(Cursor::new(bytes.to_vec()), path, block, 0)
        .unwrap_or_else(|e| panic!("streamed at {block}: {e}"))
}

#[test]
fn streaming_gives_the_whole_file_parse_on_every_trace() {
    for path in every_kineto_trace() {
        let stored = std::fs::read(&path).expect("read trace");
        let json = inflate(&stored);
        let name = path.display().to_string();
        let whole = trace::load_bytes(stored.clone(), &path).unwrap_or_else(|e| panic!("{e}"));
        assert!(whole.counts.kept > 0, "{name}: no events");
        // The stored bytes (gzip of one member, or plain), at sizes that cut the JSON into
        // 1 to thousands of blocks.
        // 4 KiB blocks (an event cut at nearly every block's end) on the smaller traces only:
        // thousands of blocks on the larger ones would only slow the test.
        let smallest = if json.len() < (4 << 20) { 4096 } else { 65_537 };
        for block in [smallest, 65_537, 1 << 20, 64 << 20] {
            assert_same(
                &whole,
                &streamed(&stored, &path, block),
                &format!("{name} @{block}"),
            );
        }
        // The same JSON plain.
        let plain_whole = trace::load_bytes(json.clone(), &path).unwrap();
        for block in [smallest, 300_000] {
            let plain = streamed(&json, &path, block);
            assert_same(&plain_whole, &plain, &format!("{name} plain @{block}"));
            assert!(plain.events == whole.events);
        }
        // Several gzip members, cut mid-event.
        let members = multi_member_gzip(&json, 5);
        let members_whole = trace::load_bytes(members.clone(), &path).unwrap();
        assert_same(
            &members_whole,
            &streamed(&members, &path, 50_000),
            &format!("{name} 5 members"),
        );
        assert!(members_whole.events == whole.events);
    }
}

#[test]
fn events_handed_to_a_sink_a_chunk_at_a_time_are_the_whole_file_parse_in_order() {
    // A streamed classify or predict takes the events as each block's chunks are parsed (each
    // chunk's string ids renamed to the trace's, in place): the events the sink saw, in the
    // order it saw them, are the whole-file parse's, with the same string ids.
    for path in every_kineto_trace() {
        let json = inflate(&std::fs::read(&path).expect("read trace"));
        let name = path.display().to_string();
        let whole = trace::load_bytes(json.clone(), &path).unwrap_or_else(|e| panic!("{e}"));
        let block = if json.len() < (4 << 20) {
            4096
        } else {
            1 << 20
        };
        let mut seen = Vec::new();
        let mut calls = 0usize;
        let read = trace::stream_reader_in_blocks(
            Cursor::new(json),
            &path,
            block,
            &mut |events: &[trace::Event], _: &trace::StringTable| {
                calls += 1;
                seen.extend_from_slice(events);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            read.events.is_empty(),
            "{name}: the streamed trace kept events"
        );
        assert_eq!(seen.len(), whole.events.len(), "{name}: events");
        assert!(seen == whole.events, "{name}: the sink's events differ");
        assert!(
            whole.strings.iter().eq(read.strings.iter()),
            "{name}: string ids differ"
        );
        assert_eq!(whole.counts, read.counts, "{name}: counts");
        if whole.events.len() > 10_000 {
            assert!(
                calls > 2,
                "{name}: {calls} calls, not a block's chunks at a time"
            );
        }
    }
}

#[test]
fn a_large_file_is_streamed_by_load_and_reads_the_same() {
    // `trace::load` streams a file larger than a block: with 64 KiB blocks the 26 MB
    // cudagraph trace is ~400 blocks, and the result is the in-memory one.
    let path = crate::common::shared_traces().join("a100_train_cudagraph_rank0.json.gz");
    let json = inflate(&std::fs::read(&path).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("cudagraph.json");
    std::fs::write(&plain, &json).unwrap();
    let whole = trace::load_bytes(json, &plain).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(["classify", "--json", "--trace"])
        .arg(&plain)
        .arg("--out")
        .arg(dir.path().join("a.json"))
        .env(BLOCK_BYTES_VARIABLE, "65536")
        .output()
        .unwrap();
    assert!(output.status.success());
    let signatures: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sha = signatures["source"]["sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha, whole.source.sha256);
}

#[test]
fn a_trace_streamed_on_a_share_of_the_cores_reads_the_same() {
    // Ranks read side by side parse each block in fewer chunks (one, on this 2-core machine):
    // 4 MiB blocks of the 26 MB cudagraph trace, each cut in as many chunks as the cores
    // allow, then in one, give the whole-file parse either way.
    let path = crate::common::shared_traces().join("a100_train_cudagraph_rank0.json.gz");
    let json = inflate(&std::fs::read(&path).unwrap());
    let whole = trace::load_bytes(json.clone(), &path).unwrap();
    for share in [1, 2, 64] {
        let read = trace::with_cores_shared_by(share, || streamed(&json, &path, 4 << 20));
        assert_same(&whole, &read, &format!("a {share}th of the cores"));
    }
}

/// What a run of `replay` gave: its exit status, standard output and the files it wrote.
#[derive(PartialEq)]
struct Run {
    status: Option<i32>,
    stdout: Vec<u8>,
    files: Vec<Option<Vec<u8>>>,
}

/// Runs `replay` with `args` in `dir`, the block size set (or not), standard input from
/// `stdin` (or none); the files named `outputs` it wrote are read back and removed.
fn run_replay(
    dir: &Path,
    args: &[&str],
    block: Option<&str>,
    stdin: Option<&Path>,
    outputs: &[&str],
) -> Run {
    let mut cmd = replay();
    cmd.current_dir(dir).args(args);
    match block {
        Some(block) => cmd.env(BLOCK_BYTES_VARIABLE, block),
        None => cmd.env_remove(BLOCK_BYTES_VARIABLE),
    };
    if let Some(stdin) = stdin {
        cmd.pipe_stdin(stdin).unwrap();
    }
    let output = cmd.output().unwrap();
    let files = outputs
        .iter()
        .map(|out| {
            let path = dir.join(out);
            let bytes = std::fs::read(&path).ok();
            let _ = std::fs::remove_file(&path);
            bytes
        })
        .collect();
    Run {
        status: output.status.code(),
        stdout: output.stdout,
        files,
    }
}

/// `bytes` with the one place that names the input (`"path": ...`) cut out.
fn without_source_path(bytes: &[u8], path: &str) -> String {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let named = format!("\"path\": {}", serde_json::to_string(path).unwrap());
    assert!(text.contains(&named), "the output names {path}");
    text.replacen(&named, "\"path\": <input>", 1)
}

#[test]
fn classify_and_predict_write_the_same_files_streamed_or_whole_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut predicted = 0;
    for path in every_kineto_trace() {
        // Plain JSON, so that 64 KiB blocks cut it into many.
        let json = inflate(&std::fs::read(&path).unwrap());
        let file = dir.path().join("trace.json");
        std::fs::write(&file, &json).unwrap();
        let file_arg = file.to_str().unwrap();
        let name = path.display().to_string();

        let classify = ["classify", "--trace", file_arg, "--out", "s.json"];
        let whole = run_replay(dir.path(), &classify, None, None, &["s.json"]);
        assert_eq!(whole.status, Some(0), "{name}: classify failed");
        let streamed = run_replay(dir.path(), &classify, Some("65536"), None, &["s.json"]);
        assert!(whole == streamed, "{name}: classify differs when streamed");
        // Over a 1 KiB budget: the streamed classify (signature::fold), segments of 1024
        // records on disk; a trace of host ops alone is classified in memory, saying so.
        let budget = [&classify[..], &["--memory-budget", "1K"]].concat();
        let folded = run_replay(dir.path(), &budget, None, None, &["s.json"]);
        assert!(
            whole == folded,
            "{name}: classify differs under --memory-budget"
        );
        let stdin = ["classify", "--trace", "-", "--out", "s.json"];
        let piped = run_replay(dir.path(), &stdin, Some("65536"), Some(&file), &["s.json"]);
        let (Some(whole_file), Some(piped_file)) = (&whole.files[0], &piped.files[0]) else {
            panic!("{name}: no signature file");
        };
        assert_eq!(
            without_source_path(whole_file, file_arg),
            without_source_path(piped_file, "-"),
            "{name}: classify from standard input"
        );
        // Standard input under a budget streams; host ops alone cannot be, and say so.
        let stdin_budget = [&stdin[..], &["--memory-budget", "1K"]].concat();
        let piped_folded = run_replay(dir.path(), &stdin_budget, None, Some(&file), &["s.json"]);
        if trace::load(&path).unwrap().platform == trace::Platform::Cpu {
            assert_eq!(piped_folded.status, Some(2), "{name}: host ops from a pipe");
        } else {
            assert!(
                piped == piped_folded,
                "{name}: piped classify under --memory-budget"
            );
        }

        let predict = [
            "predict",
            "--trace",
            file_arg,
            "--json",
            "--perfetto",
            "p.trace.json",
        ];
        let outputs = ["p.trace.json"];
        let whole = run_replay(dir.path(), &predict, None, None, &outputs);
        let streamed = run_replay(dir.path(), &predict, Some("65536"), None, &outputs);
        assert!(whole == streamed, "{name}: predict differs when streamed");
        predicted += usize::from(whole.status == Some(0) && whole.files[0].is_some());
    }
    assert!(predicted >= 10, "predict ran on only {predicted} traces");
}

/// A trace of `events` host ops alone (no GPU activity), each about 300 bytes of JSON.
fn host_ops_trace(events: usize) -> Vec<u8> {
    let name = format!("aten::add_{}", "x".repeat(200));
    let mut json = String::from("{\"traceEvents\": [\n");
    for i in 0..events {
        if i > 0 {
            json.push_str(",\n");
        }
        json.push_str(&format!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{name}\", \"pid\": 1, \"tid\": 1, \
             \"ts\": {}, \"dur\": 1, \"args\": {{\"External id\": {}}}}}",
            i * 2,
            i + 1
        ));
    }
    json.push_str("\n]}\n");
    json.into_bytes()
}

/// `replay classify --trace -` without `--memory-budget`: standard input's first 64 MiB are
/// read ahead. A trace that ends within them is held in memory (host ops alone classify);
/// a longer one streams (memory independent of its size), where host ops alone cannot be
/// classified, and the error says why and what to do.
#[test]
fn standard_input_is_held_when_it_ends_within_the_read_ahead_and_streamed_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let classify = |trace: &Path| {
        let mut cmd = replay();
        cmd.current_dir(dir.path())
            .args(["classify", "--trace", "-", "--out", "s.json"])
            .env_remove(BLOCK_BYTES_VARIABLE)
            .env("TMPDIR", dir.path());
        cmd.pipe_stdin(trace).unwrap();
        cmd.output().unwrap()
    };
    // Streamed, host ops alone are refused: exit 2, the message holding `words`.
    let streams_and_is_refused = |trace: &Path, words: &[&str]| {
        let streamed = classify(trace);
        let stderr = String::from_utf8_lossy(&streamed.stderr);
        assert_eq!(streamed.status.code(), Some(2), "{stderr}");
        assert!(words.iter().all(|w| stderr.contains(w)), "{stderr}");
    };
    let small = dir.path().join("small.json");
    std::fs::write(&small, host_ops_trace(1000)).unwrap();
    let held = classify(&small);
    assert_eq!(held.status.code(), Some(0), "{:?}", held);
    assert!(dir.path().join("s.json").exists());
    std::fs::remove_file(dir.path().join("s.json")).unwrap();

    let large = dir.path().join("large.json");
    let bytes = host_ops_trace(240_000);
    assert!(bytes.len() > 64 << 20, "{} bytes", bytes.len());
    std::fs::write(&large, bytes).unwrap();
    streams_and_is_refused(&large, &["no GPU activity", "beyond 64 MiB"]);
    assert!(!dir.path().join("s.json").exists(), "a file was written");

    // A gzip that ends within the read-ahead but holds 256 MiB of JSON or more streams (it
    // is counted at what its beginning inflates to, not at 4x its size nor at its last
    // member's trailer): host ops alone then exit 2 as above. It was held before.
    let json = host_ops_trace(950_000);
    assert!(json.len() as u64 >= 256 << 20, "{} bytes", json.len());
    let mut gz = Vec::new();
    let (body, last) = json.split_at(json.len() - 10);
    for member in body.chunks(32 << 20).chain([last]) {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(member).unwrap();
        gz.extend(encoder.finish().unwrap());
    }
    assert!(
        gz.len() < 64 << 20 && (gz.len() as u64) * 4 < 256 << 20,
        "{} bytes",
        gz.len()
    );
    let small_gzip = dir.path().join("large.json.gz");
    std::fs::write(&small_gzip, gz).unwrap();
    streams_and_is_refused(&small_gzip, &["no GPU activity", "256 MiB"]);
}

/// A trace of `events` ops whose names hold characters of two, three and four bytes; the
/// event `bad` (when given) has a byte that is not UTF-8 in its name.
fn multibyte_trace(events: usize, bad: Option<usize>) -> Vec<u8> {
    let mut json = b"{\"traceEvents\": [\n".to_vec();
    for i in 0..events {
        if i > 0 {
            json.extend_from_slice(b",\n");
        }
        json.extend_from_slice(
            format!(
                "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op \u{b5}s \u{2192} \u{1f600} {}",
                i % 37
            )
            .as_bytes(),
        );
        if bad == Some(i) {
            json.push(0xff);
        }
        json.extend_from_slice(
            format!(
                "\", \"pid\": 1, \"tid\": 1, \"ts\": {i}.5, \"dur\": 1, \"args\": {{\"External id\": {i}}}}}"
            )
            .as_bytes(),
        );
    }
    json.extend_from_slice(b"\n]}\n");
    json
}

#[test]
fn characters_of_several_bytes_read_the_same_wherever_a_block_ends() {
    // Odd block sizes put block ends inside characters of two to four bytes: each chunk is
    // checked as text by the thread that parses it, and the bytes after a block's last cut,
    // a character's first bytes among them, are carried into the next block.
    let path = Path::new("multibyte.json");
    let json = multibyte_trace(3000, None);
    let whole = trace::load_bytes(json.clone(), path).unwrap();
    assert_eq!(whole.counts.kept, 3000);
    for block in [4093, 4096, 65_537] {
        assert_same(&whole, &streamed(&json, path, block), &format!("@{block}"));
    }
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_its_offset_in_a_stream() {
    let path = Path::new("bad.json");
    let json = multibyte_trace(3000, Some(2000));
    let at = json.iter().position(|&b| b == 0xff).unwrap();
    assert!(trace::load_bytes(json.clone(), path).is_err());
    for block in [4093, 65_537] {
        let error = trace::load_reader_in_blocks(Cursor::new(json.clone()), path, block, 0)
            .err()
            .unwrap_or_else(|| panic!("@{block}: read"))
            .to_string();
        assert!(
            error.contains(&at.to_string()),
            "@{block}: {error} (byte {at})"
        );
    }
}

#[test]
fn a_stream_read_beside_others_takes_smaller_blocks() {
    let alone = trace::default_block_bytes();
    let shared = trace::with_cores_shared_by(2, trace::default_block_bytes);
    assert!(alone >= 8 << 20, "{alone}");
    assert!(
        (2 << 20..alone).contains(&shared),
        "{shared} against {alone}"
    );
    // Nothing changes outside the call.
    assert_eq!(trace::default_block_bytes(), alone);
}
