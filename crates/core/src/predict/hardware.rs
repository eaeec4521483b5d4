//! A trace re-timed for hardware it did not run on (`replay predict --profile`): every unit
//! of work's duration multiplied by how much slower or faster the target profile says that
//! kind of work runs than the source profile (the trace's own device), then the timeline run
//! again. Host time (framework, launch calls) is kept: a profile measures the device, not the
//! CPU that drives it.
//!
//! - **GEMMs** (signatures with GEMM parameters): by the ratio of their roofline times,
//!   `max(FLOPs / GFLOPS, bytes / bandwidth)`, on each profile — GFLOPS at the GEMM's size and
//!   dtype (the size `∛(m·n·k)` of the square product with the same FLOPs, the profiles'
//!   measured matmul GFLOPS interpolated between their sizes, log-log, clamped at the ends; or
//!   the dtype's peak), so that a skinny GEMM that streams its weight scales with bandwidth.
//! - **Everything else** (copies, memsets, element-wise and reduction kernels): by memory
//!   bandwidth, measured or peak.
//!
//! Like for like: measured numbers are used only when both profiles have them for that kind
//! of work; otherwise both sides' theoretical peaks (a datasheet profile has nothing else).
//! Work that neither basis covers (an fp64 GEMM, a profile without any peak) keeps its
//! duration and is counted as kept.

use std::path::PathBuf;

use crate::results::calibration::Profile;

use super::catalog::{GemmShape, SignatureInfo};
use super::profile_rates::{measured_gflops, peak_gflops};
use super::roofline::gemm_work;

/// What the scaling of one unit of work was based on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    MeasuredGflops,
    PeakGflops,
    MeasuredBandwidth,
    PeakBandwidth,
}

/// Two profiles: the trace's device and the device to predict for.
#[derive(Debug, Clone)]
pub struct HardwareScaling {
    pub source: Profile,
    pub source_path: PathBuf,
    pub target: Profile,
    pub target_path: PathBuf,
}

fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x > 0.0)
}

impl HardwareScaling {
    /// How many times longer `info`'s work takes on the target than on the source, and on
    /// what basis; `None` when neither basis covers it.
    pub fn factor(&self, info: &SignatureInfo) -> Option<(f64, Basis)> {
        match &info.gemm {
            Some(gemm) => self.gemm_factor(gemm),
            None => self.bandwidth_factor(),
        }
    }

    /// A GEMM's time on each side is its roofline, `max(FLOPs / GFLOPS at its size, bytes /
    /// bandwidth)`: a skinny GEMM (a decoder's M = 5 tokens against a 4096-wide weight)
    /// streams its weight and is bound by bandwidth, not by the matmul rate of a square
    /// product. Without a bandwidth on both sides, the GFLOPS ratio alone.
    fn gemm_factor(&self, gemm: &GemmShape) -> Option<(f64, Basis)> {
        let work = gemm_work(gemm.m, gemm.n, gemm.k, gemm.batch, &gemm.dtype)?;
        let (dtype, size) = work.gemm?;
        let (flops, bytes) = (work.flops, work.bytes);
        let measured = (
            measured_gflops(&self.source, dtype, size),
            measured_gflops(&self.target, dtype, size),
        );
        let (gflops, basis) = match measured {
            (Some(s), Some(t)) => ((s, t), Basis::MeasuredGflops),
            _ => (
                (
                    peak_gflops(&self.source, dtype)?,
                    peak_gflops(&self.target, dtype)?,
                ),
                Basis::PeakGflops,
            ),
        };
        let bandwidth = match basis {
            Basis::MeasuredGflops => (
                positive(self.source.measured_bandwidth_gbps),
                positive(self.target.measured_bandwidth_gbps),
            ),
            _ => (
                positive(self.source.theoretical_bandwidth_gbps),
                positive(self.target.theoretical_bandwidth_gbps),
            ),
        };
        let time = |gflops: f64, gbps: Option<f64>| {
            let compute = flops / gflops;
            gbps.map_or(compute, |b| compute.max(bytes / b))
        };
        let (source, target) = match bandwidth {
            (Some(bs), Some(bt)) => (time(gflops.0, Some(bs)), time(gflops.1, Some(bt))),
            _ => (time(gflops.0, None), time(gflops.1, None)),
        };
        // An empty GEMM takes no time on either side: nothing to scale.
        (source > 0.0).then_some((target / source, basis))
    }

    fn bandwidth_factor(&self) -> Option<(f64, Basis)> {
        let measured = (
            positive(self.source.measured_bandwidth_gbps),
            positive(self.target.measured_bandwidth_gbps),
        );
        if let (Some(s), Some(t)) = measured {
            return Some((s / t, Basis::MeasuredBandwidth));
        }
        let (s, t) = (
            positive(self.source.theoretical_bandwidth_gbps)?,
            positive(self.target.theoretical_bandwidth_gbps)?,
        );
        Some((s / t, Basis::PeakBandwidth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::profile_rates::profile_dtype;
    use crate::results::calibration::{Latency, OperationProfile};
    use crate::signature::schema::Tier;

    fn datasheet(name: &str, fp32: f64, bf16: f64, bandwidth: f64) -> Profile {
        let json = serde_json::json!({
            "schema_version": 1,
            "source": "datasheet",
            "device_names": [name],
            "metadata": {
                "hardware_name": name, "calibration_date": "2026-11-25T00:00:00Z",
                "calibration_tool_version": "test", "device": name, "cpu_model": "",
                "cpu_count": 0, "total_memory_gb": null, "libtorch_version": "", "threads": 0,
                "num_warmup_runs": 0, "num_measurement_runs": 0, "quick": false
            },
            "theoretical_peak_gflops": fp32,
            "theoretical_peak_source": {"kind": "datasheet", "how": "test"},
            "theoretical_peak_gflops_by_dtype": {"float32": fp32, "bfloat16": bf16},
            "theoretical_bandwidth_gbps": bandwidth,
            "theoretical_bandwidth_source": {"kind": "datasheet", "how": "test"},
            "best_measured_gflops": null, "avg_measured_gflops": null,
            "worst_measured_gflops": null, "measured_bandwidth_gbps": null,
            "bandwidth_efficiency": null, "best_efficiency": null, "avg_efficiency": null,
            "worst_efficiency": null, "operation_profiles": {}, "fusion_profiles": {},
            "failures": {}
        });
        serde_json::from_value(json).unwrap()
    }

    fn matmul(n: u64, gflops: f64) -> OperationProfile {
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("dtype".to_string(), serde_json::json!("float32"));
        OperationProfile {
            operation_type: "matmul".into(),
            measured_gflops: gflops,
            efficiency: None,
            achieved_bandwidth_gbps: 0.0,
            memory_bound: false,
            compute_bound: true,
            arithmetic_intensity: n as f64 / 6.0,
            batch_size: 1,
            input_shape: vec![n, n],
            output_shape: vec![n, n],
            latency: Latency::from_samples_us(&[1.0]).unwrap(),
            extra_params: extra,
        }
    }

    fn info(gemm: Option<GemmShape>) -> SignatureInfo {
        SignatureInfo {
            tier: if gemm.is_some() { Tier::Gemm } else { Tier::Op },
            name: "k".into(),
            ops: vec![],
            label: "k".into(),
            gemm,
        }
    }

    fn gemm(m: u64, n: u64, k: u64, dtype: &str) -> Option<GemmShape> {
        Some(GemmShape {
            m,
            n,
            k,
            batch: 1,
            dtype: dtype.into(),
        })
    }

    #[test]
    fn datasheets_scale_gemms_by_the_dtype_peak_and_the_rest_by_bandwidth() {
        let a100 = datasheet("A100", 19_500.0, 312_000.0, 1555.0);
        let h100 = datasheet("H100", 66_900.0, 989_400.0, 3352.0);
        let s = HardwareScaling {
            source: a100.clone(),
            source_path: "a".into(),
            target: h100.clone(),
            target_path: "h".into(),
        };
        // A large GEMM is compute-bound on both: the ratio of the bf16 peaks.
        let (f, basis) = s
            .factor(&info(gemm(4096, 4096, 4096, "c10::BFloat16")))
            .unwrap();
        assert_eq!(basis, Basis::PeakGflops);
        assert!((f - 312_000.0 / 989_400.0).abs() < 1e-12, "{f}");
        let (f, _) = s.factor(&info(gemm(2048, 2048, 2048, "float"))).unwrap();
        assert!((f - 19_500.0 / 66_900.0).abs() < 1e-12, "{f}");
        // A decoder's skinny GEMM (5 tokens) streams its weight: the bandwidth ratio.
        let (f, _) = s.factor(&info(gemm(5, 4096, 1024, "bfloat16"))).unwrap();
        assert!((f - 1555.0 / 3352.0).abs() < 1e-12, "{f}");
        let (f, basis) = s.factor(&info(None)).unwrap();
        assert_eq!(basis, Basis::PeakBandwidth);
        assert!((f - 1555.0 / 3352.0).abs() < 1e-12);
        // fp64 is in no profile: kept.
        assert!(s.factor(&info(gemm(8, 8, 8, "double"))).is_none());
        // There and back is the identity.
        let back = HardwareScaling {
            source: h100,
            source_path: "h".into(),
            target: a100,
            target_path: "a".into(),
        };
        let there = s.factor(&info(None)).unwrap().0;
        let again = back.factor(&info(None)).unwrap().0;
        assert!((there * again - 1.0).abs() < 1e-12);
    }

    #[test]
    fn measured_gflops_interpolate_in_log_log_and_clamp() {
        let mut p = datasheet("cpu", 500.0, 1000.0, 0.0);
        p.operation_profiles.insert("a".into(), matmul(1024, 100.0));
        p.operation_profiles.insert("b".into(), matmul(4096, 400.0));
        assert_eq!(measured_gflops(&p, "float32", 512.0), Some(100.0));
        assert_eq!(measured_gflops(&p, "float32", 8192.0), Some(400.0));
        // Halfway in log N between 1024 and 4096 is 2048: halfway in log GFLOPS is 200.
        assert!((measured_gflops(&p, "float32", 2048.0).unwrap() - 200.0).abs() < 1e-9);
        assert_eq!(measured_gflops(&p, "bfloat16", 2048.0), None);
        // Measured on both sides wins over the peaks; the bandwidth has no peak on either
        // side here (0 is not a peak), so non-GEMM work is kept.
        let mut q = p.clone();
        q.operation_profiles.insert("a".into(), matmul(1024, 50.0));
        q.operation_profiles.insert("b".into(), matmul(4096, 100.0));
        let s = HardwareScaling {
            source: p,
            source_path: "p".into(),
            target: q,
            target_path: "q".into(),
        };
        let (f, basis) = s.factor(&info(gemm(1024, 1024, 1024, "float32"))).unwrap();
        assert_eq!((f, basis), (2.0, Basis::MeasuredGflops));
        assert!(s.factor(&info(None)).is_none());
    }

    #[test]
    fn dtypes_map_to_the_profiles() {
        assert_eq!(profile_dtype("c10::BFloat16"), Some("bfloat16"));
        assert_eq!(profile_dtype("bfloat16"), Some("bfloat16"));
        assert_eq!(profile_dtype("c10::Half"), Some("float16"));
        assert_eq!(profile_dtype("float"), Some("float32"));
        assert_eq!(profile_dtype("double"), None);
    }
}
