//! The host's costs on the machine that predicts, measured in replay's own process without the
//! profiler (issue 50): for a command that needs them and has no calibration profile with a
//! `host` section (`replay compare`). `replay calibrate` measures the same section into its
//! profile (`crate::host`, where the measurements live, below both).

use super::observer::Observer;
use crate::device::Device;
use replay_core::results::host_profile::HostProfile;

/// Measures the host section on `device` (a few seconds), telling `observer` what it measures
/// as items and each figure that could not be measured as a warning (that figure is then
/// `None`, and its note in the section says why). Fails only when no figure could be had at all
/// (libtorch cannot make a tensor on the device).
pub fn measure_host(device: &Device, observer: &mut dyn Observer) -> crate::Result<HostProfile> {
    let measured = {
        let mut progress = |what: &str| observer.item(&format!("host: {what}"));
        crate::host::measure_host(device, "replay", &mut progress)?
    };
    for (field, why) in &measured.failures {
        observer.warning(&format!("host: {field} not measured: {why}"));
    }
    Ok(measured.profile)
}
