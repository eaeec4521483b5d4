//! Reading PyTorch Execution Traces (`torch.profiler.ExecutionTraceObserver`, the format
//! MLCommons Chakra builds on) and linking them to the Kineto trace of the same step.
//!
//! An Execution Trace records what a Kineto trace does not: the exact operator schema of
//! every call, every input value, and tensor identities (tensor id, storage id, offset), so
//! that outputs can be followed into the ops that consume them and views into their base.
//!
//! - [`load`] reads a plain or gzipped ET of schema 1.0.x or 1.1.x ([`layout`]) into an
//!   [`ExecutionTrace`] of [`EtNode`]s;
//! - [`link::link`] ties the Kineto trace's ops to its nodes by record-function id, refusing
//!   an ET recorded in another step or run; a Kineto trace recorded without ids is linked by
//!   op order and shapes ([`link_order`]);
//! - [`attach::attach`] writes the linked nodes' schemas, values and recorded index ranges
//!   ([`tensor_range`]) into a signature file; [`attach::link_file`] loads, links and fills
//!   before classifying (`classify`, `isolated`, `compare` and `sequence --execution-trace`);
//! - [`fill`] gives the ops of a trace recorded without shapes their linked node's inputs,
//!   and those of the iterations that repeat the ET's ([`link_repeats`]), before classifying.

pub mod attach;
mod error;
pub mod fill;
pub mod layout;
pub mod link;
pub mod link_order;
pub mod link_repeats;
mod link_shapes;
mod node;
mod read;
pub mod tensor_range;

pub use error::EtError;
pub use node::{
    operator_of_schema, overload_of_schema, tensor_key, EtArg, EtNode, ExecutionTrace,
    SchemaVersion, TensorKey, TensorRef,
};
pub use read::{load, load_bytes};
