//! `replay merge SIGNATURES... --out FILE`: the signature files of a job's shards (`replay
//! classify` run per rank trace, or per group of them) merged into the file that classifying
//! every rank in one run writes, byte for byte. The parts may be given as a glob
//! (`'sig/rank*.json'`, expanded by replay: a thousand names need no long command line).

use std::path::{Path, PathBuf};

use replay_core::export;
use replay_core::ranks;
use replay_core::signature;

/// Whether `parts` name signature files (files, or globs) rather than shard folders.
pub fn names_signature_files(parts: &[PathBuf]) -> bool {
    parts.iter().all(|p| {
        let text = p.to_string_lossy();
        text.contains(['*', '?', '[']) || p.is_file()
    })
}

/// Merges the signature files `parts` name into `out`.
pub fn run(parts: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let paths = ranks::expand(parts).map_err(replay_core::Error::from)?;
    if let Some(folder) = paths.iter().find(|p| !p.is_file()) {
        return Err(replay_core::Error::BadInput {
            path: folder.clone(),
            message: "not a signature file: give the signature files of one job's ranks, or \
                      the output folders of one sharded run, not both"
                .into(),
        }
        .into());
    }
    refuse_out(out, &paths)?;
    let workers = ranks::parallel::workers_for(paths.len());
    let files = ranks::parallel::map_bounded(&paths, workers, |path| {
        signature::read_file(path).map_err(replay_core::Error::from)
    })?;
    let merged = ranks::job_file::merge_files(&paths, files).map_err(replay_core::Error::from)?;
    export::write_atomic(out, &export::json::to_bytes(&merged))?;
    println!(
        "merged {} signature files ({} ranks) into {}",
        paths.len(),
        merged.ranks.len().max(1),
        out.display()
    );
    print!("{}", merged.summary_table());
    if !merged.ranks.is_empty() {
        print!("{}", merged.ranks_table());
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// The merged file is a new file: not a folder, not one of the parts.
fn refuse_out(out: &Path, parts: &[PathBuf]) -> Result<(), replay_core::Error> {
    if out.is_dir() {
        return Err(replay_core::Error::BadInput {
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
        return Err(replay_core::Error::BadInput {
            path: out.to_path_buf(),
            message: "is one of the parts; give --out a file of its own".into(),
        });
    }
    Ok(())
}
