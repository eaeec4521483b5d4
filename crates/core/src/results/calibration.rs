//! A calibration profile (`replay calibrate`'s output) as plain data: the seed's JSON (branes-ai/graphs `calibrator.py`, e.g. its
//! `profiles/i7_12700k_with_fusion.json`) with its top-level fields, its `operation_profiles`
//! and `fusion_profiles` entries, plus what it lacked: a `schema_version`, the device, libtorch
//! and thread count, how each peak was found, and every size of a fusion pattern (the seed kept
//! only the last size of each pattern: here `fusion_profiles[pattern]` is a list).
//!
//! A quantity that cannot be known is `null` with the reason beside it (`*_source`), never an
//! invented number: an efficiency against an unknown peak is `null` too.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Bumped when a field changes meaning or goes away (adding one does not).
pub const SCHEMA_VERSION: u32 = 1;

/// The latency of one measured thing, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean_latency_ms: f64,
    pub std_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    /// Not in the seed: the median and quartiles, which a few slow trials do not move.
    pub median_latency_ms: f64,
    pub q1_latency_ms: f64,
    pub q3_latency_ms: f64,
    pub num_trials: usize,
}

impl Latency {
    /// From per-call samples in microseconds.
    pub fn from_samples_us(samples_us: &[f64]) -> Option<Latency> {
        let sorted = crate::measure::stats::sorted(samples_us);
        let ms = |us: f64| us / 1e3;
        Some(Latency {
            mean_latency_ms: ms(crate::measure::stats::mean(&sorted)?),
            std_latency_ms: ms(crate::measure::stats::std_dev(&sorted).unwrap_or(0.0)),
            min_latency_ms: ms(*sorted.first()?),
            max_latency_ms: ms(*sorted.last()?),
            median_latency_ms: ms(crate::measure::stats::median_sorted(&sorted)?),
            q1_latency_ms: ms(crate::measure::stats::percentile_sorted(&sorted, 0.25)?),
            q3_latency_ms: ms(crate::measure::stats::percentile_sorted(&sorted, 0.75)?),
            num_trials: sorted.len(),
        })
    }

    /// The time the seed's formulas divide by (it used the mean), in seconds.
    pub fn seconds(&self) -> f64 {
        self.mean_latency_ms / 1e3
    }
}

/// Where a peak came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakSource {
    /// `flag` (given by the user), `computed` (from the device, with the formula in `how`),
    /// `datasheet` (a shipped profile of hardware we do not have) or `unknown`.
    pub kind: String,
    /// The formula and its inputs, or why the peak cannot be known.
    pub how: String,
}

/// Who ran the calibration, where, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub hardware_name: String,
    /// RFC 3339, UTC.
    pub calibration_date: String,
    pub calibration_tool_version: String,
    /// `cpu (AMD EPYC, 2 cores)` or `cuda:0 (NVIDIA H100, sm_90)`.
    pub device: String,
    pub cpu_model: String,
    pub cpu_count: usize,
    pub total_memory_gb: Option<f64>,
    pub libtorch_version: String,
    /// libtorch's intra-op threads during the measurements.
    pub threads: usize,
    pub num_warmup_runs: u64,
    pub num_measurement_runs: usize,
    pub quick: bool,
}

/// One measured operation (a matmul size and dtype, a memory copy size and method), in the
/// seed's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationProfile {
    /// `matmul`, `memory_copy` or `memory_triad`.
    pub operation_type: String,
    /// 0 for memory operations, as the seed writes.
    pub measured_gflops: f64,
    /// Against the peak that bounds this operation (GFLOPS for matmul, bandwidth for memory);
    /// `null` when that peak is unknown.
    pub efficiency: Option<f64>,
    pub achieved_bandwidth_gbps: f64,
    pub memory_bound: bool,
    pub compute_bound: bool,
    /// FLOPs per byte moved (N/6 for a square fp32 matmul, 0 for a copy).
    pub arithmetic_intensity: f64,
    pub batch_size: u64,
    pub input_shape: Vec<u64>,
    pub output_shape: Vec<u64>,
    #[serde(flatten)]
    pub latency: Latency,
    /// `matrix_size`, `dtype`, `size_mb`, `method` (`libtorch` or replay's own kernel), the
    /// bytes counted, and so on.
    pub extra_params: BTreeMap<String, serde_json::Value>,
}

/// One fusion pattern at one size, in the seed's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusionProfile {
    /// `Linear_Bias`, `Conv2d_BN_ReLU`, `FullAttention_SDPA`, ...
    pub fusion_pattern: String,
    pub operators: Vec<String>,
    pub num_operators: usize,
    pub unfused_latency_ms: f64,
    pub unfused_gflops: f64,
    /// Bytes the unfused ops move: the seed's key (its result dict's `unfused_bytes`).
    #[serde(default)]
    pub unfused_bytes: u64,
    /// The same count under the name replay's profiles used before they kept the seed's
    /// (written beside it, so readers of either name find it; [`Profile::read`] fills
    /// whichever of the two an older or the seed's own file lacks).
    #[serde(default)]
    pub unfused_memory_bytes: u64,
    pub fused_latency_ms: f64,
    pub fused_gflops: f64,
    /// Bytes the fused op moves: the seed's `fused_bytes`.
    #[serde(default)]
    pub fused_bytes: u64,
    /// The same count under replay's earlier name.
    #[serde(default)]
    pub fused_memory_bytes: u64,
    /// unfused / fused latency.
    pub speedup_factor: f64,
    /// 1 − fused bytes / unfused bytes.
    pub memory_reduction: f64,
    /// (fused − unfused GFLOPS) / unfused GFLOPS.
    pub gflops_improvement: f64,
    pub input_shape: Vec<u64>,
    pub extra_params: BTreeMap<String, serde_json::Value>,
    pub num_trials: usize,
    pub flops: u64,
    /// [`verdict`] of the speedup.
    pub verdict: String,
    /// Not in the seed: both sides' full latency (median and quartiles too).
    pub unfused_latency: Latency,
    pub fused_latency: Latency,
}

impl FusionProfile {
    /// Fills whichever name of each byte count a file lacks from the other: the seed's
    /// profiles have only `unfused_bytes`/`fused_bytes`, replay's older ones only
    /// `unfused_memory_bytes`/`fused_memory_bytes`.
    pub fn fill_byte_names(&mut self) {
        fn fill(a: &mut u64, b: &mut u64) {
            if *a == 0 {
                *a = *b;
            } else if *b == 0 {
                *b = *a;
            }
        }
        fill(&mut self.unfused_bytes, &mut self.unfused_memory_bytes);
        fill(&mut self.fused_bytes, &mut self.fused_memory_bytes);
    }
}

/// The seed's verdict on a fusion speedup: ≥ 1.5 strong, ≥ 1.1 moderate, ≥ 0.95 minimal, else
/// slower.
pub fn verdict(speedup: f64) -> &'static str {
    if speedup >= 1.5 {
        "strong"
    } else if speedup >= 1.1 {
        "moderate"
    } else if speedup >= 0.95 {
        "minimal"
    } else {
        "slower"
    }
}

/// A whole calibration profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub schema_version: u32,
    /// `measured` (by `replay calibrate`) or `datasheet` (theoretical peaks from public
    /// specifications, for hardware we do not have).
    #[serde(default = "measured")]
    pub source: String,
    /// Device names this profile stands for, as profiler traces write them (`deviceProperties`
    /// `name`), beside `metadata.hardware_name`: how a trace finds its profile.
    #[serde(default)]
    pub device_names: Vec<String>,
    pub metadata: Metadata,
    /// fp32 GFLOPS peak of the device (or the `--peak-gflops` flag); `null` when unknown.
    pub theoretical_peak_gflops: Option<f64>,
    pub theoretical_peak_source: PeakSource,
    /// The compute peak of every dtype this device has one for (`null`: unknown).
    pub theoretical_peak_gflops_by_dtype: BTreeMap<String, Option<f64>>,
    /// Memory bandwidth peak in GB/s; `null` when unknown (a VM hides its memory channels).
    pub theoretical_bandwidth_gbps: Option<f64>,
    pub theoretical_bandwidth_source: PeakSource,
    /// Over the fp32 matmul sizes (the seed's "best/avg/worst"); `null` without matmuls.
    pub best_measured_gflops: Option<f64>,
    pub avg_measured_gflops: Option<f64>,
    pub worst_measured_gflops: Option<f64>,
    /// The best copy bandwidth of any method and size; `null` without memory measurements.
    pub measured_bandwidth_gbps: Option<f64>,
    pub bandwidth_efficiency: Option<f64>,
    pub best_efficiency: Option<f64>,
    pub avg_efficiency: Option<f64>,
    pub worst_efficiency: Option<f64>,
    pub operation_profiles: BTreeMap<String, OperationProfile>,
    pub fusion_profiles: BTreeMap<String, Vec<FusionProfile>>,
    /// Measurements that failed, by what they were (`matmul bfloat16 N=4096`): one failure
    /// never ends a calibration.
    pub failures: BTreeMap<String, String>,
    /// The host's costs without the profiler (`replay calibrate` measures them; absent in
    /// older profiles and in datasheets): what the host-aware prediction needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<super::host_profile::HostProfile>,
}

fn measured() -> String {
    "measured".into()
}

impl Profile {
    /// Reads a profile; a missing or malformed file is the user's to fix (exit 2).
    pub fn read(path: &std::path::Path) -> crate::Result<Profile> {
        let bytes = std::fs::read(path).map_err(|e| crate::Error::BadInput {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        Self::from_bytes(&bytes, path)
    }

    /// [`Profile::read`] on a file's bytes; `path` names the file in errors.
    pub fn from_bytes(bytes: &[u8], path: &std::path::Path) -> crate::Result<Profile> {
        let mut profile: Profile =
            serde_json::from_slice(bytes).map_err(|e| crate::Error::BadInput {
                path: path.to_path_buf(),
                message: format!("not a calibration profile of `replay calibrate`: {e}"),
            })?;
        profile
            .fusion_profiles
            .values_mut()
            .flatten()
            .for_each(FusionProfile::fill_byte_names);
        if profile.schema_version > SCHEMA_VERSION {
            return Err(crate::Error::BadInput {
                path: path.to_path_buf(),
                message: format!(
                    "profile schema {} is newer than this replay's {SCHEMA_VERSION}",
                    profile.schema_version
                ),
            });
        }
        Ok(profile)
    }

    /// The host section of `path`: a calibration profile's `host`, or a host section alone
    /// (the `host.json` that `replay compare` writes). A profile without one is the user's to
    /// fix (exit 2, naming the file).
    pub fn read_host_section(
        path: &std::path::Path,
    ) -> crate::Result<super::host_profile::HostProfile> {
        let bytes = std::fs::read(path).map_err(|e| crate::Error::BadInput {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        if let Ok(section) = serde_json::from_slice::<super::host_profile::HostProfile>(&bytes) {
            if !section.source.is_empty() || !section.machine.device.is_empty() {
                return Ok(section);
            }
        }
        Self::from_bytes(&bytes, path)?
            .host
            .ok_or_else(|| crate::Error::BadInput {
                path: path.to_path_buf(),
                message: "it has no host section: `replay calibrate --host-only` measures one \
                          (`replay compare` writes the one it measures as host.json)"
                    .into(),
            })
    }

    /// Whether this profile stands for the device a trace names.
    pub fn stands_for(&self, device_name: &str) -> bool {
        let wanted = device_name.trim().to_ascii_lowercase();
        std::iter::once(&self.metadata.hardware_name)
            .chain(&self.device_names)
            .any(|n| n.trim().to_ascii_lowercase() == wanted)
    }
    /// Recomputes the summary fields from the operation profiles and the peaks, as the seed
    /// does after its measurements: best/avg/worst over the fp32 matmuls, the best bandwidth.
    pub fn summarise(&mut self) {
        let fp32: Vec<f64> = self
            .operation_profiles
            .values()
            .filter(|p| {
                p.operation_type == "matmul"
                    && p.extra_params.get("dtype").and_then(|d| d.as_str()) == Some("float32")
            })
            .map(|p| p.measured_gflops)
            .collect();
        let best = fp32.iter().copied().reduce(f64::max);
        let worst = fp32.iter().copied().reduce(f64::min);
        let avg = (!fp32.is_empty()).then(|| fp32.iter().sum::<f64>() / fp32.len() as f64);
        let per_peak = |x: Option<f64>, peak: Option<f64>| match (x, peak) {
            (Some(x), Some(p)) if p > 0.0 => Some(x / p),
            _ => None,
        };
        self.best_measured_gflops = best;
        self.avg_measured_gflops = avg;
        self.worst_measured_gflops = worst;
        self.best_efficiency = per_peak(best, self.theoretical_peak_gflops);
        self.avg_efficiency = per_peak(avg, self.theoretical_peak_gflops);
        self.worst_efficiency = per_peak(worst, self.theoretical_peak_gflops);
        self.measured_bandwidth_gbps = self
            .operation_profiles
            .values()
            .filter(|p| p.memory_bound)
            .map(|p| p.achieved_bandwidth_gbps)
            .reduce(f64::max);
        self.bandwidth_efficiency = per_peak(
            self.measured_bandwidth_gbps,
            self.theoretical_bandwidth_gbps,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each fusion entry of `value` with only one name of each byte count: `seed` (the seed's
    /// `unfused_bytes`/`fused_bytes`) or `old` (replay's earlier `*_memory_bytes`).
    fn only_byte_names(value: &mut serde_json::Value, keep: &str) {
        for sizes in value["fusion_profiles"]
            .as_object_mut()
            .unwrap()
            .values_mut()
        {
            for entry in sizes.as_array_mut().unwrap() {
                let entry = entry.as_object_mut().unwrap();
                for side in ["unfused", "fused"] {
                    let (seed, old) = (format!("{side}_bytes"), format!("{side}_memory_bytes"));
                    let count = entry.remove(&seed).or_else(|| entry.remove(&old)).unwrap();
                    entry.remove(&old);
                    entry.insert(if keep == "seed" { seed } else { old }, count);
                }
            }
        }
    }

    #[test]
    fn fusion_bytes_read_under_the_seeds_keys_and_replays_earlier_ones() {
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../profiles/amd_epyc_2cpu.json");
        let original: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&shipped).unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for keep in ["seed", "old"] {
            let mut value = original.clone();
            only_byte_names(&mut value, keep);
            let path = dir.path().join(format!("{keep}.json"));
            std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
            let profile = Profile::read(&path).unwrap();
            let entries: Vec<&FusionProfile> = profile.fusion_profiles.values().flatten().collect();
            assert!(!entries.is_empty());
            for e in entries {
                assert!(
                    e.unfused_bytes > e.fused_bytes && e.fused_bytes > 0,
                    "{keep}: {e:?}"
                );
                assert_eq!(e.unfused_bytes, e.unfused_memory_bytes, "{keep}");
                assert_eq!(e.fused_bytes, e.fused_memory_bytes, "{keep}");
            }
            // Written back, both names are there: the seed's scripts index `unfused_bytes`.
            let written = serde_json::to_value(&profile).unwrap();
            let first = written["fusion_profiles"]["Linear_Bias"][0].clone();
            for key in [
                "unfused_bytes",
                "fused_bytes",
                "unfused_memory_bytes",
                "fused_memory_bytes",
            ] {
                assert!(first[key].as_u64().unwrap() > 0, "{keep}: {key} in {first}");
            }
        }
    }

    #[test]
    fn verdicts_follow_the_seed_thresholds() {
        assert_eq!(verdict(1.5), "strong");
        assert_eq!(verdict(1.49), "moderate");
        assert_eq!(verdict(1.1), "moderate");
        assert_eq!(verdict(1.0), "minimal");
        assert_eq!(verdict(0.95), "minimal");
        assert_eq!(verdict(0.71), "slower");
    }
}
