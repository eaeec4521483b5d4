//! A job's signature file from its ranks' files (or from files that each cover some of its
//! ranks): the ranks assigned and checked ([`super::job`]), then merged
//! ([`crate::signature::merge`]). `replay classify` of several traces and `replay merge` of
//! signature files both end here, so they write the same bytes.

use std::path::PathBuf;

use super::error::RankError;
use super::job::{assign_ranks, RankClaim};
use crate::signature::{self, MergePart, SignatureFile};

/// The job's file from its parts' files (ranks assigned and checked as `classify` does).
pub fn merge_files(
    paths: &[PathBuf],
    files: Vec<SignatureFile>,
) -> Result<SignatureFile, RankError> {
    let mut claims: Vec<RankClaim> = Vec::new();
    // Which claim is each single-trace part's.
    let mut single_claim: Vec<Option<usize>> = Vec::new();
    for (path, file) in paths.iter().zip(&files) {
        if file.ranks.is_empty() {
            single_claim.push(Some(claims.len()));
            claims.push(RankClaim {
                path,
                distributed_info: file.source.distributed_info.as_ref(),
                recorded: None,
                sha256: &file.source.sha256,
            });
        } else {
            single_claim.push(None);
            claims.extend(file.ranks.iter().map(|r| RankClaim {
                path,
                distributed_info: r.source.distributed_info.as_ref(),
                recorded: Some(r.rank),
                sha256: &r.source.sha256,
            }));
        }
    }
    let numbers = assign_ranks(&claims)?;
    let parts: Vec<MergePart> = paths
        .iter()
        .zip(files)
        .zip(single_claim)
        .map(|((path, file), claim)| MergePart {
            path: path.clone(),
            file,
            rank: claim.map_or(0, |c| numbers[c]),
        })
        .collect();
    signature::merge::merge(&parts).map_err(RankError::Merge)
}
