//! An Inductor Triton kernel replayed on CUDA from the cubin Triton compiled.
//!
//! The cubin is loaded with the driver API (`cuModuleLoadData`), its entry found by the name
//! Triton's metadata gives, and each launch is `cuLaunchKernel` on replay's stream with the
//! recorded call's grid, `32 * num_warps` threads per block, the metadata's dynamic shared
//! memory, and the parameters Triton 3.6's launcher passes (`make_launcher` in
//! `third_party/nvidia/backends/driver.py`): one per non-constexpr signature entry, in order
//! (a tensor's data pointer, scalars at their declared width), then, since Triton 3.3, the
//! global and the profiler scratch pointers (null when the kernel needs none, else a buffer
//! of `size * blocks * num_ctas` bytes). Before anything is loaded the packing is checked
//! against the parameter sizes the cubin declares, so a kernel whose record does not match
//! its cubin is refused rather than launched with garbage.
//!
//! Ran on an H200 (2026-11-26, `results/gpu/2026-11-26-h200-triton-isolated.txt`): the ten
//! kernels of the bloom-tiny capture loaded, launched and were timed. The packing is tested on
//! the host against the same real cubins; the next GPU run's `compiled` stage of
//! `scripts/gpu_check.sh` exercises it on a fresh capture.

use std::path::Path;

use replay_core::inductor::{cubin, KernelCall, TritonLaunch};
use tch::{Kind, Tensor};

use super::arguments::KernelArguments;
use super::error::Tier4Error;
use crate::device::Device;

/// The C type a Triton signature entry is passed as (`*fp32` a pointer, `i32` an `int32_t`).
pub fn c_type_of(entry: &str) -> Option<&'static str> {
    if entry.starts_with('*') {
        return Some("void*");
    }
    Some(match entry {
        "i32" => "int32_t",
        "i64" => "int64_t",
        "u64" => "uint64_t",
        "fp32" => "float",
        "fp64" => "double",
        "i1" => "bool",
        _ => return None,
    })
}

/// The parameters of one launch: the recorded call's arguments, then the two scratch
/// pointers, with the buffers behind them kept alive.
pub struct TritonArguments {
    args: KernelArguments,
    /// The scratch buffers, when the kernel needs any.
    _scratch: Vec<Tensor>,
    grid: [u32; 3],
}

impl TritonArguments {
    /// Rebuilds `call` (Triton `signature`, constexprs already dropped) on `device` for a
    /// kernel launched as `launch` says; `folder` is where the record's paths start.
    pub fn build(
        signature: &[String],
        call: &KernelCall,
        launch: &TritonLaunch,
        device: &Device,
        folder: &Path,
    ) -> Result<TritonArguments, Tier4Error> {
        let grid = call.grid.ok_or_else(|| {
            Tier4Error::Unsupported("the capture recorded no launch grid for this call".into())
        })?;
        if grid.contains(&0) {
            return Err(Tier4Error::Unsupported(format!(
                "the recorded grid {grid:?} launches no block"
            )));
        }
        let c_types = signature
            .iter()
            .map(|entry| {
                c_type_of(entry).map(str::to_owned).ok_or_else(|| {
                    Tier4Error::Unsupported(format!(
                        "signature entry {entry:?} is a parameter type replay does not pass"
                    ))
                })
            })
            .collect::<Result<Vec<String>, Tier4Error>>()?;
        let mut args = KernelArguments::build(&call.args, &c_types, device, folder)?;
        let blocks =
            grid.iter().map(|&g| u64::from(g)).product::<u64>() * u64::from(launch.num_ctas);
        let mut scratch = Vec::new();
        for per_block in [launch.global_scratch_size, launch.profile_scratch_size] {
            if per_block == 0 {
                args.push_pointer(std::ptr::null_mut());
                continue;
            }
            let bytes = per_block
                .checked_mul(blocks)
                .and_then(|b| i64::try_from(b).ok())
                .ok_or_else(|| {
                    Tier4Error::Unsupported(format!(
                        "{per_block} scratch bytes per block times {blocks} blocks overflows"
                    ))
                })?;
            let buffer = Tensor::f_zeros([bytes], (Kind::Uint8, device.torch()))
                .map_err(|e| Tier4Error::Failed(format!("scratch of {bytes} bytes: {e}")))?;
            args.push_pointer(buffer.data_ptr());
            scratch.push(buffer);
        }
        Ok(TritonArguments {
            args,
            _scratch: scratch,
            grid,
        })
    }

    pub fn arguments(&self) -> &KernelArguments {
        &self.args
    }

    pub fn grid(&self) -> [u32; 3] {
        self.grid
    }

    /// Checks the packing against the parameters `cubin` declares for `function`.
    pub fn check_against(&self, cubin_bytes: &[u8], function: &str) -> Result<(), Tier4Error> {
        let declared = cubin::param_sizes(cubin_bytes, function).ok_or_else(|| {
            Tier4Error::Unsupported(format!(
                "the cubin declares no parameter list for {function} (not a CUDA cubin of it?)"
            ))
        })?;
        let packed = self.args.sizes();
        if declared != packed {
            return Err(Tier4Error::Unsupported(format!(
                "the cubin's parameters (bytes {declared:?}) are not the recorded signature's \
                 plus Triton's two scratch pointers (bytes {packed:?}): a kernel Triton \
                 specialised differently from its record"
            )));
        }
        Ok(())
    }
}

/// The CUDA launch: only where the crate runs on a GPU.
pub mod cuda {
    use std::sync::Arc;

    use cudarc::driver::sys::CUfunction_attribute_enum;
    use cudarc::driver::{CudaFunction, CudaModule, CudaStream};
    use cudarc::nvrtc::Ptx;

    use super::*;
    use crate::device::cuda::CudaCallError;
    use crate::device::CudaDevice;
    use crate::measure::cuda_timing::CudaStreamHandle;
    use crate::measure::{MeasureError, Placement, Target};

    /// Shared memory a kernel may use without opting in.
    const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

    /// A loaded Triton kernel and the parameters of one recorded call.
    pub struct TritonKernelTarget {
        name: String,
        function: CudaFunction,
        _module: Arc<CudaModule>,
        args: TritonArguments,
        block: u32,
        shared: u32,
        stream: Arc<CudaStream>,
        placement: CudaStreamHandle,
    }

    impl TritonKernelTarget {
        /// Loads `launch`'s cubin on `dev` and rebuilds `call` for it.
        pub fn new(
            dev: &CudaDevice,
            launch: &TritonLaunch,
            signature: &[String],
            call: &KernelCall,
            folder: &Path,
        ) -> Result<TritonKernelTarget, Tier4Error> {
            let name = launch.function.clone();
            if launch.num_ctas != 1 {
                return Err(Tier4Error::Unsupported(format!(
                    "{name}: {} blocks per cluster (cuLaunchKernelEx with clusters) is not replayed",
                    launch.num_ctas
                )));
            }
            if launch.cooperative {
                return Err(Tier4Error::Unsupported(format!(
                    "{name}: a cooperative-grid launch is not replayed"
                )));
            }
            let bytes = std::fs::read(&launch.cubin)
                .map_err(|e| Tier4Error::Unsupported(format!("{}: {e}", launch.cubin.display())))?;
            let device = Device::Cuda(dev.clone());
            let args = TritonArguments::build(signature, call, launch, &device, folder)?;
            args.check_against(&bytes, &name)?;
            let failed = |call: &'static str| {
                let name = name.clone();
                move |e: cudarc::driver::DriverError| {
                    Tier4Error::Failed(format!("{name}: {}", CudaCallError { call, source: e }))
                }
            };
            let module = dev
                .context
                .load_module(Ptx::from_binary(bytes))
                .map_err(failed("cuModuleLoadData"))?;
            let function = module
                .load_function(&name)
                .map_err(failed("cuModuleGetFunction"))?;
            if launch.shared > DEFAULT_SHARED_LIMIT {
                let shared = i32::try_from(launch.shared).map_err(|_| {
                    Tier4Error::Unsupported(format!("{name}: {} shared bytes", launch.shared))
                })?;
                function
                    .set_attribute(
                        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared,
                    )
                    .map_err(failed("cuFuncSetAttribute"))?;
            }
            // The arguments were written on libtorch's stream; launches go on replay's.
            dev.context
                .synchronize()
                .map_err(failed("cuCtxSynchronize"))?;
            Ok(TritonKernelTarget {
                block: 32 * launch.num_warps,
                shared: launch.shared,
                stream: dev.stream.clone(),
                placement: CudaStreamHandle::replay(&dev.stream),
                name,
                function,
                _module: module,
                args,
            })
        }

        /// One launch on replay's stream.
        fn launch(&mut self) -> Result<(), MeasureError> {
            let [x, y, z] = self.args.grid();
            // SAFETY: the parameters were rebuilt from this kernel's record and checked
            // against the parameter list its cubin declares; the buffers they point at live
            // as long as `self`.
            unsafe {
                cudarc::driver::result::launch_kernel(
                    self.function.cu_function(),
                    (x, y, z),
                    (self.block, 1, 1),
                    self.shared,
                    self.stream.cu_stream(),
                    self.args.args.pointers_mut(),
                )
            }
            .map_err(|e| {
                MeasureError::target(format!(
                    "{}: {}",
                    self.name,
                    CudaCallError {
                        call: "cuLaunchKernel",
                        source: e
                    }
                ))
            })
        }

        /// Launches once and waits, so that a fault in the kernel is reported as its own.
        pub fn check_once(&mut self) -> Result<(), Tier4Error> {
            self.launch()
                .map_err(|e| Tier4Error::Failed(e.to_string()))?;
            self.stream.synchronize().map_err(|e| {
                Tier4Error::Failed(format!(
                    "{}: {}",
                    self.name,
                    CudaCallError {
                        call: "cuStreamSynchronize after the first launch",
                        source: e
                    }
                ))
            })
        }
    }

    impl Target for TritonKernelTarget {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.placement)
        }

        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            (0..calls).try_for_each(|_| self.launch())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replay_core::inductor::{read_kernels, KernelArg};
    use std::path::PathBuf;

    fn capture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("crates/core/tests/data/compiled/h200_bloom_tiny/inductor/kernels.json")
    }

    #[test]
    fn the_packing_matches_every_real_cubins_parameter_list() {
        let kernels = read_kernels(&capture()).unwrap_or_else(|e| panic!("{e}"));
        let mut checked = 0;
        for kernel in &kernels.file.kernels {
            let launch = kernels.triton_launch(&kernel.trace_name).unwrap();
            let call = super::super::target::timed_call(&kernel.calls).unwrap();
            let built = TritonArguments::build(
                &kernel.signature,
                call,
                launch,
                Device::host(),
                &kernels.dir,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
            let bytes = std::fs::read(&launch.cubin).unwrap();
            built
                .check_against(&bytes, &launch.function)
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
            let args = built.arguments();
            let n = kernel.signature.len();
            assert_eq!(args.len(), n + 2);
            // The scratch pointers are last, and null: these kernels need no scratch.
            assert_eq!(args.pointer(n), Some(std::ptr::null_mut()));
            assert_eq!(args.pointer(n + 1), Some(std::ptr::null_mut()));
            for (i, (entry, arg)) in kernel.signature.iter().zip(&call.args).enumerate() {
                match arg {
                    KernelArg::Tensor(t) => {
                        assert!(entry.starts_with('*'), "{entry}");
                        let tensor = args.tensor(i).unwrap();
                        assert_eq!(tensor.size(), t.sizes);
                        assert_eq!(Some(tensor.data_ptr()), args.pointer(i));
                    }
                    // The ints are xnumel / r0_numel, passed as the int32 the cubin takes.
                    KernelArg::Int(v) => unsafe {
                        assert_eq!(entry, "i32");
                        let value = *(*args.as_ptr().add(i) as *const i32);
                        assert_eq!(i64::from(value), *v);
                    },
                    other => panic!("{}: {other:?}", kernel.name),
                }
            }
            assert_eq!(built.grid(), call.grid.unwrap());
            checked += 1;
        }
        assert_eq!(checked, 10);
    }

    #[test]
    fn scratch_is_sized_per_block_and_a_wrong_signature_is_refused() {
        let kernels = read_kernels(&capture()).unwrap();
        let kernel = kernels
            .by_trace_name("triton_poi_fused_add_addmm_mul_tanh_view_7")
            .unwrap();
        let call = &kernel.calls[0];
        let mut launch = kernels.triton_launch(&kernel.trace_name).unwrap().clone();
        launch.global_scratch_size = 24;
        let built = TritonArguments::build(
            &kernel.signature,
            call,
            &launch,
            Device::host(),
            &kernels.dir,
        )
        .unwrap();
        let n = kernel.signature.len();
        assert!(!built.arguments().pointer(n).unwrap().is_null());
        assert!(built.arguments().pointer(n + 1).unwrap().is_null());
        // 24 bytes for each of the 16 blocks.
        assert_eq!(built._scratch[0].size(), [24 * 16]);

        // A signature that says i64 where the cubin takes an int32 does not pass the check.
        let mut signature = kernel.signature.clone();
        *signature.last_mut().unwrap() = "i64".into();
        let launch = kernels.triton_launch(&kernel.trace_name).unwrap();
        let built =
            TritonArguments::build(&signature, call, launch, Device::host(), &kernels.dir).unwrap();
        let bytes = std::fs::read(&launch.cubin).unwrap();
        let e = built.check_against(&bytes, &launch.function).unwrap_err();
        assert!(
            e.to_string().contains("not the recorded signature's"),
            "{e}"
        );
        // Types replay does not pass are named.
        let e = TritonArguments::build(
            &["*fp32".into(), "*fp32".into(), "nvTmaDesc".into()],
            call,
            launch,
            Device::host(),
            &kernels.dir,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("nvTmaDesc"), "{e}");
    }
}
