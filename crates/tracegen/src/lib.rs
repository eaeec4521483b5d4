//! `replay-tracegen`: synthetic PyTorch profiler (Kineto) traces of any size, for replay's
//! benchmarks of huge traces (`make bench-huge`). A training step of a bfloat16 GPT-style
//! model on an H100 ([`workload`]) is built once per variant from profiler-like primitives
//! ([`builder`]), rendered to JSON text with holes for the numbers that change ([`template`]),
//! and written over and over with fresh ids and later times ([`generate`]): the per-step
//! work is copying text and formatting a few integers. Torch-free; not part of `replay`.

pub mod backward;
pub mod builder;
pub mod event;
pub mod generate;
pub mod inputs;
pub mod kernels;
pub mod rng;
pub mod sink;
pub mod size;
pub mod template;
pub mod workload;

pub use generate::{generate, Layout, Length, Options, Summary};
pub use size::parse_size;
