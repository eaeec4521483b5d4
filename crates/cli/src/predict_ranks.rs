//! `replay predict --trace 'rank*.json.gz'`: a job's ranks, each predicted from its own trace
//! in parallel, then put together ([`ranks::straggler::JobPrediction`]): each rank's step
//! time, the straggler, the slowest rank of each step, the collectives matched across ranks.

use std::path::PathBuf;

use replay_core::export;
use replay_core::predict::{self, step_stats::StepStatistics};
use replay_core::ranks::{self, straggler::JobPrediction, straggler::RankPrediction};
use replay_core::trace;

/// What one worker keeps of a rank's trace.
struct RankRead {
    prediction: predict::Prediction,
    collectives: Vec<ranks::collectives::CollectiveKernel>,
    distributed_info: Option<serde_json::Value>,
    sha256: String,
}

/// Predicts the ranks `paths` name; `steps_all`: `--steps all`; `json`: `--json`.
pub fn run(paths: &[PathBuf], steps_all: bool, json: bool) -> anyhow::Result<()> {
    let workers = ranks::parallel::workers_for(paths.len());
    let read = ranks::parallel::map_bounded(paths, workers, |path| {
        let loaded = trace::with_cores_shared_by(workers, || trace::load(path))
            .map_err(replay_core::Error::from)?;
        let prediction = predict::self_check(&loaded).map_err(replay_core::Error::from)?;
        let distributed_info = loaded.metadata.distributed_info.clone();
        let sha256 = loaded.source.sha256.clone();
        // The trace goes before the file is read again for its collectives.
        drop(loaded);
        let collectives = ranks::collectives::read(path).map_err(replay_core::Error::from)?;
        Ok::<_, replay_core::Error>(RankRead {
            prediction,
            collectives,
            distributed_info,
            sha256,
        })
    })?;
    let claims: Vec<ranks::RankClaim> = paths
        .iter()
        .zip(&read)
        .map(|(path, r)| ranks::RankClaim {
            path,
            distributed_info: r.distributed_info.as_ref(),
            recorded: None,
            sha256: &r.sha256,
        })
        .collect();
    let numbers = ranks::assign_ranks(&claims).map_err(replay_core::Error::from)?;
    let rank_predictions: Vec<RankPrediction> = paths
        .iter()
        .zip(read)
        .zip(numbers)
        .map(|((path, r), rank)| RankPrediction {
            rank,
            trace: path.display().to_string(),
            step_statistics: steps_all.then(|| StepStatistics::of(&r.prediction)),
            prediction: r.prediction,
            collectives: r.collectives,
        })
        .collect();
    let job = JobPrediction::new(rank_predictions);
    if json {
        print!("{}", String::from_utf8_lossy(&export::json::to_bytes(&job)));
    } else {
        print!("{}", job.summary());
    }
    Ok(())
}
