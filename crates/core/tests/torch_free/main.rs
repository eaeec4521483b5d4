//! The torch-free core's integration tests, one binary that links no libtorch: a module per
//! subject (reading and classifying traces, the timeline model, energy probes, the `replay`
//! executable's own commands). Tests of commands that `replay` hands to `replay-torch` live
//! in the root package, which builds `replay-torch` (`tests/integration/`).

mod common;

mod classify_composite_gemm;
mod classify_conservation;
mod classify_extern_out;
mod classify_generated;
mod classify_generated_trace;
mod classify_linking;
mod classify_malformed;
mod classify_streamed;
mod classify_tracelens;
mod cli_entry;
mod compiled_coverage;
mod energy_probes;
mod execution_trace;
mod fusion_groups;
mod fuzz_corpus;
mod inductor_kernels;
mod inductor_triton;
mod predict_host_times;
mod predict_kineto_cases;
mod predict_kineto_real;
mod predict_profile;
mod predict_streamed;
mod predict_timeline;
mod predict_what_if;
mod ranks_job;
mod tier1_transfers_match_trace;
mod trace_stream;
mod trace_stream_errors;
