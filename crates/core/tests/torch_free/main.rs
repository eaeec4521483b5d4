//! The torch-free core's integration tests, one binary that links no libtorch: a module per
//! subject (reading and classifying traces, the timeline model, energy probes), each through
//! the library alone. Tests that run the `replay` executable live with it
//! (`crates/cli/tests/cli/`); those of commands it hands to `replay-torch`, in the root
//! package (`tests/integration/`).

mod common;

mod classify_composite_gemm;
mod classify_conservation;
mod classify_extern_out;
mod classify_generated;
mod classify_linking;
mod classify_malformed;
mod classify_streamed;
mod classify_tracelens;
mod energy_probes;
mod execution_trace_fill;
mod execution_trace_order;
mod fusion_groups;
mod fuzz_corpus;
mod predict_kineto_cases;
mod predict_kineto_real;
mod tier1_transfers_match_trace;
