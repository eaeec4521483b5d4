//! Bad input to the streaming reader, made from real trace bytes: a truncated or corrupt
//! file or stream anywhere (plain or gzip, mid-member, from standard input) ends `replay`
//! with exit status 2, a message naming the input and the byte offset (of the JSON, and of
//! the compressed stream for gzip), and no output file; a trace still being written (no
//! closing `]}`) is refused, saying so.

use std::io::{Read, Write};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use replay_core::trace::{self, TraceError, BLOCK_BYTES_VARIABLE};

use crate::common::{replay, shared_traces};

/// The bert trace's JSON (1.2 MB: ~20 blocks of 64 KiB).
fn bert_json() -> Vec<u8> {
    let stored = std::fs::read(shared_traces().join("h100_bert_small_infer.json.gz")).unwrap();
    let mut json = Vec::new();
    GzDecoder::new(&stored[..]).read_to_end(&mut json).unwrap();
    json
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn stream_error(bytes: Vec<u8>, name: &str) -> TraceError {
    match trace::load_reader_in_blocks(std::io::Cursor::new(bytes), Path::new(name), 65536, 0) {
        Ok(_) => panic!("{name} loaded, expected an error"),
        Err(error) => {
            assert!(error.to_string().starts_with(name), "{error}");
            error
        }
    }
}

/// The offset of the `{` of the first event that starts past `from` (Kineto writes each
/// event's `{` on a line of its own, `"ph"` first on the next).
fn event_start_after(json: &[u8], from: usize) -> usize {
    let text = std::str::from_utf8(json).unwrap();
    from + text[from..].find("{\n      \"ph\"").unwrap()
}

#[test]
fn a_trace_cut_mid_event_is_refused_as_truncated_or_still_being_written() {
    let json = bert_json();
    let event = event_start_after(&json, json.len() / 2);
    // Cut 40 bytes into an event, as a profiler still writing it leaves the file.
    let cut = &json[..event + 40];
    match stream_error(cut.to_vec(), "growing.json") {
        TraceError::TruncatedStream {
            offset,
            events,
            stored,
            ..
        } => {
            assert_eq!(offset, cut.len() as u64);
            assert!(events > 100, "{events}");
            assert_eq!(stored.0, None);
        }
        other => panic!("{other}"),
    }
    // Cut right after a complete event and its comma: still no `]}`.
    let after_comma = &json[..event];
    let error = stream_error(after_comma.to_vec(), "growing.json");
    assert!(
        matches!(error, TraceError::TruncatedStream { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("still being written"), "{error}");
    // Gzipped (one member, cut inside the compressed data): the gzip layer names both
    // offsets.
    let compressed = gzip(&json);
    let half = compressed.len() / 2;
    match stream_error(compressed[..half].to_vec(), "growing.json.gz") {
        TraceError::TruncatedGzipAt {
            stored_offset,
            json_offset,
            ..
        } => {
            assert_eq!(stored_offset, half as u64);
            assert!(json_offset > 0 && json_offset < json.len() as u64);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn garbage_mid_stream_is_named_with_its_byte_offset() {
    let mut json = bert_json();
    let at = event_start_after(&json, json.len() * 3 / 4) + 5;
    json[at] = b'#';
    match stream_error(json.clone(), "garbage.json") {
        TraceError::InvalidJsonAt { offset, stored, .. } => {
            assert_eq!(offset, at as u64);
            assert_eq!(stored.0, None);
        }
        other => panic!("{other}"),
    }
    // In the third of five gzip members: the JSON offset is exact, the compressed one is
    // where the reader had got to (past the member at fault, within a block).
    let fifth = json.len().div_ceil(5);
    let mut members = Vec::new();
    let mut third_member_end = 0;
    for (i, piece) in json.chunks(fifth).enumerate() {
        members.extend(gzip(piece));
        if i == 2 {
            third_member_end = members.len() as u64;
        }
    }
    match stream_error(members, "garbage.json.gz") {
        TraceError::InvalidJsonAt { offset, stored, .. } => {
            assert_eq!(offset, at as u64);
            assert!(
                stored.0.is_some_and(|s| s >= third_member_end),
                "{stored:?}"
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_corrupt_gzip_member_is_named_with_both_offsets() {
    let json = bert_json();
    let half = json.len() / 2;
    let first = gzip(&json[..half]);
    let mut second = gzip(&json[half..]);
    // Flip bytes inside the second member's deflate data.
    for byte in second.iter_mut().skip(200).take(64) {
        *byte ^= 0xa5;
    }
    let mut stream = first.clone();
    stream.extend(&second);
    match stream_error(stream, "corrupt.json.gz") {
        TraceError::CorruptGzipAt {
            stored_offset,
            json_offset,
            ..
        }
        | TraceError::TruncatedGzipAt {
            stored_offset,
            json_offset,
            ..
        } => {
            assert!(stored_offset > first.len() as u64, "{stored_offset}");
            assert!(json_offset >= half as u64, "{json_offset}");
        }
        // A flip can also inflate to text that is not JSON: named in the JSON.
        TraceError::InvalidJsonAt { offset, .. } => assert!(offset >= half as u64),
        other => panic!("{other}"),
    }
}

#[test]
fn replay_exits_2_naming_the_input_and_writes_nothing() {
    let json = bert_json();
    let dir = tempfile::tempdir().unwrap();
    let event = event_start_after(&json, json.len() / 3);
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &json[..event + 25]).unwrap();
    let mut garbage = json.clone();
    garbage[event + 3] = b'@';
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, &garbage).unwrap();
    let compressed = gzip(&json);
    let cut_gzip = dir.path().join("cut.json.gz");
    std::fs::write(&cut_gzip, &compressed[..compressed.len() * 2 / 3]).unwrap();
    // An older signature file at the output path stays as it was.
    let out = dir.path().join("out.json");
    std::fs::write(&out, b"previous").unwrap();

    for (input, stdin, block, names) in [
        (&truncated, false, "65536", "byte"),
        (&truncated, false, "", "byte"),
        (&truncated, true, "65536", "byte"),
        (&corrupt, false, "65536", "byte"),
        (&corrupt, true, "", "byte"),
        (&cut_gzip, false, "65536", "compressed byte"),
        (&cut_gzip, true, "", "compressed byte"),
    ] {
        for command in ["classify", "predict"] {
            let mut cmd = replay();
            cmd.current_dir(dir.path()).arg(command).arg("--trace");
            if stdin {
                cmd.arg("-").pipe_stdin(input).unwrap();
            } else {
                cmd.arg(input);
            }
            if command == "classify" {
                cmd.arg("--out").arg(&out);
            } else {
                cmd.arg("--perfetto").arg(dir.path().join("p.trace.json"));
            }
            match block {
                "" => cmd.env_remove(BLOCK_BYTES_VARIABLE),
                block => cmd.env(BLOCK_BYTES_VARIABLE, block),
            };
            let output = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let what = format!(
                "{command} {} (stdin {stdin}, block {block:?})",
                input.display()
            );
            assert_eq!(output.status.code(), Some(2), "{what}: {stderr}");
            let name = if stdin {
                "-:".to_owned()
            } else {
                input.display().to_string()
            };
            assert!(stderr.contains(&name), "{what}: {stderr}");
            assert!(stderr.contains(names), "{what}: {stderr}");
            assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        }
    }
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["corrupt.json", "cut.json.gz", "out.json", "truncated.json"]
    );
}
