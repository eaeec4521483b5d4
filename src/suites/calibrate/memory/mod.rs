//! `replay calibrate`'s memory bandwidth, measured two ways and reported both:
//!
//! - through libtorch ([`torch_copy`]): `dst.copy_(src)`, what a model sees;
//! - with replay's own STREAM copy and triad (`cuda/stream_bandwidth.cu` and its CPU twin in
//!   [`crate::kernels::stream_bandwidth`]: [`cpu`](crate::kernels::stream_bandwidth::cpu) on
//!   the CPU, all cores, streaming stores; [`cuda`](crate::kernels::stream_bandwidth::cuda) on
//!   a GPU, timed on replay's stream through [`cuda_target`]), which is how STREAM-like tools
//!   reach the machine's real limit.
//!
//! Every size gets three operation profiles, keyed `memory_copy_libtorch_size_mb=128`,
//! `memory_copy_replay_size_mb=128` and `memory_triad_replay_size_mb=128`, in the seed's
//! fields: bandwidth = bytes counted ([`StreamKernel::bytes`], STREAM's
//! convention) over the mean latency, as the seed divides. One failed size or method never
//! stops the others.

pub mod cuda_target;
pub mod torch_copy;

use std::collections::BTreeMap;

use serde_json::json;

use self::cuda_target::CudaStreamBench;
use super::profile::OperationProfile;
use super::timing::{time_trials, Latency, Trials};
use super::CalibrateError;
use crate::device::Device;
use crate::kernels::stream_bandwidth::cpu::{CpuKernelConfig, CpuStream};
use crate::kernels::stream_bandwidth::{elements_in_mb, StreamKernel};
use crate::kernels::KernelCache;
use crate::measure::cuda_timing::{timer_name, LIBTORCH_STREAM, REPLAY_STREAM};
use crate::measure::{MeasureError, Placement, Target};

/// How a measurement moved the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Libtorch,
    Replay,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Libtorch => "libtorch",
            Method::Replay => "replay",
        }
    }
}

/// `memory_copy_libtorch_size_mb=128`.
pub fn profile_key(kernel: StreamKernel, method: Method, size_mb: u64) -> String {
    format!(
        "{}_{}_size_mb={size_mb}",
        kernel.operation_type(),
        method.name()
    )
}

/// What a measurement was, beside its latency.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub kernel: StreamKernel,
    pub method: Method,
    pub size_mb: u64,
    /// Floats per array.
    pub elements: usize,
    /// CPU threads (libtorch's intra-op threads, or replay's pool), or the GPU threads
    /// launched; `None` when unknown (libtorch on a GPU).
    pub threads: Option<u64>,
    pub streaming_stores: bool,
    /// Anything else worth keeping (`isa`, `blocks`, `timer`).
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// GB/s of `bytes` moved in `seconds` (decimal GB, as the seed and STREAM write).
pub fn gbps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

/// The seed's operation profile of one measured run.
pub fn operation_profile(run: &Run, latency: Latency, peak_gbps: Option<f64>) -> OperationProfile {
    let bytes = run.kernel.bytes(run.elements);
    let bandwidth = gbps(bytes, latency.seconds());
    let at = |ms: f64| gbps(bytes, ms / 1e3);
    let mut extra: BTreeMap<String, serde_json::Value> = run.extra.clone();
    extra.insert("size_mb".into(), json!(run.size_mb));
    extra.insert("operation".into(), json!(run.kernel.name()));
    extra.insert("method".into(), json!(run.method.name()));
    extra.insert("bytes_per_call".into(), json!(bytes));
    extra.insert("threads".into(), json!(run.threads));
    extra.insert("streaming_stores".into(), json!(run.streaming_stores));
    // Not in the seed: the bandwidth of the fastest and of the median trial (STREAM reports
    // the fastest; the median is what a few slow trials do not move).
    extra.insert(
        "best_bandwidth_gbps".into(),
        json!(at(latency.min_latency_ms)),
    );
    extra.insert(
        "median_bandwidth_gbps".into(),
        json!(at(latency.median_latency_ms)),
    );
    OperationProfile {
        operation_type: run.kernel.operation_type().into(),
        measured_gflops: 0.0,
        efficiency: peak_gbps.filter(|p| *p > 0.0).map(|p| bandwidth / p),
        achieved_bandwidth_gbps: bandwidth,
        memory_bound: true,
        compute_bound: false,
        arithmetic_intensity: 0.0,
        batch_size: 1,
        input_shape: vec![run.elements as u64],
        output_shape: vec![run.elements as u64],
        latency,
        extra_params: extra,
    }
}

/// Calls of one of replay's CPU kernels, on the host: the measurement core times them with the
/// monotonic clock.
struct CpuKernelTarget<'a> {
    stream: &'a mut CpuStream,
    kernel: StreamKernel,
}

impl Target for CpuKernelTarget<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.stream.run(self.kernel);
        }
        Ok(())
    }
}

/// Where replay's own kernels run: the CPU (with these threads and stores) or the GPU.
enum OwnKernels<'d> {
    Cpu(CpuKernelConfig),
    Cuda(&'d crate::device::CudaDevice, KernelCache),
}

/// Per size in `sizes_mb`: the libtorch copy, replay's copy and replay's triad on `device`,
/// each timed with `trials`, as (key, profile or why it failed). Replay's CPU kernels use
/// every logical core, pinned, and the widest streaming store the CPU has.
pub fn measure_memory(
    device: &Device,
    sizes_mb: &[u64],
    trials: Trials,
    peak_bandwidth_gbps: Option<f64>,
) -> Vec<(String, Result<OperationProfile, CalibrateError>)> {
    let threads = match device {
        Device::Cpu(info) => info.logical_cores.max(1),
        Device::Cuda(_) => 1,
    };
    measure_memory_with(
        device,
        sizes_mb,
        trials,
        peak_bandwidth_gbps,
        CpuKernelConfig::with_threads(threads),
    )
}

/// [`measure_memory`] with replay's CPU kernels run as `cpu` says (ignored on a GPU), for
/// exploring what reaches the limit.
pub fn measure_memory_with(
    device: &Device,
    sizes_mb: &[u64],
    trials: Trials,
    peak_bandwidth_gbps: Option<f64>,
    cpu: CpuKernelConfig,
) -> Vec<(String, Result<OperationProfile, CalibrateError>)> {
    let own = match device {
        Device::Cpu(_) => OwnKernels::Cpu(cpu),
        Device::Cuda(dev) => OwnKernels::Cuda(dev, KernelCache::default()),
    };
    let mut out = Vec::new();
    for &size_mb in sizes_mb {
        let elements = elements_in_mb(size_mb).filter(|&n| n > 0).ok_or_else(|| {
            CalibrateError::Usage(format!("memory size {size_mb} MB cannot be measured"))
        });
        let copy_key = profile_key(StreamKernel::Copy, Method::Libtorch, size_mb);
        let libtorch = elements.as_ref().map_err(clone_error).and_then(|&n| {
            let latency = torch_copy::time_torch_copy(device, n, trials)?;
            let mut extra = BTreeMap::new();
            extra.insert("timer".into(), json!(torch_timer(device)));
            let run = Run {
                kernel: StreamKernel::Copy,
                method: Method::Libtorch,
                size_mb,
                elements: n,
                threads: matches!(device, Device::Cpu(_))
                    .then(|| tch::get_num_threads().max(1) as u64),
                // libtorch's copy kernel stores through the caches (see torch_copy).
                streaming_stores: false,
                extra,
            };
            Ok(operation_profile(&run, latency, peak_bandwidth_gbps))
        });
        out.push((copy_key, libtorch));
        let own_results = match &elements {
            Ok(n) => measure_own(&own, size_mb, *n, trials, peak_bandwidth_gbps),
            Err(e) => StreamKernel::ALL
                .iter()
                .map(|&k| (k, Err(clone_error(e))))
                .collect(),
        };
        for (kernel, result) in own_results {
            out.push((profile_key(kernel, Method::Replay, size_mb), result));
        }
    }
    out
}

/// What times libtorch's copies (`torch_copy`, a `TorchWork` made with the blocking kernel).
fn torch_timer(device: &Device) -> String {
    match device {
        Device::Cpu(_) => "monotonic clock".into(),
        Device::Cuda(_) => timer_name(LIBTORCH_STREAM, true),
    }
}

/// The usage error of a size, once per method.
fn clone_error(e: &CalibrateError) -> CalibrateError {
    match e {
        CalibrateError::Usage(m) => CalibrateError::Usage(m.clone()),
        other => CalibrateError::Device(other.to_string()),
    }
}

/// replay's copy and triad on `n` floats per array (allocated once for both).
fn measure_own(
    own: &OwnKernels,
    size_mb: u64,
    n: usize,
    trials: Trials,
    peak: Option<f64>,
) -> Vec<(StreamKernel, Result<OperationProfile, CalibrateError>)> {
    let base = |kernel| Run {
        kernel,
        method: Method::Replay,
        size_mb,
        elements: n,
        threads: None,
        streaming_stores: false,
        extra: BTreeMap::new(),
    };
    match own {
        OwnKernels::Cpu(config) => {
            let mut stream = match CpuStream::new(n, *config) {
                Ok(s) => s,
                Err(e) => return failed_both(e.into()),
            };
            StreamKernel::ALL
                .iter()
                .map(|&kernel| {
                    let mut run = base(kernel);
                    run.threads = Some(stream.threads() as u64);
                    run.streaming_stores = stream.isa().streaming();
                    run.extra.insert("isa".into(), json!(stream.isa().name()));
                    run.extra.insert("pinned".into(), json!(stream.pinned()));
                    run.extra.insert("timer".into(), json!("monotonic clock"));
                    let mut target = CpuKernelTarget {
                        stream: &mut stream,
                        kernel,
                    };
                    let result = time_trials(&mut target, trials)
                        .map(|latency| operation_profile(&run, latency, peak));
                    (kernel, result)
                })
                .collect()
        }
        OwnKernels::Cuda(device, kernels) => {
            let mut bench = match CudaStreamBench::new(device, kernels, n) {
                Ok(b) => b,
                Err(e) => return failed_both(e),
            };
            StreamKernel::ALL
                .iter()
                .map(|&kernel| {
                    let geometry = bench.geometry();
                    let mut run = base(kernel);
                    run.threads = Some(geometry.threads());
                    run.extra.insert("blocks".into(), json!(geometry.blocks));
                    run.extra.insert(
                        "threads_per_block".into(),
                        json!(geometry.threads_per_block),
                    );
                    // (`cuda_target`'s targets are replay's stream with the blocking kernel.)
                    run.extra
                        .insert("timer".into(), json!(timer_name(REPLAY_STREAM, true)));
                    // Checked once before timing: a fast wrong kernel is no bandwidth.
                    let result = bench.run_and_check(kernel).and_then(|()| {
                        time_trials(&mut bench.target(kernel), trials)
                            .map(|latency| operation_profile(&run, latency, peak))
                    });
                    (kernel, result)
                })
                .collect()
        }
    }
}

/// Both kernels failed for one reason (the arrays could not be allocated, the kernels not
/// loaded).
fn failed_both(e: CalibrateError) -> Vec<(StreamKernel, Result<OperationProfile, CalibrateError>)> {
    let text = e.to_string();
    vec![
        (StreamKernel::Copy, Err(e)),
        (StreamKernel::Triad, Err(CalibrateError::Device(text))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::CpuInfo;

    fn latency_ms(ms: &[f64]) -> Latency {
        let us: Vec<f64> = ms.iter().map(|m| m * 1e3).collect();
        Latency::from_samples_us(&us).unwrap()
    }

    #[test]
    fn a_profile_has_the_seed_fields_and_bandwidth_over_the_mean() {
        let run = Run {
            kernel: StreamKernel::Triad,
            method: Method::Replay,
            size_mb: 128,
            elements: 33_554_432,
            threads: Some(2),
            streaming_stores: true,
            extra: BTreeMap::new(),
        };
        // 3 · 128 MiB = 402,653,184 bytes in 10 ms (mean of 8, 10, 12) → 40.27 GB/s.
        let p = operation_profile(&run, latency_ms(&[8.0, 10.0, 12.0]), Some(80.0));
        assert_eq!(p.operation_type, "memory_triad");
        assert!((p.achieved_bandwidth_gbps - 40.2653184).abs() < 1e-9);
        assert!((p.efficiency.unwrap() - 40.2653184 / 80.0).abs() < 1e-12);
        assert!(p.memory_bound && !p.compute_bound);
        assert_eq!((p.measured_gflops, p.arithmetic_intensity), (0.0, 0.0));
        assert_eq!(p.input_shape, vec![33_554_432]);
        let e = &p.extra_params;
        assert_eq!(e["size_mb"], json!(128));
        assert_eq!(e["operation"], json!("triad"));
        assert_eq!(e["method"], json!("replay"));
        assert_eq!(e["bytes_per_call"], json!(402_653_184u64));
        assert_eq!(e["threads"], json!(2));
        assert_eq!(e["streaming_stores"], json!(true));
        assert!((e["best_bandwidth_gbps"].as_f64().unwrap() - 50.3316480).abs() < 1e-6);
        // No peak, no efficiency.
        assert_eq!(
            operation_profile(&run, latency_ms(&[10.0]), None).efficiency,
            None
        );
    }

    #[test]
    fn keys_name_the_operation_the_method_and_the_size() {
        assert_eq!(
            profile_key(StreamKernel::Copy, Method::Libtorch, 128),
            "memory_copy_libtorch_size_mb=128"
        );
        assert_eq!(
            profile_key(StreamKernel::Triad, Method::Replay, 64),
            "memory_triad_replay_size_mb=64"
        );
    }

    #[test]
    fn every_size_gets_three_profiles_and_a_bad_size_fails_alone() {
        let device = Device::Cpu(CpuInfo::detect());
        let trials = Trials {
            warmup: 1,
            trials: 2,
        };
        let cpu = CpuKernelConfig::with_threads(2);
        let results = measure_memory_with(&device, &[1, 0, 2], trials, Some(1000.0), cpu);
        let keys: Vec<&str> = results.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "memory_copy_libtorch_size_mb=1",
                "memory_copy_replay_size_mb=1",
                "memory_triad_replay_size_mb=1",
                "memory_copy_libtorch_size_mb=0",
                "memory_copy_replay_size_mb=0",
                "memory_triad_replay_size_mb=0",
                "memory_copy_libtorch_size_mb=2",
                "memory_copy_replay_size_mb=2",
                "memory_triad_replay_size_mb=2",
            ]
        );
        for (key, result) in &results {
            if key.ends_with("=0") {
                let err = result.as_ref().unwrap_err();
                assert!(err.is_usage_error(), "{key}: {err}");
                continue;
            }
            let p = result.as_ref().unwrap_or_else(|e| panic!("{key}: {e}"));
            assert!(p.achieved_bandwidth_gbps > 0.0, "{key}");
            assert!(p.efficiency.unwrap() > 0.0);
            assert_eq!(p.latency.num_trials, 2);
            let replay = p.extra_params["method"] == json!("replay");
            assert_eq!(replay, key.contains("replay"));
            if replay {
                assert_eq!(p.extra_params["threads"], json!(2));
                assert_eq!(
                    p.extra_params["streaming_stores"],
                    json!(cpu.isa.streaming())
                );
            }
        }
    }
}
