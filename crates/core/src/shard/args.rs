//! What a grid command's `--shard` and `--resume` ask for, and what a sharded run does with
//! them: clear a stale manifest before it starts, write its own last.

use std::path::Path;

use super::manifest::{host_name, MANIFEST_FORMAT};
use super::{Shard, ShardError, ShardManifest, ShardSpec, WorkList};

/// What a grid command was asked about sharding: `--shard` and `--resume`, as the command
/// line (`replay_cli::ShardFlags`) parsed them.
#[derive(Debug, Clone, Default)]
pub struct ShardArgs {
    /// The shard to run (`--shard I/N|auto`); `None`: the whole work list.
    pub shard: Option<ShardSpec>,
    /// Continue a killed or stopped run from the rows it had written (`--resume`).
    pub resume: bool,
}

impl ShardArgs {
    /// The shard this process runs, or `None` without `--shard` (the whole list, and no
    /// manifest).
    pub fn resolve(&self) -> Result<Option<ShardRun>, ShardError> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    /// [`ShardArgs::resolve`] with the environment read through `lookup`.
    pub fn resolve_with(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ShardRun>, ShardError> {
        Ok(match self.shard {
            None => None,
            Some(ShardSpec::Fixed(shard)) => Some(ShardRun {
                shard,
                from: format!("--shard {shard}"),
            }),
            Some(ShardSpec::Auto) => {
                let (shard, from) = super::spec::from_env(lookup)?;
                Some(ShardRun {
                    shard,
                    from: format!("--shard auto: {from}"),
                })
            }
        })
    }
}

/// A sharded run of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardRun {
    pub shard: Shard,
    /// How the shard was chosen, for the manifest.
    pub from: String,
}

/// What a command tells [`ShardRun::finish`] about its run.
pub struct Finished<'a> {
    pub command: &'a str,
    pub device: String,
    pub work_list: &'a WorkList,
    pub settings: serde_json::Value,
    pub output_dir: &'a Path,
    pub files: Vec<String>,
}

impl ShardRun {
    /// Before any item runs: a previous run's manifest in `dir` goes.
    pub fn begin(&self, dir: &Path) -> crate::Result<()> {
        ShardManifest::clear(dir)
    }

    /// After the shard's last item: writes its manifest (atomically) and returns it.
    pub fn finish(&self, run: Finished<'_>) -> crate::Result<ShardManifest> {
        let manifest = ShardManifest {
            format: MANIFEST_FORMAT.into(),
            command: run.command.into(),
            argv: std::env::args().collect(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            shard: self.shard,
            shard_from: self.from.clone(),
            device: run.device,
            replay_version: env!("CARGO_PKG_VERSION").into(),
            host: host_name(),
            work_items: run.work_list.ids.len(),
            work_list_hash: run.work_list.hash(),
            covered: run.work_list.covered(self.shard),
            settings: run.settings,
            output_dir: run.output_dir.display().to_string(),
            files: run.files,
        };
        manifest.write(run.output_dir)?;
        Ok(manifest)
    }
}
