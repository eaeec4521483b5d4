//! `replay merge` for the commands whose writers live in this package (the bench suites):
//! the torch-free `replay merge` checks the parts, merges `isolated` itself and hands the
//! rest here, to the merger each suite keeps beside its writers (`suites/NAME/.../merge.rs`),
//! which orders the shards' rows into the work list's order.

use std::path::Path;

use replay_cli::merge::{core_mergers, run_with, CommandMerger, MergeArgs};
use replay_core::shard::MergePlan;

use crate::suites::{mhc, quant, scan};

/// A suite's merge (its typed function) as the command line's merger.
struct SuiteMerger {
    command: &'static str,
    merge: fn(&MergePlan, &Path) -> crate::Result<Vec<String>>,
}

impl CommandMerger for SuiteMerger {
    fn command(&self) -> &'static str {
        self.command
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        Ok((self.merge)(plan, out)?)
    }
}

/// The suites' mergers.
const SUITE_MERGERS: [SuiteMerger; 3] = [
    SuiteMerger {
        command: scan::bench::COMMAND,
        merge: scan::bench::merge::merge,
    },
    SuiteMerger {
        command: quant::COMMAND,
        merge: quant::merge::merge,
    },
    SuiteMerger {
        command: mhc::run::COMMAND,
        merge: |plan, out| Ok(mhc::merge::merge(plan, out)?),
    },
];

pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    let core = core_mergers();
    let mut mergers: Vec<&dyn CommandMerger> = core.iter().map(|m| m.as_ref()).collect();
    mergers.extend(SUITE_MERGERS.iter().map(|m| m as &dyn CommandMerger));
    if run_with(&args, &mergers)? {
        return Ok(());
    }
    let plan = MergePlan::from_dirs(&args.parts).map_err(crate::Error::from)?;
    Err(crate::Error::Core(replay_core::Error::BadInput {
        path: plan.parts[0].dir.join(replay_core::shard::MANIFEST_FILE),
        message: format!(
            "replay cannot merge shards of `{}` (it merges: {})",
            plan.first().command,
            mergers
                .iter()
                .map(|m| m.command())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
    .into())
}
