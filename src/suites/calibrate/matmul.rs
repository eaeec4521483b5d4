//! Square matrix products through libtorch (`mm` into a preallocated output, so the
//! allocator is not timed): the seed's sizes, GFLOPS = 2N³ / t, efficiency against the peak of
//! the dtype, arithmetic intensity 2N³ / (3N² · bytes per element) (N/6 in float32).

use std::collections::BTreeMap;

use serde_json::json;

use super::peaks::Peak;
use super::profile::OperationProfile;
use super::timing::{time_trials, Trials};
use super::CalibrateError;
use crate::device::Device;
use crate::torch::work_target::TorchWork;

/// The seed's sizes: quick [1024, 2048], full [512, 1024, 2048, 4096].
pub fn sizes(quick: bool) -> Vec<i64> {
    if quick {
        vec![1024, 2048]
    } else {
        vec![512, 1024, 2048, 4096]
    }
}

/// The seed's trials: warm-up 3, 5 trials quick, 10 full.
pub fn trials(quick: bool) -> Trials {
    Trials {
        warmup: 3,
        trials: if quick { 5 } else { 10 },
    }
}

/// A dtype the matmul runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatmulDtype {
    Float32,
    BFloat16,
    Float16,
}

impl MatmulDtype {
    pub const ALL: [MatmulDtype; 3] = [
        MatmulDtype::Float32,
        MatmulDtype::BFloat16,
        MatmulDtype::Float16,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MatmulDtype::Float32 => "float32",
            MatmulDtype::BFloat16 => "bfloat16",
            MatmulDtype::Float16 => "float16",
        }
    }

    pub fn kind(self) -> tch::Kind {
        match self {
            MatmulDtype::Float32 => tch::Kind::Float,
            MatmulDtype::BFloat16 => tch::Kind::BFloat16,
            MatmulDtype::Float16 => tch::Kind::Half,
        }
    }

    pub fn bytes(self) -> f64 {
        match self {
            MatmulDtype::Float32 => 4.0,
            _ => 2.0,
        }
    }
}

impl std::str::FromStr for MatmulDtype {
    type Err = CalibrateError;
    fn from_str(s: &str) -> Result<Self, CalibrateError> {
        let t = s.trim().to_ascii_lowercase();
        MatmulDtype::ALL
            .into_iter()
            .find(|d| d.name() == t || (t == "fp32" && *d == MatmulDtype::Float32))
            .ok_or_else(|| {
                CalibrateError::Usage(format!(
                    "unknown dtype '{s}' (expected float32, bfloat16 or float16)"
                ))
            })
    }
}

/// FLOPs of an N×N by N×N product.
pub fn flops(n: i64) -> f64 {
    2.0 * (n as f64).powi(3)
}

/// Bytes an N×N product must move at least: two inputs read, one output written.
pub fn bytes(n: i64, dtype: MatmulDtype) -> f64 {
    3.0 * (n as f64).powi(2) * dtype.bytes()
}

/// The profile key of one measurement.
pub fn key(n: i64, dtype: MatmulDtype) -> String {
    format!("matmul_{}_N={n}", dtype.name())
}

/// Measures one size in one dtype.
pub fn measure(
    device: &Device,
    n: i64,
    dtype: MatmulDtype,
    trials: Trials,
    peak: &Peak,
) -> Result<OperationProfile, CalibrateError> {
    let options = (dtype.kind(), device.torch());
    let a = tch::Tensor::f_randn([n, n], options)?;
    let b = tch::Tensor::f_randn([n, n], options)?;
    let out = tch::Tensor::f_empty([n, n], options)?;
    // Once before the target exists: on a GPU libtorch's context must be current for the
    // events, and a dtype the device cannot multiply fails here with libtorch's message.
    drop(a.f_mm_out(&out, &b)?);
    let mut target =
        TorchWork::new(device, || a.f_mm_out(&out, &b).map(drop)).map_err(CalibrateError::from)?;
    let latency = time_trials(&mut target, trials)?;
    // The median, which a slow trial does not move (the seed divided by the mean).
    let seconds = latency.median_latency_ms / 1e3;
    let gflops = flops(n) / seconds / 1e9;
    let mut extra = BTreeMap::new();
    extra.insert("matrix_size".into(), json!(n));
    extra.insert("dtype".into(), json!(dtype.name()));
    extra.insert("implementation".into(), json!("libtorch mm (out=)"));
    extra.insert("timer".into(), json!(target.timer()));
    Ok(OperationProfile {
        operation_type: "matmul".into(),
        measured_gflops: gflops,
        efficiency: peak.value.filter(|p| *p > 0.0).map(|p| gflops / p),
        achieved_bandwidth_gbps: bytes(n, dtype) / seconds / 1e9,
        memory_bound: false,
        compute_bound: true,
        arithmetic_intensity: flops(n) / bytes(n, dtype),
        batch_size: 1,
        input_shape: vec![n as u64, n as u64],
        output_shape: vec![n as u64, n as u64],
        latency,
        extra_params: extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_the_seeds() {
        // GFLOPS = 2N³/t: N = 1024 in 2.886 ms is 744 GFLOPS (the seed's i7 profile).
        assert!((flops(1024) / 2.885_991_6e-3 / 1e9 - 744.106).abs() < 0.01);
        // Arithmetic intensity N/6 in float32 (the seed's 170.67 at N = 1024), N/3 in bf16.
        assert!((flops(1024) / bytes(1024, MatmulDtype::Float32) - 1024.0 / 6.0).abs() < 1e-9);
        assert!((flops(1024) / bytes(1024, MatmulDtype::BFloat16) - 1024.0 / 3.0).abs() < 1e-9);
        assert_eq!(sizes(true), [1024, 2048]);
        assert_eq!(sizes(false), [512, 1024, 2048, 4096]);
        assert_eq!(
            trials(false),
            Trials {
                warmup: 3,
                trials: 10
            }
        );
        assert_eq!(key(512, MatmulDtype::BFloat16), "matmul_bfloat16_N=512");
    }

    #[test]
    fn dtypes_parse_and_unknown_ones_are_usage_errors() {
        assert_eq!("fp32".parse::<MatmulDtype>().unwrap(), MatmulDtype::Float32);
        assert_eq!(
            " BFloat16".parse::<MatmulDtype>().unwrap(),
            MatmulDtype::BFloat16
        );
        let err = "int8".parse::<MatmulDtype>().unwrap_err();
        assert!(err.is_usage_error() && err.to_string().contains("int8"));
    }

    #[test]
    fn a_small_product_is_measured_with_sane_numbers() {
        let peak = Peak::computed(1e6, "test".into());
        let p = measure(
            Device::host(),
            128,
            MatmulDtype::Float32,
            Trials {
                warmup: 1,
                trials: 3,
            },
            &peak,
        )
        .unwrap();
        assert_eq!(p.latency.num_trials, 3);
        assert!(p.measured_gflops > 0.0 && p.measured_gflops < 1e6);
        let eff = p.efficiency.unwrap();
        assert!((eff - p.measured_gflops / 1e6).abs() < 1e-12);
        assert_eq!(p.input_shape, [128, 128]);
        let unknown = measure(
            Device::host(),
            64,
            MatmulDtype::Float32,
            Trials {
                warmup: 0,
                trials: 1,
            },
            &Peak::unknown("x"),
        )
        .unwrap();
        assert_eq!(unknown.efficiency, None);
    }
}
