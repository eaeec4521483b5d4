//! Which rank each trace is, and whether the traces are one job's.
//!
//! A trace's rank is its `distributedInfo.rank` (what `torch.profiler` records for a
//! distributed run); when none of the traces records one, the files' order is the rank order
//! (a rank of a merged signature file keeps the number it was given).
//! The traces are one job when they agree on `distributedInfo.world_size` and `pg_config`
//! (the process groups and their ranks), and no two claim the same rank or are the same file.

use std::path::Path;

use serde_json::Value;

use super::error::RankError;

/// What one trace (or one rank of a merged signature file) says about its rank.
#[derive(Debug, Clone, Copy)]
pub struct RankClaim<'a> {
    /// The file it came from (named in errors).
    pub path: &'a Path,
    /// `distributedInfo`, as recorded.
    pub distributed_info: Option<&'a Value>,
    /// The rank already given to it (a rank of a merged signature file).
    pub recorded: Option<u32>,
    /// SHA-256 of the trace file.
    pub sha256: &'a str,
}

impl RankClaim<'_> {
    /// The rank its `distributedInfo` records.
    fn recorded_by_trace(&self) -> Option<u32> {
        self.distributed_info
            .and_then(|d| d.get("rank"))
            .and_then(Value::as_u64)
            .and_then(|r| u32::try_from(r).ok())
    }
}

/// The rank of each claim, in the claims' order. Errors name the file at fault.
pub fn assign_ranks(claims: &[RankClaim]) -> Result<Vec<u32>, RankError> {
    check_same_job(claims)?;
    // When no trace records its rank, a trace's rank is its place in the list (a rank a
    // merged file already gave is kept).
    let traces_record = claims.iter().position(|c| c.recorded_by_trace().is_some());
    let mut ranks = Vec::with_capacity(claims.len());
    for (index, claim) in claims.iter().enumerate() {
        let rank = claim
            .recorded
            .or_else(|| claim.recorded_by_trace())
            .or_else(|| traces_record.is_none().then_some(index as u32));
        match (rank, traces_record) {
            (Some(rank), _) => ranks.push(rank),
            (None, with) => {
                return Err(RankError::MissingRank {
                    path: claim.path.to_path_buf(),
                    other: claims[with.unwrap_or(0)].path.to_path_buf(),
                })
            }
        }
    }
    for (index, claim) in claims.iter().enumerate() {
        let earlier = &claims[..index];
        if let Some(other) = earlier.iter().find(|c| c.sha256 == claim.sha256) {
            return Err(RankError::SameTrace {
                path: claim.path.to_path_buf(),
                other: other.path.to_path_buf(),
            });
        }
        if let Some(other) = ranks[..index].iter().position(|&r| r == ranks[index]) {
            return Err(RankError::DuplicateRank {
                path: claim.path.to_path_buf(),
                rank: ranks[index],
                other: claims[other].path.to_path_buf(),
            });
        }
        if let Some(size) = world_size(claim) {
            if u64::from(ranks[index]) >= size {
                return Err(RankError::OtherJob {
                    path: claim.path.to_path_buf(),
                    message: format!("rank {} of a world of {size}", ranks[index]),
                });
            }
        }
    }
    Ok(ranks)
}

fn world_size(claim: &RankClaim) -> Option<u64> {
    claim
        .distributed_info
        .and_then(|d| d.get("world_size"))
        .and_then(Value::as_u64)
}

/// The traces agree on the job's world size and process groups.
fn check_same_job(claims: &[RankClaim]) -> Result<(), RankError> {
    let Some(first) = claims.first() else {
        return Ok(());
    };
    let field = |claim: &RankClaim, name: &str| -> Option<Value> {
        claim.distributed_info.and_then(|d| d.get(name)).cloned()
    };
    for claim in &claims[1..] {
        for name in ["world_size", "pg_config"] {
            let (theirs, ours) = (field(claim, name), field(first, name));
            if theirs != ours {
                return Err(RankError::OtherJob {
                    path: claim.path.to_path_buf(),
                    message: format!(
                        "distributedInfo.{name} is {}, in {} it is {}",
                        describe(theirs.as_ref()),
                        first.path.display(),
                        describe(ours.as_ref())
                    ),
                });
            }
        }
    }
    Ok(())
}

fn describe(value: Option<&Value>) -> String {
    match value {
        None => "not recorded".to_owned(),
        Some(value) => {
            let text = value.to_string();
            if text.len() > 80 {
                format!("{}...", text.chars().take(77).collect::<String>())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn claim<'a>(path: &'a str, info: Option<&'a Value>, sha: &'a str) -> RankClaim<'a> {
        RankClaim {
            path: Path::new(path),
            distributed_info: info,
            recorded: None,
            sha256: sha,
        }
    }

    #[test]
    fn ranks_come_from_distributed_info_else_file_order() {
        let r1 = json!({"rank": 1, "world_size": 2});
        let r0 = json!({"rank": 0, "world_size": 2});
        let claims = [claim("b", Some(&r1), "1"), claim("a", Some(&r0), "0")];
        assert_eq!(assign_ranks(&claims).unwrap(), vec![1, 0]);
        let claims = [claim("x", None, "1"), claim("y", None, "2")];
        assert_eq!(assign_ranks(&claims).unwrap(), vec![0, 1]);
        // The two ranks of a merged file keep theirs; a trace after them is the next.
        let merged = |rank| RankClaim {
            recorded: Some(rank),
            ..claim("merged", None, if rank == 0 { "m0" } else { "m1" })
        };
        let claims = [merged(0), merged(1), claim("third", None, "3")];
        assert_eq!(assign_ranks(&claims).unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn another_jobs_trace_a_twice_claimed_rank_and_a_repeated_file_are_refused() {
        let r0 = json!({"rank": 0, "world_size": 2});
        let r1_of_16 = json!({"rank": 1, "world_size": 16});
        let err = assign_ranks(&[claim("a", Some(&r0), "0"), claim("b", Some(&r1_of_16), "1")])
            .unwrap_err();
        assert!(matches!(&err, RankError::OtherJob { path, .. } if path == Path::new("b")));
        assert!(err.to_string().contains("world_size is 16"), "{err}");

        let err =
            assign_ranks(&[claim("a", Some(&r0), "0"), claim("b", Some(&r0), "1")]).unwrap_err();
        assert!(
            matches!(&err, RankError::DuplicateRank { path, rank: 0, .. } if path == Path::new("b"))
        );

        let err = assign_ranks(&[claim("a", None, "same"), claim("b", None, "same")]).unwrap_err();
        assert!(matches!(&err, RankError::SameTrace { path, .. } if path == Path::new("b")));

        let r5 = json!({"rank": 5, "world_size": 2});
        let err =
            assign_ranks(&[claim("a", Some(&r0), "0"), claim("b", Some(&r5), "1")]).unwrap_err();
        assert!(err.to_string().contains("rank 5 of a world of 2"), "{err}");

        let err = assign_ranks(&[claim("a", None, "0"), claim("b", Some(&r0), "1")]).unwrap_err();
        assert!(matches!(&err, RankError::OtherJob { .. }), "{err}");
    }
}
