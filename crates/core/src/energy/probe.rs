//! The [`EnergyProbe`] interface every energy source implements, the [`EnergyError`] they all
//! report, and the measurement [`Window`] that turns two cumulative readings into an
//! [`EnergyReading`].

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How a probe obtains its joules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// A hardware or meter energy counter (NVML total energy, RAPL `energy_uj`, a meter that
    /// integrates by itself): joules are read directly.
    Counter,
    /// Power readings sampled at intervals and integrated by replay (NVML `power_usage` on GPUs
    /// without an energy counter): only as good as the sampling.
    SampledPower,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Counter => "counter",
            Method::SampledPower => "sampled power",
        })
    }
}

/// How fine-grained a probe is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeResolution {
    /// Seconds between two updates of the probe's value (the counter's refresh interval, or
    /// the sampling period). Where the source does not say, this is the documented assumption
    /// of that probe; measurement windows are sized from it.
    pub update_period_s: f64,
    /// The smallest energy step the probe reports, in joules; `None` where unknown.
    pub joules: Option<f64>,
}

impl fmt::Display for ProbeResolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "updates every {:.3} ms", self.update_period_s * 1e3)?;
        match self.joules {
            Some(j) => write!(f, ", {j:e} J steps"),
            None => f.write_str(", step size unknown"),
        }
    }
}

/// A source of cumulative energy.
///
/// `read_joules` returns the energy consumed since an arbitrary origin fixed when the probe
/// was opened; only differences between readings mean anything. Probes release what they hold
/// (child processes, libraries, threads) when dropped.
pub trait EnergyProbe {
    /// What is measured, for reports: e.g. `rapl (package-0, dram) at /sys/class/powercap`.
    fn name(&self) -> String;
    /// The probe's update period and energy step.
    fn resolution(&self) -> ProbeResolution;
    /// Counter or sampled power.
    fn method(&self) -> Method;
    /// Cumulative joules now.
    fn read_joules(&mut self) -> Result<f64, EnergyError>;
}

/// Everything that can go wrong while opening or reading an energy probe. Every message says
/// which probe and what is wrong; nothing here is a panic.
#[derive(Debug, thiserror::Error)]
pub enum EnergyError {
    /// An `--energy` value that cannot be understood.
    #[error("invalid --energy value '{spec}': {reason} (expected none, nvml[:N], rapl[:ROOT], cmd:PROGRAM [ARGS...] or plugin:PATH.so [CONFIG])")]
    InvalidSpec { spec: String, reason: String },

    /// NVML could not be loaded or initialised (no NVIDIA driver on this machine).
    #[error("NVML unavailable: {0}")]
    NvmlUnavailable(String),

    /// An NVML call failed after NVML was initialised.
    #[error("NVML error in {call}: {message}")]
    Nvml { call: &'static str, message: String },

    /// No usable RAPL zones under the powercap root.
    #[error("RAPL unavailable under {root}: {reason}")]
    RaplUnavailable { root: PathBuf, reason: String },

    /// A RAPL file could not be read or parsed.
    #[error("RAPL: {path}: {message}")]
    Rapl { path: PathBuf, message: String },

    /// The `cmd:` meter program could not be started.
    #[error("energy meter program '{program}' could not be started: {message}")]
    CommandStart { program: String, message: String },

    /// The meter program ended (or closed its output) before answering.
    #[error("energy meter program '{program}' exited before answering 'read' ({status}){stderr}")]
    CommandExited {
        program: String,
        status: String,
        stderr: String,
    },

    /// The meter program answered with something that is not the protocol's JSON line.
    #[error("energy meter program '{program}' answered 'read' with a bad line: {reason}; the line was: {line}")]
    CommandBadReply {
        program: String,
        line: String,
        reason: String,
    },

    /// The meter program did not answer in time.
    #[error("energy meter program '{program}' did not answer 'read' within {seconds:.1} s")]
    CommandTimeout { program: String, seconds: f64 },

    /// The meter program failed an earlier exchange (no answer in time, a bad line, gone):
    /// a late answer could be taken for the answer to a later `read`, so it is not asked again.
    #[error(
        "energy meter program '{program}' is not read any more after an earlier failure: {first}"
    )]
    CommandAbandoned { program: String, first: String },

    /// The plugin file could not be loaded as a shared library.
    #[error("energy plugin {path}: {message}")]
    Plugin { path: PathBuf, message: String },

    /// The plugin lacks a symbol the ABI requires.
    #[error("energy plugin {path} does not export the required symbol `{symbol}` (see include/replay_energy_probe.h, ABI version {abi}): {message}")]
    PluginSymbol {
        path: PathBuf,
        symbol: &'static str,
        abi: u32,
        message: String,
    },

    /// The plugin implements a different ABI version.
    #[error("energy plugin {path} implements ABI version {found} (from `replay_energy_probe_abi_version`), but this replay speaks version {expected}; rebuild it against include/replay_energy_probe.h")]
    PluginAbiVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },

    /// A probe's cumulative value went down (a counter reset, or a meter restarted).
    #[error("{probe}: cumulative energy went backwards from {from} J to {to} J")]
    NotMonotonic { probe: String, from: f64, to: f64 },

    /// A probe returned NaN or infinity.
    #[error("{probe}: reading is not a finite number ({value})")]
    NotFinite { probe: String, value: f64 },

    /// The workload measured inside a window failed.
    #[error("the measured workload failed: {0}")]
    Workload(String),

    /// Measurement settings that cannot work.
    #[error("invalid energy measurement settings: {0}")]
    Config(String),
}

impl EnergyError {
    /// True when the user can fix it (a wrong `--energy` value, a probe that is not on this
    /// machine, a program or plugin that does not start): exit status 2.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            EnergyError::InvalidSpec { .. }
                | EnergyError::NvmlUnavailable(_)
                | EnergyError::RaplUnavailable { .. }
                | EnergyError::CommandStart { .. }
                | EnergyError::Plugin { .. }
                | EnergyError::PluginSymbol { .. }
                | EnergyError::PluginAbiVersion { .. }
        )
    }
}

/// One measurement window: energy and time between [`Window::open`] and [`Window::close`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyReading {
    /// Joules consumed in the window.
    pub joules: f64,
    /// Seconds the window lasted (replay's monotonic clock).
    pub seconds: f64,
    /// `joules / seconds` (0 for an empty window).
    pub average_watts: f64,
    /// Counter or sampled power.
    pub method: Method,
    /// The probe's name.
    pub probe: String,
}

/// An open measurement window on a probe.
///
/// Each end's time is the midpoint of the read call, so a probe that takes time to answer (a
/// meter program on a pipe) does not bias the window's length.
pub struct Window<'p> {
    probe: &'p mut dyn EnergyProbe,
    start_joules: f64,
    start: Instant,
}

impl<'p> Window<'p> {
    /// Reads the probe and starts the window.
    pub fn open(probe: &'p mut dyn EnergyProbe) -> Result<Self, EnergyError> {
        let (start_joules, start) = timed_read(probe)?;
        Ok(Window {
            probe,
            start_joules,
            start,
        })
    }

    /// Reads the probe again and returns what was consumed since [`Window::open`].
    pub fn close(self) -> Result<EnergyReading, EnergyError> {
        let (end_joules, end) = timed_read(self.probe)?;
        let name = self.probe.name();
        if end_joules < self.start_joules {
            return Err(EnergyError::NotMonotonic {
                probe: name,
                from: self.start_joules,
                to: end_joules,
            });
        }
        let joules = end_joules - self.start_joules;
        let seconds = end.saturating_duration_since(self.start).as_secs_f64();
        let average_watts = if seconds > 0.0 { joules / seconds } else { 0.0 };
        Ok(EnergyReading {
            joules,
            seconds,
            average_watts,
            method: self.probe.method(),
            probe: name,
        })
    }
}

/// Reads the probe and returns the value with the midpoint of the call.
fn timed_read(probe: &mut dyn EnergyProbe) -> Result<(f64, Instant), EnergyError> {
    let before = Instant::now();
    let joules = probe.read_joules()?;
    let after = Instant::now();
    if !joules.is_finite() {
        return Err(EnergyError::NotFinite {
            probe: probe.name(),
            value: joules,
        });
    }
    let half = after.saturating_duration_since(before) / 2;
    Ok((joules, before.checked_add(half).unwrap_or(after)))
}

/// Seconds as a [`Duration`], clamped to what a `Duration` can hold (negative and NaN give 0).
pub(crate) fn duration_from_secs(seconds: f64) -> Duration {
    if seconds.is_finite() && seconds > 0.0 {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe whose cumulative value is whatever the test sets.
    struct Scripted {
        values: Vec<f64>,
        next: usize,
    }

    impl EnergyProbe for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        fn resolution(&self) -> ProbeResolution {
            ProbeResolution {
                update_period_s: 0.001,
                joules: Some(1e-6),
            }
        }
        fn method(&self) -> Method {
            Method::Counter
        }
        fn read_joules(&mut self) -> Result<f64, EnergyError> {
            let v = self.values.get(self.next).copied().unwrap_or(f64::NAN);
            self.next += 1;
            Ok(v)
        }
    }

    #[test]
    fn energy_window_reports_difference_and_power() {
        let mut probe = Scripted {
            values: vec![10.0, 12.5],
            next: 0,
        };
        let window = Window::open(&mut probe).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let r = window.close().unwrap();
        assert_eq!(r.joules, 2.5);
        assert!(r.seconds >= 0.019, "{}", r.seconds);
        assert!((r.average_watts - 2.5 / r.seconds).abs() < 1e-9);
        assert_eq!(r.method, Method::Counter);
        assert_eq!(r.probe, "scripted");
    }

    #[test]
    fn energy_window_rejects_backwards_and_nan() {
        let mut probe = Scripted {
            values: vec![10.0, 9.0],
            next: 0,
        };
        let err = Window::open(&mut probe).unwrap().close().unwrap_err();
        assert!(
            err.to_string().contains("went backwards from 10 J to 9 J"),
            "{err}"
        );
        let mut probe = Scripted {
            values: vec![1.0],
            next: 0,
        };
        let err = Window::open(&mut probe).unwrap().close().unwrap_err();
        assert!(err.to_string().contains("not a finite number"), "{err}");
    }

    #[test]
    fn energy_method_serializes_snake_case() {
        assert_eq!(
            serde_json::to_string(&Method::SampledPower).unwrap(),
            "\"sampled_power\""
        );
        assert_eq!(Method::Counter.to_string(), "counter");
    }

    #[test]
    fn energy_duration_from_secs_clamps() {
        assert_eq!(duration_from_secs(-1.0), Duration::ZERO);
        assert_eq!(duration_from_secs(f64::NAN), Duration::ZERO);
        assert_eq!(duration_from_secs(1e300), Duration::MAX);
        assert_eq!(duration_from_secs(0.5), Duration::from_millis(500));
    }
}
