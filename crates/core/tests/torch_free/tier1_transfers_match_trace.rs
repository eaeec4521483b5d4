//! Tier 1: the direction, endpoints and byte count of every copy and memset signature, and
//! how many times each runs, against the trace's own events, read here straight from the
//! JSON (not through replay's parser): `Memcpy`/`Memset` events (`gpu_memcpy`/`gpu_memset`,
//! PyTorch 1.9's `Memcpy`/`Memset`), their name (`Memcpy HtoD (Pageable -> Device)`) and
//! `args.bytes` (on ROCm, the launch call's `size`).

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use replay_core::signature::{self, Tier, WorkKind};
use replay_core::trace;
use serde_json::Value;

fn raw_events(path: &Path) -> Vec<Value> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("trace opens"))
        .read_to_string(&mut text)
        .expect("trace gunzips");
    let json: Value = serde_json::from_str(&text).expect("trace is JSON");
    match json {
        Value::Object(mut top) => match top.remove("traceEvents") {
            Some(Value::Array(events)) => events,
            _ => panic!("{}: no traceEvents", path.display()),
        },
        Value::Array(events) => events,
        _ => panic!("{}: not a trace", path.display()),
    }
}

/// What one copy or memset moves: `("HtoD", "Pageable", "Device", bytes)`, or
/// `("memset", "", "", bytes)`.
type Transfer = (String, String, String, u64);

/// `Memcpy HtoD (Pageable -> Device)` -> `("HtoD", "Pageable", "Device")`.
fn copy_from_name(name: &str) -> (String, String, String) {
    let rest = name
        .strip_prefix("Memcpy ")
        .unwrap_or_else(|| panic!("copy name {name:?}"));
    let (kind, endpoints) = rest
        .split_once(" (")
        .unwrap_or_else(|| panic!("copy name {name:?} without endpoints"));
    let (src, dst) = endpoints
        .trim_end_matches(')')
        .split_once(" -> ")
        .unwrap_or_else(|| panic!("copy name {name:?}"));
    (kind.to_owned(), src.to_owned(), dst.to_owned())
}

fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// The trace's copies and memsets: per transfer, the number of those launched by a runtime or
/// driver call of the trace (same `args.correlation`); and per event name, the number with
/// no such call (which replay keeps apart as unattributed).
fn transfers_in_trace(events: &[Value]) -> (BTreeMap<Transfer, u64>, BTreeMap<String, u64>) {
    let category = |e: &Value| e["cat"].as_str().unwrap_or("").to_owned();
    let mut launch_sizes: HashMap<u64, Option<u64>> = HashMap::new();
    for e in events {
        if matches!(
            category(e).as_str(),
            "cuda_runtime" | "cuda_driver" | "Runtime"
        ) {
            if let Some(correlation) = as_u64(&e["args"]["correlation"]) {
                launch_sizes.insert(correlation, as_u64(&e["args"]["size"]));
            }
        }
    }
    let mut launched = BTreeMap::new();
    let mut unlaunched = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let cat = category(e);
        let is_copy = matches!(cat.as_str(), "gpu_memcpy" | "Memcpy");
        let is_memset = matches!(cat.as_str(), "gpu_memset" | "Memset");
        if !is_copy && !is_memset {
            continue;
        }
        let name = e["name"].as_str().expect("named event");
        let launch = as_u64(&e["args"]["correlation"]).and_then(|c| launch_sizes.get(&c));
        let Some(launch_size) = launch else {
            *unlaunched.entry(name.to_owned()).or_insert(0) += 1;
            continue;
        };
        let bytes = as_u64(&e["args"]["bytes"])
            .or(*launch_size)
            .unwrap_or_else(|| panic!("{name}: no byte count in the event or its launch"));
        let (kind, src, dst) = if is_copy {
            copy_from_name(name)
        } else {
            ("memset".to_owned(), String::new(), String::new())
        };
        *launched.entry((kind, src, dst, bytes)).or_insert(0) += 1;
    }
    (launched, unlaunched)
}

fn text(v: &Value) -> String {
    v.as_str().expect("a string field").to_owned()
}

#[test]
fn copies_and_memsets_match_the_traces_events() {
    let traces = common::all_shared_traces();
    let mut kinds_seen = BTreeSet::new();
    for path in &traces {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (want, want_unlaunched) = transfers_in_trace(&raw_events(path));

        let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
        let file = signature::classify(&trace, path);
        let mut got: BTreeMap<Transfer, u64> = BTreeMap::new();
        for s in file.signatures.iter().filter(|s| s.tier == Tier::Copy) {
            // The signature's fields, as written to the signature file.
            let key = match (s.kind, &s.memcpy, &s.memset) {
                (WorkKind::Memcpy, Some(copy), None) => {
                    let copy = serde_json::to_value(copy).expect("memcpy serialises");
                    let from_name = copy_from_name(&s.name);
                    let key = (
                        text(&copy["kind"]),
                        text(&copy["src"]),
                        text(&copy["dst"]),
                        copy["bytes"].as_u64().expect("bytes"),
                    );
                    assert_eq!(
                        (&key.0, &key.1, &key.2),
                        (&from_name.0, &from_name.1, &from_name.2),
                        "{name}: {} says what the copy is",
                        s.name
                    );
                    key
                }
                (WorkKind::Memset, None, Some(set)) => {
                    ("memset".to_owned(), String::new(), String::new(), set.bytes)
                }
                other => panic!("{name}: tier-1 signature {} is {other:?}", s.name),
            };
            kinds_seen.insert(key.0.clone());
            *got.entry(key).or_insert(0) += s.count;
        }
        assert_eq!(
            got, want,
            "{name}: copies and memsets (kind, src, dst, bytes) -> count"
        );

        let mut got_unlaunched: BTreeMap<String, u64> = BTreeMap::new();
        for group in file
            .unattributed
            .iter()
            .filter(|g| matches!(g.kind, WorkKind::Memcpy | WorkKind::Memset))
        {
            *got_unlaunched.entry(group.name.clone()).or_insert(0) += group.count;
        }
        assert_eq!(
            got_unlaunched, want_unlaunched,
            "{name}: copies and memsets without a launch call"
        );
    }
    // The shared traces hold host-to-device, device-to-host and device-to-device copies and
    // memsets; a parser that lost one kind would fail above only for the traces holding it.
    for kind in ["HtoD", "DtoH", "DtoD", "memset"] {
        assert!(
            kinds_seen.contains(kind),
            "no {kind} signature in {kinds_seen:?}"
        );
    }
}
