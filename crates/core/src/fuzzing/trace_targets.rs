//! The trace reader's targets: the event scanner and the chunked parse against serde_json's
//! single pass (differential), gzip detection and inflation, and a whole load followed by
//! what `classify` and `predict` do with the trace.

use std::io::Write;
use std::path::Path;

use arbitrary::Unstructured;

use super::kineto;
use crate::trace::fuzzing::{
    chunked_against_one_pass, scanner_against_serde, single_member_against_flate2,
};
use crate::trace::{load_bytes, Trace, TraceError};

/// The first byte chooses: even, the rest is the event's text as it is; odd, the rest drives
/// the Kineto generator. Either way the scanner must read what serde_json reads.
pub fn trace_scanner(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        if let Ok(text) = std::str::from_utf8(rest) {
            scanner_against_serde(text);
        }
        return;
    }
    let mut u = Unstructured::new(rest);
    if let Ok(event) = kineto::event(&mut u) {
        // What follows an event in `traceEvents`, or damage after it.
        let follows = [",", "]", " ,\n ", "", "}", "x"][usize::from(mode >> 1) % 6];
        scanner_against_serde(&format!("{event}{follows}"));
    }
}

/// The first byte chooses the chunk count (2 to 9, from bits 1-3) and, as for
/// [`trace_scanner`], raw text (even) or a generated document (odd): wherever the chunked
/// parse gives a trace, the single pass must give the same one.
pub fn trace_chunked(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let chunks = 2 + usize::from((mode >> 1) & 7);
    if mode & 1 == 0 {
        if let Ok(text) = std::str::from_utf8(rest) {
            chunked_against_one_pass(text, chunks);
        }
        return;
    }
    let mut u = Unstructured::new(rest);
    if let Ok(document) = kineto::document(&mut u) {
        chunked_against_one_pass(&document, chunks);
    }
}

/// A trace file's bytes through the loader (gzip detection, inflation, parse) and, when it
/// loads, through classification, the timeline prediction and the signature file's JSON.
/// The first byte chooses: `{` and anything else, the file as it is; 0x01, a generated
/// document (so that classification sees events it can work on); 0x02, the same gzipped.
pub fn trace_load(data: &[u8]) {
    let path = Path::new("fuzz.json");
    let file = match data.split_first() {
        Some((1 | 2, rest)) => {
            let Ok(document) = kineto::document(&mut Unstructured::new(rest)) else {
                return;
            };
            if data[0] == 2 {
                gzipped(&[document.as_bytes()])
            } else {
                document.into_bytes()
            }
        }
        _ => data.to_vec(),
    };
    if let Ok(trace) = load_bytes(file, path) {
        use_trace(&trace, path);
    }
}

/// What `replay classify` and `replay predict` do with a loaded trace.
fn use_trace(trace: &Trace, path: &Path) {
    let file = crate::signature::classify(trace, path);
    let _ = crate::export::json::to_bytes(&file);
    let _ = file.summary_table();
    let _ = crate::predict::predict_trace(trace, path, &crate::predict::PredictRequest::default());
}

/// Gzip as the loader sees it. A file that starts with gzip's magic is inflated by the
/// single-member fast path and by flate2, which must agree, and loaded. Anything else is the
/// JSON inside: gzipped as one member or cut into two (the first byte's lowest bit), it must
/// load exactly as the plain text loads.
pub fn gzip(data: &[u8]) {
    let path = Path::new("fuzz.json.gz");
    if data.starts_with(&[0x1f, 0x8b]) {
        single_member_against_flate2(data);
        let _ = load_bytes(data.to_vec(), path);
        return;
    }
    let Some((&mode, plain)) = data.split_first() else {
        return;
    };
    // Text that is itself a gzip file is inflated once, as a gzipped trace is, and then is not
    // JSON: the plain file it is compared with would be inflated instead.
    if plain.starts_with(&[0x1f, 0x8b]) {
        let _ = load_bytes(gzipped(&[plain]), path);
        return;
    }
    let compressed = if mode & 1 == 0 {
        gzipped(&[plain])
    } else {
        let cut = usize::from(mode >> 1).min(plain.len());
        gzipped(&[&plain[..cut], &plain[cut..]])
    };
    single_member_against_flate2(&compressed);
    let from_gzip = load_bytes(compressed, path);
    let from_plain = load_bytes(plain.to_vec(), path);
    match (from_gzip, from_plain) {
        (Ok(a), Ok(b)) => {
            assert!(
                a.events == b.events
                    && a.strings.iter().eq(b.strings.iter())
                    && a.counts == b.counts
                    && a.metadata == b.metadata,
                "mismatch: the gzipped trace loads differently from its text"
            );
            assert!(a.source.gzipped && !b.source.gzipped);
        }
        (Err(a), Err(b)) => {
            // The same complaint, bar the gzip-only ones (an empty member inflates to nothing).
            let empty_member = matches!(a, TraceError::EmptyAfterDecompression { .. })
                && matches!(b, TraceError::Empty { .. });
            assert!(
                empty_member || a.to_string() == b.to_string(),
                "mismatch: gzipped {a} / plain {b}"
            );
        }
        (a, b) => panic!(
            "mismatch: gzipped {:?} / plain {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        ),
    }
}

/// `parts` gzipped, one member each.
fn gzipped(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let mut encoder = flate2::write::GzEncoder::new(&mut out, flate2::Compression::fast());
        // Writing into a Vec cannot fail.
        let _ = encoder.write_all(part);
        let _ = encoder.finish();
    }
    out
}
