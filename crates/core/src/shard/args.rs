//! The one `--shard` flag every grid command flattens into its arguments, and what a
//! sharded run does with it: clear a stale manifest before it starts, write its own last.

use std::path::Path;

use clap::Args;

use super::manifest::{host_name, MANIFEST_FORMAT};
use super::{Shard, ShardError, ShardManifest, ShardSpec, WorkList};

#[derive(Debug, Clone, Default, Args)]
pub struct ShardArgs {
    /// Run only shard I of N of the work list (1-based: 1/4 … 4/4; item k goes to shard
    /// k mod N + 1) and write shard.json beside the outputs for `replay merge`. `auto`
    /// reads a Slurm array (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN + 1 of
    /// SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX + 1 of
    /// REPLAY_SHARD_COUNT)
    #[arg(long, value_name = "I/N|auto", value_parser = parse_spec)]
    pub shard: Option<ShardSpec>,

    /// Continue a run that was killed (SIGKILL, a lost node, a preemption) or stopped
    /// (SIGINT/SIGTERM) from the rows it had written, in the same output folder: the rows
    /// so far are kept byte for byte, a half-written last one is redone. Refused (exit 2)
    /// when the folder's resume.json is another run's (another command, work list, shard or
    /// settings)
    #[arg(long)]
    pub resume: bool,
}

fn parse_spec(text: &str) -> Result<ShardSpec, String> {
    text.parse::<ShardSpec>().map_err(|e| e.to_string())
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
