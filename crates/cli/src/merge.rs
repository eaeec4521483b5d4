//! `replay merge PARTS... --out DIR`: puts the shards of one run back together into the
//! files a single run writes, re-running nothing. The parts are checked first
//! ([`MergePlan`]); then the command's own merger writes its files. `isolated` and
//! `calibrate` merge here;
//! a command whose writers live in `replay-torch` (the bench suites) is merged there, with
//! the same arguments. Signature files of a job's ranks (files, not folders) are merged by
//! [`super::merge_signatures`].

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use replay_core::shard::{self, MergePlan};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The output folders of the shards of one run, each with its shard.json (any order); or
    /// the signature files of one job's ranks (`replay classify` per rank trace), files or a
    /// glob (`'sig/rank*.json'`, expanded by replay)
    #[arg(required = true, value_name = "PARTS")]
    pub parts: Vec<PathBuf>,

    /// Where the merged files go: the files a single run of the command writes, and
    /// merge.json naming the parts; for signature files, the merged signature file (the
    /// file `replay classify` of every rank in one run writes)
    #[arg(long = "output-dir", alias = "out", value_name = "DIR|FILE")]
    pub out: PathBuf,
}

impl MergeArgs {
    /// The arguments again, for `replay-torch merge`.
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = self
            .parts
            .iter()
            .map(|p| p.clone().into_os_string())
            .collect();
        args.push("--out".into());
        args.push(self.out.clone().into_os_string());
        args
    }
}

/// One command's merge: reads the parts' own files and writes the single run's.
pub trait CommandMerger {
    /// The command its manifests name (`isolated`, `bench scan`).
    fn command(&self) -> &'static str;
    /// Writes the merged files into `out` (already made) and returns lines for the user.
    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>>;
}

/// `replay isolated`: `isolated.json` and `isolated.csv`.
pub struct IsolatedMerger;

impl CommandMerger for IsolatedMerger {
    fn command(&self) -> &'static str {
        shard::isolated::COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        let results = shard::isolated::merge(plan).map_err(replay_core::Error::from)?;
        let files = shard::isolated::write(&results, out)?;
        let ok = results
            .results
            .iter()
            .filter(|r| r.status == replay_core::results::isolated::Status::Ok)
            .count();
        let mut lines = vec![format!(
            "{} signatures, {ok} ok, of {}",
            results.results.len(),
            results.signatures_file
        )];
        lines.extend(files.into_iter().map(|f| format!("wrote {f}")));
        Ok(lines)
    }
}

/// `replay calibrate`: the profile, under the shards' file name.
pub struct CalibrationMerger;

impl CommandMerger for CalibrationMerger {
    fn command(&self) -> &'static str {
        shard::calibration::COMMAND
    }

    fn merge(&self, plan: &MergePlan, out: &Path) -> anyhow::Result<Vec<String>> {
        let profile = shard::calibration::merge(plan).map_err(replay_core::Error::from)?;
        let name = shard::calibration::file_name(plan).map_err(replay_core::Error::from)?;
        let path = shard::calibration::write(&profile, out, &name)?;
        Ok(vec![
            format!(
                "{} measurements, {} failures, best {} GFLOPS",
                profile.operation_profiles.len()
                    + profile
                        .fusion_profiles
                        .values()
                        .map(Vec::len)
                        .sum::<usize>(),
                profile.failures.len(),
                profile
                    .best_measured_gflops
                    .map_or("-".to_string(), |g| format!("{g:.1}"))
            ),
            format!("wrote {path}"),
        ])
    }
}

/// The mergers of the torch-free core.
pub fn core_mergers() -> Vec<Box<dyn CommandMerger>> {
    vec![Box::new(IsolatedMerger), Box::new(CalibrationMerger)]
}

/// Checks the parts and merges them with the merger of their command; `Ok(false)` when
/// none of `mergers` is the command's (and nothing was written).
pub fn run_with(args: &MergeArgs, mergers: &[&dyn CommandMerger]) -> anyhow::Result<bool> {
    if super::merge_signatures::names_signature_files(&args.parts) {
        super::merge_signatures::run(&args.parts, &args.out)?;
        return Ok(true);
    }
    let plan = MergePlan::from_dirs(&args.parts).map_err(replay_core::Error::from)?;
    let first = plan.first();
    let Some(merger) = mergers.iter().find(|m| m.command() == first.command) else {
        return Ok(false);
    };
    refuse_out_among_parts(&args.out, &plan)?;
    replay_core::export::ensure_output_dir(&args.out)?;
    let lines = merger
        .merge(&plan, &args.out)
        .with_context(|| format!("merging the shards of `replay {}`", first.command))?;
    let record = json!({
        "command": first.command,
        "work_items": first.work_items,
        "work_list_hash": first.work_list_hash,
        "device": first.device,
        "replay_version": first.replay_version,
        "settings": first.settings,
        "shards": plan.parts.iter().map(|p| json!({
            "shard": p.manifest.shard,
            "dir": p.dir.display().to_string(),
            "host": p.manifest.host,
            "shard_from": p.manifest.shard_from,
            "argv": p.manifest.argv,
            "items": p.manifest.covered.len(),
        })).collect::<Vec<_>>(),
    });
    replay_core::export::write_atomic(
        &args.out.join("merge.json"),
        &replay_core::export::json::to_bytes(&record),
    )?;
    let mut hosts: Vec<&str> = plan
        .parts
        .iter()
        .map(|p| p.manifest.host.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    println!(
        "merged {} shards of `replay {}` ({} items, work list {}) run on {} ({}) into {}",
        plan.count(),
        first.command,
        first.work_items,
        &first.work_list_hash[..12.min(first.work_list_hash.len())],
        first.device,
        hosts.join(", "),
        args.out.display()
    );
    for line in lines {
        println!("  {line}");
    }
    println!("  wrote {}", args.out.join("merge.json").display());
    Ok(true)
}

/// The merged files must not land in a part's folder (they would replace its rows).
fn refuse_out_among_parts(out: &Path, plan: &MergePlan) -> anyhow::Result<()> {
    let Ok(out_real) = out.canonicalize() else {
        return Ok(()); // not there yet: not a part
    };
    for part in &plan.parts {
        if part.dir.canonicalize().ok().as_deref() == Some(out_real.as_path()) {
            return Err(replay_core::Error::BadInput {
                path: out.to_path_buf(),
                message: "is one of the parts; give --out a folder of its own".into(),
            }
            .into());
        }
    }
    Ok(())
}
