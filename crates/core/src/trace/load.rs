//! Reading a trace file: gzip detection, decompression, and a single streaming pass of
//! the JSON that keeps only the events classification needs.

use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

use super::assemble::TraceAssembler;
use super::buffer;
use super::chunked;
use super::contents::{SourceFile, Trace};
use super::document::{finish_metadata, parse_document, ParsePosition};
use super::error::TraceError;
use super::mapped::{self, MappedFile};
use super::whole_gzip;

/// The two bytes every gzip member starts with. Detection goes by content, not by the
/// file name: `tensorboard_trace_handler` writes `.pt.trace.json.gz`, users rename files,
/// and an uncompressed file called `.gz` must still load.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a Kineto trace (plain JSON or gzipped) from `path`.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let io_error = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let metadata = file.metadata().ok();
    let mappable = metadata
        .as_ref()
        .is_some_and(|m| m.is_file() && m.len() >= mapped::MIN_MAPPED_BYTES);
    if mappable {
        if let Some(mapped) = metadata.and_then(|m| MappedFile::map(&file, m.len())) {
            return load_from(mapped, path);
        }
    }
    // The size is a hint (the file may change while read): read_to_end takes what is there.
    let size_hint = file.metadata().map_or(0, |m| m.len() as usize);
    let mut bytes = buffer::with_capacity(size_hint);
    file.read_to_end(&mut bytes).map_err(io_error)?;
    load_bytes(bytes, path)
}

/// Reads a Kineto trace from the bytes of a file; `path` is used for messages only.
pub fn load_bytes(file_bytes: Vec<u8>, path: &Path) -> Result<Trace, TraceError> {
    load_from(file_bytes, path)
}

/// Reads a Kineto trace from the bytes of a file (read or mapped), released as soon as they
/// are parsed.
fn load_from<B>(file: B, path: &Path) -> Result<Trace, TraceError>
where
    B: std::ops::Deref<Target = [u8]> + Sync,
{
    let file_bytes: &[u8] = &file;
    if file_bytes.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let file_len = file_bytes.len() as u64;
    let gzipped = file_bytes.starts_with(&GZIP_MAGIC);
    // The file's SHA-256 (its identity in the signature file) is a quarter of the work on an
    // uncompressed trace: it runs on a second core while this one decompresses and parses.
    let (sha256, parsed) = std::thread::scope(|scope| {
        let hasher = scope.spawn(|| hex_sha256(file_bytes));
        let parsed = decompress_and_parse(file_bytes, gzipped, path);
        let sha256 = hasher.join().unwrap_or_else(|_| hex_sha256(file_bytes));
        (sha256, parsed)
    });
    drop(file);
    let (assembler, json_len) = parsed?;
    let platform = assembler.platform();
    let mut events = assembler.events;
    events.shrink_to_fit();
    Ok(Trace {
        source: SourceFile {
            path: path.to_path_buf(),
            sha256,
            gzipped,
            file_bytes: file_len,
            json_bytes: json_len,
        },
        metadata: assembler.metadata,
        platform,
        events,
        strings: assembler.strings,
        counts: assembler.counts,
    })
}

/// The JSON text (decompressed when `gzipped`) parsed into kept events, and its length.
fn decompress_and_parse<'p>(
    file_bytes: &[u8],
    gzipped: bool,
    path: &'p Path,
) -> Result<(TraceAssembler<'p>, u64), TraceError> {
    let decompressed;
    let json: &[u8] = if gzipped {
        decompressed = gunzip(file_bytes, path)?;
        &decompressed
    } else {
        file_bytes
    };
    if json.is_empty() {
        return Err(TraceError::EmptyAfterDecompression {
            path: path.to_path_buf(),
        });
    }
    Ok((parse_json(json, path)?, json.len() as u64))
}

fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

fn gunzip(compressed: &[u8], path: &Path) -> Result<Vec<u8>, TraceError> {
    // The gzip trailer's ISIZE (size mod 2^32) is a good capacity hint; it is only trusted
    // up to the deflate format's maximum ratio so that a damaged trailer cannot make us
    // reserve gigabytes.
    let hinted = compressed
        .len()
        .checked_sub(4)
        .and_then(|at| compressed.get(at..))
        .and_then(|tail| <[u8; 4]>::try_from(tail).ok())
        .map(|tail| u32::from_le_bytes(tail) as usize)
        .unwrap_or(0);
    let capacity = hinted.min(compressed.len().saturating_mul(1032));
    if capacity > 0 {
        if let Some(json) = whole_gzip::inflate_single_member(compressed, buffer::zeroed(capacity))
        {
            return Ok(json);
        }
    }
    inflate_into(MultiGzDecoder::new(compressed), buffer::zeroed(capacity)).map_err(|error| {
        match error.kind() {
            std::io::ErrorKind::UnexpectedEof => TraceError::TruncatedGzip {
                path: path.to_path_buf(),
            },
            _ => TraceError::CorruptGzip {
                path: path.to_path_buf(),
                message: error.to_string(),
            },
        }
    })
}

/// Everything `reader` gives, read into `json` (zeroed, its length the expected size) and
/// beyond if there is more, as `read_to_end` would; unlike `read_to_end` into spare
/// capacity, this does not write zeros over the buffer first (the kernel gives fresh pages
/// zeroed).
fn inflate_into(mut reader: impl Read, mut json: Vec<u8>) -> std::io::Result<Vec<u8>> {
    let mut filled = 0;
    while let Some(unfilled) = json.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match reader.read(unfilled) {
            Ok(0) => {
                json.truncate(filled);
                return Ok(json);
            }
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    reader.read_to_end(&mut json)?;
    Ok(json)
}

/// What the first meaningful byte says the top-level value is, for a precise message
/// when it is not an object (serde's would only say "invalid type").
fn check_top_level(json: &[u8], path: &Path) -> Result<(), TraceError> {
    const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
    let body = json.strip_prefix(UTF8_BOM).unwrap_or(json);
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let found = match first {
        Some(b'{') => return Ok(()),
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        // A scalar is named only when the whole file is that scalar: a text file starting
        // with "these notes" or "2024" is not a boolean or a number, it is not JSON, and the
        // parser says where.
        Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(serde_json::Value::Number(_)) => "a number",
                Ok(serde_json::Value::Bool(_)) => "a boolean",
                Ok(serde_json::Value::Null) => "null",
                _ => return Ok(()),
            }
        }
        // Not the start of any JSON value: let the parser report where and why.
        Some(_) => return Ok(()),
        None => "missing (the file is only whitespace)",
    };
    Err(TraceError::WrongTopLevelType {
        path: path.to_path_buf(),
        found,
    })
}

fn parse_json<'p>(json: &[u8], path: &'p Path) -> Result<TraceAssembler<'p>, TraceError> {
    check_top_level(json, path)?;
    let body = json.strip_prefix(b"\xef\xbb\xbf").unwrap_or(json);
    // Validating UTF-8 once for the whole text is cheaper than per string, which is what
    // parsing from bytes does. A file with invalid UTF-8 somewhere (in a string we would
    // skip anyway, say) is still read, from bytes, as serde_json alone would read it.
    let text = std::str::from_utf8(body).ok();
    // Cut into chunks parsed on every core where the file allows; anything unexpected
    // (no cut found, a chunk that does not parse) falls back to the single pass below, which
    // then names the problem exactly as it always has.
    if let Some(parsed) = text.and_then(|text| chunked::parse(text, path)) {
        return Ok(parsed);
    }
    parse_in_one_pass(body, text, path)
}

/// The whole document in one pass on this thread: `text` is `body` when it is valid UTF-8.
pub(super) fn parse_in_one_pass<'p>(
    body: &[u8],
    text: Option<&str>,
    path: &'p Path,
) -> Result<TraceAssembler<'p>, TraceError> {
    let mut assembler = TraceAssembler::new(path, body.len());
    let mut position = ParsePosition::default();
    let mut harness_pytorch_version = None;
    let outcome = match text {
        Some(text) => parse_document(
            serde_json::Deserializer::from_str(text),
            &mut assembler,
            &mut position,
            &mut harness_pytorch_version,
        ),
        None => parse_document(
            serde_json::Deserializer::from_slice(body),
            &mut assembler,
            &mut position,
            &mut harness_pytorch_version,
        ),
    };
    if let Some(failure) = assembler.failure.take() {
        return Err(failure);
    }
    outcome.map_err(|error| json_error(&error, &position, path))?;
    if !assembler.saw_trace_events {
        return Err(TraceError::MissingTraceEvents {
            path: path.to_path_buf(),
        });
    }
    finish_metadata(&mut assembler, harness_pytorch_version);
    Ok(assembler)
}

fn json_error(error: &serde_json::Error, position: &ParsePosition, path: &Path) -> TraceError {
    let (line, column) = (error.line(), error.column());
    match error.classify() {
        serde_json::error::Category::Eof => TraceError::TruncatedJson {
            path: path.to_path_buf(),
            line,
            column,
        },
        serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
            TraceError::InvalidJson {
                path: path.to_path_buf(),
                line,
                column,
                message: strip_position(&error.to_string()),
            }
        }
        serde_json::error::Category::Data => {
            let message = strip_position(&error.to_string());
            let message = if position.in_trace_events {
                format!("in traceEvents[{}]: {message}", position.event_index)
            } else {
                message
            };
            TraceError::UnexpectedValue {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        }
    }
}

/// serde_json appends " at line L column C"; our messages place the position themselves.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}
