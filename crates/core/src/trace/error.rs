//! Everything that can go wrong while reading a trace file.
//!
//! Every variant carries the path of the file, so that the message printed to a user
//! names the file and what is wrong with it without any extra context.

use std::path::PathBuf;

/// A trace file could not be read as a Kineto (PyTorch profiler) trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: file is empty (0 bytes); expected a Kineto JSON trace, plain or gzipped")]
    Empty { path: PathBuf },

    #[error("{path}: gzip stream decompresses to 0 bytes; expected a Kineto JSON trace")]
    EmptyAfterDecompression { path: PathBuf },

    /// `offset`: bytes of the JSON text before the error (after a byte-order mark, if any).
    #[error("{path}: invalid JSON at line {line}, column {column} (byte {offset} of the JSON): {message}")]
    InvalidJson {
        path: PathBuf,
        line: usize,
        column: usize,
        offset: u64,
        message: String,
    },

    #[error(
        "{path}: JSON ends early at line {line}, column {column} (byte {offset} of the JSON): the trace is truncated, or still being written; not read"
    )]
    TruncatedJson {
        path: PathBuf,
        line: usize,
        column: usize,
        offset: u64,
    },

    #[error(
        "{path}: top-level JSON value is {found}; a Kineto trace is an object with a `traceEvents` array"
    )]
    WrongTopLevelType { path: PathBuf, found: &'static str },

    #[error("{path}: no `traceEvents` key in the top-level object; this is not a Kineto trace")]
    MissingTraceEvents { path: PathBuf },

    #[error("{path}: unexpected value at line {line}, column {column} (byte {offset} of the JSON): {message}")]
    UnexpectedValue {
        path: PathBuf,
        line: usize,
        column: usize,
        offset: u64,
        message: String,
    },

    #[error("{path}: traceEvents[{index}] ({category} event {name:?}) has no `{field}` field")]
    MissingField {
        path: PathBuf,
        index: usize,
        category: &'static str,
        name: String,
        field: &'static str,
    },

    #[error(
        "{path}: traceEvents[{index}] ({category} event {name:?}) has an invalid `{field}`: {reason}"
    )]
    InvalidField {
        path: PathBuf,
        index: usize,
        category: &'static str,
        name: String,
        field: &'static str,
        reason: String,
    },

    #[error("{path}: trace has more than {limit} distinct strings; too large to index")]
    TooManyStrings { path: PathBuf, limit: u64 },

    #[error("{path}: invalid JSON at byte {offset} of the JSON{stored}: {message}")]
    InvalidJsonAt {
        path: PathBuf,
        offset: u64,
        stored: StoredAt,
        message: String,
    },

    #[error(
        "{path}: the JSON ends at byte {offset}{stored} inside `traceEvents`, after {events} complete events, with no closing `]}}`: the trace is truncated, or still being written; not read (wait until the profiler has finished writing it)"
    )]
    TruncatedStream {
        path: PathBuf,
        offset: u64,
        stored: StoredAt,
        events: u64,
    },

    #[error(
        "{path}: gzip stream is truncated: it ends at compressed byte {stored_offset}, after {json_offset} bytes of JSON, before the end of the compressed data"
    )]
    TruncatedGzipAt {
        path: PathBuf,
        stored_offset: u64,
        json_offset: u64,
    },

    #[error(
        "{path}: gzip stream is corrupt near compressed byte {stored_offset} (after {json_offset} bytes of JSON): {message}"
    )]
    CorruptGzipAt {
        path: PathBuf,
        stored_offset: u64,
        json_offset: u64,
        message: String,
    },
}

/// For a gzipped input, how far the compressed stream had been read when the JSON at fault
/// was inflated (to within a block); nothing for plain JSON, whose offsets are the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredAt(pub Option<u64>);

impl std::fmt::Display for StoredAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(stored) => write!(
                f,
                " (inflated from compressed bytes read up to byte {stored})"
            ),
            None => Ok(()),
        }
    }
}

impl TraceError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            TraceError::Io { path, .. }
            | TraceError::Empty { path }
            | TraceError::EmptyAfterDecompression { path }
            | TraceError::InvalidJson { path, .. }
            | TraceError::TruncatedJson { path, .. }
            | TraceError::WrongTopLevelType { path, .. }
            | TraceError::MissingTraceEvents { path }
            | TraceError::UnexpectedValue { path, .. }
            | TraceError::MissingField { path, .. }
            | TraceError::InvalidField { path, .. }
            | TraceError::TooManyStrings { path, .. }
            | TraceError::InvalidJsonAt { path, .. }
            | TraceError::TruncatedStream { path, .. }
            | TraceError::TruncatedGzipAt { path, .. }
            | TraceError::CorruptGzipAt { path, .. } => path,
        }
    }
}
