//! One calibration: the work list (matmul sizes × dtypes, memory sizes, fusion families, the
//! host's costs) run in order on one device, each item's results merged into the profile, the profile's summary
//! recomputed and the JSON rewritten after every item, so a stopped run keeps what it
//! measured. One failed measurement is a `failures` entry and never ends the run.

use std::path::{Path, PathBuf};

use super::clock::CpuClock;
use super::host::{self, HostProfile};
use super::matmul::{self, MatmulDtype};
use super::peaks::{cpu_peaks, cuda_peaks, Peaks};
use super::profile::{FusionProfile, Metadata, OperationProfile, Profile, SCHEMA_VERSION};
use super::CalibrateError;
use crate::device::Device;
use crate::pipeline::{CaseReporter, Observer};
use replay_core::shard::{Shard, WorkList};

/// The command name a sharded calibration's manifest carries.
pub const COMMAND: &str = "calibrate";

/// The work list a sharded calibration splits: every item's label, in order.
pub fn work_list(device: &Device, options: &CalibrateOptions) -> WorkList {
    let peaks = peaks_of(device, options);
    WorkList::new(
        COMMAND,
        work_items(device, options, &peaks)
            .into_iter()
            .map(|item| item.label)
            .collect(),
    )
}

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
    pub output: PathBuf,
    /// `--shard I/N`: measure only this shard's items of the work list.
    pub shard: Shard,
}

/// One result of a work item.
pub enum Measured {
    Operation(OperationProfile),
    Fusion(FusionProfile),
    Host(HostProfile),
}

/// One item of the work list: its label for the progress bar and what it measures.
pub struct WorkItem<'a> {
    pub label: String,
    #[allow(clippy::type_complexity)]
    pub run: Box<dyn FnOnce() -> Vec<(String, Result<Measured, CalibrateError>)> + 'a>,
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

/// The work list, in the seed's order: matmul, memory, then the fusion families; then the
/// host's costs.
pub fn work_items<'a>(
    device: &'a Device,
    options: &'a CalibrateOptions,
    peaks: &'a Peaks,
) -> Vec<WorkItem<'a>> {
    let mut items = Vec::new();
    let torch_device = device.torch_device();
    if options.operations.contains(&Operation::Matmul) {
        let trials = matmul::trials(options.quick);
        for &dtype in &options.dtypes {
            let peak = peaks
                .gflops
                .get(dtype.name())
                .cloned()
                .unwrap_or_else(|| peaks.fp32());
            for n in matmul::sizes(options.quick) {
                let peak = peak.clone();
                items.push(WorkItem {
                    label: format!("matmul {} N={n}", dtype.name()),
                    run: Box::new(move || {
                        let result = matmul::measure(torch_device, n, dtype, trials, &peak);
                        vec![(matmul::key(n, dtype), result.map(Measured::Operation))]
                    }),
                });
            }
        }
    }
    if options.operations.contains(&Operation::Memory) {
        let trials = matmul::trials(options.quick);
        for size_mb in memory_sizes_mb(options.quick) {
            items.push(WorkItem {
                label: format!("memory {size_mb} MB"),
                run: Box::new(move || {
                    let threads = match device {
                        Device::Cpu(info) => options.threads.unwrap_or(info.logical_cores).max(1),
                        Device::Cuda(_) => 1,
                    };
                    super::memory::measure_memory_with(
                        device,
                        &[size_mb],
                        trials,
                        peaks.bandwidth_gbps.value,
                        super::memory::cpu_kernels::CpuKernelConfig::with_threads(threads),
                    )
                    .into_iter()
                    .map(|(key, r)| (key, r.map(Measured::Operation)))
                    .collect()
                }),
            });
        }
    }
    for &family in &options.fusion {
        items.push(WorkItem {
            label: format!("fusion {}", family.name()),
            run: Box::new(move || {
                super::fusion::measure_fusion(torch_device, &[family], options.quick)
                    .into_iter()
                    .map(|(key, r)| (key, r.map(Measured::Fusion)))
                    .collect()
            }),
        });
    }
    if options.operations.contains(&Operation::Host) {
        items.push(WorkItem {
            label: host::LABEL.into(),
            run: Box::new(move || host_results(device)),
        });
    }
    items
}

/// The host item's results: the section under `host`, and each figure that failed under
/// `host <field>`.
fn host_results(device: &Device) -> Vec<(String, Result<Measured, CalibrateError>)> {
    match host::measure_host(device, "replay calibrate", &mut |_| {}) {
        Ok(measured) => std::iter::once((
            host::LABEL.to_string(),
            Ok(Measured::Host(measured.profile)),
        ))
        .chain(measured.failures.into_iter().map(|(field, why)| {
            (
                format!("{} {field}", host::LABEL),
                Err(CalibrateError::Measure(why)),
            )
        }))
        .collect(),
        Err(e) => vec![(host::LABEL.to_string(), Err(e))],
    }
}

/// The seed's copy sizes: quick [128, 256] MB, full [64, 128, 256, 512] MB.
pub fn memory_sizes_mb(quick: bool) -> Vec<u64> {
    if quick {
        vec![128, 256]
    } else {
        vec![64, 128, 256, 512]
    }
}

/// Runs the calibration and returns the profile, written to `options.output` after every item.
pub fn run(
    device: &Device,
    options: &CalibrateOptions,
    resume: bool,
    observer: &mut dyn Observer,
) -> Result<Profile, CalibrateError> {
    let peaks = peaks_of(device, options);
    let mut profile = empty_profile(device, options, &peaks);
    // Fail on an unwritable output before spending minutes measuring.
    write_profile(&options.output, &profile)?;
    let items: Vec<WorkItem<'_>> = work_items(device, options, &peaks)
        .into_iter()
        .enumerate()
        .filter(|(position, _)| options.shard.owns(*position))
        .map(|(_, item)| item)
        .collect();
    let header = format!(
        "{} measurements on {}",
        items.len(),
        profile.metadata.device
    );
    let labels = items.iter().map(|item| item.label.clone()).collect();
    // Each finished item's results, one line each, beside the profile: what --resume
    // takes back instead of measuring them again.
    let journal_path = journal_path(&options.output);
    let file_error = |e: replay_core::Error| CalibrateError::File {
        path: journal_path.clone(),
        problem: e.to_string(),
    };
    let (mut journal, mut found) =
        replay_core::shard::journal::Journal::open(&journal_path, resume).map_err(file_error)?;
    found.reverse();
    let total = items.len();
    let mut reporter = CaseReporter::start(observer, COMMAND, &header, labels);
    for (index, item) in items.into_iter().enumerate() {
        let mut failed = Vec::new();
        let results: ItemResults = match found.pop() {
            Some(entry) => from_journal(entry, &item.label, &journal_path)?,
            None => {
                replay_core::shard::stop::check(index, total, "measurements")
                    .map_err(|e| CalibrateError::Usage(e.to_string()))?;
                let results: Vec<_> = (item.run)()
                    .into_iter()
                    .map(|(key, r)| (key, r.map_err(|e| e.to_string())))
                    .collect();
                journal
                    .append(&JournalEntry::of(&item.label, &results))
                    .map_err(file_error)?;
                results
            }
        };
        for (key, result) in results {
            match result {
                Ok(Measured::Operation(p)) => {
                    profile.failures.remove(&key);
                    profile.operation_profiles.insert(key, p);
                }
                Ok(Measured::Fusion(f)) => {
                    profile
                        .fusion_profiles
                        .entry(f.fusion_pattern.clone())
                        .or_default()
                        .push(f);
                }
                Ok(Measured::Host(h)) => {
                    profile.failures.remove(&key);
                    profile.host = Some(h);
                }
                Err(e) => {
                    failed.push((key.clone(), e.clone()));
                    profile.failures.insert(key, e);
                }
            }
        }
        profile.summarise();
        write_profile(&options.output, &profile)?;
        let verdict = if failed.is_empty() {
            "ok".to_string()
        } else {
            format!("{} failed", failed.len())
        };
        reporter.finished(index, &verdict);
        for (key, why) in &failed {
            reporter.observer().item(&format!("    {key}: {why}"));
        }
    }
    Ok(profile)
}

/// The journal of a calibration writing `output`: `output` with `.journal.jsonl` added.
pub fn journal_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_os_string();
    name.push(".journal.jsonl");
    PathBuf::from(name)
}

/// What one work item measured: each key's result, or why it failed.
type ItemResults = Vec<(String, Result<Measured, String>)>;

/// One finished item as the journal keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct JournalEntry {
    item: String,
    results: Vec<(String, Journaled)>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Journaled {
    Operation(OperationProfile),
    Fusion(FusionProfile),
    Host(HostProfile),
    Failed(String),
}

impl JournalEntry {
    fn of(label: &str, results: &[(String, Result<Measured, String>)]) -> JournalEntry {
        JournalEntry {
            item: label.into(),
            results: results
                .iter()
                .map(|(key, r)| {
                    let kept = match r {
                        Ok(Measured::Operation(p)) => Journaled::Operation(p.clone()),
                        Ok(Measured::Fusion(f)) => Journaled::Fusion(f.clone()),
                        Ok(Measured::Host(h)) => Journaled::Host(h.clone()),
                        Err(e) => Journaled::Failed(e.clone()),
                    };
                    (key.clone(), kept)
                })
                .collect(),
        }
    }
}

/// The results of `label` as the journal at `path` kept them; an entry of another item
/// means the journal is not this run's.
fn from_journal(
    entry: serde_json::Value,
    label: &str,
    path: &Path,
) -> Result<ItemResults, CalibrateError> {
    let bad = |problem: String| CalibrateError::File {
        path: path.to_path_buf(),
        problem,
    };
    let entry: JournalEntry = serde_json::from_value(entry)
        .map_err(|e| bad(format!("--resume: not a calibration journal entry: {e}")))?;
    if entry.item != label {
        return Err(bad(format!(
            "--resume: the journal's next item is '{}', this run's is '{label}'",
            entry.item
        )));
    }
    Ok(entry
        .results
        .into_iter()
        .map(|(key, kept)| {
            let result = match kept {
                Journaled::Operation(p) => Ok(Measured::Operation(p)),
                Journaled::Fusion(f) => Ok(Measured::Fusion(f)),
                Journaled::Host(h) => Ok(Measured::Host(h)),
                Journaled::Failed(e) => Err(e),
            };
            (key, result)
        })
        .collect())
}

/// Writes the profile atomically (a reader never sees half a file).
pub fn write_profile(path: &Path, profile: &Profile) -> Result<(), CalibrateError> {
    let file_error = |problem: String| CalibrateError::File {
        path: path.to_path_buf(),
        problem,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| file_error(format!("cannot create its folder: {e}")))?;
    }
    let bytes = crate::export::json::to_bytes(profile);
    crate::export::write_atomic(path, &bytes).map_err(|e| file_error(e.to_string()))
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

/// `MemTotal` of `/proc/meminfo` in GB.
fn total_memory_gb() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024.0 / 1e9)
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
