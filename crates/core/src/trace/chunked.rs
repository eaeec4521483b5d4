//! Parsing `traceEvents` on several cores.
//!
//! The text is cut at event boundaries into one chunk per core; the first chunk (the top of
//! the document and the first events) is parsed on this thread with the ordinary root
//! visitor, every other chunk on its own thread into its own assembler, and the assemblers
//! are appended in file order, so the result is the one a single pass gives, string ids
//! included.
//!
//! A cut is looked for by text only (a `}` `,` `{` run, the least indented nearby) and then
//! proven by the parse itself: the first chunk must end between two entries of
//! `traceEvents`, and each later chunk must end exactly where the next one starts, so a
//! cut inside an event (in its `args`, or in a string) is always refused. Anything
//! unexpected (such a cut, a chunk that fails to parse) returns `None`, and the caller
//! parses the file in one pass, which also reports any error exactly as before.

use std::path::Path;

use serde::de::{DeserializeSeed, Deserializer};
use serde::Deserialize;

use super::assemble::TraceAssembler;
use super::document::{finish_metadata, parse_document, ParsePosition};
use super::event_scanner::scan_event;
use super::raw::{RawEvent, RawEventSeed};

/// Below this many bytes per chunk a thread costs more than it saves.
pub(super) const MIN_CHUNK_BYTES: usize = 1 << 20;

/// Most chunks: more than the cores only adds merging.
pub(super) const MAX_CHUNKS: usize = 16;

/// The trace parsed in chunks on several threads, or `None` when the file is small, cannot
/// be cut, or anything in it is unexpected (the caller then parses it in one pass).
pub(super) fn parse<'p>(text: &str, path: &'p Path) -> Option<TraceAssembler<'p>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks = cores.min(MAX_CHUNKS).min(text.len() / MIN_CHUNK_BYTES);
    if chunks < 2 {
        return None;
    }
    parse_in(text, path, chunks)
}

/// [`parse`] with `chunks` chunks (at most).
pub(super) fn parse_in<'p>(
    text: &str,
    path: &'p Path,
    chunks: usize,
) -> Option<TraceAssembler<'p>> {
    parse_in_with(text, path, chunks, Workers::Threads)
}

/// Where the chunks after the first are parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Workers {
    /// Each on a thread of its own, beside the first (what a trace file gets).
    Threads,
    /// In turn on this thread after the first: the same cuts, parses and appends, for the
    /// fuzzer, whose inputs are so small that starting the threads is nearly all it would
    /// time (the cut-and-append logic is what it checks; Rust rules out the data races).
    InTurn,
}

/// [`parse_in`] with the chunks after the first parsed as `workers` says.
pub(super) fn parse_in_with<'p>(
    text: &str,
    path: &'p Path,
    chunks: usize,
    workers: Workers,
) -> Option<TraceAssembler<'p>> {
    parse_in_cuts(text, path, &find_cuts(text.as_bytes(), chunks), workers)
}

/// The document cut at `cuts` (increasing offsets of a `{`): the top of the document up to
/// the first cut (the root object's other keys and the first events), then one chunk of
/// events from each cut to the next. This thread reads the top and then the first chunk of
/// events into the same assembler; every later chunk is read on its own thread.
fn parse_in_cuts<'p>(
    text: &str,
    path: &'p Path,
    cuts: &[usize],
    workers: Workers,
) -> Option<TraceAssembler<'p>> {
    let first_cut = *cuts.first()?;

    let mut harness_pytorch_version = None;
    let later_chunk = |at: usize, start: usize| {
        let end = cuts.get(at + 1).copied();
        move || parse_chunk(text, start, end, path)
    };
    let mut first_chunk = || {
        parse_first_chunk(text, first_cut, path, &mut harness_pytorch_version).and_then(
            |(mut assembler, position)| {
                let end = cuts.get(1).copied();
                let array_end = parse_events(&mut assembler, text, first_cut, end)?;
                Some((assembler, position, array_end))
            },
        )
    };
    let later_cuts = cuts.iter().copied().enumerate().skip(1);
    let (first, later): (_, Vec<_>) = match workers {
        Workers::Threads => std::thread::scope(|scope| {
            let threads: Vec<_> = later_cuts
                .map(|(at, start)| scope.spawn(later_chunk(at, start)))
                .collect();
            let first = first_chunk();
            let later = threads
                .into_iter()
                .map(|thread| thread.join().ok().flatten())
                .collect();
            (first, later)
        }),
        Workers::InTurn => {
            let first = first_chunk();
            let later = later_cuts
                .map(|(at, start)| later_chunk(at, start)())
                .collect();
            (first, later)
        }
    };

    let (mut assembler, mut position, mut array_end) = first?;
    for chunk in later {
        let (chunk, end) = chunk?;
        assembler.append(chunk).ok()?;
        array_end = end;
    }
    let rest = text.get(array_end?..)?;
    finish_after_array(&mut assembler, &mut position, harness_pytorch_version, rest).ok()?;
    Some(assembler)
}

/// Why the text after `traceEvents`' closing `]` was not the rest of a root object.
#[derive(Debug)]
pub(super) enum AfterArrayError {
    /// Neither `,` and a key nor `}`: the offset (into the text given) of what was found.
    Unexpected(usize),
    /// serde_json's error on the rest, parsed as an object of its own (`{` in front).
    Json(serde_json::Error),
    /// The assembler refused a value there.
    Rejected,
}

/// The rest of the root object after `traceEvents`' `]` (`rest` starts right after it),
/// read into `assembler`, and the trace's metadata finished.
pub(super) fn finish_after_array(
    assembler: &mut TraceAssembler<'_>,
    position: &mut ParsePosition,
    mut harness_pytorch_version: Option<String>,
    rest: &str,
) -> Result<(), AfterArrayError> {
    assembler.saw_trace_events = true;
    position.in_trace_events = false;
    position.event_index = usize::try_from(assembler.counts.total).unwrap_or(usize::MAX);

    // Parsed as an object of its own: `{` stands in for the `,` that followed the array
    // (or for nothing, before the closing `}`).
    let trimmed = rest.trim_start_matches(is_json_whitespace);
    let skipped = rest.len() - trimmed.len();
    let members = match trimmed.strip_prefix(',') {
        Some(members)
            if members
                .trim_start_matches(is_json_whitespace)
                .starts_with('"') =>
        {
            members
        }
        Some(_) => return Err(AfterArrayError::Unexpected(skipped + 1)),
        None if trimmed.starts_with('}') => trimmed,
        None => return Err(AfterArrayError::Unexpected(skipped)),
    };
    let object = format!("{{{members}");
    parse_document(
        serde_json::Deserializer::from_str(&object),
        assembler,
        position,
        &mut harness_pytorch_version,
    )
    .map_err(AfterArrayError::Json)?;
    if assembler.failure.is_some() {
        return Err(AfterArrayError::Rejected);
    }
    finish_metadata(assembler, harness_pytorch_version);
    Ok(())
}

/// JSON's whitespace (RFC 8259 `ws`).
fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

pub(super) fn is_json_whitespace_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// How far past each chunk's nominal start a cut is looked for: a few hundred events.
pub(super) const CUT_WINDOW_BYTES: usize = 64 << 10;

/// Where the document is cut for `chunks` chunks of events: first just after the start of
/// `traceEvents` (so that the top of the document, read by the root visitor, is short), then
/// up to `chunks - 1` increasing offsets that share out the rest, one near each
/// `start + rest * i / chunks`. Each is the offset of a `{` that may open an entry of
/// `traceEvents`; the parse proves it.
fn find_cuts(bytes: &[u8], chunks: usize) -> Vec<usize> {
    let Some(events_key) = find_bytes(bytes, b"\"traceEvents\"") else {
        return Vec::new();
    };
    let window_end = bytes.len().min(events_key + CUT_WINDOW_BYTES);
    let Some(first) = least_indented_cut(bytes, events_key, window_end) else {
        return Vec::new();
    };
    let mut cuts: Vec<usize> = Vec::with_capacity(chunks);
    cuts.push(first);
    let rest = bytes.len() - first;
    for i in 1..chunks {
        let from = (first + rest / chunks * i).max(cuts.last().map_or(0, |&c| c + 1));
        let to = (first + rest / chunks * (i + 1)).min(bytes.len());
        if let Some(cut) = least_indented_cut(bytes, from, to.min(from + CUT_WINDOW_BYTES)) {
            cuts.push(cut);
        }
    }
    cuts
}

/// The offset of the first `needle` in `haystack`.
pub(super) fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Of the candidate cuts in `bytes[from..to]`, the first of the least indented: profilers
/// that break lines indent the entries of `traceEvents` less than anything inside them
/// (whose own `},\n{` runs are the cuts the parse would refuse). A cut with no line break
/// (a minified file) is taken only where no line break is found.
pub(super) fn least_indented_cut(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    let mut at = from;
    while let Some((cut, indent)) = find_cut(bytes, at, to) {
        let indent = indent.unwrap_or(usize::MAX);
        if best.is_none_or(|(_, least)| indent < least) {
            best = Some((cut, indent));
        }
        at = cut + 1;
    }
    best.map(|(cut, _)| cut)
}

/// The offset of the first `{` in `bytes[from..to]` that follows `}` `,` with only
/// whitespace between them, and its indentation when that whitespace breaks the line.
pub(super) fn find_cut(bytes: &[u8], from: usize, to: usize) -> Option<(usize, Option<usize>)> {
    let mut at = from;
    while at < to {
        let open = at + bytes.get(at..to)?.iter().position(|&b| b == b'{')?;
        at = open + 1;
        let before = bytes.get(..open)?;
        let mut back = before.len();
        let mut line_start = None;
        while back > 0 && is_json_whitespace_byte(before[back - 1]) {
            if before[back - 1] == b'\n' && line_start.is_none() {
                line_start = Some(back);
            }
            back -= 1;
        }
        if back == 0 || before[back - 1] != b',' {
            continue;
        }
        back -= 1;
        while back > 0 && is_json_whitespace_byte(before[back - 1]) {
            if before[back - 1] == b'\n' && line_start.is_none() {
                line_start = Some(back);
            }
            back -= 1;
        }
        if back > 0 && before[back - 1] == b'}' {
            return Some((open, line_start.map(|start| open - start)));
        }
    }
    None
}

/// The top of the document up to the first cut, which must end between two events of
/// `traceEvents` (the parser then stops there for want of text).
pub(super) fn parse_first_chunk<'p>(
    text: &str,
    cut: usize,
    path: &'p Path,
    harness_pytorch_version: &mut Option<String>,
) -> Option<(TraceAssembler<'p>, ParsePosition)> {
    // Sized for the whole file: the later chunks are appended to this one, and capacity
    // that is reserved but not yet written costs no memory.
    let mut assembler = TraceAssembler::new(path, text.len());
    let mut position = ParsePosition::default();
    let outcome = parse_document(
        serde_json::Deserializer::from_str(text.get(..cut)?),
        &mut assembler,
        &mut position,
        harness_pytorch_version,
    );
    let cut_between_events = matches!(
        &outcome,
        Err(error) if error.classify() == serde_json::error::Category::Eof
    ) && position.in_trace_events
        && !position.in_event
        && assembler.failure.is_none();
    cut_between_events.then_some((assembler, position))
}

/// One entry of `traceEvents` read on its own.
pub(super) struct OneEvent<'a>(pub(super) RawEvent<'a>);

impl<'de> Deserialize<'de> for OneEvent<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut slot = RawEvent::default();
        RawEventSeed { slot: &mut slot }.deserialize(deserializer)?;
        Ok(OneEvent(slot))
    }
}

/// The events from `start` (a `{`) to `end` (the next chunk's `{`), or, for the last chunk
/// (`end` = `None`), to the `]` that closes the array, whose following offset comes back.
pub(super) fn parse_chunk<'p>(
    text: &str,
    start: usize,
    end: Option<usize>,
    path: &'p Path,
) -> Option<(TraceAssembler<'p>, Option<usize>)> {
    let mut assembler = TraceAssembler::new(path, end.unwrap_or(text.len()).saturating_sub(start));
    let array_end = parse_events(&mut assembler, text, start, end)?;
    Some((assembler, array_end))
}

/// [`parse_chunk`]'s events pushed onto `assembler`; the offset after the array's `]` when
/// `end` is `None`. Each event is read by [`scan_event`], or by serde_json where the scanner
/// leaves it.
pub(super) fn parse_events(
    assembler: &mut TraceAssembler<'_>,
    text: &str,
    start: usize,
    end: Option<usize>,
) -> Option<Option<usize>> {
    let bytes = text.as_bytes();
    let mut at = start;
    let mut index = 0;
    loop {
        let mut event = RawEvent::default();
        match scan_event(text, at, &mut event) {
            Some(next) => at = next,
            None => {
                let mut events =
                    serde_json::Deserializer::from_str(text.get(at..)?).into_iter::<OneEvent>();
                let OneEvent(parsed) = events.next()?.ok()?;
                event = parsed;
                at += events.byte_offset();
            }
        }
        assembler.push(index, &event).ok()?;
        index += 1;
        while bytes.get(at).copied().is_some_and(is_json_whitespace_byte) {
            at += 1;
        }
        match bytes.get(at) {
            Some(b',') => at += 1,
            Some(b']') if end.is_none() => return Some(Some(at + 1)),
            _ => return None,
        }
        while bytes.get(at).copied().is_some_and(is_json_whitespace_byte) {
            at += 1;
        }
        match end {
            Some(end) if at == end => return Some(None),
            Some(end) if at > end => return None,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::whole_text::parse_in_one_pass;

    /// A trace with everything a cut could trip on: `}`-`,`-`{` runs with newlines inside
    /// `deviceProperties` and inside events' `args`, a harness `metadata` before the events,
    /// keys after them, string ids first seen late in the file, escaped strings, and
    /// names holding `}, {`.
    fn trace_text(events: usize) -> String {
        let mut text = String::from(
            "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"A\"\n    },\n    {\n      \"id\": 1\n    }\n  ],\n  \"metadata\": {\"system\": {\"torch_env_info\": {\"torch_version\": \"2.6.0+cu124\"}}},\n  \"traceEvents\": [\n",
        );
        for i in 0..events {
            if i > 0 {
                text.push_str(",\n");
            }
            let event = match i % 5 {
                0 => format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op{}\", \"pid\": 1, \"tid\": \"t{}\",\n    \"ts\": {}.5, \"dur\": 3,\n    \"args\": {{\n      \"External id\": {i}, \"Input Dims\": [[{i}, 2]],\n      \"nested\": [\n        {{\"a\": 1}},\n        {{\"b\": 2}}\n      ]\n    }}\n  }}",
                    i % 97,
                    i % 3,
                    1000 + i
                ),
                1 => format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\\\"{}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": 2.25,\n    \"args\": {{\n      \"correlation\": {i}, \"stream\": 7, \"grid\": [1, 2, 3]\n    }}\n  }}",
                    i % 13,
                    1001 + i
                ),
                2 => format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1,\n    \"ts\": {}, \"dur\": 1,\n    \"args\": {{\n      \"correlation\": {i}, \"cbid\": 211\n    }}\n  }}",
                    1000 + i
                ),
                3 => format!(
                    "  {{\n    \"ph\": \"f\", \"id\": {i}, \"pid\": 0, \"tid\": 7, \"ts\": {}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }}",
                    1000 + i
                ),
                _ => format!(
                    "  {{\n    \"name\": \"late{}}}, {{\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": {}\n  }}",
                    i / 1000,
                    1000 + i
                ),
            };
            text.push_str(&event);
        }
        text.push_str(
            "\n  ],\n  \"traceName\": \"t\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n",
        );
        text
    }

    fn same(a: &TraceAssembler<'_>, b: &TraceAssembler<'_>) {
        assert_eq!(a.events, b.events);
        assert_eq!(
            a.strings.iter().collect::<Vec<_>>(),
            b.strings.iter().collect::<Vec<_>>()
        );
        assert_eq!(a.counts, b.counts);
        assert_eq!(a.metadata.pytorch_version, b.metadata.pytorch_version);
        assert_eq!(a.metadata.base_time_ns, b.metadata.base_time_ns);
        assert_eq!(a.metadata.trace_name, b.metadata.trace_name);
        assert_eq!(a.metadata.schema_version, b.metadata.schema_version);
    }

    #[test]
    fn chunks_give_what_one_pass_gives() {
        let path = Path::new("chunks.json");
        let text = trace_text(4000);
        let single = parse_in_one_pass(text.as_bytes(), Some(&text), path).unwrap();
        assert!(single.events.len() > 2000);
        assert_eq!(
            single.metadata.pytorch_version.as_deref(),
            Some("2.6.0+cu124")
        );
        assert_eq!(single.metadata.base_time_ns, Some(1700000000000000000));
        for chunks in 2..=9 {
            let chunked = parse_in(&text, path, chunks)
                .unwrap_or_else(|| panic!("{chunks} chunks: no cut was accepted"));
            same(&single, &chunked);
            // The fuzzer's way, the chunks in turn on this thread: the same result.
            let in_turn = parse_in_with(&text, path, chunks, Workers::InTurn)
                .unwrap_or_else(|| panic!("{chunks} chunks in turn: no cut was accepted"));
            same(&single, &in_turn);
        }
    }

    #[test]
    fn a_cut_inside_an_entry_that_is_a_string_is_refused() {
        // Found by the trace_chunked fuzzer (fuzz/regressions/trace_chunked/crash-a7efcb87...):
        // the first entry of `traceEvents` is a string holding `",{},{}],`, so the text has a
        // `},{` run inside it. The first chunk, cut there, ended inside the string: an early
        // end of text, taken for a cut between two events, and the chunks then read one event
        // where the single pass refuses the document.
        let path = Path::new("string_entry.json");
        let text = "{\"deviceProperties\":[\n    {\n      \"id\": 0, \"name\": \"A\"\n    },\n    {\n      \"id\": 1\n    }\n  ],\"traceEvents\":[\"\\\",{},{}],\"traceName\":\",\",\"displayTimeUnit\":\"ms\"}";
        assert!(parse_in_one_pass(text.as_bytes(), Some(text), path).is_err());
        for chunks in 2..=9 {
            for workers in [Workers::Threads, Workers::InTurn] {
                assert!(
                    parse_in_with(text, path, chunks, workers).is_none(),
                    "{chunks} chunks, {workers:?}"
                );
            }
        }
    }

    #[test]
    fn a_cut_inside_an_event_falls_back_or_agrees() {
        let path = Path::new("cuts.json");
        let text = trace_text(300);
        let single = parse_in_one_pass(text.as_bytes(), Some(&text), path).unwrap();
        // Every candidate cut, one at a time, including those inside `args` and
        // `deviceProperties`: each is either refused or gives the one-pass result.
        let bytes = text.as_bytes();
        let mut from = 0;
        let mut refused = 0;
        while let Some((cut, _)) = find_cut(bytes, from, bytes.len()) {
            match parse_in_cuts(&text, path, &[cut], Workers::Threads) {
                Some(chunked) => same(&single, &chunked),
                None => refused += 1,
            }
            from = cut + 1;
        }
        assert!(refused > 0, "the cuts inside events were all accepted");
    }

    #[test]
    fn damaged_or_unusual_files_are_left_to_the_single_pass() {
        let path = Path::new("bad.json");
        let text = trace_text(400);
        // A trailing comma after the array, garbage after the root, an event that is not
        // an object: each makes the chunked parse step aside.
        for damaged in [
            text.replace("\n  ],\n  \"traceName\": \"t\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}", "\n  ],\n}"),
            format!("{text} x"),
            text.replacen(",\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\"", ",\n  3,\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\"", 150),
        ] {
            assert!(parse_in_one_pass(damaged.as_bytes(), Some(&damaged), path).is_err());
            assert!(parse_in(&damaged, path, 4).is_none());
        }
        // One line: cut all the same, where no event is cut in two.
        let minified: String = text.chars().filter(|&c| c != '\n').collect();
        let single = parse_in_one_pass(minified.as_bytes(), Some(&minified), path).unwrap();
        let mut from = 0;
        let mut accepted = 0;
        while let Some((cut, _)) = find_cut(minified.as_bytes(), from, minified.len()) {
            if let Some(chunked) = parse_in_cuts(&minified, path, &[cut], Workers::Threads) {
                same(&single, &chunked);
                accepted += 1;
            }
            from = cut + 1;
        }
        assert!(accepted > 100);
    }
}
