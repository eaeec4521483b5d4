//! Roofline estimates from a calibration profile, for work that cannot be replayed (and, as a
//! second opinion, for any signature): the time of one invocation is
//! `max(FLOPs / GFLOPS, bytes / bandwidth)`, with the profile's measured numbers where it has
//! them (matmul GFLOPS at the GEMM's size and dtype, the best copy bandwidth) and its peaks
//! otherwise.
//!
//! What the work is, from its classified signature:
//! - a GEMM: `2·m·n·k·batch` FLOPs, and its operands and result read and written once:
//!   `(m·k + k·n + m·n)·batch` elements;
//! - a memset: its bytes written; a copy on one device: read and written (`2 × bytes`); a
//!   copy between host and device is left out (its bound is the PCIe or NVLink link, which a
//!   profile does not measure);
//! - any other op with recorded inputs: memory-bound, every tensor input read once and an
//!   output the size of the largest input written — a lower bound on its traffic, so the
//!   estimate is optimistic for ops that make several passes (softmax, layer norm).

use crate::results::calibration::Profile;
pub use crate::results::isolated::RooflineEstimate;
use crate::results::isolated::{IsolatedResults, Status};
use crate::signature::dtype::canonical_dtype;
use crate::signature::schema::{MemcpyKind, Signature, SignatureFile};

use super::profile_rates::{measured_gflops, peak_gflops, profile_dtype};

/// The arithmetic and memory traffic of one invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
    /// For GEMMs: the profile dtype and the size of the square product with the same FLOPs.
    pub gemm: Option<(&'static str, f64)>,
}

/// Bytes per element of a canonical dtype name.
pub fn element_bytes(dtype: &str) -> Option<f64> {
    Some(match dtype {
        "float64" | "int64" | "complex64" => 8.0,
        "float32" | "int32" | "complex32" => 4.0,
        "float16" | "bfloat16" | "int16" => 2.0,
        "int8" | "uint8" | "bool" | "float8_e4m3fn" | "float8_e5m2" | "float8_e4m3fnuz"
        | "float8_e5m2fnuz" => 1.0,
        "complex128" => 16.0,
        _ => return None,
    })
}

/// What `signature`'s work is, when its classification says enough.
/// The work of a GEMM of `batch` m×k by k×n products in `dtype` (a recorded or PyTorch name):
/// `2·m·n·k` FLOPs each, operands and result read and written once.
pub fn gemm_work(m: u64, n: u64, k: u64, batch: u64, dtype: &str) -> Option<Work> {
    let dtype = canonical_dtype(dtype);
    let size = element_bytes(&dtype)?;
    let batch = batch.max(1) as f64;
    let (m, n, k) = (m as f64, n as f64, k as f64);
    Some(Work {
        flops: 2.0 * m * n * k * batch,
        bytes: (m * k + k * n + m * n) * batch * size,
        gemm: profile_dtype(&dtype).map(|d| (d, (m * n * k).cbrt())),
    })
}

pub fn work_of(signature: &Signature) -> Option<Work> {
    if let Some(g) = &signature.gemm {
        return gemm_work(g.m, g.n, g.k, g.batch, &g.dtype_a);
    }
    if let Some(set) = &signature.memset {
        return Some(Work {
            flops: 0.0,
            bytes: set.bytes as f64,
            gemm: None,
        });
    }
    if let Some(copy) = &signature.memcpy {
        return matches!(copy.kind, MemcpyKind::DtoD | MemcpyKind::HtoH).then(|| Work {
            flops: 0.0,
            bytes: 2.0 * copy.bytes as f64,
            gemm: None,
        });
    }
    let inputs = signature.inputs.as_ref()?;
    let dims = inputs.dims.as_ref()?.as_array()?;
    let types = inputs.types.as_ref()?.as_array()?;
    let mut read = 0.0;
    let mut largest: f64 = 0.0;
    for (shape, ty) in dims.iter().zip(types) {
        let (Some(shape), Some(ty)) = (shape.as_array(), ty.as_str()) else {
            continue;
        };
        let Some(size) = element_bytes(&canonical_dtype(ty)) else {
            continue;
        };
        if shape.is_empty() {
            continue;
        }
        let elements: f64 = shape.iter().filter_map(|d| d.as_f64()).product();
        read += elements * size;
        largest = largest.max(elements * size);
    }
    (read > 0.0).then_some(Work {
        flops: 0.0,
        bytes: read + largest,
        gemm: None,
    })
}

/// The estimate of `work` on `profile`'s device, or `None` when the profile has no rate for
/// it.
pub fn estimate(work: &Work, profile: &Profile) -> Option<RooflineEstimate> {
    let mut how = Vec::new();
    let compute_us = match work.gemm {
        Some((dtype, n)) if work.flops > 0.0 => {
            let (gflops, basis) = match measured_gflops(profile, dtype, n) {
                Some(g) => (g, "measured"),
                None => (peak_gflops(profile, dtype)?, "peak"),
            };
            how.push(format!("{gflops:.1} GFLOPS {dtype} ({basis}, N≈{n:.0})"));
            work.flops / (gflops * 1e3)
        }
        _ => 0.0,
    };
    let bandwidth = profile
        .measured_bandwidth_gbps
        .filter(|b| *b > 0.0)
        .map(|b| (b, "measured"))
        .or_else(|| {
            profile
                .theoretical_bandwidth_gbps
                .filter(|b| *b > 0.0)
                .map(|b| (b, "peak"))
        });
    let memory_us = match bandwidth {
        Some((gbps, basis)) => {
            how.push(format!("{gbps:.1} GB/s ({basis})"));
            work.bytes / (gbps * 1e3)
        }
        // Without a bandwidth only compute-bound work can be estimated.
        None if compute_us > 0.0 => 0.0,
        None => return None,
    };
    let us = compute_us.max(memory_us);
    Some(RooflineEstimate {
        us,
        flops: work.flops,
        bytes: work.bytes,
        compute_us,
        memory_us,
        bound: if compute_us >= memory_us {
            "compute"
        } else {
            "memory"
        }
        .into(),
        how: format!(
            "max(FLOPs / GFLOPS, bytes / bandwidth) with {} of {}",
            how.join(" and "),
            profile.metadata.hardware_name
        ),
    })
}

/// Gives every result of `results` whose signature's work is known its roofline estimate on
/// `profile`, and makes it the prediction of those that could not be replayed (unsupported,
/// failed, out of memory): their status becomes `estimated`, the reason they were not
/// replayed stays. Returns how many were estimated in place of a replay.
pub fn apply_to_results(
    results: &mut IsolatedResults,
    file: &SignatureFile,
    profile: &Profile,
    profile_name: &str,
) -> usize {
    let by_id: std::collections::HashMap<&str, &Signature> =
        file.signatures.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut estimated = 0;
    for result in &mut results.results {
        let Some(signature) = by_id.get(result.id.as_str()) else {
            continue;
        };
        let Some(e) = work_of(signature).and_then(|w| estimate(&w, profile)) else {
            continue;
        };
        if matches!(
            result.status,
            Status::Unsupported | Status::Failed | Status::Oom
        ) {
            result.status = Status::Estimated;
            result.predicted_us = Some(e.us);
            result.method = Some(format!("roofline estimate from {profile_name}"));
            estimated += 1;
        }
        result.roofline = Some(e);
    }
    estimated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        serde_json::from_str(include_str!("../../../../profiles/h100_sxm_datasheet.json")).unwrap()
    }

    fn signature(json: serde_json::Value) -> Signature {
        let mut base = serde_json::json!({
            "id": "x", "tier": 3, "unit": "kernel", "kind": "kernel", "name": "k", "op": null,
            "labels": [], "streams": [], "count": 1, "trace_total_us": 1.0, "trace_mean_us": 1.0,
            "trace_min_us": 1.0, "trace_max_us": 1.0, "inputs": null, "grid": null, "block": null,
            "replayable": false, "reason": null
        });
        if let (Some(b), Some(extra)) = (base.as_object_mut(), json.as_object()) {
            for (k, v) in extra {
                b.insert(k.clone(), v.clone());
            }
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_real_bf16_gemm_on_the_h100_datasheet_is_bound_by_the_larger_of_its_two_times() {
        let file: crate::signature::schema::SignatureFile = serde_json::from_str(include_str!(
            "../../../../signatures/h100_bert_small_infer.json"
        ))
        .unwrap();
        let s = file.signatures.iter().find(|s| s.gemm.is_some()).unwrap();
        let g = s.gemm.as_ref().unwrap();
        assert_eq!(g.dtype_a, "bfloat16");
        let (m, n, k, b) = (g.m as f64, g.n as f64, g.k as f64, g.batch.max(1) as f64);
        let work = work_of(s).unwrap();
        assert_eq!(work.flops, 2.0 * m * n * k * b);
        assert_eq!(work.bytes, (m * k + k * n + m * n) * b * 2.0);
        let e = estimate(&work, &profile()).unwrap();
        // µs = FLOPs / (GFLOPS · 1e3) at the 989.4 TFLOPS bf16 peak; bytes at 3350 GB/s.
        assert!((e.compute_us - work.flops / 989_400.0 / 1e3).abs() < 1e-12);
        assert!((e.memory_us - work.bytes / 3350.0 / 1e3).abs() < 1e-12);
        assert_eq!(e.us, e.compute_us.max(e.memory_us));
        let bound = if e.compute_us >= e.memory_us {
            "compute"
        } else {
            "memory"
        };
        assert_eq!(e.bound, bound);
        assert!(e.how.contains("peak") && e.how.contains("bfloat16"));
    }

    #[test]
    fn an_elementwise_op_is_memory_bound_from_its_recorded_inputs() {
        let s = signature(serde_json::json!({"inputs": {
            "dims": [[1, 141, 8, 64], [1, 141, 8, 64], []],
            "types": ["c10::BFloat16", "c10::BFloat16", "Scalar"],
            "strides": null, "concrete": null}}));
        let work = work_of(&s).unwrap();
        let tensor = 141.0 * 8.0 * 64.0 * 2.0;
        assert_eq!(work.bytes, 3.0 * tensor); // two inputs read, one output written
        let e = estimate(&work, &profile()).unwrap();
        assert_eq!((e.bound.as_str(), e.compute_us), ("memory", 0.0));
        assert!((e.us - 3.0 * tensor / 3350.0 / 1e3).abs() < 1e-12);
        // A host-to-device copy has no bound in a profile; a device copy reads and writes.
        let h2d = signature(serde_json::json!({"tier": 1, "kind": "memcpy", "memcpy": {
            "kind": "HtoD", "src": "Pageable", "dst": "Device", "bytes": 1024}}));
        assert!(work_of(&h2d).is_none());
        let d2d = signature(serde_json::json!({"tier": 1, "kind": "memcpy", "memcpy": {
            "kind": "DtoD", "src": "Device", "dst": "Device", "bytes": 1024}}));
        assert_eq!(work_of(&d2d).unwrap().bytes, 2048.0);
        assert!(work_of(&signature(serde_json::json!({}))).is_none());
    }
}
