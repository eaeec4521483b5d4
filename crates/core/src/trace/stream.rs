//! Reading a trace from any [`Read`] (a file, standard input, a gzip stream of one member or
//! many) in blocks of bounded size: the whole JSON is never in memory at once.
//!
//! The reading thread ([`super::stream_input`]) hands on blocks of JSON. The first holds the
//! top of the document, read by the root visitor up to a cut just inside `traceEvents`
//! (proven by the parse, as [`super::chunked`] does for a whole file). Every later block
//! starts at an event boundary: it is cut at its last candidate boundary, the events before
//! it are parsed on every core in chunks ([`super::chunked::parse_chunk`], each chunk ending
//! exactly where the next starts, which proves the cuts), and the bytes after it are carried
//! into the next block. Where a cut is refused or a chunk does not parse, the block is read
//! again event by event on this thread ([`super::stream_events`]), which finds the true
//! boundary or names the error and its byte offset. After the array's `]`, the rest of the
//! root object is read to the end and parsed as [`super::chunked`] does.
//!
//! The chunks' assemblers are appended in file order, so the trace (events, string ids,
//! counts, metadata) is the one a single pass over the whole file gives. An input that fits
//! in one block is parsed as a whole file is, by [`super::load::parse_json`].

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::assemble::{EventSink, TraceAssembler};
use super::buffer;
use super::chunk_pool::ChunkPool;
use super::chunked::{self, AfterArrayError, CUT_WINDOW_BYTES, MAX_CHUNKS, MIN_CHUNK_BYTES};
use super::contents::{SourceFile, Trace};
use super::document::{parse_document, ParsePosition};
use super::error::{StoredAt, TraceError};
use super::json_position::{offset_of_line_column, strip_position};
use super::stream_events::{parse_sequential, BlockEnd, SequentialFailure};
use super::stream_input::{
    BlockInput, InputFailure, InputFailureKind, InputSummary, Next, BLOCK_HEADROOM,
};
use super::whole_text::{json_error, parse_json};

/// JSON bytes per block: 4 MiB per core, from 8 to 64 MiB. Large enough that every core
/// gets a chunk worth a thread, small enough that the three blocks in flight are a small
/// share of memory and that the chunks' buffers are reused from block to block rather than
/// mapped afresh (32 MiB blocks on 2 cores spent 3x the system time of 8 MiB ones, in page
/// faults, on the 120 MB replicated trace).
///
/// A stream read beside others ([`with_cores_shared_by`]: a job's ranks) takes 2 MiB per
/// core of its share, from 2 to 64 MiB: two ranks at once on two cores, each parsing its
/// blocks on one, ran 8 gzipped ranks of 250 MB 0.92x the wall time of 8 MiB blocks (6 pairs,
/// 0.90-0.95; 4 MiB 0.96x, 1 MiB as 2) at 184 MB instead of 300, and held in memory 0.75x at
/// 671 MB instead of 1.5 GB (27 Nov 2026, the 2-core VM). A single stream keeps the larger
/// blocks: 2 MiB ones were 5 % slower piped.
pub fn default_block_bytes() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sharing = STREAMS_SHARING.get();
    if sharing > 1 {
        return (cores / sharing)
            .max(1)
            .saturating_mul(2 << 20)
            .clamp(2 << 20, 64 << 20);
    }
    cores.saturating_mul(4 << 20).clamp(8 << 20, 64 << 20)
}

thread_local! {
    /// How many streams read side by side share the cores ([`with_cores_shared_by`]).
    static STREAMS_SHARING: std::cell::Cell<usize> = const { std::cell::Cell::new(1) };
}

/// Runs `work` with every trace it streams on this thread parsing each block in a
/// `1/readers` share of the cores' chunks (at least one): for several traces read side by
/// side (a job's ranks), whose threads already fill the cores. One chunk a block for each
/// of two ranks read at once on two cores was 5 % faster than two (8 gzipped ranks of
/// 250 MB, 2.17 s against 2.30 s, the same file; 27 Nov 2026): no chunk assemblers to
/// append, no hand-off to another thread.
pub fn with_cores_shared_by<T>(readers: usize, work: impl FnOnce() -> T) -> T {
    let before = STREAMS_SHARING.replace(readers.max(1));
    let result = work();
    STREAMS_SHARING.set(before);
    result
}

/// Most cut candidates tried for the first cut inside `traceEvents`.
const MAX_FIRST_CUTS: usize = 64;

/// Reads a Kineto trace (plain JSON or gzipped) from `reader` in blocks of
/// [`default_block_bytes`]; `path` names it in the trace and in messages (`-` for standard
/// input). The result is the one [`super::load`] gives for the same bytes.
pub fn load_reader<R: Read + Send + 'static>(reader: R, path: &Path) -> Result<Trace, TraceError> {
    load_reader_in_blocks(reader, path, default_block_bytes(), 0)
}

/// [`load_reader`] with blocks of `block_bytes` of JSON; `json_bytes_hint` (the expected
/// JSON size, 0 when unknown) sizes the events' vector once.
pub fn load_reader_in_blocks<R: Read + Send + 'static>(
    reader: R,
    path: &Path,
    block_bytes: usize,
    json_bytes_hint: u64,
) -> Result<Trace, TraceError> {
    read_in_blocks(reader, path, block_bytes, json_bytes_hint, None)
}

/// [`load_reader_in_blocks`], handing the events to `sink` a block at a time (in file
/// order) instead of keeping them: memory holds a few blocks, whatever the input's size.
/// The trace returned has no events: its source, metadata, strings, counts and platform.
pub fn stream_reader_in_blocks<R: Read + Send + 'static>(
    reader: R,
    path: &Path,
    block_bytes: usize,
    sink: &mut EventSink<'_>,
) -> Result<Trace, TraceError> {
    read_in_blocks(reader, path, block_bytes, 0, Some(sink))
}

fn read_in_blocks<R: Read + Send + 'static>(
    reader: R,
    path: &Path,
    block_bytes: usize,
    json_bytes_hint: u64,
    sink: Option<&mut EventSink<'_>>,
) -> Result<Trace, TraceError> {
    // Each block is cut in a chunk per core (of this stream's share of them): this thread
    // parses the first, the pool's threads the others.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks = (cores / STREAMS_SHARING.get()).clamp(1, MAX_CHUNKS);
    std::thread::scope(|scope| {
        let pool = ChunkPool::start(scope, chunks - 1, path);
        read_with(reader, path, block_bytes, json_bytes_hint, sink, pool)
    })
}

fn read_with<'p, R: Read + Send + 'static>(
    reader: R,
    path: &'p Path,
    block_bytes: usize,
    json_bytes_hint: u64,
    mut sink: Option<&mut EventSink<'_>>,
    pool: ChunkPool<'p>,
) -> Result<Trace, TraceError> {
    let block_bytes = block_bytes.max(1);
    let mut stream = Stream {
        path,
        pool,
        input: BlockInput::start(reader, block_bytes),
        buf: Vec::new(),
        start: 0,
        base: 0,
        json_bytes: 0,
        stored_at_end: 0,
        gzipped: false,
        summary: None,
    };
    while stream.text().len() < block_bytes && stream.read_more()? {}
    if stream.summary.is_some() {
        return stream.whole(sink);
    }
    const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
    if stream.text().starts_with(UTF8_BOM) {
        stream.consume(UTF8_BOM.len());
    }
    // The top of the document, up to the first proven cut inside `traceEvents`.
    let (mut assembler, mut position, harness, cut) = loop {
        match stream.header()? {
            Some(header) => break header,
            None if stream.read_more()? => {}
            None => return stream.whole(sink),
        }
    };
    stream.consume(cut);
    if let Some(sink) = sink.as_deref_mut() {
        assembler.drain_into(sink)?;
    }
    let wanted_events = usize::try_from(json_bytes_hint / 200).unwrap_or(0);
    if wanted_events > assembler.events.capacity() {
        let mut events = buffer::with_capacity(wanted_events);
        events.append(&mut assembler.events);
        assembler.events = events;
    }

    // The events, a block at a time.
    loop {
        while stream.text().len() < block_bytes && stream.read_more()? {}
        let last = stream.summary.is_some();
        let end = stream.events_block(&mut assembler, last, sink.as_deref_mut())?;
        if let Some(sink) = sink.as_deref_mut() {
            assembler.drain_into(sink)?;
        }
        match end {
            BlockEnd::Carry(0) => {
                // One event longer than the block: the block grows until it holds it.
                if !stream.read_more()? {
                    continue;
                }
            }
            BlockEnd::Carry(at) => stream.consume(at),
            BlockEnd::ArrayEnd(after) => {
                stream.consume(after);
                break;
            }
        }
    }

    // The rest of the root object, after `]`: a few keys, read whole.
    while stream.read_more()? {}
    let rest = match std::str::from_utf8(stream.text()) {
        Ok(rest) => rest,
        Err(error) => {
            return Err(stream.invalid_at(error.valid_up_to(), "invalid UTF-8".into()));
        }
    };
    let finished = chunked::finish_after_array(&mut assembler, &mut position, harness, rest);
    if let Err(error) = finished {
        return Err(match error {
            AfterArrayError::Unexpected(at) => stream.invalid_at(
                at,
                "expected `,` and a key, or `}`, after the `traceEvents` array".into(),
            ),
            AfterArrayError::Json(error) => {
                // The error's position is in `{` + the members after the array's `,`.
                let at = offset_of_line_column(rest.as_bytes(), error.line(), error.column());
                stream.invalid_at(at, strip_position(&error.to_string()))
            }
            AfterArrayError::Rejected => match assembler.failure.take() {
                Some(failure) => failure,
                None => stream.invalid_at(0, "a value after `traceEvents` was refused".into()),
            },
        });
    }
    let summary = stream.summary.take().unwrap_or_else(|| InputSummary {
        sha256: String::new(),
        gzipped: false,
        stored_bytes: 0,
    });
    Ok(stream.trace(assembler, summary))
}

/// The stream being read: the unparsed JSON (`buf[start..]`, starting at byte `base` of the
/// JSON) and how the input ended, once it has.
struct Stream<'p> {
    path: &'p Path,
    pool: ChunkPool<'p>,
    input: BlockInput,
    /// The block being parsed (the JSON carried over from the one before put in front of
    /// it), or the blocks' JSON appended where the carry outgrew the room in front.
    buf: Vec<u8>,
    start: usize,
    base: u64,
    /// JSON bytes received so far.
    json_bytes: u64,
    /// Bytes as stored read when the last block received was complete.
    stored_at_end: u64,
    /// Whether the bytes as stored are gzip.
    gzipped: bool,
    summary: Option<InputSummary>,
}

impl<'p> Stream<'p> {
    /// One more block onto `buf`; `false` once the input has ended.
    fn read_more(&mut self) -> Result<bool, TraceError> {
        if self.summary.is_some() {
            return Ok(false);
        }
        match self.input.next() {
            Next::Block(mut block, stored_at_end, gzipped) => {
                self.gzipped = gzipped;
                let json = block.get(BLOCK_HEADROOM..).unwrap_or_default().len();
                let carry = self.buf.len() - self.start;
                if carry <= BLOCK_HEADROOM {
                    // The carry goes in front of the block, which becomes the buffer.
                    let at = BLOCK_HEADROOM - carry;
                    block[at..BLOCK_HEADROOM].copy_from_slice(&self.buf[self.start..]);
                    let emptied = std::mem::replace(&mut self.buf, block);
                    self.start = at;
                    if emptied.capacity() > 0 {
                        self.input.give_back(emptied);
                    }
                } else {
                    // An event longer than the room in front: the block's JSON is appended.
                    self.buf.drain(..self.start);
                    self.start = 0;
                    self.buf.extend_from_slice(&block[BLOCK_HEADROOM..]);
                    self.input.give_back(block);
                }
                self.json_bytes += json as u64;
                self.stored_at_end = stored_at_end;
                Ok(true)
            }
            Next::End(summary) => {
                self.stored_at_end = summary.stored_bytes;
                self.summary = Some(summary);
                Ok(false)
            }
            Next::Failed(failure) => Err(input_error(self.path, failure)),
        }
    }

    /// The JSON not parsed yet.
    fn text(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// Drops the first `bytes` of the text, parsed.
    fn consume(&mut self, bytes: usize) {
        self.start += bytes.min(self.buf.len() - self.start);
        self.base += bytes as u64;
    }

    /// The whole input, read into `buf`, parsed as a whole file is (its events handed to
    /// `sink` when there is one).
    fn whole(mut self, sink: Option<&mut EventSink<'_>>) -> Result<Trace, TraceError> {
        while self.read_more()? {}
        let summary = self.summary.take().unwrap_or_else(|| InputSummary {
            sha256: String::new(),
            gzipped: false,
            stored_bytes: 0,
        });
        if self.json_bytes == 0 {
            return Err(if summary.stored_bytes == 0 {
                TraceError::Empty {
                    path: self.path.to_path_buf(),
                }
            } else {
                TraceError::EmptyAfterDecompression {
                    path: self.path.to_path_buf(),
                }
            });
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.drain(..self.start);
        self.start = 0;
        // Whatever was consumed (a byte-order mark) goes back in front.
        let json = if self.base > 0 {
            let mut json = b"\xef\xbb\xbf".to_vec();
            json.extend_from_slice(&buf);
            json
        } else {
            buf
        };
        let mut assembler = parse_json(&json, self.path)?;
        drop(json);
        if let Some(sink) = sink {
            assembler.drain_into(sink)?;
        }
        Ok(self.trace(assembler, summary))
    }

    /// The top of the document up to the first cut inside `traceEvents` that the parse
    /// accepts, or `None` when `buf` does not reach one yet.
    #[allow(clippy::type_complexity)]
    fn header(
        &self,
    ) -> Result<Option<(TraceAssembler<'p>, ParsePosition, Option<String>, usize)>, TraceError>
    {
        let text = utf8_prefix(self.text());
        if let Some(key) = chunked::find_bytes(text.as_bytes(), b"\"traceEvents\"") {
            let mut from = key;
            for _ in 0..MAX_FIRST_CUTS {
                let Some((cut, _)) = chunked::find_cut(text.as_bytes(), from, text.len()) else {
                    break;
                };
                let mut harness = None;
                if let Some((assembler, position)) =
                    chunked::parse_first_chunk(text, cut, self.path, &mut harness)
                {
                    return Ok(Some((assembler, position, harness, cut)));
                }
                from = cut + 1;
            }
        }
        // No cut accepted: an error at the top of the document is reported now (its line
        // and column are the file's own), anything else waits for more text.
        let mut assembler = TraceAssembler::new(self.path, 0);
        let mut position = ParsePosition::default();
        let outcome = parse_document(
            serde_json::Deserializer::from_str(text),
            &mut assembler,
            &mut position,
            &mut None,
        );
        if let Some(failure) = assembler.failure.take() {
            return Err(failure);
        }
        match outcome {
            Err(error) if error.classify() != serde_json::error::Category::Eof => Err(json_error(
                &error,
                &position,
                self.path,
                text.as_bytes(),
                self.base,
            )),
            _ => Ok(None),
        }
    }

    /// The events of `buf` (which starts at an event boundary) up to its last boundary, or
    /// to the array's end when the input has ended (`last`); a streamed trace's go to `sink`
    /// a chunk at a time (or are left on `assembler` to be drained).
    fn events_block(
        &mut self,
        assembler: &mut TraceAssembler<'p>,
        last: bool,
        sink: Option<&mut EventSink<'_>>,
    ) -> Result<BlockEnd, TraceError> {
        // The block is shared with the pool's threads while it is parsed, then taken back.
        let block = Arc::new(std::mem::take(&mut self.buf));
        let end = self.events_in(&block, assembler, last, sink);
        self.buf = Arc::try_unwrap(block).unwrap_or_else(|block| block.as_ref().clone());
        end
    }

    /// [`Self::events_block`] on `block`, whose text starts at `self.start`.
    fn events_in(
        &self,
        block: &Arc<Vec<u8>>,
        assembler: &mut TraceAssembler<'p>,
        last: bool,
        mut sink: Option<&mut EventSink<'_>>,
    ) -> Result<BlockEnd, TraceError> {
        let bytes = block.get(self.start..).unwrap_or_default();
        // Each chunk is checked to be UTF-8 text by the thread that parses it; the bytes
        // after the last cut are carried into the next block, to be checked there (a block
        // ends mid-character where it was cut by size).
        let limit = if last {
            Some(bytes.len())
        } else {
            let from = bytes.len().saturating_sub(CUT_WINDOW_BYTES);
            chunked::least_indented_cut(bytes, from, bytes.len()).filter(|&cut| cut > 0)
        };
        if let Some(limit) = limit {
            if let Some((chunks, array_end)) = self.parse_in_chunks(block, bytes, limit, last) {
                for chunk in chunks {
                    match sink.as_deref_mut() {
                        Some(sink) => assembler.append_into(chunk, sink)?,
                        None => assembler.append(chunk)?,
                    }
                }
                return Ok(match array_end {
                    Some(after) => BlockEnd::ArrayEnd(after),
                    None => BlockEnd::Carry(limit),
                });
            }
        }
        parse_sequential(assembler, bytes, last).map_err(|failure| match failure {
            SequentialFailure::Rejected(error) => error,
            SequentialFailure::Invalid { at, message } => self.invalid_at(at, message),
            SequentialFailure::Truncated { at } => TraceError::TruncatedStream {
                path: self.path.to_path_buf(),
                offset: self.base + at as u64,
                stored: self.stored_at(),
                events: assembler.counts.total,
            },
        })
    }

    /// An error at byte `at` of `buf`.
    fn invalid_at(&self, at: usize, message: String) -> TraceError {
        TraceError::InvalidJsonAt {
            path: self.path.to_path_buf(),
            offset: self.base + at as u64,
            stored: self.stored_at(),
            message,
        }
    }

    /// Where the compressed stream had been read to, for a gzipped input.
    fn stored_at(&self) -> StoredAt {
        StoredAt(self.gzipped.then_some(self.stored_at_end))
    }

    fn trace(&self, assembler: TraceAssembler<'_>, summary: InputSummary) -> Trace {
        let platform = assembler.platform();
        let mut events = assembler.events;
        events.shrink_to_fit();
        Trace {
            source: SourceFile {
                path: self.path.to_path_buf(),
                sha256: summary.sha256,
                gzipped: summary.gzipped,
                file_bytes: summary.stored_bytes,
                json_bytes: self.json_bytes,
            },
            metadata: assembler.metadata,
            platform,
            events,
            strings: assembler.strings,
            counts: assembler.counts,
        }
    }
}

/// The chunks of a block, in file order, and the offset after `]` when the block is the last.
type Chunks<'p> = (Vec<TraceAssembler<'p>>, Option<usize>);

impl<'p> Stream<'p> {
    /// The events of `bytes[..limit]` (from a boundary to a boundary, or, when `last`, to
    /// the array's `]`; `bytes` is `block` from `self.start`) parsed in chunks, the first on
    /// this thread and the others on the pool's, in file order, and the offset after `]`
    /// when `last`; `None` where a cut is refused, a chunk is not UTF-8 text or anything does
    /// not parse.
    fn parse_in_chunks(
        &self,
        block: &Arc<Vec<u8>>,
        bytes: &[u8],
        limit: usize,
        last: bool,
    ) -> Option<Chunks<'p>> {
        let chunks = (self.pool.threads() + 1)
            .min(limit / MIN_CHUNK_BYTES)
            .max(1);
        let mut cuts = vec![0];
        for i in 1..chunks {
            let from = (limit / chunks * i).max(cuts.last().map_or(0, |&c| c + 1));
            let to = (limit / chunks * (i + 1))
                .min(limit)
                .min(from + CUT_WINDOW_BYTES);
            if let Some(cut) = chunked::least_indented_cut(bytes, from, to).filter(|&c| c < limit) {
                cuts.push(cut);
            }
        }
        let ends: Vec<Option<usize>> = cuts
            .iter()
            .skip(1)
            .map(|&cut| Some(cut))
            .chain(std::iter::once((!last).then_some(limit)))
            .collect();
        // The later chunks as byte ranges of the block (the last one's, when `last`, runs
        // to the text's end).
        let later: Vec<_> = cuts
            .iter()
            .zip(&ends)
            .skip(1)
            .map(|(&start, &end)| {
                let end = end.unwrap_or(bytes.len());
                (
                    self.start + start..self.start + end,
                    end == bytes.len() && last,
                )
            })
            .collect();
        let first_end = ends.first().copied().flatten();
        let (first, parsed) = self.pool.parse_beside(block, &later, || {
            let text = std::str::from_utf8(bytes.get(..first_end.unwrap_or(bytes.len()))?).ok()?;
            chunked::parse_chunk(text, 0, first_end, self.path)
        });
        let mut assemblers = Vec::with_capacity(cuts.len());
        let (first, mut array_end) = first?;
        assemblers.push(first);
        for (chunk, &start) in parsed.into_iter().zip(cuts.iter().skip(1)) {
            let (assembler, end) = chunk?;
            assemblers.push(assembler);
            array_end = end.map(|end| start + end);
        }
        if last && array_end.is_none() {
            return None;
        }
        Some((assemblers, array_end))
    }
}

/// The longest prefix of `bytes` that is UTF-8 text.
fn utf8_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let valid = bytes.get(..error.valid_up_to()).unwrap_or_default();
            std::str::from_utf8(valid).unwrap_or_default()
        }
    }
}

fn input_error(path: &Path, failure: InputFailure) -> TraceError {
    let path = path.to_path_buf();
    let InputFailure {
        kind,
        json_offset,
        stored_offset,
    } = failure;
    match kind {
        InputFailureKind::Io(source) => TraceError::Io { path, source },
        InputFailureKind::TruncatedGzip => TraceError::TruncatedGzipAt {
            path,
            stored_offset,
            json_offset,
        },
        InputFailureKind::CorruptGzip(message) => TraceError::CorruptGzipAt {
            path,
            stored_offset,
            json_offset,
            message,
        },
    }
}
