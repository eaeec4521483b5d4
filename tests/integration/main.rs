//! The libtorch package's integration tests, one binary: a module per subject (the CLI's
//! libtorch commands through the built `replay`, the replay tiers, models and suites in
//! process). Every module shares this process: libtorch's random generator is taken in turns
//! (`common::torch_generator_turn`). The two tests of the process-wide memory counters
//! (`tests/scan_cpu_memory.rs`, `tests/torch_cpu_memory_counter.rs`) are binaries of their own,
//! because any test running beside them would move the counts.

mod common;
mod compiled_bloom_tiny;
mod cublas_reference;
mod float_tolerance;
mod gemm_cublas_check;
mod scan_support;

mod aoti_package;
mod calibrate_cli;
mod cli_conventions;
mod cli_devices;
mod cli_isolated;
mod cli_malformed_inputs;
mod cluster_templates;
mod compare_pipeline;
mod compiled_capture;
mod compiled_compare;
mod energy_isolated;
mod execution_trace_capture;
mod fusion_groups;
mod fuzz_corpus;
mod gemm_cublas_mapping;
mod host_section;
mod hostile_signatures;
mod isolated_generated;
mod isolated_profile;
mod many_signatures;
mod mhc_bench_cli;
mod mhc_profiled_module;
mod quant_bench_cli;
mod quant_recipes;
mod resume_cli;
mod scan_analyze_cli;
mod scan_bench;
mod scan_bench_cli;
mod scan_cpu_backend;
mod scan_kernel;
mod scan_seed_names;
mod scan_tool;
mod scan_torch_backend;
mod selftest_model;
mod sequence_cli;
mod sequence_flow_cli;
mod sequence_memory;
mod sequence_real_time;
mod shard_merge;
mod shard_merge_benches;
mod torchscript_gpt2_trace;
mod zoo_compare;
