//! The semiring scan of a semi-Markov CRF (issue 15): the computation the seed's streaming
//! reference does, as a float32 CPU kernel
//! ([`crate::kernels::semiring_scan::cpu`], beside `cuda/semiring_scan.cu`) and a float64 naive reference
//! ([`reference`]) that the kernel and every other backend are checked against.
//!
//! The recurrence (edge `[B, T−1, K, C, C]`, `edge[b][n][k][c][c']` = segment of duration `k`
//! starting at position `n` with source label `c'` and destination label `c`):
//! `beta[0, c] = one`; `beta[n, c] = ⊕_{d=1..max(1, min(K−1, n))} ⊕_{c'} beta[n−d, c'] ⊗
//! edge[n−d, d, c, c']`; `Z = ⊕_c beta[len−1, c]`.

pub mod analyze;
pub mod backend;
pub mod backends;
pub mod bench;
pub mod cpu_backend;
pub mod cuda_backend;
pub mod enumeration;
pub mod error;
pub mod npy_io;
pub mod reference;
pub mod rounding;
pub mod semiring;
pub mod status;
pub mod target;
pub mod tool;
pub mod torch_backend;
pub mod unavailable_backend;

pub use crate::kernels::semiring_scan::{ScanDims, ScanProblem};
pub use backend::{MemoryPeak, Phase, PreparedScan, ScanBackend, ScanOutput};
pub use error::ScanError;
pub use semiring::Semiring;
