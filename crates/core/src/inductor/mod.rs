//! The Inductor cache a compiled model's capture keeps beside its trace (`inductor/`), and
//! its index `kernels.json` ([`kernels`]): where each generated kernel's code is and the
//! arguments it was called with. Classify reads it to name each tier-4 signature's code;
//! [`triton_cache`] finds a Triton kernel's cubin and launch data, [`cubin`] reads what a
//! cubin says about its parameters.

pub mod attach;
pub mod cubin;
pub mod error;
pub mod kernels;
pub mod read;
pub mod triton_cache;

pub use attach::{classify_with_cache, fill_sources, kernels_for_trace, locate};
pub use kernels::{
    KernelArg, KernelCall, KernelsFile, RecordedKernel, TensorArg, INDUCTOR_DIR, KERNELS_FILE,
    KERNELS_FORMAT, KERNELS_VERSION,
};
pub use read::{read_kernels, InductorKernels, KernelsFileError};
pub use triton_cache::{TritonLaunch, TritonMetadata};
