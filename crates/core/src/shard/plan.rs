//! Checking a set of parts before anything is merged, and the order of their items: every
//! part of one command, work list, settings and device; each shard once; none missing (a
//! part folder without `shard.json` is a shard that did not finish). Item `p` of the work
//! list is then item `p / N` of shard `p mod N + 1`, and the ids put back in that order
//! must hash to the recorded work list: the merged rows are a single run's, in its order.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::work_list::hash_ids;
use super::{Shard, ShardError, ShardManifest};

/// One shard's folder and manifest.
#[derive(Debug, Clone)]
pub struct Part {
    pub dir: PathBuf,
    pub manifest: ShardManifest,
}

/// The most missing shards a refusal lists, each with the command that runs it.
const MAX_LISTED: usize = 32;

/// A checked set of parts, one per shard, in shard order.
#[derive(Debug, Clone)]
pub struct MergePlan {
    pub parts: Vec<Part>,
}

impl MergePlan {
    /// Reads the manifests of `dirs` and checks them (see the module's notes).
    pub fn from_dirs(dirs: &[PathBuf]) -> Result<MergePlan, ShardError> {
        if dirs.is_empty() {
            return Err(ShardError::Mismatch("no parts given".into()));
        }
        let mut found = Vec::new();
        for dir in dirs {
            if !dir.is_dir() {
                return Err(ShardError::BadPart {
                    path: dir.clone(),
                    message: "not a folder (give the output folders of the shards)".into(),
                });
            }
            found.push((dir.clone(), ShardManifest::read(dir)?));
        }
        Self::from_manifests(found)
    }

    /// [`MergePlan::from_dirs`] on the manifests read from each folder (`None`: a folder
    /// without one).
    pub fn from_manifests(
        found: Vec<(PathBuf, Option<ShardManifest>)>,
    ) -> Result<MergePlan, ShardError> {
        let mut parts = Vec::new();
        let mut unfinished = Vec::new();
        for (dir, manifest) in found {
            match manifest {
                Some(manifest) => parts.push(Part { dir, manifest }),
                None => unfinished.push(dir),
            }
        }
        let Some(first) = parts.first().cloned() else {
            return Err(ShardError::Missing(format!(
                "none of the parts has a {} (no shard finished): {}",
                super::MANIFEST_FILE,
                list(&unfinished)
            )));
        };
        check_same(&parts, "command", |m| m.command.clone())?;
        check_same(&parts, "work list (hash of the ordered items)", |m| {
            format!("{} ({} items)", m.work_list_hash, m.work_items)
        })?;
        check_same(&parts, "shard count", |m| m.shard.count.to_string())?;
        check_same(&parts, "device", |m| m.device.clone())?;
        check_same(&parts, "settings", |m| m.settings.to_string())?;
        check_same(&parts, "replay version", |m| m.replay_version.clone())?;

        let count = first.manifest.shard.count;
        let mut by_index: BTreeMap<usize, Vec<&Part>> = BTreeMap::new();
        for part in &parts {
            by_index
                .entry(part.manifest.shard.index)
                .or_default()
                .push(part);
        }
        let duplicated: Vec<String> = by_index
            .iter()
            .filter(|(_, p)| p.len() > 1)
            .map(|(i, p)| {
                format!(
                    "shard {i}/{count} in {}",
                    p.iter()
                        .map(|p| p.dir.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" and ")
                )
            })
            .collect();
        if !duplicated.is_empty() {
            return Err(ShardError::Duplicated(format!(
                "{} (give each shard's folder once)",
                duplicated.join("; ")
            )));
        }
        // Every index is at most the count (the manifests are checked as read); a count far
        // beyond the parts given (a hostile manifest's 10^18) is listed in part, not walked.
        let missing_total = count.saturating_sub(by_index.len());
        if missing_total > 0 {
            let missing: Vec<usize> = (1..=count)
                .filter(|i| !by_index.contains_key(i))
                .take(MAX_LISTED)
                .collect();
            return Err(ShardError::Missing(missing_message(
                &first,
                &missing,
                missing_total,
                count,
                &unfinished,
            )));
        }
        if !unfinished.is_empty() {
            // Every shard is there, and these folders are extra: a stopped earlier attempt.
            return Err(ShardError::Duplicated(format!(
                "{} have no {} but every shard of {count} is present elsewhere: leave them out",
                list(&unfinished),
                super::MANIFEST_FILE
            )));
        }
        parts.sort_by_key(|p| p.manifest.shard.index);
        let plan = MergePlan { parts };
        plan.check_coverage()?;
        Ok(plan)
    }

    /// The shared manifest fields (command, device, work list) of every part.
    pub fn first(&self) -> &ShardManifest {
        &self.parts[0].manifest
    }

    pub fn count(&self) -> usize {
        self.first().shard.count
    }

    /// For each item of the work list in order: (part index, position in that part's
    /// `covered`).
    pub fn order(&self) -> Vec<(usize, usize)> {
        let count = self.count();
        (0..self.first().work_items)
            .map(|p| (p % count, p / count))
            .collect()
    }

    /// The work list's ids in order, as the parts cover them.
    pub fn ids(&self) -> Vec<&str> {
        self.order()
            .into_iter()
            .map(|(part, slot)| self.parts[part].manifest.covered[slot].as_str())
            .collect()
    }

    fn check_coverage(&self) -> Result<(), ShardError> {
        let first = self.first();
        for part in &self.parts {
            let m = &part.manifest;
            let shard =
                Shard::new(m.shard.index, m.shard.count).map_err(|e| ShardError::BadPart {
                    path: part.dir.join(super::MANIFEST_FILE),
                    message: e.to_string(),
                })?;
            // The positions p < work_items with p mod count = index - 1, counted without
            // listing them (a hostile manifest's work_items may be 10^18).
            let expected = first.work_items.saturating_add(shard.count - shard.index) / shard.count;
            if m.covered.len() != expected {
                return Err(ShardError::BadPart {
                    path: part.dir.join(super::MANIFEST_FILE),
                    message: format!(
                        "shard {} covers {} items, but shard {} of a list of {} has {expected}",
                        m.shard,
                        m.covered.len(),
                        m.shard,
                        first.work_items
                    ),
                });
            }
        }
        let hash = hash_ids(&first.command, self.ids().into_iter());
        if hash != first.work_list_hash {
            return Err(ShardError::Mismatch(format!(
                "the items the parts cover, put back in order, are not the work list they record (hash {hash}, recorded {})",
                first.work_list_hash
            )));
        }
        Ok(())
    }
}

fn list(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses parts that differ in `what`, naming each part's value.
fn check_same(
    parts: &[Part],
    what: &str,
    key: impl Fn(&ShardManifest) -> String,
) -> Result<(), ShardError> {
    let first = key(&parts[0].manifest);
    if parts.iter().all(|p| key(&p.manifest) == first) {
        return Ok(());
    }
    let mut text = format!("the parts differ in their {what}:");
    for part in parts {
        let _ = write!(
            text,
            "\n  {} (shard {}): {}",
            part.dir.display(),
            part.manifest.shard,
            key(&part.manifest)
        );
    }
    Err(ShardError::Mismatch(text))
}

/// Which shards are missing, and the command that runs each (from a present shard's
/// command line, with its `--shard` and its output folder changed).
fn missing_message(
    first: &Part,
    missing: &[usize],
    missing_total: usize,
    count: usize,
    unfinished: &[PathBuf],
) -> String {
    let mut text = format!(
        "missing {missing_total} of {count} shards: {}",
        missing
            .iter()
            .map(|i| format!("{i}/{count}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if missing_total > missing.len() {
        let _ = write!(text, " and {} more", missing_total - missing.len());
    }
    if !unfinished.is_empty() {
        let _ = write!(
            text,
            "\n{} without {} (a shard that did not finish, or is still running): {}",
            if unfinished.len() == 1 {
                "a part"
            } else {
                "parts"
            },
            super::MANIFEST_FILE,
            list(unfinished)
        );
    }
    text.push_str("\nnothing was merged; run the missing shards, then merge again:");
    for &index in missing {
        let _ = write!(text, "\n  {}", rerun_command(&first.manifest, index));
    }
    text
}

/// `replay ARGS` of `manifest`'s run with `--shard index/N` and the output folder of shard
/// `index` in its place (`--output-dir DIR`, or `--output DIR/FILE` for `calibrate`).
pub fn rerun_command(manifest: &ShardManifest, index: usize) -> String {
    let count = manifest.shard.count;
    let dir = sibling_dir(&manifest.output_dir, manifest.shard.index, index);
    let mut args: Vec<String> = vec!["replay".into()];
    let mut output: Vec<String> = vec!["--output-dir".into(), dir.clone()];
    let mut rest = manifest.argv.iter().skip(1);
    while let Some(arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        match flag {
            "--shard" | "--output-dir" | "--output" => {
                let value = match inline {
                    Some(v) => v,
                    None => rest.next().cloned().unwrap_or_default(),
                };
                if flag == "--output" {
                    // A file in the shard's folder: the same name in the other shard's.
                    let name = Path::new(&value)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    output = vec![
                        "--output".into(),
                        Path::new(&dir).join(name).display().to_string(),
                    ];
                }
            }
            _ => args.push(arg.clone()),
        }
    }
    args.push("--shard".into());
    args.push(format!("{index}/{count}"));
    args.extend(output);
    let command = args
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    // The run's relative paths (--kernels, the output) are relative to where it ran.
    match manifest.cwd.as_str() {
        "" => command,
        cwd => format!("cd {} && {command}", shell_quote(cwd)),
    }
}

/// The output folder of shard `to`, from shard `from`'s: its last number equal to `from` in
/// the folder's name becomes `to` (`run/shard-2` → `run/shard-3`); a name without it gets
/// `-shard-to` appended.
fn sibling_dir(dir: &str, from: usize, to: usize) -> String {
    let path = Path::new(dir);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let from_text = from.to_string();
    let mut found = None;
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if name[start..i].trim_start_matches('0') == from_text.trim_start_matches('0') {
                found = Some((start, i));
            }
        } else {
            i += 1;
        }
    }
    let new_name = match found {
        Some((start, end)) => format!("{}{to}{}", &name[..start], &name[end..]),
        None => format!("{name}-shard-{to}"),
    };
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => parent.join(new_name).display().to_string(),
        None => new_name,
    }
}

fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::manifest::MANIFEST_FORMAT;
    use crate::shard::WorkList;

    fn manifest(list: &WorkList, shard: Shard, dir: &Path) -> ShardManifest {
        ShardManifest {
            format: MANIFEST_FORMAT.into(),
            command: list.command.clone(),
            cwd: String::new(),
            argv: vec![
                "/opt/replay/bin/replay-torch".into(),
                "bench".into(),
                "scan".into(),
                "--T".into(),
                "8,16".into(),
                format!("--shard={shard}"),
                "--output-dir".into(),
                dir.display().to_string(),
            ],
            shard,
            shard_from: format!("--shard {shard}"),
            device: "cpu".into(),
            replay_version: "0.1.0".into(),
            host: "node1".into(),
            work_items: list.ids.len(),
            work_list_hash: list.hash(),
            covered: list.covered(shard),
            settings: serde_json::json!({"repeats": 5}),
            output_dir: dir.display().to_string(),
            files: vec![],
        }
    }

    fn parts(list: &WorkList, count: usize, root: &Path) -> Vec<PathBuf> {
        (1..=count)
            .map(|i| {
                let dir = root.join(format!("shard-{i}"));
                std::fs::create_dir_all(&dir).unwrap();
                manifest(list, Shard::new(i, count).unwrap(), &dir)
                    .write(&dir)
                    .unwrap();
                dir
            })
            .collect()
    }

    fn list() -> WorkList {
        WorkList::new("bench scan", (0..7).map(|i| format!("case {i}")).collect())
    }

    #[test]
    fn three_shards_put_back_the_work_list_in_order() {
        let root = tempfile::tempdir().unwrap();
        let mut dirs = parts(&list(), 3, root.path());
        dirs.reverse();
        let plan = MergePlan::from_dirs(&dirs).unwrap();
        assert_eq!(
            plan.ids(),
            list().ids.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert_eq!(plan.parts[0].manifest.shard.index, 1);
    }

    #[test]
    fn a_missing_shard_is_named_with_the_command_that_runs_it() {
        let root = tempfile::tempdir().unwrap();
        let dirs = parts(&list(), 3, root.path());
        // Shard 2 died: its folder has rows but no shard.json.
        std::fs::remove_file(dirs[1].join(crate::shard::MANIFEST_FILE)).unwrap();
        let err = MergePlan::from_dirs(&dirs).unwrap_err().to_string();
        assert!(err.contains("missing 1 of 3 shards: 2/3"), "{err}");
        assert!(err.contains(&dirs[1].display().to_string()), "{err}");
        let expected = format!(
            "replay bench scan --T 8,16 --shard 2/3 --output-dir {}",
            root.path().join("shard-2").display()
        );
        assert!(err.contains(&expected), "{err}\nexpected {expected}");
        // Left out altogether, it is missing all the same.
        let err = MergePlan::from_dirs(&[dirs[0].clone(), dirs[2].clone()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("2/3"), "{err}");
    }

    #[test]
    fn parts_of_other_lists_devices_or_commands_and_duplicates_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = parts(&list(), 2, root.path());
        let other = root.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        let mut longer = list();
        longer.ids.push("case 7".into());
        manifest(&longer, Shard::new(2, 2).unwrap(), &other)
            .write(&other)
            .unwrap();
        let err = MergePlan::from_dirs(&[dirs[0].clone(), other.clone()]).unwrap_err();
        assert!(matches!(err, ShardError::Mismatch(_)), "{err}");
        assert!(err.to_string().contains("work list"), "{err}");

        let mut on_gpu = manifest(&list(), Shard::new(2, 2).unwrap(), &other);
        on_gpu.device = "cuda:0 NVIDIA H100".into();
        on_gpu.write(&other).unwrap();
        let err = MergePlan::from_dirs(&[dirs[0].clone(), other.clone()]).unwrap_err();
        assert!(err.to_string().contains("device"), "{err}");

        let mut isolated = manifest(&list(), Shard::new(2, 2).unwrap(), &other);
        isolated.command = "isolated".into();
        isolated.write(&other).unwrap();
        let err = MergePlan::from_dirs(&[dirs[0].clone(), other.clone()]).unwrap_err();
        assert!(err.to_string().contains("command"), "{err}");

        let err =
            MergePlan::from_dirs(&[dirs[0].clone(), dirs[0].clone(), dirs[1].clone()]).unwrap_err();
        assert!(matches!(err, ShardError::Duplicated(_)), "{err}");
        assert!(err.to_string().contains("shard 1/2"), "{err}");
    }

    #[test]
    fn a_part_that_lies_about_its_items_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = parts(&list(), 2, root.path());
        let mut m = ShardManifest::read(&dirs[1]).unwrap().unwrap();
        m.covered.swap(0, 1);
        m.write(&dirs[1]).unwrap();
        let err = MergePlan::from_dirs(&dirs).unwrap_err().to_string();
        assert!(err.contains("not the work list"), "{err}");
    }

    #[test]
    fn a_calibrations_rerun_keeps_its_profile_name_in_the_other_folder() {
        let mut m = manifest(&list(), Shard::new(1, 2).unwrap(), Path::new("cal/s1"));
        m.argv = [
            "replay-torch",
            "calibrate",
            "--quick",
            "--shard=auto",
            "--output=cal/s1/p.json",
        ]
        .map(String::from)
        .to_vec();
        m.cwd = "/home/me/run 1".into();
        assert_eq!(
            rerun_command(&m, 2),
            "cd '/home/me/run 1' && replay calibrate --quick --shard 2/2 --output cal/s2/p.json"
        );
    }

    #[test]
    fn sibling_folders_follow_the_shard_number() {
        assert_eq!(sibling_dir("out/shard-2", 2, 3), "out/shard-3");
        assert_eq!(sibling_dir("out/run12_part02", 2, 4), "out/run12_part4");
        assert_eq!(sibling_dir("out/first", 1, 2), "out/first-shard-2");
    }
}
