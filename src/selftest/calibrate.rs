//! The selftest's calibration checks: `replay calibrate`'s paths (a matmul and the attention
//! fusion patterns through libtorch, the memory copies through libtorch and replay's own copy
//! and triad kernels — on a GPU `cuda/stream_bandwidth.cu`, checked against the host before it
//! is timed) run and time on the device, with sane numbers.

use super::outcome::{check, Check};
use crate::device::Device;
use crate::suites::calibrate::fusion::{measure_fusion, FusionFamily};
use crate::suites::calibrate::matmul::{self, MatmulDtype};
use crate::suites::calibrate::peaks::Peak;
use crate::suites::calibrate::timing::Trials;

pub fn calibrate_checks(device: &Device) -> Vec<Check> {
    let matmul_check = (|| {
        let n = 256;
        let p = matmul::measure(
            device,
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
        let results = measure_fusion(device, &[FusionFamily::Attention], true);
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
    let memory_check = (|| {
        // 16 MB: large enough to leave the caches of most devices' copies, quick everywhere.
        let trials = Trials {
            warmup: 1,
            trials: 2,
        };
        let results = crate::suites::calibrate::memory::measure_memory(device, &[16], trials, None);
        let mut done = Vec::new();
        for (key, result) in results {
            let p = result.map_err(|e| format!("{key}: {e}"))?;
            if !(p.achieved_bandwidth_gbps > 0.0 && p.achieved_bandwidth_gbps.is_finite()) {
                return Err(format!("{key}: {} GB/s", p.achieved_bandwidth_gbps));
            }
            done.push(format!("{key} {:.1} GB/s", p.achieved_bandwidth_gbps));
        }
        if done.len() != 3 {
            return Err(format!(
                "{} measurements instead of libtorch copy, replay copy and triad",
                done.len()
            ));
        }
        Ok(done.join(", "))
    })();
    vec![
        check(0, "calibrate matmul through libtorch", matmul_check),
        check(
            0,
            "calibrate memory: libtorch copy, replay's copy and triad",
            memory_check,
        ),
        check(0, "calibrate fusion patterns (attention)", fusion_check),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_calibration_check_passes_on_the_cpu() {
        let checks = calibrate_checks(&Device::Cpu(crate::device::CpuInfo::detect()));
        assert_eq!(checks.len(), 3);
        for c in &checks {
            assert!(c.passed, "{}: {}", c.name, c.detail);
        }
    }
}
