//! Everything that talks to libtorch beyond what `tch` offers, in layers after cudarc's
//! `sys`/`safe` split:
//!
//! - [`sys`]: the raw C ABI of the dispatcher shim (`shim/op_dispatch.{h,cpp}`), with the
//!   argument kinds as an enum mirroring the header's `REPLAY_ARG_*`;
//! - the safe layer: [`PreparedOp`] (an aten operator called by name, arguments bound once,
//!   inputs optionally linked to another call's [`OutputSource`]),
//!   [`overloads`] (an operator's schemas), [`current_cuda_stream`], [`shim_device_index`]
//!   (an opened device as the shim's calls name it), and [`ShimError`],
//!   which carries libtorch's C++ exceptions back as values;
//! - [`dtype`]: the one table between the core's dtypes and libtorch's `Kind`;
//! - [`work_target`]: libtorch work as a measurement-core target, and libtorch's current
//!   stream as the place the core times it (with the CUDA-event timer of
//!   `crate::measure::cuda_timing`);
//! - [`cpu_memory_counter`] and [`cuda_memory_stats`]: measured peak memory of libtorch's
//!   tensors (a counting CPU allocator; the CUDA caching allocator's peaks);
//! - [`fusion_kernel`]: a TorchScript fusion group's NNC kernel built from its subgraph, and
//!   the subgraph run unfused as its reference;
//! - [`profiler_session`]: libtorch's profiler started as `replay capture` starts it, its
//!   events counted (what the host measurement needs to price the profiler per event).

pub mod cpu_memory_counter;
pub mod cuda_memory_stats;
pub mod cuda_stream;
pub mod device_index;
pub mod dtype;
pub mod fusion_kernel;
pub mod op_arg;
pub mod output_source;
pub mod overloads;
pub mod prepared_op;
pub mod profiler_session;
mod shim_error;
pub mod sys;
pub mod view_ops;
pub mod work_target;

pub use cuda_stream::current_cuda_stream;
pub use device_index::shim_device_index;
pub use op_arg::OpArg;
pub use output_source::{InputLink, OutputSource};
pub use overloads::{overloads, OpSchema, SchemaArg};
pub use prepared_op::PreparedOp;
pub use shim_error::ShimError;
/// For the shim's other safe wrappers (`crate::model::aoti_package`).
pub(crate) use shim_error::{c_string, take_error, take_whole_string};
pub use view_ops::apply_views;
