//! Energy measurement through pluggable probes (`--energy PROBE`).
//!
//! - [`EnergyProbe`] is what every source implements: a name, a [`ProbeResolution`] (update
//!   period and energy step), the [`Method`] (a counter or sampled power) and cumulative
//!   joules. A [`Window`] turns two readings into an [`EnergyReading`] (joules, seconds,
//!   average watts, method, probe).
//! - [`ProbeSpec`] parses `--energy` values and [`open`] opens the probe:
//!   - `none` (default): no measurement ([`open`] refuses it; check [`ProbeSpec::is_none`]);
//!   - `nvml[:N]` ([`NvmlProbe`]): the GPU's total-energy counter, or sampled power on GPUs
//!     without one; NVML is loaded at run time, and a machine without the NVIDIA driver gives
//!     `NVML unavailable: ...`;
//!   - `rapl[:ROOT]` ([`RaplProbe`]): CPU package and DRAM counters from Linux powercap, with
//!     wrap-around;
//!   - `cmd:PROGRAM [ARGS...]` ([`CommandProbe`]): an external meter program speaking a
//!     one-line JSON protocol over stdin/stdout (documented in `command.rs`);
//!   - `plugin:PATH.so [CONFIG]` ([`PluginProbe`]): a shared library implementing the C ABI
//!     of `include/replay_energy_probe.h` (an example is `examples/energy_plugin/`).
//! - [`measure_energy`] measures joules per invocation soundly: windows of at least 100
//!   update periods, at least 3 of them, optional idle subtraction, the spread over windows
//!   ([`EnergySummary`]); [`EnergyComparison`] sets a kernel-sum prediction against the
//!   measured model; [`TimelineEnergy`] predicts along the timeline instead: the signatures'
//!   joules plus the gap power ([`measure_gap_power`]) over the rest of the predicted step.
//!
//! Nothing here panics on a missing device, library or program: every failure is an
//! [`EnergyError`] whose message names the probe and what is wrong.

mod command;
mod measure;
mod nvml;
mod plugin;
mod probe;
mod rapl;
mod spec;
mod timeline;
mod windows;

pub use command::{CommandProbe, DEFAULT_READ_TIMEOUT};
pub use measure::{
    measure_energy, EnergyComparison, EnergyConfig, EnergySummary, EnergyWindow, Spread,
};
pub use nvml::NvmlProbe;
pub use plugin::{PluginProbe, ABI_VERSION as PLUGIN_ABI_VERSION};
pub use probe::{EnergyError, EnergyProbe, EnergyReading, Method, ProbeResolution, Window};
pub use rapl::{unwrapped_delta, RaplProbe};
pub use spec::{ProbeSpec, DEFAULT_POWERCAP_ROOT};
pub use timeline::{measure_gap_power, GapPower, SignatureEnergy, TimelineEnergy};

/// Opens the probe a spec names. `none` is an error here: there is nothing to open.
pub fn open(spec: &ProbeSpec) -> Result<Box<dyn EnergyProbe>, EnergyError> {
    Ok(match spec {
        ProbeSpec::None => {
            return Err(EnergyError::InvalidSpec {
                spec: "none".into(),
                reason: "'none' measures no energy, so there is no probe to open".into(),
            })
        }
        ProbeSpec::Nvml { device } => Box::new(NvmlProbe::open(*device)?),
        ProbeSpec::Rapl { root } => Box::new(RaplProbe::open(root)?),
        ProbeSpec::Command { program, args } => Box::new(CommandProbe::spawn(program, args)?),
        ProbeSpec::Plugin { path, config } => Box::new(PluginProbe::open(path, config)?),
    })
}

/// Parses an `--energy` value and opens its probe; `Ok(None)` for `none`.
pub fn open_str(value: &str) -> Result<Option<Box<dyn EnergyProbe>>, EnergyError> {
    let spec = ProbeSpec::parse(value)?;
    if spec.is_none() {
        return Ok(None);
    }
    open(&spec).map(Some)
}
