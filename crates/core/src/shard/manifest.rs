//! `shard.json`: what one shard ran, beside its normal outputs. It is written last, whole
//! (atomically), once every item of the shard has its row: a shard that dies part-way
//! leaves its rows so far but no `shard.json`, and `replay merge` counts it as missing.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Shard, ShardError};

/// The file's name in a shard's output folder.
pub const MANIFEST_FILE: &str = "shard.json";
/// The format this version writes and reads.
pub const MANIFEST_FORMAT: &str = "replay-shard/1";

/// A shard's partial result, described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    pub format: String,
    /// The command, as `replay merge` dispatches on it (`isolated`, `bench scan`, ...).
    pub command: String,
    /// The full command line of the run, and the folder it ran in (its relative paths are
    /// relative to that).
    pub argv: Vec<String>,
    #[serde(default)]
    pub cwd: String,
    pub shard: Shard,
    /// Where the shard came from: `--shard 2/4`, or the scheduler's variables for `auto`.
    pub shard_from: String,
    /// The device the items ran on, as the command describes it.
    pub device: String,
    pub replay_version: String,
    pub host: String,
    /// The whole work list: its length and hash ([`super::WorkList::hash`]).
    pub work_items: usize,
    pub work_list_hash: String,
    /// The ids of the items this shard ran, in the order it ran them.
    pub covered: Vec<String>,
    /// The settings every shard of one run shares (budgets, grid lists): merge refuses
    /// parts whose settings differ.
    pub settings: serde_json::Value,
    /// The output folder and the files the run wrote there, as a single run names them.
    pub output_dir: String,
    pub files: Vec<String>,
}

impl ShardManifest {
    /// Reads `dir/shard.json`; `Ok(None)` when there is none (a shard that did not finish).
    pub fn read(dir: &Path) -> Result<Option<ShardManifest>, ShardError> {
        let path = dir.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ShardError::BadPart {
                    path,
                    message: format!("cannot read it: {e}"),
                })
            }
        };
        Self::from_bytes(&bytes, &path).map(Some)
    }

    /// [`ShardManifest::read`] on the bytes of the manifest at `path`.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<ShardManifest, ShardError> {
        let path = path.to_path_buf();
        let manifest: ShardManifest =
            serde_json::from_slice(bytes).map_err(|e| ShardError::BadPart {
                path: path.clone(),
                message: format!("not a shard manifest of replay: {e}"),
            })?;
        // The shard as `--shard` would have accepted it: merge divides by its count.
        if let Err(error) = super::Shard::new(manifest.shard.index, manifest.shard.count) {
            return Err(ShardError::BadPart {
                path,
                message: error.to_string(),
            });
        }
        if manifest.format != MANIFEST_FORMAT {
            return Err(ShardError::BadPart {
                path,
                message: format!(
                    "format '{}', this replay reads '{MANIFEST_FORMAT}'",
                    manifest.format
                ),
            });
        }
        Ok(manifest)
    }

    /// The line a finished shard prints: `shard 2/3 (--shard 2/3): 5 of 15 cases, DIR/shard.json`,
    /// `items` naming what the command's work list holds.
    pub fn summary(&self, items: &str, dir: &Path) -> String {
        format!(
            "shard {} ({}): {} of {} {items}, {}",
            self.shard,
            self.shard_from,
            self.covered.len(),
            self.work_items,
            dir.join(MANIFEST_FILE).display()
        )
    }

    /// Writes `dir/shard.json` whole or not at all.
    pub fn write(&self, dir: &Path) -> crate::Result<()> {
        crate::export::write_atomic(
            &dir.join(MANIFEST_FILE),
            &crate::export::json::to_bytes(self),
        )
    }

    /// Removes a previous run's `shard.json` from `dir` before a shard starts, so a shard
    /// that then dies is not taken for finished.
    pub fn clear(dir: &Path) -> crate::Result<()> {
        let path = dir.join(MANIFEST_FILE);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(crate::Error::output(
                &path,
                "remove the stale manifest",
                error,
            )),
        }
    }
}

/// This machine's host name (empty when it cannot be read).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
