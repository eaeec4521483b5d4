//! What the suites' Rust CPU kernels share (the semiring scan, mHC's fused kernels,
//! calibrate's memory kernels): worker pools kept for the process, and a float32 `exp` in
//! plain arithmetic that vectorises. Suites never import each other; what two of them need
//! lives here.

pub mod exp_approx;
pub mod worker_pool;
