//! Errors of replay's own kernels (their CPU twins and their launches): the one error type of
//! this layer. Each suite turns it into its own error with a `From` impl, variant for variant,
//! so that what the user reads is the suite's message, word for word.

/// What can go wrong in a kernel or its launch.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// Inputs that do not fit the kernel (sizes, lengths, tensors): the caller's to fix.
    #[error("invalid kernel input: {0}")]
    InvalidInput(String),

    /// A problem beyond the kernel's design (more shared memory than the device has, sizes
    /// past 32 bits).
    #[error("not implemented: {0}")]
    NotImplemented(String),

    /// Memory the kernel's buffers need could not be had.
    #[error("out of memory: {0}")]
    OutOfMemory(String),

    /// The kernel is not in this build or cannot be loaded on the device.
    #[error("{0}")]
    Unavailable(String),

    /// A CUDA driver call failed, with the call's name.
    #[error("{0}")]
    Device(String),
}

/// A CUDA driver call's failure, named by `call`.
pub fn driver_error(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> KernelError {
    move |e| KernelError::Device(format!("{call}: {e}"))
}
