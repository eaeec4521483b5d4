//! `cuda/semiring_scan.cu` and its CPU twin: the semiring scan of a semi-Markov CRF as a
//! float32 CPU kernel ([`cpu`]) and the launch geometry of the CUDA kernels ([`launch`]), over
//! the checked problem both read ([`ScanProblem`]). The `replay scan` suite
//! (`suites::scan`) runs them as its `cpu` and `cuda` backends and checks them against its
//! float64 reference.

pub mod cpu;
pub mod launch;
mod problem;
mod semiring;

pub use problem::{ScanDims, ScanProblem};
pub use semiring::Semiring;
