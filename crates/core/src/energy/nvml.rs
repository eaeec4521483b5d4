//! `nvml[:N]`: GPU energy through NVML, loaded at run time with `nvml-wrapper` (no link-time
//! dependency on libnvidia-ml, like cudarc with CUDA).
//!
//! - **Counter** (Volta and newer): `nvmlDeviceGetTotalEnergyConsumption`, millijoules since
//!   the driver was loaded. Its refresh interval depends on the GPU (about 10 to 100 ms); it
//!   is measured when the probe opens (the time between counter changes, for up to 1 s) and
//!   taken as 100 ms when it cannot be.
//! - **Sampled power** (older GPUs, where the counter is not supported): a background thread
//!   reads `nvmlDeviceGetPowerUsage` (milliwatts) every 10 ms and integrates it, holding each
//!   sample until the next (so the cumulative value never goes down). NVML's power value itself
//!   refreshes far more slowly than that, so windows are sized as for a 100 ms update period.
//!
//! A machine without the NVIDIA driver gives [`EnergyError::NvmlUnavailable`]
//! (`NVML unavailable: ...`), never a panic: nvml-wrapper reports a missing library or symbol
//! as an error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

use super::{EnergyError, EnergyProbe, Method, ProbeResolution};
use crate::measure::{Clock, MonotonicClock};

/// The update period assumed when it cannot be measured, and for sampled power.
pub const NVML_DEFAULT_UPDATE_PERIOD_S: f64 = 0.1;
/// How often the sampler reads the power.
pub const NVML_SAMPLE_PERIOD: Duration = Duration::from_millis(10);
/// How long opening the probe may watch the counter to measure its update period.
const UPDATE_PERIOD_PROBE_BUDGET: Duration = Duration::from_secs(1);

/// NVML energy of one GPU.
pub struct NvmlProbe {
    index: u32,
    gpu_name: String,
    update_period_s: f64,
    source: Source,
}

enum Source {
    Counter(Box<Nvml>),
    Sampled(PowerSampler),
}

impl NvmlProbe {
    /// Initialises NVML and picks the counter of GPU `index`, or sampled power where the GPU
    /// has no energy counter.
    pub fn open(index: u32) -> Result<NvmlProbe, EnergyError> {
        let nvml =
            Nvml::init().map_err(|e| EnergyError::NvmlUnavailable(unavailable_reason(&e)))?;
        let counter = {
            let device = nvml.device_by_index(index).map_err(|e| {
                let count = nvml
                    .device_count()
                    .map(|n| format!("{n} GPU(s) visible"))
                    .unwrap_or_else(|_| "GPU count unknown".into());
                EnergyError::Nvml {
                    call: "nvmlDeviceGetHandleByIndex",
                    message: format!("GPU {index}: {e} ({count})"),
                }
            })?;
            let gpu_name = device.name().unwrap_or_else(|_| "unknown GPU".into());
            match device.total_energy_consumption() {
                Ok(_) => {
                    let period = estimate_update_period(
                        || {
                            device
                                .total_energy_consumption()
                                .map(|mj| mj as f64)
                                .map_err(|e| e.to_string())
                        },
                        UPDATE_PERIOD_PROBE_BUDGET,
                        &MonotonicClock::new(),
                    )
                    .unwrap_or(NVML_DEFAULT_UPDATE_PERIOD_S);
                    Ok((gpu_name, Some(period)))
                }
                Err(NvmlError::NotSupported) | Err(NvmlError::FailedToLoadSymbol(_)) => {
                    device.power_usage().map_err(|e| EnergyError::Nvml {
                        call: "nvmlDeviceGetPowerUsage",
                        message: format!("GPU {index} ({gpu_name}) has no total-energy counter and its power cannot be read either: {e}"),
                    })?;
                    Ok((gpu_name, None))
                }
                Err(e) => Err(EnergyError::Nvml {
                    call: "nvmlDeviceGetTotalEnergyConsumption",
                    message: format!("GPU {index} ({gpu_name}): {e}"),
                }),
            }
        };
        let (gpu_name, counter_period) = counter?;
        let (source, update_period_s) = match counter_period {
            Some(period) => (Source::Counter(Box::new(nvml)), period),
            None => (
                Source::Sampled(PowerSampler::start(
                    Arc::new(nvml),
                    index,
                    NVML_SAMPLE_PERIOD,
                )?),
                NVML_DEFAULT_UPDATE_PERIOD_S,
            ),
        };
        Ok(NvmlProbe {
            index,
            gpu_name,
            update_period_s,
            source,
        })
    }
}

/// What to tell the user when `nvmlInit` fails.
fn unavailable_reason(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(e) => {
            format!("cannot load libnvidia-ml.so.1 (is the NVIDIA driver installed?): {e}")
        }
        NvmlError::DriverNotLoaded => "the NVIDIA driver is not loaded".into(),
        NvmlError::NoPermission => "no permission to talk to the NVIDIA driver".into(),
        other => other.to_string(),
    }
}

impl EnergyProbe for NvmlProbe {
    fn name(&self) -> String {
        format!("nvml GPU {} ({})", self.index, self.gpu_name)
    }

    fn resolution(&self) -> ProbeResolution {
        match self.source {
            Source::Counter(_) => ProbeResolution {
                update_period_s: self.update_period_s,
                joules: Some(1e-3),
            },
            Source::Sampled(_) => ProbeResolution {
                update_period_s: self.update_period_s,
                joules: None,
            },
        }
    }

    fn method(&self) -> Method {
        match self.source {
            Source::Counter(_) => Method::Counter,
            Source::Sampled(_) => Method::SampledPower,
        }
    }

    fn read_joules(&mut self) -> Result<f64, EnergyError> {
        match &self.source {
            Source::Counter(nvml) => nvml
                .device_by_index(self.index)
                .and_then(|d| d.total_energy_consumption())
                .map(|mj| mj as f64 * 1e-3)
                .map_err(|e| EnergyError::Nvml {
                    call: "nvmlDeviceGetTotalEnergyConsumption",
                    message: e.to_string(),
                }),
            Source::Sampled(sampler) => sampler.joules(),
        }
    }
}

/// Watches a counter for up to `budget` of `clock`'s time and returns the mean time between
/// its changes, from the first change seen to the last (up to 5 intervals); `None` when it
/// changed fewer than twice or could not be read. (The clock is a parameter so that a test
/// can run it on time that only its counter moves.)
pub(crate) fn estimate_update_period<F>(
    mut read: F,
    budget: Duration,
    clock: &dyn Clock,
) -> Option<f64>
where
    F: FnMut() -> Result<f64, String>,
{
    let start = clock.now();
    let mut last = read().ok()?;
    let mut changes: Vec<Duration> = Vec::new();
    while clock.now().saturating_sub(start) < budget && changes.len() < 6 {
        let v = read().ok()?;
        if v != last {
            changes.push(clock.now());
            last = v;
        } else {
            thread::sleep(Duration::from_micros(200));
        }
    }
    match (changes.first(), changes.last()) {
        (Some(first), Some(last)) if changes.len() >= 2 => {
            Some(last.saturating_sub(*first).as_secs_f64() / (changes.len() - 1) as f64)
        }
        _ => None,
    }
}

/// Cumulative energy from power samples, each held until the next one (zero-order hold), so
/// the value never decreases however the power changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct PowerIntegrator {
    joules: f64,
    last: Option<(f64, f64)>,
}

impl PowerIntegrator {
    /// Adds a sample of `watts` taken at `t` seconds.
    pub(crate) fn add(&mut self, t: f64, watts: f64) {
        if let Some((t0, w0)) = self.last {
            self.joules += w0 * (t - t0).max(0.0);
        }
        self.last = Some((t, watts.max(0.0)));
    }

    /// Joules at `t`, the last sample held up to `t`.
    pub(crate) fn joules_at(&self, t: f64) -> f64 {
        match self.last {
            Some((t0, w0)) => self.joules + w0 * (t - t0).max(0.0),
            None => 0.0,
        }
    }
}

struct SamplerState {
    integrator: PowerIntegrator,
    error: Option<String>,
}

/// A thread sampling NVML power into a [`PowerIntegrator`].
struct PowerSampler {
    origin: Instant,
    state: Arc<Mutex<SamplerState>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PowerSampler {
    fn start(nvml: Arc<Nvml>, index: u32, period: Duration) -> Result<PowerSampler, EnergyError> {
        let origin = Instant::now();
        let state = Arc::new(Mutex::new(SamplerState {
            integrator: PowerIntegrator::default(),
            error: None,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let sample = move |nvml: &Nvml| {
            nvml.device_by_index(index)
                .and_then(|d| d.power_usage())
                .map(|mw| mw as f64 * 1e-3)
        };
        // The first sample before returning, so a read right after open has a power to hold.
        let first = sample(&nvml).map_err(|e| EnergyError::Nvml {
            call: "nvmlDeviceGetPowerUsage",
            message: e.to_string(),
        })?;
        if let Ok(mut s) = state.lock() {
            s.integrator.add(origin.elapsed().as_secs_f64(), first);
        }
        let (thread_state, thread_stop) = (Arc::clone(&state), Arc::clone(&stop));
        let thread = thread::Builder::new()
            .name("nvml-power-sampler".into())
            .spawn(move || {
                while !thread_stop.load(Ordering::Relaxed) {
                    thread::sleep(period);
                    let reading = sample(&nvml);
                    let t = origin.elapsed().as_secs_f64();
                    let Ok(mut s) = thread_state.lock() else {
                        break;
                    };
                    match reading {
                        Ok(w) => s.integrator.add(t, w),
                        Err(e) => {
                            s.error = Some(e.to_string());
                            break;
                        }
                    }
                }
            })
            .map_err(|e| EnergyError::Nvml {
                call: "nvmlDeviceGetPowerUsage",
                message: format!("cannot start the sampling thread: {e}"),
            })?;
        Ok(PowerSampler {
            origin,
            state,
            stop,
            thread: Some(thread),
        })
    }

    fn joules(&self) -> Result<f64, EnergyError> {
        let t = self.origin.elapsed().as_secs_f64();
        let s = self.state.lock().map_err(|_| EnergyError::Nvml {
            call: "nvmlDeviceGetPowerUsage",
            message: "the sampling thread failed".into(),
        })?;
        if let Some(e) = &s.error {
            return Err(EnergyError::Nvml {
                call: "nvmlDeviceGetPowerUsage",
                message: e.clone(),
            });
        }
        Ok(s.integrator.joules_at(t))
    }
}

impl Drop for PowerSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_nvml_unavailable_is_a_clear_error() {
        // There is no NVIDIA driver on the development and CI machines.
        if std::path::Path::new("/proc/driver/nvidia").exists() {
            // With the driver, selftest check "NVML energy over GPU work" opens NVML.
            return;
        }
        match NvmlProbe::open(0) {
            Ok(_) => panic!("NVML opened on a machine without the NVIDIA driver"),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("NVML unavailable: "), "{msg}");
                assert!(msg.contains("libnvidia-ml"), "{msg}");
            }
        }
    }

    #[test]
    fn energy_power_integrator_holds_samples() {
        let mut p = PowerIntegrator::default();
        assert_eq!(p.joules_at(1.0), 0.0);
        p.add(0.0, 100.0);
        assert_eq!(p.joules_at(0.5), 50.0);
        p.add(1.0, 10.0);
        assert_eq!(p.joules_at(1.0), 100.0);
        assert_eq!(p.joules_at(2.0), 110.0);
        // A drop in power never makes the cumulative value go down.
        let before = p.joules_at(1.9);
        p.add(2.0, 0.0);
        assert!(p.joules_at(2.0) >= before);
        assert_eq!(p.joules_at(5.0), 110.0);
    }

    #[test]
    fn energy_update_period_estimate() {
        // A counter that moves every 5 ms of a clock that moves 1 ms per reading: it changes
        // on every fifth reading, at exactly 5, 10, 15... ms, so the estimate is exactly 5 ms
        // however the test is scheduled. (Over real time, a reading delayed by another
        // process would move the changes it sees.)
        let clock = crate::measure::SyntheticClock::new();
        let ticking = clock.clone();
        let counter = || {
            ticking.advance(Duration::from_millis(1));
            Ok((ticking.now().as_millis() / 5) as f64)
        };
        let p = estimate_update_period(counter, Duration::from_secs(1), &clock);
        assert!(p.is_some_and(|p| (p - 0.005).abs() < 1e-12), "{p:?}");
        // One that moves every 3 readings, 2 ms per reading: 6 ms.
        let ticking = clock.clone();
        let mut readings = 0u32;
        let counter = || {
            readings += 1;
            ticking.advance(Duration::from_millis(2));
            Ok(f64::from(readings / 3))
        };
        let p = estimate_update_period(counter, Duration::from_secs(1), &clock);
        assert!(p.is_some_and(|p| (p - 0.006).abs() < 1e-12), "{p:?}");
        let real = MonotonicClock::new();
        assert_eq!(
            estimate_update_period(|| Ok(1.0), Duration::from_millis(20), &real),
            None
        );
        assert_eq!(
            estimate_update_period(|| Err("no".into()), Duration::from_millis(20), &real),
            None
        );
    }
}
