//! The offload answer: per batch size, the CPU-offloaded total against the GPU's, and the
//! batch size from which offloading pays (if any).
//!
//! With both devices present both are measured (`--sweep-bs` runs the offload simulation and
//! `--device cuda`). On a CPU-only machine the GPU side is a roofline estimate from a
//! calibration profile (`replay calibrate`'s JSON, or a datasheet profile in `profiles/`):
//! each stage's time is max(bytes / bandwidth, FLOPs / peak) for the fused data movement
//! (one read of each input, one write of each output). The copies need the host↔device
//! bandwidth, which the table names as missing when the profile has none.

use std::path::{Path, PathBuf};

use replay_core::plot::charts::{line_chart, LineChart, Series};
use serde_json::Value;

use super::shape::{MhcShape, SINKHORN_ITERS};
use super::stages::Impl;
use super::MhcError;

/// What one batch size measured, the fastest implementation of each.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchResult {
    pub shape: MhcShape,
    /// Stages 1–3 on the host (stage 5 without copies, or the sum of 1–3 when offloading).
    pub cpu_compute_ms: Option<(f64, Impl)>,
    /// The offload simulation's stage 5: D2H + 1–3 on the host + H2D.
    pub cpu_offloaded_ms: Option<(f64, Impl)>,
    /// `--device cuda`'s stage 5.
    pub gpu_total_ms: Option<(f64, Impl)>,
    /// Why a batch size has no numbers (memory, an error).
    pub failure: Option<String>,
}

impl BatchResult {
    /// No numbers yet for `shape`.
    pub fn new(shape: MhcShape) -> BatchResult {
        BatchResult {
            shape,
            cpu_compute_ms: None,
            cpu_offloaded_ms: None,
            gpu_total_ms: None,
            failure: None,
        }
    }
}

/// A GPU described by a calibration profile.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuProfile {
    pub path: PathBuf,
    pub name: String,
    pub bandwidth_gbps: f64,
    pub bandwidth_source: &'static str,
    /// Peak GFLOP/s for the run's dtype.
    pub peak_gflops: f64,
    /// Host→device and device→host copy bandwidth (GB/s), if the profile has them.
    pub h2d_gbps: Option<f64>,
    pub d2h_gbps: Option<f64>,
}

/// The keys a profile may carry its copy bandwidths under (none of replay's profiles has
/// them yet; the answer says so).
pub const H2D_KEYS: [&str; 2] = ["host_to_device_gbps", "h2d_bandwidth_gbps"];
pub const D2H_KEYS: [&str; 2] = ["device_to_host_gbps", "d2h_bandwidth_gbps"];

impl GpuProfile {
    pub fn load(path: &Path, dtype_name: &str) -> Result<GpuProfile, MhcError> {
        let bad = |what: String| MhcError::InvalidInput(format!("{}: {what}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let number = |key: &str| json.get(key).and_then(Value::as_f64).filter(|v| *v > 0.0);
        let (bandwidth_gbps, bandwidth_source) = match number("measured_bandwidth_gbps") {
            Some(v) => (v, "measured"),
            None => (
                number("theoretical_bandwidth_gbps").ok_or_else(|| {
                    bad("has neither measured_bandwidth_gbps nor theoretical_bandwidth_gbps".into())
                })?,
                "theoretical",
            ),
        };
        let peak_gflops = json
            .get("theoretical_peak_gflops_by_dtype")
            .and_then(|m| m.get(dtype_name))
            .and_then(Value::as_f64)
            .or_else(|| number("theoretical_peak_gflops"))
            .ok_or_else(|| bad("has no theoretical_peak_gflops".into()))?;
        let name = json
            .pointer("/metadata/hardware_name")
            .and_then(Value::as_str)
            .unwrap_or("GPU")
            .to_string();
        let first = |keys: &[&str]| keys.iter().find_map(|k| number(k));
        Ok(GpuProfile {
            path: path.to_path_buf(),
            name,
            bandwidth_gbps,
            bandwidth_source,
            peak_gflops,
            h2d_gbps: first(&H2D_KEYS),
            d2h_gbps: first(&D2H_KEYS),
        })
    }

    fn roofline_ms(&self, bytes: f64, flops: f64) -> f64 {
        (bytes / (self.bandwidth_gbps * 1e9)).max(flops / (self.peak_gflops * 1e9)) * 1e3
    }

    /// Stages 1, 2, 3 on this GPU by roofline, in ms.
    pub fn stage_estimates_ms(&self, shape: &MhcShape) -> [f64; 3] {
        let (tokens, width, nn) = (
            shape.tokens() as f64,
            shape.width() as f64,
            shape.mix() as f64,
        );
        let streams = shape.stream_bytes() as f64;
        let mix = shape.mix_bytes() as f64;
        let weight = width * nn * shape.dtype.bytes() as f64;
        let linear = self.roofline_ms(
            streams + weight + mix,
            2.0 * tokens * width * nn + 4.0 * tokens * width,
        );
        let sinkhorn =
            self.roofline_ms(2.0 * mix, tokens * nn * (2.0 + 4.0 * SINKHORN_ITERS as f64));
        let n = shape.streams as f64;
        let apply = self.roofline_ms(2.0 * streams + mix, 2.0 * tokens * n * n * shape.dim as f64);
        [linear, sinkhorn, apply]
    }

    /// D2H + H2D of x_streams in ms, when the profile has both bandwidths.
    pub fn copies_ms(&self, shape: &MhcShape) -> Option<f64> {
        let bytes = shape.stream_bytes() as f64;
        Some(bytes / (self.d2h_gbps? * 1e9) * 1e3 + bytes / (self.h2d_gbps? * 1e9) * 1e3)
    }
}

/// The answer as Markdown and as an SVG line chart.
pub struct OffloadAnswer {
    pub markdown: String,
    pub svg: String,
    pub break_even: Option<usize>,
}

/// Three significant digits: the estimates span microseconds to seconds.
fn significant(ms: f64) -> String {
    if ms <= 0.0 || !ms.is_finite() {
        return format!("{ms}");
    }
    let digits = (2 - ms.log10().floor() as i32).max(0) as usize;
    format!("{ms:.digits$}")
}

fn fmt_ms(v: Option<(f64, Impl)>) -> String {
    v.map(|(ms, imp)| format!("{ms:.2} ({})", imp.name()))
        .unwrap_or_else(|| "—".into())
}

/// The first batch size at which `offloaded ≤ gpu`, over the sizes that have both.
pub fn break_even(points: &[(usize, f64, f64)]) -> Option<usize> {
    points
        .iter()
        .find(|(_, offloaded, gpu)| offloaded <= gpu)
        .map(|(b, _, _)| *b)
}

/// Builds the answer from measured results, with `profile` for the GPU side when no GPU
/// total was measured.
pub fn answer(
    results: &[BatchResult],
    profile: Result<&GpuProfile, &str>,
) -> Result<OffloadAnswer, MhcError> {
    let measured_gpu = results.iter().any(|r| r.gpu_total_ms.is_some());
    let mut md = String::from("# mHC offload: CPU-offloaded total vs GPU total per batch size\n\n");
    let mut offloaded_series = Vec::new();
    let mut cpu_series = Vec::new();
    let mut gpu_series = Vec::new();
    let mut pairs = Vec::new();
    if measured_gpu {
        md.push_str("Both devices measured: the offload simulation (`--device cpu` with the GPU present) and `--device cuda`; the fastest implementation of each, median ms.\n\n");
        md.push_str("| BatchSize | CPU-offloaded total (ms) | GPU total (ms) | offloaded / GPU |\n|---:|---:|---:|---:|\n");
        for r in results {
            let ratio = match (r.cpu_offloaded_ms, r.gpu_total_ms) {
                (Some((o, _)), Some((g, _))) => {
                    pairs.push((r.shape.batch, o, g));
                    format!("{:.2}", o / g)
                }
                _ => r.failure.clone().unwrap_or_else(|| "—".into()),
            };
            md.push_str(&format!(
                "| {} | {} | {} | {ratio} |\n",
                r.shape.batch,
                fmt_ms(r.cpu_offloaded_ms),
                fmt_ms(r.gpu_total_ms)
            ));
            if let Some((o, _)) = r.cpu_offloaded_ms {
                offloaded_series.push((r.shape.batch as f64, o));
            }
            if let Some((g, _)) = r.gpu_total_ms {
                gpu_series.push((r.shape.batch as f64, g));
            }
        }
    } else {
        match profile {
            Ok(p) => {
                md.push_str(&format!(
                    "No GPU on this machine: the CPU's stages 1–3 are measured; the GPU's are a roofline estimate from `{}` ({}, {} bandwidth {:.0} GB/s, peak {:.0} GFLOP/s for this dtype), fused data movement (one read of each input, one write of each output), no launch overhead.\n\n",
                    p.path.display(), p.name, p.bandwidth_source, p.bandwidth_gbps, p.peak_gflops
                ));
                let copies_missing = p
                    .copies_ms(&results.first().map(|r| r.shape).unwrap_or_else(dummy_shape))
                    .is_none();
                if copies_missing {
                    md.push_str(&format!(
                        "Missing: the profile has no host↔device copy bandwidth (keys {} and {}), so the CPU-offloaded total (D2H + stages 1–3 + H2D) cannot be estimated; the table compares the CPU's stages 1–3 alone, a lower bound of the offloaded total.\n\n",
                        H2D_KEYS.join("/"), D2H_KEYS.join("/")
                    ));
                }
                md.push_str("| BatchSize | CPU stages 1–3 (ms, measured) | CPU-offloaded total (ms) | GPU stages 1–3 (ms, estimate) | CPU 1–3 / GPU |\n|---:|---:|---:|---:|---:|\n");
                for r in results {
                    let est: f64 = p.stage_estimates_ms(&r.shape).iter().sum();
                    let offloaded = match (r.cpu_compute_ms, p.copies_ms(&r.shape)) {
                        (Some((c, _)), Some(copies)) => {
                            pairs.push((r.shape.batch, c + copies, est));
                            offloaded_series.push((r.shape.batch as f64, c + copies));
                            format!("{:.2} (estimate)", c + copies)
                        }
                        _ => "missing: copy bandwidth".into(),
                    };
                    let ratio = match r.cpu_compute_ms {
                        Some((c, _)) => format!("{:.0}", c / est),
                        None => r.failure.clone().unwrap_or_else(|| "—".into()),
                    };
                    md.push_str(&format!(
                        "| {} | {} | {offloaded} | {} | {ratio} |\n",
                        r.shape.batch,
                        fmt_ms(r.cpu_compute_ms),
                        significant(est)
                    ));
                    if let Some((c, _)) = r.cpu_compute_ms {
                        cpu_series.push((r.shape.batch as f64, c));
                    }
                    gpu_series.push((r.shape.batch as f64, est));
                }
                let always_slower = results.iter().all(|r| match r.cpu_compute_ms {
                    Some((c, _)) => c > p.stage_estimates_ms(&r.shape).iter().sum(),
                    None => true,
                });
                if pairs.is_empty()
                    && always_slower
                    && results.iter().any(|r| r.cpu_compute_ms.is_some())
                {
                    md.push_str("\nAnswer: offloading does not pay at any measured batch size: the CPU's stages 1–3 alone already take longer than the GPU's estimated stages 1–3, before any copy.\n");
                }
            }
            Err(why) => {
                md.push_str(&format!(
                    "No GPU on this machine and no GPU profile: {why}. Only the CPU side is measured.\n\n| BatchSize | CPU stages 1–3 (ms, measured) |\n|---:|---:|\n"
                ));
                for r in results {
                    md.push_str(&format!(
                        "| {} | {} |\n",
                        r.shape.batch,
                        fmt_ms(r.cpu_compute_ms)
                    ));
                    if let Some((c, _)) = r.cpu_compute_ms {
                        cpu_series.push((r.shape.batch as f64, c));
                    }
                }
            }
        }
    }
    let even = break_even(&pairs);
    if !pairs.is_empty() {
        md.push_str(&match even {
            Some(b) => format!(
                "\nBreak-even: offloading is at least as fast as the GPU from batch size {b}.\n"
            ),
            None => format!(
                "\nBreak-even: none in batch sizes {}: the GPU is faster at every one.\n",
                pairs
                    .iter()
                    .map(|p| p.0.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let mut series = Vec::new();
    for (name, points) in [
        ("CPU-offloaded total", offloaded_series),
        ("CPU stages 1-3 (measured)", cpu_series),
        (
            if measured_gpu {
                "GPU total (measured)"
            } else {
                "GPU stages 1-3 (roofline estimate)"
            },
            gpu_series,
        ),
    ] {
        if !points.is_empty() {
            series.push(Series {
                name: name.into(),
                points,
            });
        }
    }
    let svg = line_chart(&LineChart {
        title: "mHC: CPU-offloaded vs GPU time per batch size".into(),
        x_label: "batch size".into(),
        y_label: "time (ms)".into(),
        log_x: true,
        log_y: true,
        series,
        reference_y: None,
    })
    .map_err(|e| MhcError::Measure(format!("offload plot: {}", e.message)))?;
    Ok(OffloadAnswer {
        markdown: md,
        svg,
        break_even: even,
    })
}

fn dummy_shape() -> MhcShape {
    MhcShape {
        batch: 1,
        seq: 1,
        dim: 1,
        streams: 1,
        dtype: super::MhcDtype::Float32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::MhcDtype;

    fn shape(batch: usize) -> MhcShape {
        MhcShape::new(batch, 4096, 7168, 4, MhcDtype::Bfloat16).unwrap()
    }

    fn profile_file(extra: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            f.path(),
            format!(r#"{{"metadata": {{"hardware_name": "H100"}}, "theoretical_bandwidth_gbps": 3350.0,
                "theoretical_peak_gflops": 66900.0, "theoretical_peak_gflops_by_dtype": {{"bfloat16": 989400.0}}{extra}}}"#),
        )
        .unwrap();
        f
    }

    #[test]
    fn the_roofline_of_the_default_size_is_bandwidth_bound() {
        let f = profile_file("");
        let p = GpuProfile::load(f.path(), "bfloat16").unwrap();
        assert_eq!(p.bandwidth_source, "theoretical");
        let [linear, _, apply] = p.stage_estimates_ms(&shape(16));
        // x_streams is 3 758 096 384 bytes: stage 1 reads it once, stage 3 reads and writes it.
        assert!(
            (linear - 3_758_096_384.0 / 3.35e12 * 1e3).abs() < 0.01,
            "{linear}"
        );
        assert!(
            (apply - 2.0 * 3_758_096_384.0 / 3.35e12 * 1e3).abs() < 0.02,
            "{apply}"
        );
        assert_eq!(p.copies_ms(&shape(16)), None);
    }

    #[test]
    fn without_copy_bandwidth_the_table_says_what_is_missing() {
        let f = profile_file("");
        let p = GpuProfile::load(f.path(), "bfloat16").unwrap();
        let results: Vec<BatchResult> = [1, 2]
            .iter()
            .map(|&b| BatchResult {
                shape: shape(b),
                cpu_compute_ms: Some((1000.0 * b as f64, Impl::Fused)),
                cpu_offloaded_ms: None,
                gpu_total_ms: None,
                failure: None,
            })
            .collect();
        let a = answer(&results, Ok(&p)).unwrap();
        assert!(a.markdown.contains("host_to_device_gbps"), "{}", a.markdown);
        assert!(a.markdown.contains("missing: copy bandwidth"));
        assert!(a.markdown.contains("does not pay"));
        assert_eq!(a.break_even, None);
        assert!(a.svg.starts_with("<svg"));
    }

    #[test]
    fn with_copy_bandwidth_the_offloaded_total_is_estimated() {
        let f = profile_file(r#", "host_to_device_gbps": 50.0, "device_to_host_gbps": 50.0"#);
        let p = GpuProfile::load(f.path(), "bfloat16").unwrap();
        let copies = p.copies_ms(&shape(1)).unwrap();
        assert!((copies - 2.0 * 234_881_024.0 / 50e9 * 1e3).abs() < 1e-6);
    }

    #[test]
    fn break_even_is_the_first_batch_size_where_offloading_is_not_slower() {
        assert_eq!(
            break_even(&[(1, 5.0, 2.0), (2, 4.0, 4.0), (4, 1.0, 8.0)]),
            Some(2)
        );
        assert_eq!(break_even(&[(1, 5.0, 2.0)]), None);
    }

    #[test]
    fn a_profile_without_bandwidth_is_refused_naming_the_key() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), r#"{"theoretical_peak_gflops": 1.0}"#).unwrap();
        let err = GpuProfile::load(f.path(), "float32")
            .unwrap_err()
            .to_string();
        assert!(err.contains("theoretical_bandwidth_gbps"), "{err}");
    }
}
