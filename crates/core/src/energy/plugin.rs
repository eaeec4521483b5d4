//! `plugin:PATH.so [CONFIG]`: energy from a shared library implementing the C ABI of
//! `include/replay_energy_probe.h` (version [`ABI_VERSION`]), loaded with `libloading`.
//!
//! Loading checks, in order: the file exists and loads; it exports
//! `replay_energy_probe_abi_version` and that returns [`ABI_VERSION`]; it exports `_name`,
//! `_open`, `_read_joules` and `_close` (the error names the first missing one and the file).
//! The optional `replay_energy_probe_update_period_s` gives the update period (default 0.01 s).
//! Then `open(CONFIG)` (a NULL handle is an error). Reads call `read_joules` (a non-zero return
//! is an error with the code). Dropping the probe calls `close` and unloads the library.
//!
//! All calls happen on the thread that opened the probe (the probe is not `Send`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

use libloading::Library;

use super::{EnergyError, EnergyProbe, Method, ProbeResolution};

/// The ABI version this replay speaks (`REPLAY_ENERGY_PROBE_ABI_VERSION`).
pub const ABI_VERSION: u32 = 1;
/// The update period assumed when the plugin does not export one.
pub const DEFAULT_UPDATE_PERIOD_S: f64 = 0.01;

type AbiVersionFn = unsafe extern "C" fn() -> u32;
type NameFn = unsafe extern "C" fn() -> *const c_char;
type OpenFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type ReadJoulesFn = unsafe extern "C" fn(*mut c_void, *mut f64) -> c_int;
type CloseFn = unsafe extern "C" fn(*mut c_void);
type UpdatePeriodFn = unsafe extern "C" fn() -> f64;

/// An open plugin probe.
pub struct PluginProbe {
    path: PathBuf,
    plugin_name: String,
    handle: *mut c_void,
    read_joules: ReadJoulesFn,
    close: CloseFn,
    update_period_s: f64,
    last_joules: Option<f64>,
    /// Kept loaded while the function pointers above are in use; unloaded last.
    library: Option<Library>,
}

impl PluginProbe {
    /// Loads the library at `path`, checks its ABI and opens it with `config`.
    pub fn open(path: &Path, config: &str) -> Result<PluginProbe, EnergyError> {
        let plugin_error = |message: String| EnergyError::Plugin {
            path: path.to_path_buf(),
            message,
        };
        if !path.exists() {
            return Err(plugin_error("no such file".into()));
        }
        // A path without a slash would be searched for on the library path by dlopen: make it
        // explicit so `plugin:libx.so` means the file in the current directory, as it says.
        let load_path =
            if path.is_relative() && path.parent().is_none_or(|p| p.as_os_str().is_empty()) {
                Path::new(".").join(path)
            } else {
                path.to_path_buf()
            };
        // SAFETY: loading a library runs its initialisers; that is what the user asked for by
        // naming it as a plugin.
        let library = unsafe { Library::new(&load_path) }
            .map_err(|e| plugin_error(format!("cannot be loaded as a shared library: {e}")))?;

        let missing = |symbol: &'static str, e: libloading::Error| EnergyError::PluginSymbol {
            path: path.to_path_buf(),
            symbol,
            abi: ABI_VERSION,
            message: e.to_string(),
        };
        // SAFETY (all `get`s): the types are those of include/replay_energy_probe.h; a plugin
        // exporting these names with other signatures breaks the ABI it claims by its version.
        let abi_version: AbiVersionFn =
            unsafe { library.get::<AbiVersionFn>("replay_energy_probe_abi_version") }
                .map(|s| *s)
                .map_err(|e| missing("replay_energy_probe_abi_version", e))?;
        // SAFETY: a C function with no arguments.
        let found = unsafe { abi_version() };
        if found != ABI_VERSION {
            return Err(EnergyError::PluginAbiVersion {
                path: path.to_path_buf(),
                found,
                expected: ABI_VERSION,
            });
        }
        let name: NameFn = unsafe { library.get::<NameFn>("replay_energy_probe_name") }
            .map(|s| *s)
            .map_err(|e| missing("replay_energy_probe_name", e))?;
        let open: OpenFn = unsafe { library.get::<OpenFn>("replay_energy_probe_open") }
            .map(|s| *s)
            .map_err(|e| missing("replay_energy_probe_open", e))?;
        let read_joules: ReadJoulesFn =
            unsafe { library.get::<ReadJoulesFn>("replay_energy_probe_read_joules") }
                .map(|s| *s)
                .map_err(|e| missing("replay_energy_probe_read_joules", e))?;
        let close: CloseFn = unsafe { library.get::<CloseFn>("replay_energy_probe_close") }
            .map(|s| *s)
            .map_err(|e| missing("replay_energy_probe_close", e))?;
        let update_period: Option<UpdatePeriodFn> =
            unsafe { library.get::<UpdatePeriodFn>("replay_energy_probe_update_period_s") }
                .ok()
                .map(|s| *s);

        // SAFETY: the ABI says the name is NULL or a NUL-terminated string valid while loaded.
        let plugin_name = unsafe {
            let p = name();
            if p.is_null() {
                None
            } else {
                Some(CStr::from_ptr(p).to_string_lossy().into_owned())
            }
        }
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });

        let update_period_s = match update_period {
            // SAFETY: a C function with no arguments.
            Some(f) => {
                let p = unsafe { f() };
                if !(p.is_finite() && p > 0.0) {
                    return Err(plugin_error(format!(
                        "replay_energy_probe_update_period_s returned {p}; it must be a positive number of seconds"
                    )));
                }
                p
            }
            None => DEFAULT_UPDATE_PERIOD_S,
        };

        let config_c = CString::new(config)
            .map_err(|_| plugin_error("the config text contains a NUL byte".into()))?;
        // SAFETY: a valid NUL-terminated string that outlives the call.
        let handle = unsafe { open(config_c.as_ptr()) };
        if handle.is_null() {
            return Err(plugin_error(format!(
                "replay_energy_probe_open returned NULL (config '{config}'); see the plugin's messages on stderr"
            )));
        }
        Ok(PluginProbe {
            path: path.to_path_buf(),
            plugin_name,
            handle,
            read_joules,
            close,
            update_period_s,
            last_joules: None,
            library: Some(library),
        })
    }
}

impl EnergyProbe for PluginProbe {
    fn name(&self) -> String {
        format!("plugin {} ({})", self.plugin_name, self.path.display())
    }

    fn resolution(&self) -> ProbeResolution {
        ProbeResolution {
            update_period_s: self.update_period_s,
            joules: None,
        }
    }

    fn method(&self) -> Method {
        Method::Counter
    }

    fn read_joules(&mut self) -> Result<f64, EnergyError> {
        let mut joules = f64::NAN;
        // SAFETY: the handle came from this library's open and is not closed yet; `joules`
        // is a valid place for one double.
        let rc = unsafe { (self.read_joules)(self.handle, &mut joules) };
        if rc != 0 {
            return Err(EnergyError::Plugin {
                path: self.path.clone(),
                message: format!("replay_energy_probe_read_joules failed with code {rc}"),
            });
        }
        if !joules.is_finite() {
            return Err(EnergyError::NotFinite {
                probe: self.name(),
                value: joules,
            });
        }
        if let Some(previous) = self.last_joules {
            if joules < previous {
                return Err(EnergyError::NotMonotonic {
                    probe: self.name(),
                    from: previous,
                    to: joules,
                });
            }
        }
        self.last_joules = Some(joules);
        Ok(joules)
    }
}

impl Drop for PluginProbe {
    fn drop(&mut self) {
        // SAFETY: closed exactly once, with the handle open returned, before unloading.
        unsafe { (self.close)(self.handle) };
        if let Some(library) = self.library.take() {
            let _ = library.close();
        }
    }
}
