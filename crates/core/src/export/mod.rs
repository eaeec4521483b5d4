//! Output formats, one module per format, each turning results into bytes; [`write_atomic`]
//! puts the bytes on disk so a reader never sees half a file and a crash never loses the
//! previous complete version.

pub mod csv;
pub mod json;

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |context: String| move |source| Error::Io { context, source };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let mut file =
        fs::File::create(&tmp).map_err(io(format!("cannot create {}", tmp.display())))?;
    file.write_all(bytes)
        .map_err(io(format!("cannot write {}", tmp.display())))?;
    file.sync_all()
        .map_err(io(format!("cannot sync {}", tmp.display())))?;
    fs::rename(&tmp, path).map_err(io(format!(
        "cannot move {} to {}",
        tmp.display(),
        path.display()
    )))
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
}
