//! The bodies of the fuzz targets, one function per target, shared by the libFuzzer
//! binaries (`fuzz/fuzz_targets/`, `make fuzz`) and by the test that replays their corpus
//! and regressions on stable Rust (`crates/core/tests/torch_free/fuzz_corpus.rs`). Not an API.
//!
//! Each body reads the fuzzer's bytes as one of replay's outside inputs and goes on to what
//! replay does with a file it accepted. A panic is a finding: either a reader that panics on
//! outside input, or (the message starting `mismatch:`) two readers that must agree and do
//! not. The readers of the `replay` crate (quant YAML, `.npy`, `--input`) have their bodies
//! in `replay::fuzzing`.

pub mod corpus;
mod embedded;
mod files;
pub mod kineto;
mod target;
mod trace_targets;
mod what_if;

pub use files::{
    execution_trace, isolated_json, profile_json, report_json, shard_manifest, shard_spec,
    signature_file,
};
pub use target::Target;
pub use trace_targets::{gzip, trace_chunked, trace_load, trace_scanner};
pub use what_if::what_if;

/// Every target of the torch-free readers.
pub const TARGETS: &[Target] = &[
    Target {
        name: "trace_scanner",
        run: trace_scanner,
    },
    Target {
        name: "trace_chunked",
        run: trace_chunked,
    },
    Target {
        name: "trace_load",
        run: trace_load,
    },
    Target {
        name: "gzip",
        run: gzip,
    },
    Target {
        name: "signature_file",
        run: signature_file,
    },
    Target {
        name: "isolated_json",
        run: isolated_json,
    },
    Target {
        name: "profile_json",
        run: profile_json,
    },
    Target {
        name: "report_json",
        run: report_json,
    },
    Target {
        name: "shard_manifest",
        run: shard_manifest,
    },
    Target {
        name: "shard_spec",
        run: shard_spec,
    },
    Target {
        name: "execution_trace",
        run: execution_trace,
    },
    Target {
        name: "what_if",
        run: what_if,
    },
];
