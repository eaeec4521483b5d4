//! Merging the shards of `replay calibrate`: each shard's profile holds the measurements of
//! its work items (matmul sizes, memory sizes, fusion families, the host section), every one
//! under keys of its own; the merged profile is the first shard's metadata and peaks with every shard's
//! measurements and failures, summarised again as a single run summarises them.

use std::path::Path;

use super::{MergePlan, ShardError};
use crate::results::calibration::Profile;

/// The command name the manifests of `replay calibrate` carry.
pub const COMMAND: &str = "calibrate";

/// The profile file's name, as every shard named it (its `--output`'s file name).
pub fn file_name(plan: &MergePlan) -> Result<String, ShardError> {
    let name = plan.first().files.first().cloned().unwrap_or_default();
    if name.is_empty()
        || plan
            .parts
            .iter()
            .any(|p| p.manifest.files.first() != Some(&name))
    {
        return Err(ShardError::Mismatch(
            "the shards' profiles have different file names (give every shard's --output the same file name)".into(),
        ));
    }
    Ok(name)
}

/// The merged profile of `plan`'s parts.
pub fn merge(plan: &MergePlan) -> Result<Profile, ShardError> {
    let name = file_name(plan)?;
    let mut merged: Option<Profile> = None;
    for part in &plan.parts {
        let path = part.dir.join(&name);
        let profile = Profile::read(&path).map_err(|e| ShardError::BadPart {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let merged = merged.get_or_insert_with(|| {
            let mut base = profile.clone();
            base.operation_profiles.clear();
            base.fusion_profiles.clear();
            base.failures.clear();
            base.host = None;
            base
        });
        // The host section is one work item: whichever shard measured it.
        if profile.host.is_some() {
            merged.host = profile.host;
        }
        merged.operation_profiles.extend(profile.operation_profiles);
        merged.failures.extend(profile.failures);
        for (pattern, entries) in profile.fusion_profiles {
            merged
                .fusion_profiles
                .entry(pattern)
                .or_default()
                .extend(entries);
        }
    }
    let mut merged = merged.ok_or_else(|| ShardError::Mismatch("no parts".into()))?;
    merged.summarise();
    Ok(merged)
}

/// Writes the merged profile into `out` under the shards' file name.
pub fn write(profile: &Profile, out: &Path, name: &str) -> crate::Result<String> {
    let path = out.join(name);
    crate::export::write_atomic(&path, &crate::export::json::to_bytes(profile))?;
    Ok(path.display().to_string())
}
