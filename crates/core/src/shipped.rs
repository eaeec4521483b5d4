//! Data that ships with replay (`profiles/`, `configs/`), found from any working directory as
//! its scripts are: `$REPLAY_DATA_DIR`, else the folder above `$REPLAY_SCRIPTS_DIR`, else the
//! checkout the binary was built in. A default that names a shipped file goes through here,
//! never through the working directory alone, so a command run elsewhere does not silently
//! lose it.

use std::path::{Path, PathBuf};

/// The variable that points replay at another folder holding its shipped data.
pub const DATA_DIR_VAR: &str = "REPLAY_DATA_DIR";

/// The variable that points replay at another `scripts/` folder (its parent holds the data).
pub const SCRIPTS_DIR_VAR: &str = "REPLAY_SCRIPTS_DIR";

/// The folder of calibration and datasheet profiles, under [`data_root`].
pub const PROFILES_DIR: &str = "profiles";

/// The folder that holds `profiles/` and `configs/`.
pub fn data_root() -> PathBuf {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = from(DATA_DIR_VAR) {
        return dir;
    }
    if let Some(parent) = from(SCRIPTS_DIR_VAR).and_then(|s| s.parent().map(PathBuf::from)) {
        return parent;
    }
    // crates/core → the checkout, without `..` in what a message prints.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.join("../.."), Path::to_path_buf)
}

/// `relative` (e.g. `profiles/h100_sxm_datasheet.json`) under [`data_root`], relative to the
/// working directory when it lies below it (what a message shows), else absolute.
pub fn shipped_file(relative: &str) -> PathBuf {
    let path = data_root().join(relative);
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_profiles_are_found_from_the_build_checkout() {
        // Unless a variable points elsewhere, the folder is the checkout's own.
        if std::env::var_os(DATA_DIR_VAR).is_none() && std::env::var_os(SCRIPTS_DIR_VAR).is_none() {
            let path = shipped_file(PROFILES_DIR).join("h100_sxm_datasheet.json");
            assert!(path.is_file(), "{}", path.display());
            assert!(
                !path
                    .components()
                    .any(|c| c == std::path::Component::ParentDir),
                "{}",
                path.display()
            );
        }
    }
}
