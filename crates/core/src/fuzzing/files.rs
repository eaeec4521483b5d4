//! The JSON files replay reads back (signature files, `isolated.json`, calibration
//! profiles, a model's timing and the report built from them, shard manifests), the
//! `--shard` spec, and Execution Traces: each read from the fuzzer's bytes and, when
//! accepted, used as replay uses it. A file replay accepts must also survive being written
//! back and read again unchanged.

use std::path::Path;

use super::embedded::{embedded_cpu_trace, embedded_trace};
use super::target::text;
use crate::results::isolated::IsolatedResults;
use crate::signature::schema::SignatureFile;

/// Written with replay's JSON writer and read back: the same value, written the same way.
fn round_trip<T, E: std::fmt::Display>(value: &T, read: impl Fn(&[u8]) -> Result<T, E>)
where
    T: serde::Serialize,
{
    let written = crate::export::json::to_bytes(value);
    match read(&written) {
        Ok(again) => assert!(
            crate::export::json::to_bytes(&again) == written,
            "mismatch: written back, read again and written, it changed"
        ),
        Err(error) => panic!("mismatch: replay cannot read back what it wrote: {error}"),
    }
}

pub fn signature_file(data: &[u8]) {
    let path = Path::new("signatures.json");
    let read = |bytes: &[u8]| crate::signature::read_bytes(bytes, path);
    if let Ok(file) = read(data) {
        round_trip(&file, read);
        use_signature_file(&file);
    }
}

fn use_signature_file(file: &SignatureFile) {
    let _ = file.summary_table();
    let _ = crate::predict::SignatureCatalog::from_file(file);
}

pub fn isolated_json(data: &[u8]) {
    let path = Path::new("isolated.json");
    let read = |bytes: &[u8]| IsolatedResults::from_bytes(bytes, path);
    if let Ok(results) = read(data) {
        round_trip(&results, read);
        // What `replay predict --isolated` does with it, on a small real trace.
        if let Some(trace) = embedded_trace() {
            let _ = crate::predict::with_replayed_durations(trace, &results);
        }
    }
}

pub fn profile_json(data: &[u8]) {
    let path = Path::new("profile.json");
    let read = |bytes: &[u8]| crate::results::calibration::Profile::from_bytes(bytes, path);
    if let Ok(mut profile) = read(data) {
        round_trip(&profile, read);
        let _ = profile.stands_for("NVIDIA H100 80GB HBM3");
        profile.summarise();
    }
}

/// Up to three files separated by NUL bytes: a model's timing, an `isolated.json` and a
/// signature file. Each is read; when all three are, the comparison report is built from
/// them as `replay report` builds it.
pub fn report_json(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0);
    let timing = parts.next().and_then(|bytes| {
        crate::results::compiled_model::read_bytes(bytes, Path::new("timing.json")).ok()
    });
    let results = parts
        .next()
        .and_then(|bytes| IsolatedResults::from_bytes(bytes, Path::new("isolated.json")).ok());
    let file = parts
        .next()
        .and_then(|bytes| crate::signature::read_bytes(bytes, Path::new("signatures.json")).ok());
    if let (Some(timing), Some(results), Some(file)) = (timing, results, file) {
        let _ = crate::results::compiled_model::provenance(&timing);
        let _ = crate::results::compiled_model::measured_note(&timing);
        let context = crate::report::aggregate::Context {
            model: "fuzz.pt".into(),
            seq_len: 5,
            trace: None,
            signatures: "signatures.json".into(),
            timeline_predicted_us: Some(timing.median_us),
            timeline_interruptions: None,
            self_check: None,
            sequence_predicted_us: None,
            in_context_us: Default::default(),
            host_model_predicted_us: Some(timing.median_us),
            sequence_real_time_us: None,
            host_device: None,
            on_gpu: true,
        };
        let report = crate::report::aggregate::aggregate(&file, &results, &timing, context);
        let _ = crate::export::json::to_bytes(&report);
    }
}

/// Up to four shard manifests separated by NUL bytes (an empty one: a part without its
/// manifest), merged as `replay merge` plans it.
pub fn shard_manifest(data: &[u8]) {
    let mut found = Vec::new();
    for (at, bytes) in data.split(|&b| b == 0).take(4).enumerate() {
        let dir = std::path::PathBuf::from(format!("part{at}"));
        if bytes.is_empty() {
            found.push((dir, None));
            continue;
        }
        let read = |bytes: &[u8]| crate::shard::ShardManifest::from_bytes(bytes, &dir);
        let Ok(manifest) = read(bytes) else {
            return;
        };
        round_trip(&manifest, read);
        let _ = manifest.summary("cases", &dir);
        found.push((dir, Some(manifest)));
    }
    if let Ok(plan) = crate::shard::MergePlan::from_manifests(found) {
        assert_eq!(plan.ids().len(), plan.first().work_items);
        let _ = crate::shard::plan::rerun_command(plan.first(), 1);
    }
}

/// The first line is a `--shard` value; the other lines, `NAME=VALUE`, are the environment
/// `--shard auto` reads.
pub fn shard_spec(data: &[u8]) {
    let Some(text) = text(data) else {
        return;
    };
    let mut lines = text.lines();
    let spec = lines.next().unwrap_or_default();
    if let Ok(crate::shard::spec::ShardSpec::Fixed(shard)) = spec.parse() {
        let positions = shard.positions(1000);
        assert!(
            positions.iter().all(|&at| shard.owns(at) && at < 1000),
            "shard {shard} lists a position it does not own"
        );
        let _ = shard.slice(&[0u8; 17]);
    }
    let environment: Vec<(&str, &str)> = lines.filter_map(|line| line.split_once('=')).collect();
    let lookup = |name: &str| {
        environment
            .iter()
            .rev()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    };
    if let Ok((shard, _)) = crate::shard::spec::from_env(lookup) {
        let _ = shard.positions(1000);
    }
}

/// An Execution Trace; when it loads, it is linked to a small real Kineto trace of the same
/// model and attached to that trace's signatures, as `classify --execution-trace` does (the
/// two rarely match: the link refuses most, which is also what is being fuzzed).
pub fn execution_trace(data: &[u8]) {
    let path = Path::new("fuzz.et.json");
    let Ok(et) = crate::execution_trace::load_bytes(path, data) else {
        return;
    };
    let Some(trace) = embedded_cpu_trace() else {
        return;
    };
    let trace_path = Path::new("bloom_tiny_cpu.json.gz");
    if let Ok(links) = crate::execution_trace::link::link(&et, trace, trace_path) {
        let mut trace = trace.clone();
        let Ok(filled) = crate::execution_trace::fill::fill_inputs(&mut trace, &et, &links) else {
            return;
        };
        let linked = crate::execution_trace::attach::LinkedEt { et, links, filled };
        let mut file = crate::signature::classify(&trace, trace_path);
        let _ = crate::execution_trace::attach::attach(&mut file, &trace, &linked);
        let _ = crate::export::json::to_bytes(&file);
    }
}
