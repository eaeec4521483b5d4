//! Output formats, one module per format, each turning results into bytes; [`write_atomic`]
//! puts the bytes on disk so a reader never sees half a file and a crash never loses the
//! previous complete version.

pub mod append;
pub mod csv;
pub mod isolated_rows;
pub mod json;
pub mod output_dir;
pub mod perfetto;
pub mod rows;

pub use output_dir::{OutputDir, OutputFile};

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
///
/// Output paths come from the user, so a path that names a folder, or lies inside something
/// that is not a folder, is a usage error naming it; on any failure the temporary file is
/// removed, and what was at `path` before is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    // The temporary file is ours, not the user's: errors name `path`, which they gave.
    let failed = |action: &'static str| move |error| Error::output(path, action, error);
    if path.is_dir() {
        return Err(Error::BadInput {
            path: path.to_path_buf(),
            message: "is a folder; give the name of a file to write".into(),
        });
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    ensure_output_dir(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut file = fs::File::create(&tmp).map_err(failed("create"))?;
        file.write_all(bytes).map_err(failed("write"))?;
        file.sync_all().map_err(failed("write"))?;
        fs::rename(&tmp, path).map_err(failed("replace"))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Makes the output folder `dir` (and its parents) unless it exists. Something other than a
/// folder in the way is a usage error naming it: commands call this before their work, so a
/// long run does not end in an output path that could never be written.
pub fn ensure_output_dir(dir: &Path) -> Result<()> {
    if let Some(blocker) = dir.ancestors().find(|a| a.exists() && !a.is_dir()) {
        return Err(Error::BadInput {
            path: blocker.to_path_buf(),
            message: format!(
                "is not a folder, so {} cannot be made for the output",
                dir.display()
            ),
        });
    }
    fs::create_dir_all(dir).map_err(|error| Error::output(dir, "create the folder", error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/out.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    }

    #[test]
    fn a_folder_or_a_file_in_the_way_is_a_usage_error_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("signatures");
        fs::create_dir(&folder).unwrap();
        let err = write_atomic(&folder, b"x").unwrap_err();
        assert!(err.is_usage_error(), "{err}");
        assert!(err.to_string().contains("signatures: is a folder"), "{err}");

        let file = dir.path().join("results");
        fs::write(&file, b"kept").unwrap();
        let err = write_atomic(&file.join("deeper/out.json"), b"x").unwrap_err();
        assert!(err.is_usage_error(), "{err}");
        assert!(
            err.to_string().contains("results: is not a folder"),
            "{err}"
        );
        assert_eq!(fs::read(&file).unwrap(), b"kept");

        let mut left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["results", "signatures"],
            "no temporary file left behind"
        );
        assert!(fs::read_dir(&folder).unwrap().next().is_none());
    }
}
