//! TorchScript's fuser on the CPU (`--fuse-on-cpu` of `full` and `compare`): switched on in
//! this process before the model is loaded, as `replay capture --fuse-on-cpu` switches it on in
//! the capture's, so that the model timed whole runs the same fusion groups as the trace.

use crate::device::DeviceSpec;

/// Switches the CPU fuser on when `on`; a GPU device is refused (its fuser is on already, and
/// the flag says CPU).
pub fn apply(on: bool, device: DeviceSpec) -> crate::Result<()> {
    if !on {
        return Ok(());
    }
    if device != DeviceSpec::Cpu {
        return Err(crate::Error::from(replay_core::Error::BadInput {
            path: "--fuse-on-cpu".into(),
            message: format!(
                "switches TorchScript's fuser on for the CPU; the device is {device} (on a GPU \
                 the fuser is on already)"
            ),
        }));
    }
    crate::torch::fusion_kernel::switch_on_cpu_fuser()
        .map_err(|e| crate::Error::Failed(format!("switching TorchScript's CPU fuser on: {e}")))
}
