//! Reading a trace file: whole and in memory when it is small, streamed in blocks when it
//! is large or comes from standard input; gzip detected by content.

use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

use super::assemble::{EventSink, TraceAssembler};
use super::buffer;
use super::contents::{SourceFile, Trace};
use super::error::TraceError;
use super::stream;
use super::whole_text::parse_json;
use super::{gzip_size, whole_gzip};

/// The two bytes every gzip member starts with. Detection goes by content, not by the
/// file name: `tensorboard_trace_handler` writes `.pt.trace.json.gz`, users rename files,
/// and an uncompressed file called `.gz` must still load.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The path that names standard input.
pub const STDIN_PATH: &str = "-";

/// The JSON size the events' vector is first sized for when the input is a pipe.
const STDIN_JSON_BYTES_HINT: u64 = 1 << 30;

/// Files up to this size (and gzip files whose JSON is no larger) are read whole and parsed
/// in memory: on the 2-core VM that took 0.3-0.4 s of CPU for the 120 MB replicated trace
/// against 0.45-0.55 s streamed, and a file this size costs little memory.
pub const WHOLE_FILE_MAX_BYTES: u64 = 64 << 20;

/// Sets the streaming reader's block size (bytes of JSON, e.g. `65536`), and makes every
/// input larger than one block stream. For tests and measurements.
pub const BLOCK_BYTES_VARIABLE: &str = "REPLAY_TRACE_BLOCK_BYTES";

/// The block size and the largest input read whole: [`BLOCK_BYTES_VARIABLE`] for both where
/// it is set to a number, else the defaults.
fn block_and_whole_bytes() -> (usize, u64) {
    match std::env::var(BLOCK_BYTES_VARIABLE)
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&bytes| bytes > 0)
    {
        Some(block) => (block, block as u64),
        None => (stream::default_block_bytes(), WHOLE_FILE_MAX_BYTES),
    }
}

/// Reads a Kineto trace (plain JSON or gzipped) from `path`, or from standard input when
/// `path` is `-`.
///
/// A file of up to [`WHOLE_FILE_MAX_BYTES`] (whose JSON is no larger) is read whole and
/// parsed in memory; anything larger, standard input and anything that is not
/// a regular file are streamed in blocks ([`stream::load_reader`]), so the JSON is never in
/// memory whole. Files are read, never mapped: a mapped file truncated while it is read
/// would end the process with SIGBUS. Both ways give the same trace.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let io_error = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (block, whole_max) = block_and_whole_bytes();
    if path.as_os_str() == STDIN_PATH {
        // Standard input redirected from a file has a size; a pipe has none, and the events'
        // vector is then sized for a 1 GiB trace up front (address space only until written:
        // growing it by doubling from small left ~40 MB of freed heap resident on the 120 MB
        // trace).
        let hint = std::fs::metadata("/dev/stdin")
            .ok()
            .filter(|m| m.is_file())
            .map_or(STDIN_JSON_BYTES_HINT, |m| m.len());
        return stream::load_reader_in_blocks(super::stdin::reader(), path, block, hint);
    }
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let metadata = file.metadata().map_err(io_error)?;
    let regular = metadata.is_file();
    if !regular || metadata.len() > whole_max {
        let hint = if regular {
            metadata.len()
        } else {
            STDIN_JSON_BYTES_HINT
        };
        return stream::load_reader_in_blocks(file, path, block, hint);
    }
    // The size is a hint (the file may change while read): read_to_end takes what is there.
    let mut bytes = buffer::with_capacity(metadata.len() as usize);
    file.read_to_end(&mut bytes).map_err(io_error)?;
    if bytes.starts_with(&GZIP_MAGIC) && inflated_size_hint(&bytes) as u64 > whole_max {
        // Small as stored, large as JSON: inflated as it is parsed.
        let hint = inflated_size_hint(&bytes) as u64;
        return stream::load_reader_in_blocks(std::io::Cursor::new(bytes), path, block, hint);
    }
    load_bytes(bytes, path)
}

/// Reads `path` (standard input for `-`) streamed in blocks whatever its size, handing its
/// events to `sink` a block at a time ([`stream::stream_reader_in_blocks`]): memory does not
/// grow with the file. The trace returned has no events.
pub fn stream_events(path: &Path, sink: &mut EventSink<'_>) -> Result<Trace, TraceError> {
    stream_events_in_blocks(path, None, sink)
}

/// [`stream_events`] in blocks of `block_bytes` of JSON (`None`: [`stream::default_block_bytes`]);
/// the environment's [`BLOCK_BYTES_VARIABLE`] overrides either.
pub fn stream_events_in_blocks(
    path: &Path,
    block_bytes: Option<usize>,
    sink: &mut EventSink<'_>,
) -> Result<Trace, TraceError> {
    let block = match block_bytes {
        Some(block) if std::env::var_os(BLOCK_BYTES_VARIABLE).is_none() => block.max(1),
        _ => block_and_whole_bytes().0,
    };
    // A streamed pass makes and frees its buffers block after block: small pages are cheaper.
    buffer::no_huge_pages_from_now();
    if path.as_os_str() == STDIN_PATH {
        return stream::stream_reader_in_blocks(super::stdin::reader(), path, block, sink);
    }
    let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    stream::stream_reader_in_blocks(file, path, block, sink)
}

/// The size a gzip file's trailer announces (mod 2^32), trusted only up to the deflate
/// format's maximum ratio so that a damaged trailer cannot make us reserve gigabytes.
fn inflated_size_hint(compressed: &[u8]) -> usize {
    let hinted = usize::try_from(gzip_size::trailer_of(compressed)).unwrap_or(usize::MAX);
    hinted.min(compressed.len().saturating_mul(1032))
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
    let capacity = inflated_size_hint(compressed);
    // A trailer under [`gzip_size::LEAST_RATIO`] times the file is a last member's, of
    // several: libdeflate would inflate the first into a buffer of that size and give up.
    let one_member =
        capacity as u64 >= (compressed.len() as u64).saturating_mul(gzip_size::LEAST_RATIO);
    if capacity > 0 && one_member {
        if let Some(json) = whole_gzip::inflate_single_member(compressed, buffer::zeroed(capacity))
        {
            return Ok(json);
        }
    }
    // Not one member of the trailer's size: several members (the trailer is the last one's),
    // sized by the file's beginning so that the buffer is not doubled up to twice the JSON.
    let capacity = gzip_size::inflated_size_of(compressed)
        .and_then(|estimate| usize::try_from(estimate + estimate / 16).ok())
        .map_or(capacity, |estimate| {
            estimate.min(compressed.len().saturating_mul(1032))
        });
    let mut inflater = MultiGzDecoder::new(compressed);
    inflate_into(&mut inflater, buffer::zeroed(capacity)).map_err(|(error, json_offset)| {
        // What the inflater has not taken yet (to within its 32 KiB read-ahead).
        let stored_offset = (compressed.len() - inflater.get_ref().len()) as u64;
        let path = path.to_path_buf();
        match error.kind() {
            std::io::ErrorKind::UnexpectedEof => TraceError::TruncatedGzipAt {
                path,
                stored_offset,
                json_offset,
            },
            _ => TraceError::CorruptGzipAt {
                path,
                stored_offset,
                json_offset,
                message: error.to_string(),
            },
        }
    })
}

/// Everything `reader` gives, read into `json` (zeroed, its length the expected size) and
/// beyond if there is more, as `read_to_end` would; unlike `read_to_end` into spare
/// capacity, this does not write zeros over the buffer first (the kernel gives fresh pages
/// zeroed). An error comes with the bytes read before it.
fn inflate_into(
    mut reader: impl Read,
    mut json: Vec<u8>,
) -> Result<Vec<u8>, (std::io::Error, u64)> {
    let mut filled = 0;
    while let Some(unfilled) = json.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match reader.read(unfilled) {
            Ok(0) => {
                json.truncate(filled);
                return Ok(json);
            }
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err((error, filled as u64)),
        }
    }
    if let Err(error) = reader.read_to_end(&mut json) {
        return Err((error, json.len() as u64));
    }
    Ok(json)
}
