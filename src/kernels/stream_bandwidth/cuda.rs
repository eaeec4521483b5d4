//! replay's own GPU bandwidth kernels, `cuda/stream_bandwidth.cu` (copy and triad over
//! float4, grid-stride), embedded by build.rs, loaded by name through [`KernelCache`] and
//! launched on the stream they are given (`replay calibrate` gives the device's replay stream
//! and times the calls there as a measurement-core target).
//!
//! The grid is one full wave of resident blocks ([`Geometry::for_elements`]): enough warps on
//! every SM to keep the memory system busy, and no tail of half-empty waves.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::stream_kernel::{StreamKernel, TRIAD_SCALAR};
use crate::kernels::error::driver_error;
use crate::kernels::{KernelCache, KernelError};

/// Threads per block: 8 blocks of 256 fill the 2,048 resident threads of an SM on sm_80 to
/// sm_90.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Blocks per SM in one full wave.
pub const BLOCKS_PER_SM: u32 = 8;

/// The `extern "C"` name of `kernel` in `cuda/stream_bandwidth.cu`.
pub fn kernel_name(kernel: StreamKernel) -> &'static str {
    match kernel {
        StreamKernel::Copy => "stream_copy",
        StreamKernel::Triad => "stream_triad",
    }
}

/// One launch's grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub blocks: u32,
    pub threads_per_block: u32,
}

impl Geometry {
    /// A thread per float4 of `n` floats, capped at one full wave on `multiprocessors` SMs
    /// (the grid-stride loop covers the rest); at least one block.
    pub fn for_elements(n: usize, multiprocessors: i32) -> Geometry {
        let vectors = n.div_ceil(4) as u64;
        let needed = vectors.div_ceil(THREADS_PER_BLOCK as u64).max(1);
        let wave = multiprocessors.max(1) as u64 * BLOCKS_PER_SM as u64;
        Geometry {
            blocks: needed.min(wave) as u32,
            threads_per_block: THREADS_PER_BLOCK,
        }
    }

    /// Threads launched in all.
    pub fn threads(self) -> u64 {
        self.blocks as u64 * self.threads_per_block as u64
    }

    fn config(self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (self.threads_per_block, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Where the first element that `kernel` got wrong is, comparing the arrays read back after
/// a call (`a`, `b`, `c` as the kernels name them).
pub fn check_result(kernel: StreamKernel, a: &[f32], b: &[f32], c: &[f32]) -> Result<(), String> {
    let bad = match kernel {
        StreamKernel::Copy => a.iter().zip(b).position(|(a, b)| a != b),
        StreamKernel::Triad => a
            .iter()
            .zip(b.iter().zip(c))
            .position(|(&a, (&b, &c))| a != b + TRIAD_SCALAR * c),
    };
    let lengths_differ = a.len() != b.len() || a.len() != c.len();
    match bad {
        Some(i) => Err(format!(
            "the {} kernel wrote a wrong value at element {i} (a={}, b={}, c={})",
            kernel.name(),
            a[i],
            b[i],
            c[i]
        )),
        None if lengths_differ => Err("the arrays read back differ in length".into()),
        None => Ok(()),
    }
}

/// The three arrays of one size on one GPU, the two kernels, and the stream they run on.
pub struct CudaStreamKernels {
    stream: Arc<CudaStream>,
    copy: CudaFunction,
    triad: CudaFunction,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    n: usize,
    geometry: Geometry,
}

impl CudaStreamKernels {
    /// Allocates `n` floats per array on `stream` (a = 1, b = 2, c = 0.5) of `context`, a GPU
    /// of `multiprocessors` SMs, and loads the kernels; a build without nvcc says so here.
    pub fn new(
        context: &Arc<CudaContext>,
        stream: Arc<CudaStream>,
        kernels: &KernelCache,
        n: usize,
        multiprocessors: i32,
    ) -> Result<CudaStreamKernels, KernelError> {
        context
            .bind_to_thread()
            .map_err(driver_error("cuCtxSetCurrent"))?;
        let function = |kernel| {
            kernels
                .function(context, kernel_name(kernel))
                .map_err(|e| KernelError::Unavailable(e.to_string()))
        };
        let (copy, triad) = (
            function(StreamKernel::Copy)?,
            function(StreamKernel::Triad)?,
        );
        let filled = |value: f32| {
            stream
                .clone_htod(&vec![value; n.max(1)])
                .map_err(driver_error("cuMemcpyHtoD"))
        };
        let (a, b, c) = (filled(1.0)?, filled(2.0)?, filled(0.5)?);
        Ok(CudaStreamKernels {
            geometry: Geometry::for_elements(n, multiprocessors),
            stream,
            copy,
            triad,
            a,
            b,
            c,
            n,
        })
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The stream the kernels run on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Runs `kernel` once and checks every element it wrote on the host.
    pub fn run_and_check(&mut self, kernel: StreamKernel) -> Result<(), KernelError> {
        self.launch(kernel)?;
        let back = |s: &CudaSlice<f32>| {
            self.stream
                .clone_dtoh(s)
                .map_err(driver_error("cuMemcpyDtoH"))
        };
        let (a, b, c) = (back(&self.a)?, back(&self.b)?, back(&self.c)?);
        check_result(kernel, &a, &b, &c).map_err(KernelError::Device)
    }

    /// Queues one call of `kernel`.
    pub fn launch(&mut self, kernel: StreamKernel) -> Result<(), KernelError> {
        let n = self.n as u64;
        let config = self.geometry.config();
        match kernel {
            StreamKernel::Copy => {
                let mut launch = self.stream.launch_builder(&self.copy);
                launch.arg(&self.a).arg(&mut self.b).arg(&n);
                // SAFETY: matches stream_copy(const float*, float*, unsigned long long); both
                // arrays hold n floats (at least one), 256-byte aligned by cuMemAlloc.
                unsafe { launch.launch(config) }
            }
            StreamKernel::Triad => {
                let mut launch = self.stream.launch_builder(&self.triad);
                let s = TRIAD_SCALAR;
                launch
                    .arg(&mut self.a)
                    .arg(&self.b)
                    .arg(&self.c)
                    .arg(&s)
                    .arg(&n);
                // SAFETY: matches stream_triad(float*, const float*, const float*, float,
                // unsigned long long); every array holds n floats, 256-byte aligned.
                unsafe { launch.launch(config) }
            }
        }
        .map(drop)
        .map_err(driver_error("cuLaunchKernel"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_the_registered_ones() {
        let (_, registered) = crate::kernels::REGISTERED
            .iter()
            .find(|(module, _)| *module == "stream_bandwidth")
            .expect("stream_bandwidth is registered");
        let mut names: Vec<&str> = StreamKernel::ALL.iter().map(|&k| kernel_name(k)).collect();
        names.sort();
        let mut listed = registered.to_vec();
        listed.sort();
        assert_eq!(names, listed);
    }

    #[test]
    fn the_grid_is_one_full_wave_or_what_the_floats_need() {
        // H100 SXM: 132 SMs, 8 blocks of 256 each.
        let h100 = Geometry::for_elements(33_554_432, 132);
        assert_eq!(h100.blocks, 132 * 8);
        assert_eq!(h100.threads_per_block, 256);
        assert_eq!(h100.threads(), 132 * 8 * 256);
        // Few floats: a thread per float4, rounded up to whole blocks.
        assert_eq!(Geometry::for_elements(1024, 132).blocks, 1);
        assert_eq!(Geometry::for_elements(1025, 132).blocks, 2);
        assert_eq!(Geometry::for_elements(0, 132).blocks, 1);
        // An attribute the driver would not give still launches.
        assert_eq!(Geometry::for_elements(1 << 20, 0).blocks, 8);
    }

    #[test]
    fn a_wrong_element_is_found_and_named() {
        let a = [1.0, 2.0, 3.0];
        let b = [1.0, 2.0, 3.0];
        let c = [0.0, 0.5, 1.0];
        check_result(StreamKernel::Copy, &a, &b, &c).unwrap();
        let err = check_result(StreamKernel::Copy, &a, &[1.0, 2.5, 3.0], &c).unwrap_err();
        assert!(err.contains("element 1"), "{err}");
        // a = b + 3·c
        check_result(StreamKernel::Triad, &[1.0, 3.5, 6.0], &b, &c).unwrap();
        let err = check_result(StreamKernel::Triad, &[1.0, 3.5, 6.5], &b, &c).unwrap_err();
        assert!(err.contains("triad") && err.contains("element 2"), "{err}");
        assert!(check_result(StreamKernel::Copy, &a, &b[..2], &c).is_err());
    }
}
