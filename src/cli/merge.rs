//! `replay merge` for the commands whose writers live in this package (the bench suites):
//! the torch-free `replay merge` checks the parts, merges `isolated` itself and hands the
//! rest here. Each suite's merger orders the shards' rows into the work list's order and
//! hands them to the suite's own writers and analysis.

use std::path::Path;

use anyhow::Context as _;
use replay_core::cli::merge::{core_mergers, run_with, CommandMerger, MergeArgs};
use replay_core::shard::MergePlan;

use crate::suites::quant;
use crate::suites::scan::analyze;
use crate::suites::scan::bench::{self, rows::COLUMNS, ScanOutputs};
use replay_core::suite::RowSink as _;

/// `replay bench scan`: benchmark_full.csv, heatmap_data.json and memory_breakdown.csv, as
/// the run writes them, then the analysis (`bench scan analyze`) into `plots/`.
pub struct ScanMerger;

/// Where the merged scan's analysis goes, inside `--out`.
pub const SCAN_PLOTS_DIR: &str = "plots";

impl CommandMerger for ScanMerger {
    fn command(&self) -> &'static str {
        bench::COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        let rows = replay_core::shard::rows::ordered_rows(plan, bench::outputs::FULL_CSV, &COLUMNS)
            .map_err(crate::Error::from)?;
        let mut outputs = ScanOutputs::create(out)?;
        for row in &rows {
            outputs.push(row)?;
        }
        let ok = rows
            .iter()
            .filter(|r| r.get("status").and_then(|s| s.as_str()) == Some("ok"))
            .count();
        let mut lines = vec![format!("{} cases, {ok} ok", rows.len())];
        for file in [
            bench::outputs::FULL_CSV,
            bench::outputs::HEATMAP_JSON,
            bench::outputs::MEMORY_BREAKDOWN_CSV,
        ] {
            lines.push(format!("wrote {}", out.join(file).display()));
        }
        if ok == 0 {
            lines.push("no ok case: no analysis".into());
            return Ok(lines);
        }
        let plots = out.join(SCAN_PLOTS_DIR);
        let summary = analyze::run(&out.join(bench::outputs::FULL_CSV), &plots, "torch")
            .context("analysing the merged benchmark_full.csv")?;
        lines.push(format!(
            "wrote {} tables and plots to {} (open index.html)",
            summary.files.len(),
            plots.display()
        ));
        Ok(lines)
    }
}

/// `replay bench quant`: one `results_<DDMMYYYY_HHMMSS>.csv` (named for the merge's time,
/// as a run names its own) and the seed's table.
pub struct QuantMerger;

impl CommandMerger for QuantMerger {
    fn command(&self) -> &'static str {
        quant::COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        // Each shard named its CSV for the time it ran: the name is in its shard.json.
        let rows = replay_core::shard::rows::ordered_rows_from(
            plan,
            |part| {
                part.dir
                    .join(part.manifest.files.first().map_or("", String::as_str))
            },
            &quant::rows::COLUMNS,
        )
        .map_err(crate::Error::from)?;
        let (mut csv, path) = quant::output::open_results(out, &quant::rows::COLUMNS)?;
        for row in &rows {
            csv.push(row)?;
        }
        let ok = rows
            .iter()
            .filter(|r| r.get("status").and_then(|s| s.as_str()) == Some("ok"))
            .count();
        Ok(vec![
            format!("{} rows, {ok} ok", rows.len()),
            quant::output::table(&rows),
            format!("wrote {}", path.display()),
        ])
    }
}

/// `replay bench mhc`: one `benchmark_results.csv` and, for a sweep, the offload answer.
pub struct MhcMerger;

impl CommandMerger for MhcMerger {
    fn command(&self) -> &'static str {
        crate::suites::mhc::run::COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        Ok(crate::suites::mhc::merge::merge(plan, out)?)
    }
}

pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    let core = core_mergers();
    let mut mergers: Vec<&dyn CommandMerger> = core.iter().map(|m| m.as_ref()).collect();
    mergers.push(&ScanMerger);
    mergers.push(&QuantMerger);
    mergers.push(&MhcMerger);
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
