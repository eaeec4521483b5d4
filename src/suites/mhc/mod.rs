//! `replay bench mhc`: the mHC (manifold-constrained hyper-connections, arXiv 2512.24880)
//! residual-mixing pipeline stage by stage, and what offloading it from the GPU to the CPU
//! costs (the seed `mHC_benchmark.py`, rebuilt on replay's measurement core).
//!
//! One concept per file: [`shape`] (sizes, dtypes, the memory check), [`torch_stages`] (the
//! seed's composition of libtorch ops), [`element`], [`parallel`] and the fused CPU kernels
//! [`fused_linear`], [`fused_apply`] and the Sinkhorn of `cuda/mhc_sinkhorn.cu`'s CPU twin
//! ([`crate::kernels::mhc_sinkhorn::cpu`]), with [`fused_stages`] running them on tensors;
//! [`cuda_sinkhorn`] (the CUDA kernel, [`crate::kernels::mhc_sinkhorn::cuda`], on a GPU's
//! libtorch tensors), [`stages`] (the seed's six
//! timed stages), [`bench`] (all of it as a core `Suite`: its settings in `settings`, the
//! inputs its cases share in `prepare`, what each case times in `case_work`, the checks
//! before timing in `checks`), [`grid`] (every configuration's cases as one grid for the
//! core's runner, a configuration one group; what the watcher sees of it in `console`),
//! [`rows`] (the seed's CSV row and console block), [`offload`] (the break-even answer).

pub mod bench;
mod case_work;
mod checks;
pub mod command;
mod console;
pub mod cuda_sinkhorn;
pub mod element;
pub mod error;
pub mod fused_apply;
pub mod fused_linear;
pub mod fused_stages;
pub mod grid;
pub mod merge;
pub mod offload;
pub mod parallel;
mod prepare;
pub mod profile;
pub mod rows;
pub mod run;
mod settings;
pub mod shape;
pub mod stages;
pub mod torch_stages;

pub use error::MhcError;
pub use shape::{MhcDtype, MhcShape};
