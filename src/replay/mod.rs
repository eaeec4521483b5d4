//! Replaying signatures: one file per tier plus the registry that dispatches to them. What
//! talks to libtorch itself (the dispatcher shim, the dtype table) is [`crate::torch`].

pub mod flow_wiring;
pub mod host_heap;
pub mod index_bounds;
pub mod isolated;
pub mod isolated_journal;
pub mod libtorch_memory;
pub mod memory_limit;
pub mod op_watchdog;
pub mod overload;
pub mod parameter_copies;
pub mod real_time;
/// How the profiler recorded an op's inputs: the torch-free core's reading.
pub use replay_core::signature::recorded;
pub mod registry;
pub mod rotating_op;
pub mod sequence;
pub mod sequence_buffers;
pub mod sequence_build;
pub mod sequence_needs;
pub mod sequence_route;
pub mod tier1_memory;
pub mod tier2_gemm;
pub mod tier3_fusion_group;
pub mod tier3_libtorch;
pub mod tier3_tensors;
pub mod tier4_generated;
pub mod value_rules;
