//! The trace reader's own checks for the fuzz targets (`fuzz/`, replayed by
//! `crates/core/tests/torch_free/fuzz_corpus.rs`): each reaches readers that are private to
//! this module and panics when two readers that must agree do not. Not an API.
//!
//! - [`scanner_against_serde`]: the hand-written event scanner against serde_json's visitors;
//! - [`chunked_against_one_pass`]: the parse in chunks (parsed in turn, see
//!   [`chunked::Workers::InTurn`]) against the single pass;
//! - [`single_member_against_flate2`]: libdeflate's whole-member inflate against flate2.

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeSeed;

use super::assemble::TraceAssembler;
use super::chunked;
use super::event_scanner::scan_event;
use super::raw::{RawEvent, RawEventSeed};
use super::whole_gzip;
use super::whole_text::parse_in_one_pass;

/// What the fuzzed readers were handed, for a target to count how often its check ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Both readers read it, and agreed.
    Agreed,
    /// The faster reader left it to the other (by design: it accepts strictly less).
    LeftToFallback,
    /// Neither reads it.
    BothRejected,
}

/// Reads the event at the start of `text` with [`scan_event`] and with serde_json: wherever
/// the scanner reads an event, serde_json must read the same fields and stop at the same byte.
pub fn scanner_against_serde(text: &str) -> Checked {
    let mut scanned = RawEvent::default();
    let scanned_end = scan_event(text, 0, &mut scanned);
    let mut by_serde = RawEvent::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let serde_read = RawEventSeed {
        slot: &mut by_serde,
    }
    .deserialize(&mut deserializer)
    .is_ok();
    let serde_end = serde_read.then(|| {
        let mut stream =
            serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
        match stream.next() {
            Some(Ok(_)) => Some(stream.byte_offset()),
            _ => None,
        }
    });
    match (scanned_end, serde_end) {
        (Some(end), Some(Some(serde_end))) => {
            assert_eq!(
                scanned, by_serde,
                "mismatch: the scanner and serde_json read different fields from {text:?}"
            );
            assert_eq!(
                end, serde_end,
                "mismatch: the scanner and serde_json stop at different bytes of {text:?}"
            );
            Checked::Agreed
        }
        (Some(_), _) => {
            panic!("mismatch: the scanner read an event that serde_json refuses: {text:?}")
        }
        (None, Some(_)) => Checked::LeftToFallback,
        (None, None) => Checked::BothRejected,
    }
}

/// Parses `text` (a whole trace document) in one pass and cut into (at most) `chunks` chunks:
/// wherever the chunked parse gives a result, the single pass must give the same events,
/// string ids, counts and metadata.
pub fn chunked_against_one_pass(text: &str, chunks: usize) -> Checked {
    let path = Path::new("fuzz.json");
    let chunked = chunked::parse_in_with(text, path, chunks.max(2), chunked::Workers::InTurn);
    let single = parse_in_one_pass(text.as_bytes(), Some(text), path);
    match (chunked, single) {
        (Some(chunked), Ok(single)) => {
            same_parse(&single, &chunked, text);
            Checked::Agreed
        }
        (Some(_), Err(error)) => {
            panic!("mismatch: the chunked parse read a document the single pass refuses ({error}): {text:?}")
        }
        (None, Ok(_)) => Checked::LeftToFallback,
        (None, Err(_)) => Checked::BothRejected,
    }
}

fn same_parse(single: &TraceAssembler<'_>, chunked: &TraceAssembler<'_>, text: &str) {
    assert_eq!(
        single.events, chunked.events,
        "mismatch: different events: {text:?}"
    );
    assert_eq!(
        single.strings.iter().collect::<Vec<_>>(),
        chunked.strings.iter().collect::<Vec<_>>(),
        "mismatch: different string ids: {text:?}"
    );
    assert_eq!(
        single.counts, chunked.counts,
        "mismatch: different counts: {text:?}"
    );
    assert_eq!(
        single.metadata, chunked.metadata,
        "mismatch: different metadata: {text:?}"
    );
    assert_eq!(
        single.platform(),
        chunked.platform(),
        "mismatch: different platform: {text:?}"
    );
}

/// The most a fuzzed gzip may inflate to: a bomb is the reader's to survive, not the fuzzer's.
const MAX_INFLATED: usize = 16 << 20;

/// Inflates `compressed` with libdeflate's single-member fast path (sized by the trailer, as
/// the loader sizes it) and with flate2's multi-member reader: wherever the fast path answers,
/// flate2 must give the same bytes.
pub fn single_member_against_flate2(compressed: &[u8]) -> Checked {
    let announced = compressed
        .len()
        .checked_sub(4)
        .and_then(|at| compressed.get(at..))
        .and_then(|tail| <[u8; 4]>::try_from(tail).ok())
        .map_or(0, |tail| u32::from_le_bytes(tail) as usize);
    let fast = (announced > 0 && announced <= MAX_INFLATED)
        .then(|| whole_gzip::inflate_single_member(compressed, vec![0; announced]))
        .flatten();
    let mut slow = Vec::new();
    let slow = flate2::read::MultiGzDecoder::new(compressed)
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut slow)
        .ok()
        .filter(|_| slow.len() <= MAX_INFLATED)
        .map(|_| slow);
    match (fast, slow) {
        (Some(fast), Some(slow)) => {
            assert!(
                fast == slow,
                "mismatch: libdeflate and flate2 inflate differently"
            );
            Checked::Agreed
        }
        (Some(_), None) => panic!("mismatch: libdeflate inflated a file that flate2 refuses"),
        (None, Some(_)) => Checked::LeftToFallback,
        (None, None) => Checked::BothRejected,
    }
}
