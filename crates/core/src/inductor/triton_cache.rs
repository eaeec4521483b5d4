//! What launching a recorded Triton kernel takes (its cubin, entry name, warps, shared memory,
//! scratch sizes), from its `kernels.json` entry or, where the entry lacks it, from the Triton
//! cache kept beside `kernels.json`: `cache/triton/<device>/<hash>/<kernel>.cubin` and Triton's
//! metadata `<kernel>.json` beside it.
//!
//! Autotuning compiles a kernel once per config, so the cache may hold several cubins of one
//! name. The one that ran is the entry's `cache_hash` folder (Inductor's `launcher.cache_hash`)
//! when the capture recorded it; otherwise the one whose block size (read from the PTX kept in
//! the cubin, [`super::cubin::x_block`]) gives each recorded call's grid from one of its sizes.
//! A kernel for which neither settles one cubin is not replayable, with the reason.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::cubin;
use super::error::KernelsFileError;
use super::kernels::{KernelArg, KernelCall, RecordedKernel};

/// The folder of the kept Triton cache, relative to `kernels.json`.
pub const TRITON_CACHE_DIR: &str = "cache/triton";

/// Everything a launch of the kernel's cubin needs besides its arguments and grid.
#[derive(Debug, Clone, PartialEq)]
pub struct TritonLaunch {
    /// The cubin, resolved against the folder of `kernels.json`.
    pub cubin: PathBuf,
    /// The entry symbol in the cubin.
    pub function: String,
    pub num_warps: u32,
    pub num_ctas: u32,
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Bytes of global scratch per block (Triton >= 3.3); 0: the pointer is null.
    pub global_scratch_size: u64,
    /// Bytes of profiler scratch per block (Triton >= 3.5); 0: the pointer is null.
    pub profile_scratch_size: u64,
    /// The compute capability it was built for (90: sm_90), when known.
    pub arch: Option<u32>,
    /// Whether Triton launches it as a cooperative grid (its blocks synchronise).
    pub cooperative: bool,
    /// Where the launch data came from: `kernels.json`, or the metadata file read.
    pub origin: String,
}

/// Triton's metadata file of a compiled kernel (the fields replay reads).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TritonMetadata {
    pub name: String,
    pub num_warps: u32,
    #[serde(default = "one")]
    pub num_ctas: u32,
    pub shared: u32,
    #[serde(default)]
    pub global_scratch_size: u64,
    #[serde(default)]
    pub profile_scratch_size: u64,
    #[serde(default)]
    pub target: Option<serde_json::Value>,
    #[serde(default)]
    pub launch_cooperative_grid: bool,
}

fn one() -> u32 {
    1
}

impl TritonMetadata {
    /// `target.arch` as a number (Triton writes 90 for sm_90).
    pub fn arch(&self) -> Option<u32> {
        let arch = self.target.as_ref()?.get("arch")?;
        arch.as_u64()
            .or_else(|| arch.as_str()?.trim_start_matches("sm_").parse().ok())
            .and_then(|a| u32::try_from(a).ok())
    }
}

/// Reads Triton's metadata `.json` of a compiled kernel.
pub fn read_metadata(path: &Path) -> Result<TritonMetadata, KernelsFileError> {
    let bad = |problem: String| KernelsFileError::new(path, problem);
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("not Triton's metadata of a compiled kernel: {e}")))
}

/// The cubins named `<name>.cubin` in the Triton cache under `dir` (the folder of
/// `kernels.json`), in path order.
pub fn cache_variants(dir: &Path, name: &str) -> Vec<PathBuf> {
    let file = format!("{name}.cubin");
    let mut found = Vec::new();
    let Ok(devices) = std::fs::read_dir(dir.join(TRITON_CACHE_DIR)) else {
        return found;
    };
    for device in devices.flatten() {
        let Ok(hashes) = std::fs::read_dir(device.path()) else {
            continue;
        };
        for hash in hashes.flatten() {
            let cubin = hash.path().join(&file);
            if cubin.is_file() {
                found.push(cubin);
            }
        }
    }
    found.sort();
    found
}

/// The launch data of Triton kernel `kernel` of the `kernels.json` in `dir`: `Ok(Err(why))`
/// when neither the entry nor the cache settles it; `Err` for a metadata file that cannot be
/// read.
pub fn resolve(
    dir: &Path,
    kernel: &RecordedKernel,
) -> Result<Result<TritonLaunch, String>, KernelsFileError> {
    if let (Some(cubin), Some(function), Some(num_warps), Some(shared)) = (
        &kernel.cubin,
        &kernel.function,
        kernel.num_warps,
        kernel.shared_mem,
    ) {
        let cubin = dir.join(cubin);
        let beside = cubin.with_extension("json");
        let metadata = beside
            .is_file()
            .then(|| read_metadata(&beside))
            .transpose()?;
        return Ok(Ok(TritonLaunch {
            function: function.clone(),
            num_warps,
            num_ctas: kernel
                .num_ctas
                .or(metadata.as_ref().map(|m| m.num_ctas))
                .unwrap_or(1),
            shared,
            global_scratch_size: kernel
                .global_scratch_size
                .or(metadata.as_ref().map(|m| m.global_scratch_size))
                .unwrap_or(0),
            profile_scratch_size: kernel
                .profile_scratch_size
                .or(metadata.as_ref().map(|m| m.profile_scratch_size))
                .unwrap_or(0),
            arch: kernel.arch.or(metadata.as_ref().and_then(|m| m.arch())),
            cooperative: metadata.as_ref().is_some_and(|m| m.launch_cooperative_grid),
            origin: "kernels.json".to_owned(),
            cubin,
        }));
    }
    let mut variants = cache_variants(dir, &kernel.name);
    if let Some(hash) = &kernel.cache_hash {
        variants.retain(|v| v.parent().and_then(Path::file_name) == Some(hash.as_ref()));
    }
    let where_ = format!("{TRITON_CACHE_DIR}/*/*/{}.cubin", kernel.name);
    let chosen = match variants.len() {
        0 => {
            return Ok(Err(format!(
                "no cubin: kernels.json names none and the kept Triton cache has no {where_}{}",
                kernel
                    .cache_hash
                    .as_ref()
                    .map(|h| format!(" in folder {h}"))
                    .unwrap_or_default()
            )))
        }
        1 => variants.remove(0),
        n => {
            let matching: Vec<PathBuf> = variants
                .into_iter()
                .filter(|v| {
                    let block = std::fs::read(v).ok().and_then(|b| cubin::x_block(&b));
                    block.is_some_and(|b| gives_recorded_grids(b, &kernel.calls))
                })
                .collect();
            match <[PathBuf; 1]>::try_from(matching) {
                Ok([one]) => one,
                Err(matching) => {
                    return Ok(Err(format!(
                        "the kept Triton cache holds {n} cubins of this kernel (one per autotuning \
                         config) and {} of them fit the recorded grid: which one ran is not known \
                         (a capture that records `cache_hash` says)",
                        matching.len()
                    )))
                }
            }
        }
    };
    let json = chosen.with_extension("json");
    if !json.is_file() {
        return Ok(Err(format!(
            "{} has no Triton metadata beside it ({})",
            chosen.display(),
            json.display()
        )));
    }
    let metadata = read_metadata(&json)?;
    Ok(Ok(TritonLaunch {
        cubin: chosen,
        function: metadata.name.clone(),
        num_warps: metadata.num_warps,
        num_ctas: metadata.num_ctas,
        shared: metadata.shared,
        global_scratch_size: metadata.global_scratch_size,
        profile_scratch_size: metadata.profile_scratch_size,
        arch: metadata.arch(),
        cooperative: metadata.launch_cooperative_grid,
        origin: json.display().to_string(),
    }))
}

/// Whether a block of `block` elements gives every recorded call's grid: `grid.x` is
/// `ceil(n / block)` for one of the call's integer arguments `n` (its `xnumel`).
fn gives_recorded_grids(block: u64, calls: &[KernelCall]) -> bool {
    let with_grid: Vec<&KernelCall> = calls.iter().filter(|c| c.grid.is_some()).collect();
    !with_grid.is_empty()
        && with_grid.iter().all(|call| {
            let Some([x, _, _]) = call.grid else {
                return false;
            };
            call.args.iter().any(|arg| match arg {
                KernelArg::Int(n) if *n > 0 => (*n as u64).div_ceil(block) == u64::from(x),
                _ => false,
            })
        })
}
