//! Replaying signatures: one file per tier plus the registry that dispatches to them.

pub mod libtorch_shim;
pub mod overload;
pub mod recorded;
