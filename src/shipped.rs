//! Data that ships with replay (`profiles/`, `configs/`), found from any working directory: the
//! core's [`replay_core::shipped`], plus the defaults of this package's commands that name a
//! shipped file.

pub use replay_core::shipped::{data_root, shipped_file, DATA_DIR_VAR};

/// The GPU profile `bench mhc`'s offload answer compares against on a machine without one.
pub const DEFAULT_GPU_PROFILE: &str = "profiles/h100_sxm_datasheet.json";

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
            assert!(path.is_file(), "{}", path.display());
        }
    }
}
