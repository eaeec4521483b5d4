//! What a calibration starts from: its options (the flags), the device's peaks with the flags
//! applied, and the profile before any measurement (metadata and peaks). The work items are
//! [`super::items`], run as a suite ([`super::suite`]) into the profile ([`super::sink`]).

use super::clock::CpuClock;
use super::matmul::{self, MatmulDtype};
use super::peaks::{cpu_peaks, cuda_peaks, Peaks};
use super::profile::{Metadata, Profile, SCHEMA_VERSION};
use super::CalibrateError;
use crate::device::Device;

/// The command name a sharded calibration's manifest carries.
pub const COMMAND: &str = "calibrate";

/// What the seed's `--operations` chooses (and `host`, replay's own: the host's costs without
/// the profiler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Matmul,
    Memory,
    Host,
}

impl std::str::FromStr for Operation {
    type Err = CalibrateError;
    fn from_str(s: &str) -> Result<Self, CalibrateError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "matmul" => Ok(Operation::Matmul),
            "memory" => Ok(Operation::Memory),
            "host" => Ok(Operation::Host),
            _ => Err(CalibrateError::Usage(format!(
                "unknown operation '{s}' (expected matmul, memory or host)"
            ))),
        }
    }
}

/// Everything a calibration needs besides the device.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// The profile's `hardware_name` (default: the device's own name).
    pub hardware: Option<String>,
    pub peak_gflops: Option<f64>,
    pub peak_bandwidth_gbps: Option<f64>,
    pub quick: bool,
    pub operations: Vec<Operation>,
    pub dtypes: Vec<MatmulDtype>,
    /// Fusion families to measure (the seed's `--fusion-patterns`; none by default).
    pub fusion: Vec<super::fusion::FusionFamily>,
    /// Threads of replay's own CPU memory kernels (`--threads`; default every core), so a
    /// profile taken with N threads says what N threads reach, libtorch's and ours alike.
    pub threads: Option<usize>,
    pub output: std::path::PathBuf,
}

/// The device's peaks, with the flags applied.
pub fn peaks_of(device: &Device, options: &CalibrateOptions) -> Peaks {
    let peaks = match device {
        // With --threads N, the peak of the N cores the measurements may use.
        Device::Cpu(info) => {
            let mut cores = info.clone();
            if let Some(n) = options.threads {
                cores.logical_cores = n.min(info.logical_cores).max(1);
            }
            cpu_peaks(&cores, &CpuClock::detect(info))
        }
        Device::Cuda(dev) => cuda_peaks(&dev.info),
    };
    peaks.with_flags(options.peak_gflops, options.peak_bandwidth_gbps)
}

/// The profile before any measurement: metadata and peaks.
pub fn empty_profile(device: &Device, options: &CalibrateOptions, peaks: &Peaks) -> Profile {
    let cpu = crate::device::CpuInfo::detect();
    let trials = matmul::trials(options.quick);
    let hardware_name = options.hardware.clone().unwrap_or_else(|| match device {
        Device::Cpu(info) => info.model.clone(),
        Device::Cuda(dev) => dev.info.name.clone(),
    });
    let fp32 = peaks.fp32();
    let device_name = match device {
        Device::Cpu(info) => info.model.clone(),
        Device::Cuda(dev) => dev.info.name.clone(),
    };
    Profile {
        schema_version: SCHEMA_VERSION,
        source: "measured".into(),
        device_names: vec![device_name],
        metadata: Metadata {
            hardware_name,
            calibration_date: now_rfc3339(),
            calibration_tool_version: format!("replay {}", env!("CARGO_PKG_VERSION")),
            device: device.describe(),
            cpu_model: cpu.model.clone(),
            cpu_count: cpu.logical_cores,
            total_memory_gb: total_memory_gb(),
            libtorch_version: env!("REPLAY_LIBTORCH_VERSION").to_string(),
            threads: tch::get_num_threads().max(0) as usize,
            num_warmup_runs: trials.warmup,
            num_measurement_runs: trials.trials,
            quick: options.quick,
        },
        theoretical_peak_gflops: fp32.value,
        theoretical_peak_source: fp32.source,
        theoretical_peak_gflops_by_dtype: peaks
            .gflops
            .iter()
            .map(|(dtype, p)| (dtype.clone(), p.value))
            .collect(),
        theoretical_bandwidth_gbps: peaks.bandwidth_gbps.value,
        theoretical_bandwidth_source: peaks.bandwidth_gbps.source.clone(),
        best_measured_gflops: None,
        avg_measured_gflops: None,
        worst_measured_gflops: None,
        measured_bandwidth_gbps: None,
        bandwidth_efficiency: None,
        best_efficiency: None,
        avg_efficiency: None,
        worst_efficiency: None,
        operation_profiles: Default::default(),
        fusion_profiles: Default::default(),
        failures: Default::default(),
        host: None,
    }
}

/// Now as RFC 3339 in UTC, to the second.
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day): Howard Hinnant's civil-from-days.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `MemTotal` in GB.
fn total_memory_gb() -> Option<f64> {
    replay_core::memory_size::total_bytes().map(|b| b as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_417), (2025, 11, 25));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z'));
    }

    #[test]
    fn operations_parse() {
        assert_eq!(" Matmul".parse::<Operation>().unwrap(), Operation::Matmul);
        assert_eq!("host".parse::<Operation>().unwrap(), Operation::Host);
        assert!("flops".parse::<Operation>().unwrap_err().is_usage_error());
    }
}
