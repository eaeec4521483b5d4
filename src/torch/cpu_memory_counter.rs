//! Measured peak memory of libtorch's CPU tensors: libtorch keeps no statistics for the CPU, so
//! the shim puts a counting allocator in front of its default CPU allocator (`shim/
//! memory_stats.cpp`). The counter is process-wide: it sees every CPU tensor any thread
//! allocates after the install, which is what the peak of a benchmark row must include (inputs,
//! autograd graph, gradients), and storage allocated before the install is never counted.

use std::ptr;

use super::shim_error::{take_error, ShimError};
use super::sys;

/// Installs the counting allocator (once per process; later calls return at once).
pub fn install() -> Result<(), ShimError> {
    let mut error = ptr::null_mut();
    // SAFETY: the shim catches every C++ exception; `error` is null or a string it allocated.
    let rc = unsafe { sys::replay_cpu_counter_install(&mut error) };
    if rc != 0 {
        return Err(take_error(error));
    }
    Ok(())
}

/// Whether [`install`] has succeeded in this process.
pub fn is_installed() -> bool {
    // SAFETY: reads an atomic.
    unsafe { sys::replay_cpu_counter_installed() != 0 }
}

/// Bytes of CPU tensor storage allocated since the install and not yet freed (0 before it).
pub fn live_bytes() -> u64 {
    // SAFETY: reads an atomic.
    unsafe { sys::replay_cpu_counter_live() }
}

/// The most [`live_bytes`] has been since the last [`reset_peak`] (0 before the install).
pub fn peak_bytes() -> u64 {
    // SAFETY: reads an atomic.
    unsafe { sys::replay_cpu_counter_peak() }
}

/// Starts a new peak from what is live now.
pub fn reset_peak() {
    // SAFETY: writes an atomic.
    unsafe { sys::replay_cpu_counter_reset_peak() }
}
