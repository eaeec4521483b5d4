//! The one `--shard`/`--resume` pair every grid command flattens into its arguments; what they
//! ask for is the core's [`ShardArgs`].

use clap::Args;
use replay_core::shard::{ShardArgs, ShardSpec};

#[derive(Debug, Clone, Default, Args)]
pub struct ShardFlags {
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

impl ShardFlags {
    /// What the flags ask for.
    pub fn args(&self) -> ShardArgs {
        ShardArgs {
            shard: self.shard,
            resume: self.resume,
        }
    }
}

fn parse_spec(text: &str) -> Result<ShardSpec, String> {
    text.parse::<ShardSpec>().map_err(|e| e.to_string())
}
