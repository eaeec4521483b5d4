//! Cache flushing for cold measurements (`--cold`), run before every sample, outside the
//! timed region.
//!
//! CPU: the last-level cache is evicted by writing and then reading a buffer twice its size.
//! CUDA: the `l2_flush` kernel from `cuda/` writes a buffer twice the L2 size on the replay
//! stream, and the stream is synchronised before the sample starts.

use std::hint::black_box;

use crate::error::{Error, Result};

/// Fallback when sysfs does not say how big the last-level cache is.
const DEFAULT_LLC_BYTES: u64 = 32 << 20;

/// Evicts the CPU's caches by streaming through a buffer twice the last-level cache.
pub struct CpuCacheFlusher {
    buffer: Vec<u64>,
    round: u64,
}

impl CpuCacheFlusher {
    pub fn new(llc_bytes: Option<u64>) -> CpuCacheFlusher {
        let bytes = 2 * llc_bytes.unwrap_or(DEFAULT_LLC_BYTES);
        CpuCacheFlusher {
            buffer: vec![0; (bytes / 8) as usize],
            round: 0,
        }
    }

    pub fn buffer_bytes(&self) -> usize {
        self.buffer.len() * 8
    }

    pub fn flush(&mut self) -> u64 {
        self.round = self.round.wrapping_add(1);
        // One write per 64-byte line dirties every line; the read pass then has to fetch
        // them all back, which leaves nothing of the previous sample's working set.
        for word in self.buffer.iter_mut().step_by(8) {
            *word = word.wrapping_add(self.round);
        }
        let sum = self
            .buffer
            .iter()
            .step_by(8)
            .fold(0u64, |acc, &w| acc.wrapping_add(w));
        black_box(sum)
    }
}

/// Evicts a GPU's L2 with the embedded `l2_flush` kernel.
pub struct CudaL2Flusher {
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    function: cudarc::driver::CudaFunction,
    buffer: cudarc::driver::CudaSlice<u32>,
    words: usize,
    round: u32,
    blocks: u32,
}

impl CudaL2Flusher {
    pub fn new(
        device: &super::CudaDevice,
        cache: &crate::kernels::KernelCache,
    ) -> Result<CudaL2Flusher> {
        let l2 = device.info.l2_cache_bytes.max(1 << 20) as usize;
        let words = 2 * l2 / 4;
        let function = cache.function(&device.context, "l2_flush")?;
        let buffer = device
            .stream
            .alloc_zeros::<u32>(words)
            .map_err(|e| Error::cuda("cuMemAlloc", e))?;
        let blocks = (device.info.multiprocessors.max(1) as u32) * 4;
        Ok(CudaL2Flusher {
            stream: device.stream.clone(),
            function,
            buffer,
            words,
            round: 0,
            blocks,
        })
    }

    pub fn flush(&mut self) -> Result<()> {
        use cudarc::driver::{LaunchConfig, PushKernelArg};
        self.round = self.round.wrapping_add(1);
        let config = LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let words = self.words;
        let mut launch = self.stream.launch_builder(&self.function);
        launch.arg(&mut self.buffer).arg(&words).arg(&self.round);
        // SAFETY: l2_flush(unsigned*, size_t, unsigned) writes `words` elements of `buffer`.
        unsafe { launch.launch(config) }.map_err(|e| Error::cuda("cuLaunchKernel(l2_flush)", e))?;
        self.stream
            .synchronize()
            .map_err(|e| Error::cuda("cuStreamSynchronize", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_flush_buffer_is_twice_the_llc() {
        let mut f = CpuCacheFlusher::new(Some(1 << 20));
        assert_eq!(f.buffer_bytes(), 2 << 20);
        let a = f.flush();
        let b = f.flush();
        assert_ne!(
            a, b,
            "every flush writes new values, so it cannot be optimised away"
        );
        assert_eq!(
            CpuCacheFlusher::new(None).buffer_bytes() as u64,
            2 * DEFAULT_LLC_BYTES
        );
    }
}
