//! The selftest's mHC checks: the device's fused kernels against torch's stages on the same
//! input (the Rust kernels on the CPU; `cuda/mhc_sinkhorn.cu` on a GPU, in every dtype), and
//! on a GPU the whole offload simulation (inputs on the GPU, pinned copies timed by CUDA
//! events, stages 1–3 on the host) with every stage measured.

use tch::Kind;

use super::outcome::{check, Check};
use crate::device::{CudaDevice, Device};
use crate::kernels::mhc_sinkhorn::cpu::{marginal_error, sinkhorn_reference};
use crate::suites::mhc::bench::{MhcSettings, MhcSuite};
use crate::suites::mhc::cuda_sinkhorn::CudaSinkhorn;
use crate::suites::mhc::fused_stages::{relative_difference, FusedStages};
use crate::suites::mhc::run::Timing;
use crate::suites::mhc::stages::{Impl, Placement};
use crate::suites::mhc::torch_stages::{self as torch, make_x_streams, MhcWeights};
use crate::suites::mhc::{MhcDtype, MhcError, MhcShape};

/// 3·37 positions (not a multiple of any block or task size), n = 4, D = 160.
fn shape(dtype: MhcDtype) -> Result<MhcShape, MhcError> {
    MhcShape::new(3, 37, 160, 4, dtype)
}

fn text(e: MhcError) -> String {
    e.to_string()
}

/// Every fused CPU stage against torch's, in each dtype.
fn cpu_fused(dtype: MhcDtype) -> Result<String, String> {
    let s = shape(dtype).map_err(text)?;
    let run = || -> Result<[f64; 3], MhcError> {
        let w = MhcWeights::new(&s, Device::host())?;
        let x = make_x_streams(&s, Device::host())?;
        let fused = FusedStages::new(s, &w, 2)?;
        let (b, t, n, d) = (3, 37, 4, 160);
        let h = torch::linear(&w, &x, &s)?;
        let mut fh = fused.empty(&[b, t, n * n])?;
        fused.linear(&x, &mut fh)?;
        let m = torch::sinkhorn(&h, &s)?;
        let mut fm = fused.empty(&[b, t, n, n])?;
        fused.sinkhorn(&h, &mut fm)?;
        let o = torch::apply(&m, &x)?;
        let mut fo = fused.empty(&[b, t, n, d])?;
        fused.apply(&m, &x, &mut fo)?;
        Ok([
            relative_difference(&fh, &h)?,
            relative_difference(&fm, &m)?,
            relative_difference(&fo, &o)?,
        ])
    };
    let diffs = run().map_err(text)?;
    let tol = dtype.tolerance();
    if diffs.iter().all(|&d| d <= tol) {
        Ok(format!(
            "linear {:.1e}, sinkhorn {:.1e}, apply {:.1e} of torch's largest value (≤ {tol:.0e})",
            diffs[0], diffs[1], diffs[2]
        ))
    } else {
        Err(format!("differences {diffs:?} exceed {tol:.0e}"))
    }
}

/// The CUDA Sinkhorn against torch's on the GPU and against the float64 reference.
fn cuda_sinkhorn(gpu: &CudaDevice, dtype: MhcDtype) -> Result<String, String> {
    let s = shape(dtype).map_err(text)?;
    let run = || -> Result<(f64, f64, f64), MhcError> {
        let dev = Device::Cuda(gpu.clone());
        let w = MhcWeights::new(&s, &dev)?;
        let x = make_x_streams(&s, &dev)?;
        let h = torch::linear(&w, &x, &s)?;
        let m = torch::sinkhorn(&h, &s)?;
        let kernel = CudaSinkhorn::new(gpu, dtype)?;
        let mut out = tch::Tensor::f_empty_like(&m)?;
        kernel.run(&h, &mut out, &s)?;
        crate::torch::work_target::synchronize(&dev).map_err(|e| MhcError::Cuda(e.to_string()))?;
        let vs_torch = relative_difference(&out, &m)?;
        let flat = |t: &tch::Tensor| -> Result<Vec<f64>, MhcError> {
            Ok(Vec::<f64>::try_from(&t.f_reshape([-1])?.f_to_device_(
                Device::host().torch(),
                Kind::Double,
                false,
                false,
            )?)?)
        };
        let want = sinkhorn_reference(&flat(&h)?, 4, 20);
        let got = flat(&out)?;
        let vs_ref = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        Ok((vs_torch, vs_ref, marginal_error(&got, 4)))
    };
    let (vs_torch, vs_ref, marginal) = run().map_err(text)?;
    let tol = dtype.tolerance();
    if vs_torch <= tol && vs_ref <= tol && marginal < 1e-2 {
        Ok(format!(
            "vs torch {vs_torch:.1e}, vs float64 {vs_ref:.1e}, rows/columns 1 ± {marginal:.1e}"
        ))
    } else {
        Err(format!(
            "vs torch {vs_torch:.3e}, vs float64 {vs_ref:.3e} (tolerance {tol:.0e}), rows/columns 1 ± {marginal:.3e}"
        ))
    }
}

/// The offload simulation end to end: every stage of both implementations measured.
fn offload_simulation(gpu: &CudaDevice) -> Result<String, String> {
    use replay_core::export::rows::Row;
    use replay_core::measure::MonotonicClock;
    let s = shape(MhcDtype::Bfloat16).map_err(text)?;
    let timing = Timing::Fixed {
        warmup: 1,
        iters: 3,
    };
    let suite = MhcSuite::new(MhcSettings {
        shape: s,
        placement: Placement::Offload,
        impls: vec![Impl::Torch, Impl::Fused],
        threads: 2,
        gpu: Some(gpu.clone()),
        rounds: timing.round_configs(),
    });
    let mut rows: Vec<Row> = Vec::new();
    let config = timing.config();
    replay_core::suite::run(
        &suite,
        &(),
        &config,
        &MonotonicClock::new(),
        &mut rows,
        |_| {},
    )
    .map_err(|e| e.to_string())?;
    let bad: Vec<String> = rows
        .iter()
        .filter(|r| r.get("Status").and_then(|v| v.as_str()) != Some("ok"))
        .map(|r| {
            format!(
                "{:?} {:?}: {:?}",
                r.get("Impl"),
                r.get("Case"),
                r.get("Note")
            )
        })
        .collect();
    if !bad.is_empty() {
        return Err(bad.join("; "));
    }
    let bw: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.get("BW(GB/s)").and_then(|v| v.as_f64()))
        .collect();
    if bw.len() != 4 || bw.iter().any(|&b| b <= 0.0) {
        return Err(format!("copy bandwidths {bw:?}: want four positive values"));
    }
    Ok(format!(
        "{} stages measured; D2H/H2D bandwidths {:?} GB/s",
        rows.len(),
        bw
    ))
}

/// The mHC checks for the CPU (`gpu` None) or the opened GPU `gpu`.
pub fn mhc_checks(gpu: Option<&CudaDevice>) -> Vec<Check> {
    let mut checks = Vec::new();
    match gpu {
        None => {
            for dtype in MhcDtype::ALL {
                checks.push(check(
                    0,
                    &format!("mhc fused CPU stages vs torch, {}", dtype.name()),
                    cpu_fused(dtype),
                ));
            }
        }
        Some(gpu) => {
            for dtype in MhcDtype::ALL {
                checks.push(check(
                    0,
                    &format!("mhc CUDA Sinkhorn vs torch, {}", dtype.name()),
                    cuda_sinkhorn(gpu, dtype),
                ));
            }
            checks.push(check(
                0,
                "mhc offload simulation (D2H, host stages, H2D)",
                offload_simulation(gpu),
            ));
        }
    }
    checks
}
