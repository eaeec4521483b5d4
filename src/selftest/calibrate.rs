//! The selftest's calibration checks: `replay calibrate`'s libtorch paths (a matmul, the
//! attention fusion patterns) run and time on the device, with sane numbers. On a GPU this is
//! what runs calibrate's CUDA side (libtorch on the device, CUDA-event timing).

use super::{check, Check};
use crate::device::Device;
use crate::suites::calibrate::fusion::{measure_fusion, FusionFamily};
use crate::suites::calibrate::matmul::{self, MatmulDtype};
use crate::suites::calibrate::peaks::Peak;
use crate::suites::calibrate::timing::Trials;

pub fn calibrate_checks(device: &Device) -> Vec<Check> {
    let torch = device.torch_device();
    let matmul_check = (|| {
        let n = 256;
        let p = matmul::measure(
            torch,
            n,
            MatmulDtype::Float32,
            Trials {
                warmup: 1,
                trials: 3,
            },
            &Peak::unknown("not needed"),
        )
        .map_err(|e| e.to_string())?;
        let gflops = p.measured_gflops;
        let expected = matmul::flops(n) / (p.latency.median_latency_ms / 1e3) / 1e9;
        if !(gflops > 0.0 && (gflops - expected).abs() <= 1e-9 * expected) {
            return Err(format!("{gflops} GFLOPS is not 2N³/t = {expected}"));
        }
        Ok(format!(
            "fp32 N={n}: {:.3} ms, {gflops:.1} GFLOPS ({})",
            p.latency.median_latency_ms,
            p.extra_params
                .get("timer")
                .and_then(|t| t.as_str())
                .unwrap_or("?")
        ))
    })();
    let fusion_check = (|| {
        let results = measure_fusion(torch, &[FusionFamily::Attention], true);
        let mut patterns = 0;
        for (key, result) in results {
            let f = result.map_err(|e| format!("{key}: {e}"))?;
            if !(f.unfused_latency_ms > 0.0 && f.fused_latency_ms > 0.0) {
                return Err(format!("{key}: latencies {f:?}"));
            }
            patterns += 1;
        }
        Ok(format!(
            "{patterns} attention patterns timed fused and unfused"
        ))
    })();
    vec![
        check(0, "calibrate matmul through libtorch", matmul_check),
        check(0, "calibrate fusion patterns (attention)", fusion_check),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_calibration_checks_pass_on_the_cpu() {
        let checks = calibrate_checks(&Device::Cpu(crate::device::CpuInfo::detect()));
        assert_eq!(checks.len(), 2);
        for c in &checks {
            assert!(c.passed, "{}: {}", c.name, c.detail);
        }
    }
}
