//! The `replay` executable's tests, one binary that links no libtorch: a module per subject
//! (classify and predict run as a user runs them, the hand-over to `replay-torch`, the
//! streamed and sharded paths). Tests of the core that need only the library stay in
//! `crates/core/tests/torch_free/`; commands that `replay` hands to `replay-torch` are tested
//! in the root package (`tests/integration/`).

mod common;

mod classify_generated_trace;
mod cli_entry;
mod compiled_coverage;
mod execution_trace;
mod inductor_kernels;
mod inductor_triton;
mod predict_host_times;
mod predict_profile;
mod predict_streamed;
mod predict_timeline;
mod predict_what_if;
mod ranks_job;
mod trace_stream;
mod trace_stream_errors;
