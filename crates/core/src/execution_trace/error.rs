//! Everything that can go wrong while reading an Execution Trace or linking it to its Kineto
//! trace.
//!
//! Every variant names the file (both files, for a pair that does not belong together), so
//! the message printed to a user says what is wrong without any extra context.

use std::path::PathBuf;

/// An Execution Trace that cannot be read, or that is not the Kineto trace's.
#[derive(Debug, thiserror::Error)]
pub enum EtError {
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: gzip stream is corrupt or truncated: {message}")]
    Gzip { path: PathBuf, message: String },

    #[error(
        "{path}: not an Execution Trace: invalid JSON at line {line}, column {column}: {message}"
    )]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },

    #[error(
        "{path}: not an Execution Trace: {what}; torch.profiler.ExecutionTraceObserver writes \
         an object with a `schema` and a `nodes` list"
    )]
    NotAnExecutionTrace { path: PathBuf, what: String },

    #[error(
        "{path}: Execution Trace schema {schema} is not one replay reads (1.0.x, 1.1.x: \
         torch.profiler.ExecutionTraceObserver of PyTorch 2.0 and later)"
    )]
    UnknownSchema { path: PathBuf, schema: String },

    /// One node is not what its schema version says a node is.
    #[error("{path}: node {id} ({name}): {message}")]
    BadNode {
        path: PathBuf,
        id: i64,
        name: String,
        message: String,
    },

    /// The Execution Trace was not recorded in the Kineto trace's profiled step.
    #[error("{et} does not belong to {trace}: {message}")]
    NotThisTrace {
        et: PathBuf,
        trace: PathBuf,
        message: String,
    },

    /// Giving the trace the ET's inputs would number more strings than a trace can hold.
    #[error("{et}: its nodes' inputs give {trace} more distinct strings than a trace can number")]
    TooManyStrings { et: PathBuf, trace: PathBuf },
}
