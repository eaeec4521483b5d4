//! The CUDA kernels compiled from `cuda/*.cu` by build.rs, embedded in the binary as
//! fatbins and loaded lazily, by kernel name, the first time a device asks for one.
//!
//! Each `cuda/NAME.cu` that a suite runs has its folder here, `kernels/NAME/`, with its CPU
//! twin and its launch side by side: [`semiring_scan`], [`stream_bandwidth`],
//! [`mhc_sinkhorn`]. They return [`KernelError`]; the suites turn it into their own errors.

pub mod error;
pub mod fatbin;
pub mod mhc_sinkhorn;
pub mod semiring_scan;
pub mod stream_bandwidth;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};

use crate::error::{Error, Result};

/// One compiled `cuda/NAME.cu`.
#[derive(Debug)]
pub struct EmbeddedModule {
    /// The file stem, `l2_flush` for `cuda/l2_flush.cu`.
    pub name: &'static str,
    pub fatbin: &'static [u8],
    /// Its `extern "C" __global__` functions.
    pub kernels: &'static [&'static str],
}

mod generated {
    use super::EmbeddedModule;
    include!(concat!(env!("OUT_DIR"), "/embedded_kernels.rs"));
}

pub use error::KernelError;
pub use generated::{MODULES, NVCC_USED, PTX_ARCH, SASS_ARCHS, UNAVAILABLE_REASON};

/// Every kernel the Rust side launches, by the `cuda/NAME.cu` module that defines it; the
/// tests hold the build to it (each module embedded, each kernel in it).
pub const REGISTERED: &[(&str, &[&str])] = &[
    // Cold-cache flushing between timed samples (`device::cache_flush`).
    ("l2_flush", &["l2_flush"]),
    // The CUDA timer's blocking kernel (`measure::blocking_kernel`).
    ("blocking", &["block_stream"]),
    // The semiring scan (`kernels::semiring_scan`: CPU twin `cpu`, launch geometry `launch`),
    // the scan suite's `cuda` backend (`suites::scan::cuda_backend`).
    (
        "semiring_scan",
        &[
            "scan_forward_log",
            "scan_forward_max",
            "scan_forward_entropy",
            "scan_backward_log",
            "scan_backward_max",
            "scan_backward_entropy",
        ],
    ),
    // The mHC fused Sinkhorn (`kernels::mhc_sinkhorn`: CPU twin `cpu`, launch `cuda`), run by
    // the mHC suite (`suites::mhc::cuda_sinkhorn`).
    (
        "mhc_sinkhorn",
        &["mhc_sinkhorn_f32", "mhc_sinkhorn_bf16", "mhc_sinkhorn_f16"],
    ),
    // replay's own bandwidth kernels (`kernels::stream_bandwidth`: CPU twin `cpu`, launch
    // `cuda`), timed by `replay calibrate` (`suites::calibrate::memory::cuda_target`).
    ("stream_bandwidth", &["stream_copy", "stream_triad"]),
];

/// The module that defines `kernel`, or why it cannot be had in this build.
pub fn module_for(kernel: &str) -> Result<&'static EmbeddedModule> {
    if let Some(reason) = UNAVAILABLE_REASON {
        return Err(Error::KernelUnavailable(
            kernel.to_string(),
            reason.to_string(),
        ));
    }
    MODULES
        .iter()
        .find(|m| m.kernels.contains(&kernel))
        .ok_or_else(|| {
            Error::KernelUnavailable(
                kernel.to_string(),
                "no cuda/*.cu file defines it as extern \"C\" __global__".to_string(),
            )
        })
}

/// Loads modules into a context on first use and caches them, so a kernel costs one
/// `cuModuleLoadData` per context however often it is launched.
#[derive(Default)]
pub struct KernelCache {
    loaded: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
}

impl KernelCache {
    pub fn function(&self, context: &Arc<CudaContext>, kernel: &str) -> Result<CudaFunction> {
        let module = module_for(kernel)?;
        let mut loaded = self
            .loaded
            .lock()
            .map_err(|_| Error::cuda("KernelCache", "poisoned lock"))?;
        let cuda_module = match loaded.get(module.name) {
            Some(m) => m.clone(),
            None => {
                let m = context
                    .load_module(cudarc::nvrtc::Ptx::from_binary(module.fatbin.to_vec()))
                    .map_err(|e| Error::cuda("cuModuleLoadData", e))?;
                loaded.insert(module.name, m.clone());
                m
            }
        };
        cuda_module
            .load_function(kernel)
            .map_err(|e| Error::cuda("cuModuleGetFunction", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build must really have compiled cuda/*.cu (scripts/setup installs nvcc), and each
    /// fatbin must carry SASS for every listed architecture plus PTX for the newest.
    #[test]
    fn embedded_fatbins_hold_every_listed_architecture() {
        assert_eq!(UNAVAILABLE_REASON, None, "this build has no CUDA kernels");
        assert!(!MODULES.is_empty());
        for module in MODULES {
            let entries =
                fatbin::entries(module.fatbin).unwrap_or_else(|e| panic!("{}: {e}", module.name));
            let names: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
            for arch in SASS_ARCHS.iter().chain([&PTX_ARCH]) {
                assert!(
                    names.iter().any(|n| n == arch),
                    "{}: {arch} missing from {names:?}",
                    module.name
                );
            }
            assert!(names.contains(&"sm_80".to_string()) && names.contains(&"sm_90".to_string()));
        }
    }

    #[test]
    fn every_registered_kernel_is_embedded_in_its_module() {
        for (module, kernels) in REGISTERED {
            for kernel in *kernels {
                let found = module_for(kernel).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(found.name, *module, "{kernel}");
            }
        }
        let registered: usize = REGISTERED.iter().map(|(_, k)| k.len()).sum();
        let embedded: usize = MODULES.iter().map(|m| m.kernels.len()).sum();
        assert_eq!(
            registered, embedded,
            "a cuda/*.cu kernel is missing from REGISTERED"
        );
    }

    #[test]
    fn kernels_are_found_by_name() {
        let module = module_for("l2_flush").unwrap();
        assert_eq!(module.name, "l2_flush");
        let err = module_for("no_such_kernel").unwrap_err();
        assert!(err.to_string().contains("no_such_kernel"));
        assert!(err.is_usage_error());
    }
}
