//! Where the torch backend's memory peak comes from: the counting CPU allocator of the shim on
//! the CPU (process-wide, like the CUDA allocator's device-wide statistics), the CUDA caching
//! allocator's peaks on a GPU (what the seed reads with `torch.cuda.max_memory_*`).

use super::super::{MemoryPeak, ScanError};
use crate::device::{CudaDevice, Device};
use crate::torch::{cpu_memory_counter, cuda_memory_stats};

#[derive(Debug, Clone)]
pub enum PeakSource {
    CpuCounter,
    /// The opened GPU whose caching allocator's peaks are read.
    CudaAllocator(CudaDevice),
}

impl PeakSource {
    /// The source for `device`, ready to read: the CPU counter is installed on first use; the
    /// CUDA statistics are checked to exist in this build.
    pub fn open(device: &Device) -> Result<PeakSource, ScanError> {
        match device {
            Device::Cuda(dev) => {
                cuda_memory_stats::reset_peak(dev).map_err(|e| {
                    ScanError::Backend(format!("peak GPU memory cannot be measured: {e}"))
                })?;
                Ok(PeakSource::CudaAllocator(dev.clone()))
            }
            Device::Cpu(_) => {
                cpu_memory_counter::install().map_err(|e| {
                    ScanError::Backend(format!("peak CPU memory cannot be measured: {e}"))
                })?;
                Ok(PeakSource::CpuCounter)
            }
        }
    }

    pub fn reset(&self) {
        match self {
            PeakSource::CpuCounter => cpu_memory_counter::reset_peak(),
            // `open` checked that the statistics exist; a failure now leaves the old peak.
            PeakSource::CudaAllocator(gpu) => {
                let _ = cuda_memory_stats::reset_peak(gpu);
            }
        }
    }

    pub fn peak(&self) -> MemoryPeak {
        match self {
            // No caching on the CPU: what was reserved is what was allocated.
            PeakSource::CpuCounter => {
                let bytes = cpu_memory_counter::peak_bytes();
                MemoryPeak {
                    allocated: bytes,
                    reserved: bytes,
                }
            }
            PeakSource::CudaAllocator(gpu) => cuda_memory_stats::peak(gpu)
                .map(|(allocated, reserved)| MemoryPeak {
                    allocated,
                    reserved,
                })
                .unwrap_or_default(),
        }
    }
}
