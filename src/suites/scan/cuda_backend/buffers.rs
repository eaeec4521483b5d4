//! The device memory of one prepared CUDA scan, and the count of it that the benchmark's
//! `peak_allocated_gb` / `peak_reserved_gb` columns read.
//!
//! The backend allocates every buffer itself with `cuMemAlloc`, so its memory is known
//! exactly rather than estimated: `reserved` is what it holds (the inputs, and once a
//! backward has run the saved rows and the gradient, kept for the next call as a caching
//! allocator keeps freed blocks), `allocated` what the running call uses (a forward uses the
//! inputs alone even when backward buffers are held).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};

use crate::suites::scan::{MemoryPeak, ScanError};

/// A driver error as a scan error: out of memory by its code, anything else as it is.
pub fn driver_error(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> ScanError {
    move |e| {
        // Formatting a DriverError asks the driver for its text: only ever done on errors
        // that a driver returned.
        if is_out_of_memory(&e) {
            ScanError::OutOfMemory(format!("{call}: {e}"))
        } else {
            ScanError::Backend(format!("{call}: {e}"))
        }
    }
}

fn is_out_of_memory(e: &cudarc::driver::DriverError) -> bool {
    e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
}

/// What the backward needs kept from the saving forward, and the gradient it writes.
pub struct BackwardBuffers {
    pub saved_x: CudaSlice<f32>,
    pub saved_base_x: CudaSlice<f64>,
    /// Entropy only (one element otherwise).
    pub saved_h: CudaSlice<f32>,
    pub saved_base_h: CudaSlice<f64>,
    pub grad: CudaSlice<f32>,
}

impl BackwardBuffers {
    pub fn bytes(&self) -> u64 {
        slice_bytes(&self.saved_x)
            + slice_bytes(&self.saved_base_x)
            + slice_bytes(&self.saved_h)
            + slice_bytes(&self.saved_base_h)
            + slice_bytes(&self.grad)
    }
}

pub fn slice_bytes<T>(slice: &CudaSlice<T>) -> u64 {
    (slice.len() * std::mem::size_of::<T>()) as u64
}

/// Zeroed device memory of `len` elements.
pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: usize,
) -> Result<CudaSlice<T>, ScanError> {
    stream
        .alloc_zeros::<T>(len.max(1))
        .map_err(driver_error("cuMemAlloc"))
}

/// The live and peak byte counts of one prepared scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryTally {
    /// Held between calls: the inputs (edge, lengths, values).
    inputs: u64,
    /// Held for the backward (saved rows and gradient), once allocated.
    backward: u64,
    peak_allocated: u64,
    peak_reserved: u64,
}

impl MemoryTally {
    pub fn new(inputs: u64) -> Self {
        MemoryTally {
            inputs,
            backward: 0,
            peak_allocated: inputs,
            peak_reserved: inputs,
        }
    }

    /// The backward buffers are now held (`bytes` of them).
    pub fn hold_backward(&mut self, bytes: u64) {
        self.backward = bytes;
        self.peak_reserved = self.peak_reserved.max(self.inputs + bytes);
    }

    /// A call ran; `with_backward` when it used the backward buffers.
    pub fn record_call(&mut self, with_backward: bool) {
        let used = self.inputs + if with_backward { self.backward } else { 0 };
        self.peak_allocated = self.peak_allocated.max(used);
    }

    /// Forgets the peaks: from now on they start at what is held.
    pub fn reset(&mut self) {
        self.peak_allocated = self.inputs;
        self.peak_reserved = self.inputs + self.backward;
    }

    pub fn peak(&self) -> MemoryPeak {
        MemoryPeak {
            allocated: self.peak_allocated,
            reserved: self.peak_reserved,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forward_after_a_backward_uses_the_inputs_but_the_backward_buffers_stay_reserved() {
        let mut t = MemoryTally::new(100);
        assert_eq!(t.peak().allocated, 100);
        t.record_call(false);
        assert_eq!(
            t.peak(),
            MemoryPeak {
                allocated: 100,
                reserved: 100
            }
        );
        t.hold_backward(40);
        t.record_call(true);
        assert_eq!(
            t.peak(),
            MemoryPeak {
                allocated: 140,
                reserved: 140
            }
        );
        t.reset();
        t.record_call(false);
        assert_eq!(
            t.peak(),
            MemoryPeak {
                allocated: 100,
                reserved: 140
            }
        );
        t.record_call(true);
        assert_eq!(t.peak().allocated, 140);
    }

    #[test]
    fn out_of_memory_is_told_apart_by_the_driver_code() {
        use cudarc::driver::sys::CUresult;
        use cudarc::driver::DriverError;
        assert!(is_out_of_memory(&DriverError(
            CUresult::CUDA_ERROR_OUT_OF_MEMORY
        )));
        assert!(!is_out_of_memory(&DriverError(
            CUresult::CUDA_ERROR_INVALID_VALUE
        )));
    }
}
