//! `replay merge SIGNATURES... --out FILE`: the signature files of a job's shards (`replay
//! classify` run per rank trace, or per group of them) merged into the file that classifying
//! every rank in one run writes, byte for byte. The parts may be given as a glob
//! (`'sig/rank*.json'`, expanded by replay: a thousand names need no long command line).

use std::path::{Path, PathBuf};

use super::classify::ranks_table;
use super::merge::MergeArgs;
use crate::export;
use crate::ranks;
use crate::signature::{self, MergePart, SignatureFile};

/// Whether `parts` name signature files (files, or globs) rather than shard folders.
pub fn names_signature_files(parts: &[PathBuf]) -> bool {
    parts.iter().all(|p| {
        let text = p.to_string_lossy();
        text.contains(['*', '?', '[']) || p.is_file()
    })
}

pub fn run(args: &MergeArgs) -> anyhow::Result<()> {
    let paths = ranks::expand(&args.parts).map_err(crate::Error::from)?;
    if let Some(folder) = paths.iter().find(|p| !p.is_file()) {
        return Err(crate::Error::BadInput {
            path: folder.clone(),
            message: "not a signature file: give the signature files of one job's ranks, or \
                      the output folders of one sharded run, not both"
                .into(),
        }
        .into());
    }
    refuse_out(&args.out, &paths)?;
    let workers = ranks::parallel::workers_for(paths.len());
    let files = ranks::parallel::map_bounded(&paths, workers, |path| {
        signature::read_file(path).map_err(crate::Error::from)
    })?;
    let merged = merge_files(&paths, files)?;
    export::write_atomic(&args.out, &export::json::to_bytes(&merged))?;
    println!(
        "merged {} signature files ({} ranks) into {}",
        paths.len(),
        merged.ranks.len().max(1),
        args.out.display()
    );
    print!("{}", merged.summary_table());
    if !merged.ranks.is_empty() {
        print!("{}", ranks_table(&merged));
    }
    println!("wrote {}", args.out.display());
    Ok(())
}

/// The job's file from its parts' files (ranks assigned and checked as `classify` does).
pub fn merge_files(
    paths: &[PathBuf],
    files: Vec<SignatureFile>,
) -> Result<SignatureFile, crate::Error> {
    let mut claims: Vec<ranks::RankClaim> = Vec::new();
    // Which claim is each single-trace part's.
    let mut single_claim: Vec<Option<usize>> = Vec::new();
    for (path, file) in paths.iter().zip(&files) {
        if file.ranks.is_empty() {
            single_claim.push(Some(claims.len()));
            claims.push(ranks::RankClaim {
                path,
                distributed_info: file.source.distributed_info.as_ref(),
                recorded: None,
                sha256: &file.source.sha256,
            });
        } else {
            single_claim.push(None);
            claims.extend(file.ranks.iter().map(|r| ranks::RankClaim {
                path,
                distributed_info: r.source.distributed_info.as_ref(),
                recorded: Some(r.rank),
                sha256: &r.source.sha256,
            }));
        }
    }
    let numbers = ranks::assign_ranks(&claims)?;
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
    signature::merge::merge(&parts).map_err(|e| crate::Error::Ranks(ranks::RankError::Merge(e)))
}

/// The merged file is a new file: not a folder, not one of the parts.
fn refuse_out(out: &Path, parts: &[PathBuf]) -> Result<(), crate::Error> {
    if out.is_dir() {
        return Err(crate::Error::BadInput {
            path: out.to_path_buf(),
            message: "is a folder; give --out the merged signature file's name".into(),
        });
    }
    let Ok(out_real) = out.canonicalize() else {
        return Ok(());
    };
    if parts
        .iter()
        .any(|p| p.canonicalize().ok().as_deref() == Some(out_real.as_path()))
    {
        return Err(crate::Error::BadInput {
            path: out.to_path_buf(),
            message: "is one of the parts; give --out a file of its own".into(),
        });
    }
    Ok(())
}
