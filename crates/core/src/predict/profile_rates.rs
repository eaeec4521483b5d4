//! What a calibration profile says a device's GEMMs run at: its measured matmul GFLOPS at a
//! size and dtype, or the dtype's peak, and the profile dtype a recorded GEMM dtype stands
//! for. Read by the roofline estimates and by re-timing for other hardware.

use crate::results::calibration::Profile;

/// The profile dtype a GEMM dtype string stands for (`None`: no profile measures it).
pub fn profile_dtype(dtype: &str) -> Option<&'static str> {
    let d = dtype.to_ascii_lowercase();
    if d.contains("bfloat16") || d.contains("bf16") {
        Some("bfloat16")
    } else if d.contains("half") || d.contains("float16") || d.contains("fp16") {
        Some("float16")
    } else if d == "float" || d.contains("float32") || d == "fp32" || d == "f32" {
        Some("float32")
    } else {
        None
    }
}

/// A profile's measured matmul GFLOPS in `dtype` at size `n`: interpolated linearly in
/// (log N, log GFLOPS) between the measured sizes, clamped outside them.
pub fn measured_gflops(profile: &Profile, dtype: &str, n: f64) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = profile
        .operation_profiles
        .values()
        .filter(|o| {
            o.operation_type == "matmul"
                && o.measured_gflops > 0.0
                && o.extra_params.get("dtype").and_then(|d| d.as_str()) == Some(dtype)
        })
        .filter_map(|o| Some((*o.input_shape.first()? as f64, o.measured_gflops)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (first, last) = (*points.first()?, *points.last()?);
    if n <= first.0 {
        return Some(first.1);
    }
    if n >= last.0 {
        return Some(last.1);
    }
    let upper = points.iter().position(|p| p.0 >= n)?;
    let (lo, hi) = (points[upper - 1], points[upper]);
    let t = (n.ln() - lo.0.ln()) / (hi.0.ln() - lo.0.ln());
    Some((lo.1.ln() + t * (hi.1.ln() - lo.1.ln())).exp())
}

/// A profile's compute peak in `dtype` (the fp32 peak for float32).
pub fn peak_gflops(profile: &Profile, dtype: &str) -> Option<f64> {
    profile
        .theoretical_peak_gflops_by_dtype
        .get(dtype)
        .copied()
        .flatten()
        .or(if dtype == "float32" {
            profile.theoretical_peak_gflops
        } else {
            None
        })
        .filter(|v| *v > 0.0)
}
