//! Data that ships with replay (`profiles/`, `configs/`), found from any working directory as
//! its scripts are: `$REPLAY_DATA_DIR`, else the folder above the scripts folder
//! ([`crate::model::python::scripts_dir`]: `$REPLAY_SCRIPTS_DIR` or the checkout the binary
//! was built in). A default that names a shipped file goes through here, never through the
//! working directory, so a command run elsewhere does not silently lose it.

use std::path::PathBuf;

/// The variable that points replay at another folder holding its shipped data.
pub const DATA_DIR_VAR: &str = "REPLAY_DATA_DIR";

/// The GPU profile `bench mhc`'s offload answer compares against on a machine without one.
pub const DEFAULT_GPU_PROFILE: &str = "profiles/h100_sxm_datasheet.json";

/// The folder that holds `profiles/` and `configs/`.
pub fn data_root() -> PathBuf {
    match std::env::var_os(DATA_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let scripts = crate::model::python::scripts_dir();
            scripts
                .parent()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        }
    }
}

/// `relative` (e.g. [`DEFAULT_GPU_PROFILE`]) under [`data_root`].
pub fn shipped_file(relative: &str) -> PathBuf {
    data_root().join(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_gpu_profile_is_found_from_the_build_checkout() {
        // Unless a variable points elsewhere, the file is the checkout's own.
        if std::env::var_os(DATA_DIR_VAR).is_none()
            && std::env::var_os(crate::model::python::SCRIPTS_DIR_VAR).is_none()
        {
            let path = shipped_file(DEFAULT_GPU_PROFILE);
            assert!(path.is_absolute() && path.is_file(), "{}", path.display());
        }
    }
}
