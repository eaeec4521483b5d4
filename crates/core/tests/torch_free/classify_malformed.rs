//! Damaged and malformed trace files give a `TraceError` that names the file and the
//! problem; nothing panics, including on randomly mutated real traces.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};

use replay_core::signature;
use replay_core::trace::{self, TraceError};

fn shared_traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kineto")
}

/// A file in a fresh directory under the system temp directory (tests run in parallel),
/// removed with its directory when dropped.
struct ScratchFile {
    path: PathBuf,
}

impl ScratchFile {
    fn new(name: &str, bytes: &[u8]) -> ScratchFile {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "classify-malformed-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write temp file");
        ScratchFile { path }
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut json = Vec::new();
    GzDecoder::new(bytes)
        .read_to_end(&mut json)
        .expect("gunzip");
    json
}

fn real_trace_json(name: &str) -> Vec<u8> {
    gunzip(&std::fs::read(shared_traces().join(format!("{name}.json.gz"))).expect("read trace"))
}

/// Loads `bytes` from a file called `name` and returns the error, checking that its
/// message names the file.
fn load_error(name: &str, bytes: &[u8]) -> TraceError {
    let file = ScratchFile::new(name, bytes);
    let path = &file.path;
    let error = match trace::load(path) {
        Ok(_) => panic!("{name} loaded, expected an error"),
        Err(error) => error,
    };
    let message = error.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message names the file: {message}"
    );
    assert_eq!(error.path(), path.as_path());
    error
}

fn minimal_trace(events: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "schemaVersion": 1, "traceEvents": events })).expect("json")
}

fn kernel_event() -> Value {
    json!({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2,
           "args": {"correlation": 1, "stream": 7}})
}

#[test]
fn empty_file_is_reported() {
    let error = load_error("empty.json", b"");
    assert!(matches!(error, TraceError::Empty { .. }), "{error}");
    assert!(error.to_string().contains("empty"));
}

#[test]
fn truncated_gzip_is_reported() {
    let compressed =
        std::fs::read(shared_traces().join("h100_bert_small_infer.json.gz")).expect("read");
    let error = load_error("truncated.json.gz", &compressed[..compressed.len() / 2]);
    assert!(
        matches!(error, TraceError::TruncatedGzipAt { stored_offset, .. } if stored_offset > 0),
        "{error}"
    );
    assert!(error.to_string().contains("truncated"));
}

#[test]
fn corrupt_gzip_is_reported() {
    let mut compressed = std::fs::read(shared_traces().join("cpu_only.json.gz")).expect("read");
    for byte in compressed.iter_mut().skip(20).take(200) {
        *byte ^= 0x5a;
    }
    let error = load_error("corrupt.json.gz", &compressed);
    assert!(
        matches!(
            error,
            TraceError::CorruptGzipAt { .. } | TraceError::TruncatedGzipAt { .. }
        ),
        "{error}"
    );
}

#[test]
fn invalid_json_is_reported_with_line_and_column() {
    let error = load_error(
        "bad.json",
        b"{\n  \"traceEvents\": [\n    {\"ph\": \"X\",, }\n  ]\n}\n",
    );
    match &error {
        TraceError::InvalidJson { line, column, .. } => {
            assert_eq!((*line, *column), (3, 16), "{error}")
        }
        other => panic!("expected InvalidJson, got {other}"),
    }
    assert!(error.to_string().contains("line 3, column 16"));
}

#[test]
fn invalid_json_inside_gzip_is_reported() {
    let error = load_error("bad.json.gz", &gzip(b"{\"traceEvents\": [}"));
    assert!(matches!(error, TraceError::InvalidJson { .. }), "{error}");
}

#[test]
fn truncated_json_is_reported() {
    let json = real_trace_json("a100_triton_example");
    let error = load_error("cut.json", &json[..json.len() / 2]);
    assert!(matches!(error, TraceError::TruncatedJson { .. }), "{error}");
}

#[test]
fn wrong_top_level_types_are_reported() {
    for (text, found) in [
        (&b"[{\"ph\": \"X\"}]"[..], "an array"),
        (b"\"trace\"", "a string"),
        (b"42", "a number"),
        (b"null", "null"),
        (b"   \n ", "missing"),
    ] {
        let error = load_error("top.json", text);
        match &error {
            TraceError::WrongTopLevelType { found: what, .. } => {
                assert!(what.starts_with(found), "{error}")
            }
            other => panic!("expected WrongTopLevelType, got {other}"),
        }
    }
}

#[test]
fn text_that_only_starts_like_a_scalar_is_invalid_json() {
    // Notes, a log or a CSV handed over as a trace: not JSON at all, so the message says
    // where the parser stopped instead of calling the whole file a boolean, null or a number.
    for text in [
        &b"these are my notes\n"[..],
        b"false start of a log line\n",
        b"nothing to see here",
        b"2024-05-01,step,us\n1,2,3\n",
    ] {
        let error = load_error("notes.txt", text);
        assert!(
            matches!(
                error,
                TraceError::InvalidJson { line: 1, .. }
                    | TraceError::UnexpectedValue { line: 1, .. }
            ),
            "{:?}: {error}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn missing_trace_events_is_reported() {
    let error = load_error(
        "meta.json",
        br#"{"schemaVersion": 1, "deviceProperties": []}"#,
    );
    assert!(
        matches!(error, TraceError::MissingTraceEvents { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("traceEvents"));
}

#[test]
fn trace_events_of_the_wrong_type_are_reported() {
    let error = load_error("events.json", br#"{"traceEvents": {"ph": "X"}}"#);
    assert!(
        matches!(error, TraceError::UnexpectedValue { .. }),
        "{error}"
    );
}

#[test]
fn events_missing_required_fields_are_reported() {
    for field in ["ph", "name", "pid", "tid", "ts", "dur"] {
        let mut event = kernel_event();
        event.as_object_mut().expect("object").remove(field);
        let events = json!([{"ph": "M", "name": "process_name", "pid": 0, "args": {}}, event]);
        let error = load_error("missing.json", &minimal_trace(events));
        match &error {
            TraceError::MissingField {
                index,
                field: missing,
                ..
            } => {
                assert_eq!((*index, *missing), (1, field), "{error}");
            }
            other => panic!("expected MissingField for {field}, got {other}"),
        }
        assert!(error.to_string().contains(&format!("`{field}`")), "{error}");
    }
}

#[test]
fn fields_of_the_wrong_type_are_reported() {
    let mut event = kernel_event();
    event["ts"] = json!("soon");
    let error = load_error("wrong-ts.json", &minimal_trace(json!([event])));
    assert!(
        matches!(error, TraceError::InvalidField { field: "ts", .. }),
        "{error}"
    );

    let mut event = kernel_event();
    event["dur"] = json!(-3);
    let error = load_error("negative.json", &minimal_trace(json!([event])));
    assert!(
        matches!(error, TraceError::InvalidField { field: "dur", .. }),
        "{error}"
    );

    let error = load_error(
        "not-an-event.json",
        &minimal_trace(json!([kernel_event(), 17])),
    );
    match &error {
        TraceError::UnexpectedValue { message, .. } => {
            assert!(message.contains("traceEvents[1]"), "{error}")
        }
        other => panic!("expected UnexpectedValue, got {other}"),
    }
}

#[test]
fn invalid_utf8_is_skipped_where_unread_and_reported_where_read() {
    let mut unread =
        br#"{"traceEvents": [{"ph": "i", "name": "x", "args": {"Call stack": "a"#.to_vec();
    unread.extend_from_slice(b"\xff\xfe");
    unread.extend_from_slice(br#"b"}}]}"#);
    let scratch = ScratchFile::new("latin1-stack.json", &unread);
    let path = scratch.path.clone();
    assert!(
        trace::load(&path).is_ok(),
        "bytes in a skipped string do not matter"
    );

    let mut read = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"#.to_vec();
    read.extend_from_slice(b"\xff");
    read.extend_from_slice(br#"", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}"#);
    let error = load_error("latin1-name.json", &read);
    assert!(
        matches!(error, TraceError::InvalidJson { line: 1, .. }),
        "{error}"
    );
}

#[test]
fn gzip_is_detected_by_content_not_by_name() {
    let json = real_trace_json("a100_triton_example");
    let plain_named_gz = ScratchFile::new("plain.json.gz", &json);
    let gz_named_json = ScratchFile::new("compressed.json", &gzip(&json));
    let a = trace::load(&plain_named_gz.path).unwrap_or_else(|e| panic!("{e}"));
    let b = trace::load(&gz_named_json.path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!a.source.gzipped && b.source.gzipped);
    assert_eq!(a.events, b.events);
}

#[test]
fn unknown_keys_and_categories_are_ignored() {
    let events = json!([
        {"ph": "X", "cat": "brand_new_category", "name": "x", "ts": 1, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": 1, "pid": 1, "tid": 1, "s": "t"},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 10, "pid": "1", "tid": "1",
         "args": {"External id": 3, "Some future key": [1, {"a": null}]}, "extra": true},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, "pid": 1, "tid": 1,
         "args": {"correlation": 9, "cbid": 211}},
        {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "ts": 5, "dur": 3, "pid": 0, "tid": "stream 7",
         "args": {"correlation": 9, "stream": "0x7", "grid": [1, 2], "block": "odd"}}
    ]);
    let mut document = json!({"traceEvents": events, "somethingNew": {"nested": [1, 2]}});
    document["schemaVersion"] = json!("one");
    let scratch = ScratchFile::new(
        "tolerant.json",
        &serde_json::to_vec(&document).expect("json"),
    );
    let path = scratch.path.clone();
    let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let file = signature::classify(&trace, &path);
    assert_eq!(file.summary.total.invocations, 1);
    let gemm = &file.signatures[0];
    assert_eq!(
        gemm.op.as_ref().map(|op| op.name.as_str()),
        Some("aten::mm")
    );
    assert_eq!(
        (gemm.grid, gemm.block),
        (None, None),
        "malformed launch dims read as absent"
    );
    assert_eq!(gemm.streams, vec![7]);
}

// ---- property tests: mutated real traces never panic ----

/// Small real traces, decompressed once.
fn bases() -> &'static [(&'static str, Vec<u8>)] {
    static BASES: OnceLock<Vec<(&'static str, Vec<u8>)>> = OnceLock::new();
    BASES.get_or_init(|| {
        [
            "a100_triton_example",
            "a100_multistream_sync",
            "cpu_only",
            "mi250_rocm_train",
        ]
        .into_iter()
        .map(|name| (name, real_trace_json(name)))
        .collect()
    })
}

/// Loading and classifying must return, never panic; a loaded trace must classify and
/// its signature file serialise.
fn load_and_classify_without_panic(bytes: Vec<u8>) {
    let path = Path::new("mutated.json");
    if let Ok(trace) = trace::load_bytes(bytes, path) {
        let file = signature::classify(&trace, path);
        let _ = file.summary_table();
        serde_json::to_string(&file).expect("a signature file always serialises");
    }
}

#[derive(Debug, Clone)]
enum ByteMutation {
    Truncate(usize),
    Overwrite(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize, usize),
    Insert(usize, &'static str),
}

const TOKENS: [&str; 12] = [
    "null",
    "\"x\"",
    "[]",
    "{}",
    "-1",
    "1e999",
    "\"\\u0000\"",
    ",",
    "]",
    "}",
    "[[[[",
    "18446744073709551616",
];

fn byte_mutation() -> impl Strategy<Value = ByteMutation> {
    prop_oneof![
        any::<usize>().prop_map(ByteMutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| ByteMutation::Overwrite(at, byte)),
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| ByteMutation::Delete(at, len)),
        (any::<usize>(), 1usize..256, any::<usize>())
            .prop_map(|(at, len, to)| ByteMutation::Duplicate(at, len, to)),
        (any::<usize>(), proptest::sample::select(&TOKENS[..]))
            .prop_map(|(at, token)| ByteMutation::Insert(at, token)),
    ]
}

fn apply_bytes(mut bytes: Vec<u8>, mutation: &ByteMutation) -> Vec<u8> {
    let len = bytes.len().max(1);
    match *mutation {
        ByteMutation::Truncate(at) => bytes.truncate(at % len),
        ByteMutation::Overwrite(at, byte) => {
            if let Some(b) = bytes.get_mut(at % len) {
                *b = byte;
            }
        }
        ByteMutation::Delete(at, count) => {
            let start = at % len;
            let end = (start + count).min(bytes.len());
            bytes.drain(start.min(end)..end);
        }
        ByteMutation::Duplicate(at, count, to) => {
            let start = at % len;
            let end = (start + count).min(bytes.len());
            let piece: Vec<u8> = bytes
                .get(start..end)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let to = (to % len).min(bytes.len());
            bytes.splice(to..to, piece);
        }
        ByteMutation::Insert(at, token) => {
            let at = (at % len).min(bytes.len());
            bytes.splice(at..at, token.bytes());
        }
    }
    bytes
}

/// Fields whose type or presence a mutation changes, including the GEMM inputs that
/// classification parses.
const FIELDS: [&str; 16] = [
    "ph",
    "cat",
    "name",
    "pid",
    "tid",
    "ts",
    "dur",
    "args",
    "args/correlation",
    "args/External id",
    "args/Input Dims",
    "args/Input Strides",
    "args/Input type",
    "args/Concrete Inputs",
    "args/grid",
    "args/bytes",
];

fn replacement_values() -> Vec<Option<Value>> {
    vec![
        None,
        Some(Value::Null),
        Some(json!(-1)),
        Some(json!(0)),
        Some(json!(i64::MAX)),
        Some(json!(u64::MAX)),
        Some(json!(1e308)),
        Some(json!(9_000_000_000_000_000i64)),
        Some(json!(-9_000_000_000_000_000i64)),
        Some(json!("4458676522690.6548")),
        Some(json!("text")),
        Some(json!("")),
        Some(json!([])),
        Some(json!([[]])),
        Some(json!([[-5, 3], [3, -2]])),
        Some(json!([[2, 3], [3, 4], [4]])),
        Some(json!([[0, 0], [0, 0]])),
        Some(json!([[i64::MAX, 2], [2, i64::MAX]])),
        Some(json!([["c10::BFloat16"], 7, null])),
        Some(json!({"nested": [1, 2, 3]})),
        Some(json!(true)),
        Some(json!("cpu_op")),
        Some(json!("kernel")),
        Some(json!("aten::addmm")),
    ]
}

fn apply_field(document: &mut Value, event: usize, field: &str, value: &Option<Value>) {
    let Some(events) = document
        .get_mut("traceEvents")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    if events.is_empty() {
        return;
    }
    let count = events.len();
    let Some(target) = events.get_mut(event % count) else {
        return;
    };
    let (parent, key) = match field.split_once('/') {
        Some((outer, inner)) => (target.get_mut(outer), inner),
        None => (Some(target), field),
    };
    if let Some(Value::Object(object)) = parent {
        match value {
            Some(v) => {
                object.insert(key.to_owned(), v.clone());
            }
            None => {
                object.remove(key);
            }
        }
    }
}

/// Bounded for CI (96 cases per property); `PROPTEST_CASES=N` runs longer.
fn proptest_config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(96);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Sizes and strides that stress shape arithmetic: zero, negative, huge.
fn shape_list() -> impl Strategy<Value = Value> {
    let size = proptest::sample::select(vec![
        0i64,
        1,
        2,
        3,
        5,
        64,
        4096,
        -1,
        -7,
        i64::MAX,
        i64::MIN,
        1 << 40,
    ]);
    let entry = prop_oneof![
        proptest::collection::vec(size.clone(), 0..5).prop_map(|v| json!(v)),
        proptest::collection::vec(proptest::collection::vec(size, 0..3), 0..3)
            .prop_map(|v| json!(v)),
        Just(Value::Null),
        Just(json!("")),
    ];
    proptest::collection::vec(entry, 0..7).prop_map(Value::Array)
}

fn type_list() -> impl Strategy<Value = Value> {
    let name = proptest::sample::select(vec![
        "float",
        "c10::BFloat16",
        "c10::Half",
        "signed char",
        "Scalar",
        "TensorList",
        "",
        "GenericList",
        "long int",
    ]);
    proptest::collection::vec(name, 0..7).prop_map(|v| json!(v))
}

fn concrete_list() -> impl Strategy<Value = Value> {
    let text = proptest::sample::select(vec![
        "", "1", "0.", "-2.5", "True", "15", "99", "nan", "1e999", "[1, 2]",
    ]);
    proptest::collection::vec(text, 0..9).prop_map(|v| json!(v))
}

/// The GEMM ops of the ROCm trace (which records strides) and the names of every op
/// that GEMM derivation understands.
const GEMM_OP_NAMES: [&str; 10] = [
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::_addmm_activation",
    "aten::_scaled_mm",
    "aten::_int_mm",
    "aten::linear",
    "aten::matmul",
    "aten::addmv",
];

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn arbitrary_inputs_of_gemm_ops_never_panic(
        op_name in proptest::sample::select(&GEMM_OP_NAMES[..]),
        dims in shape_list(),
        strides in shape_list(),
        types in type_list(),
        concrete in concrete_list(),
    ) {
        let mut document: Value = serde_json::from_slice(&bases()[3].1).expect("base parses");
        if let Some(events) = document.get_mut("traceEvents").and_then(Value::as_array_mut) {
            for event in events.iter_mut() {
                let is_gemm_op = event.get("cat") == Some(&json!("cpu_op"))
                    && matches!(event.get("name").and_then(Value::as_str), Some("aten::mm" | "aten::addmm"));
                if is_gemm_op {
                    event["name"] = json!(op_name);
                    event["args"]["Input Dims"] = dims.clone();
                    event["args"]["Input Strides"] = strides.clone();
                    event["args"]["Input type"] = types.clone();
                    event["args"]["Concrete Inputs"] = concrete.clone();
                }
            }
        }
        load_and_classify_without_panic(serde_json::to_vec(&document).expect("json"));
    }

    #[test]
    fn byte_level_mutations_of_real_traces_never_panic(
        base in 0usize..4,
        mutations in proptest::collection::vec(byte_mutation(), 1..6),
        compress in any::<bool>(),
    ) {
        let mut bytes = bases()[base % bases().len()].1.clone();
        for mutation in &mutations {
            bytes = apply_bytes(bytes, mutation);
        }
        load_and_classify_without_panic(if compress { gzip(&bytes) } else { bytes });
    }

    #[test]
    fn gzip_stream_mutations_never_panic(
        base in 0usize..4,
        mutations in proptest::collection::vec(byte_mutation(), 1..4),
    ) {
        let mut bytes = gzip(&bases()[base % bases().len()].1);
        for mutation in &mutations {
            bytes = apply_bytes(bytes, mutation);
        }
        load_and_classify_without_panic(bytes);
    }

    #[test]
    fn field_level_mutations_of_real_traces_never_panic(
        base in 0usize..4,
        edits in proptest::collection::vec(
            (any::<usize>(), proptest::sample::select(&FIELDS[..]), proptest::sample::select(replacement_values())),
            1..8,
        ),
    ) {
        let mut document: Value = serde_json::from_slice(&bases()[base % bases().len()].1).expect("base parses");
        for (event, field, value) in &edits {
            apply_field(&mut document, *event, field, value);
        }
        load_and_classify_without_panic(serde_json::to_vec(&document).expect("json"));
    }
}
