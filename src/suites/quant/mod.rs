//! `replay bench quant`: torchao's quantization microbenchmarks (the seed
//! `quantization_microbenchmarks`) from its YAML config, with the recipes written as libtorch
//! ops and timed on replay's measurement core.
//!
//! One concept per file: [`config`] (the seed's YAML schema and its errors), [`shapes`] (its
//! shape generators), [`model`] (its model types), [`recipe`] (recipe names and pairs),
//! [`quantized_linear`] (each recipe's quantization and kernel, and its float64 reference),
//! [`sqnr`], [`timing`] (the seed's timing or replay's), [`python_helper`] (torch.compile and
//! the profiler, which only Python has), [`suite`] (the grid as a core `Suite`), [`rows`] and
//! [`output`] (the CSV and the printed table).

pub mod case;
pub mod command;
pub mod config;
pub mod error;
pub mod merge;
pub mod model;
pub mod output;
pub mod python_helper;
pub mod quantized_linear;
pub mod recipe;
pub mod rows;
pub mod shapes;
pub mod sqnr;
pub mod suite;
pub mod timing;

/// The command name a sharded run's shard.json carries, and `replay merge` dispatches on.
pub const COMMAND: &str = "bench quant";

pub use case::QuantCase;
pub use command::QuantCommand;
pub use config::QuantConfig;
pub use error::QuantError;
pub use suite::{QuantSettings, QuantSuite};
