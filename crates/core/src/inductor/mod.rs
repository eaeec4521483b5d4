//! The Inductor cache a compiled model's capture keeps beside its trace (`inductor/`), and
//! its index `kernels.json` ([`kernels`]): where each generated kernel's code is and the
//! arguments it was called with. Classify reads it to name each tier-4 signature's code.

pub mod attach;
pub mod kernels;
pub mod read;

pub use attach::{classify_with_cache, fill_sources, kernels_for_trace, locate};
pub use kernels::{
    KernelArg, KernelCall, KernelsFile, RecordedKernel, TensorArg, INDUCTOR_DIR, KERNELS_FILE,
    KERNELS_FORMAT, KERNELS_VERSION,
};
pub use read::{read_kernels, InductorKernels, KernelsFileError};
