//! Reading PyTorch profiler (Kineto) Chrome-trace files of every era into a typed model,
//! and linking each GPU activity to the host call and operator that launched it.
//!
//! - [`load`] reads a plain or gzipped trace ([`load_bytes`] does the same from memory);
//! - [`Trace`] holds the kept events ([`Event`]) and the capture's metadata;
//! - [`link::link`] ties GPU activities to launch calls and ops.

mod assemble;
mod buffer;
mod chunk_pool;
mod chunked;
mod contents;
mod document;
mod error;
pub mod event;
mod event_scanner;
#[doc(hidden)]
pub mod fuzzing;
pub mod gzip_size;
pub mod id_index;
mod json_position;
pub mod link;
mod load;
mod raw;
pub mod stdin;
pub mod steps;
mod stream;
mod stream_events;
mod stream_input;
mod strings;
mod whole_gzip;
mod whole_text;

pub use assemble::EventSink;
pub use contents::{EventCounts, Platform, SourceFile, Trace, TraceMetadata};
pub use error::TraceError;
pub use event::MODULE_PREFIX;
pub use event::{
    Category, Dim3, Event, EventArgs, ExecutionId, ExternalId, ExternalIdKey, Nanos,
    RecordedInputs, WaitOn,
};
pub use load::{load, load_bytes, BLOCK_BYTES_VARIABLE, STDIN_PATH, WHOLE_FILE_MAX_BYTES};
pub use load::{stream_events, stream_events_in_blocks};
pub use stream::{
    default_block_bytes, load_reader, load_reader_in_blocks, stream_reader_in_blocks,
    with_cores_shared_by,
};
pub use strings::{FxHashMap, FxHasher, StrId, StringTable, StringTableFull};
