//! How `cuda/semiring_scan.cu` is launched: which kernel does what, and the block shape and
//! dynamic shared memory each one assumes (the layouts are listed at the top of the `.cu`;
//! the sizes here must match them byte for byte).
//!
//! Every kernel runs one block per sequence. Forward and the Log backward give each label a
//! warp (up to [`MAX_WARPS`] warps, labels beyond that loop); the Entropy backward gives each
//! (duration, source label) of a step a thread; the Max backtrack is one warp.

use super::{ScanDims, Semiring};
use crate::kernels::KernelError;

/// Warps per block at most (512 threads), enough for C = 16 labels at one warp each.
pub const MAX_WARPS: u32 = 16;

/// Threads per block of the Entropy backward at most.
pub const MAX_ENTROPY_BACKWARD_THREADS: u32 = 256;

/// Dynamic shared memory any kernel may use without opting in (CUDA's default per block).
pub const DEFAULT_SHARED_BYTES: u32 = 48 * 1024;

/// Which pass of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Forward,
    Backward,
}

/// The kernel that runs `pass` in `semiring`, by its `extern "C"` name.
pub fn kernel_name(pass: Pass, semiring: Semiring) -> &'static str {
    match (pass, semiring) {
        (Pass::Forward, Semiring::Log) => "scan_forward_log",
        (Pass::Forward, Semiring::Max) => "scan_forward_max",
        (Pass::Forward, Semiring::Entropy) => "scan_forward_entropy",
        (Pass::Backward, Semiring::Log) => "scan_backward_log",
        (Pass::Backward, Semiring::Max) => "scan_backward_max",
        (Pass::Backward, Semiring::Entropy) => "scan_backward_entropy",
    }
}

/// One launch: `blocks` × `threads`, with `shared_bytes` of dynamic shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    pub blocks: u32,
    pub threads: u32,
    pub shared_bytes: u32,
}

/// The block shape and shared memory of `pass` in `semiring` on a problem of `dims`.
pub fn launch_shape(pass: Pass, semiring: Semiring, dims: ScanDims) -> LaunchShape {
    let d = dims.max_duration() as u64;
    let c = dims.labels as u64;
    let warp_per_label = 32 * (dims.labels as u32).clamp(1, MAX_WARPS);
    let (threads, shared) = match (pass, semiring) {
        // double base_x[D], base_h[D]; float ring_x[D·C], ring_h[D·C], next_x[C], next_h[C], top[2]
        (Pass::Forward, _) => (warp_per_label, 16 * d + 4 * (2 * d * c + 2 * c + 2)),
        // float rel[(D+1)·C]
        (Pass::Backward, Semiring::Log) => (warp_per_label, 4 * (d + 1) * c),
        (Pass::Backward, Semiring::Max) => (32, 0),
        // float adj_x[(D+1)·C], adj_h[(D+1)·C]
        (Pass::Backward, Semiring::Entropy) => {
            let targets = (d * c).div_ceil(32) * 32;
            let threads = targets.clamp(32, MAX_ENTROPY_BACKWARD_THREADS as u64) as u32;
            (threads, 8 * (d + 1) * c)
        }
    };
    LaunchShape {
        blocks: dims.batch as u32,
        threads,
        shared_bytes: shared.min(u32::MAX as u64) as u32,
    }
}

/// Checks that a launch fits the device: `limit` is the most dynamic shared memory a block
/// may opt into (the device's `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`), and the kernels index with
/// 32-bit dimensions. A problem too large for the kernel's design is `not_implemented`, with
/// the numbers, rather than a launch failure.
pub fn check_fits(shape: LaunchShape, dims: ScanDims, limit: u32) -> Result<(), KernelError> {
    if shape.shared_bytes > limit {
        return Err(KernelError::NotImplemented(format!(
            "the cuda kernel keeps the last K−1 rows in shared memory: K={}, C={} needs {} bytes per \
             block, more than this GPU's {limit}",
            dims.durations, dims.labels, shape.shared_bytes
        )));
    }
    let too_big = [dims.batch, dims.positions, dims.durations, dims.labels]
        .iter()
        .any(|&x| x > i32::MAX as usize);
    if too_big {
        return Err(KernelError::NotImplemented(format!(
            "the cuda kernel takes 32-bit dimensions: {dims:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(batch: usize, positions: usize, durations: usize, labels: usize) -> ScanDims {
        ScanDims {
            batch,
            positions,
            durations,
            labels,
        }
    }

    #[test]
    fn names_cover_every_pass_and_semiring_once() {
        let mut names: Vec<&str> = [Pass::Forward, Pass::Backward]
            .iter()
            .flat_map(|&p| Semiring::ALL.iter().map(move |&s| kernel_name(p, s)))
            .collect();
        names.sort();
        let (_, registered) = crate::kernels::REGISTERED
            .iter()
            .find(|(module, _)| *module == "semiring_scan")
            .expect("semiring_scan is registered");
        let mut listed = registered.to_vec();
        listed.sort();
        assert_eq!(names, listed);
    }

    #[test]
    fn forward_shared_memory_holds_the_ring_of_k_minus_one_rows() {
        // K = 24, C = 12: D = 23 rows; 2·23 doubles + (2·23·12 + 2·12 + 2) floats.
        let shape = launch_shape(Pass::Forward, Semiring::Log, dims(4, 1024, 24, 12));
        assert_eq!(shape.shared_bytes, 16 * 23 + 4 * (2 * 23 * 12 + 24 + 2));
        assert_eq!(shape.blocks, 4);
        assert_eq!(shape.threads, 12 * 32);
        // The doubles come first, so the floats after them stay aligned: 16·D is a multiple of 8.
        assert_eq!((16 * 23) % 8, 0);
        // K = 1 and K = 2 both have one duration, hence one ring row.
        let k1 = launch_shape(Pass::Forward, Semiring::Max, dims(1, 8, 1, 3));
        let k2 = launch_shape(Pass::Forward, Semiring::Max, dims(1, 8, 2, 3));
        assert_eq!(k1.shared_bytes, k2.shared_bytes);
        assert_eq!(k1.shared_bytes, 16 + 4 * (2 * 3 + 6 + 2));
    }

    #[test]
    fn block_shapes_are_whole_warps_within_bounds() {
        for labels in [1, 3, 12, 16, 17, 64] {
            for durations in [1, 2, 4, 24, 200] {
                for pass in [Pass::Forward, Pass::Backward] {
                    for semiring in Semiring::ALL {
                        let s = launch_shape(pass, semiring, dims(2, 64, durations, labels));
                        assert_eq!(
                            s.threads % 32,
                            0,
                            "{pass:?} {semiring} {labels} {durations}"
                        );
                        assert!(s.threads >= 32 && s.threads <= 512);
                    }
                }
            }
        }
        // Max's backtrack is a single warp with no shared memory.
        let max = launch_shape(Pass::Backward, Semiring::Max, dims(3, 64, 8, 6));
        assert_eq!((max.threads, max.shared_bytes), (32, 0));
        // The Entropy backward has a thread per (duration, source label), capped.
        let small = launch_shape(Pass::Backward, Semiring::Entropy, dims(1, 64, 4, 3));
        assert_eq!(small.threads, 32);
        let large = launch_shape(Pass::Backward, Semiring::Entropy, dims(1, 64, 24, 12));
        assert_eq!(large.threads, MAX_ENTROPY_BACKWARD_THREADS);
        assert_eq!(large.shared_bytes, 8 * 24 * 12);
    }

    #[test]
    fn a_ring_larger_than_shared_memory_is_not_implemented_with_the_numbers() {
        let big = dims(1, 4096, 1000, 64);
        let shape = launch_shape(Pass::Forward, Semiring::Entropy, big);
        let err = check_fits(shape, big, DEFAULT_SHARED_BYTES).unwrap_err();
        assert!(matches!(err, KernelError::NotImplemented(_)));
        let text = err.to_string();
        assert!(text.contains("K=1000") && text.contains(&shape.shared_bytes.to_string()));
        let seed_largest = dims(4, 1024, 24, 12);
        for pass in [Pass::Forward, Pass::Backward] {
            for semiring in Semiring::ALL {
                let s = launch_shape(pass, semiring, seed_largest);
                check_fits(s, seed_largest, DEFAULT_SHARED_BYTES).unwrap();
            }
        }
    }
}
