//! Which slice of a work list one process runs: `--shard I/N` (1-based: `1/4` … `4/4`), or
//! `--shard auto`, which reads the scheduler's array index from the environment.
//!
//! Item `k` (0-based, in the work list's own order) belongs to shard `k mod N + 1`: the
//! slices interleave, so a grid ordered from small to large cases gives every shard its
//! share of the large ones.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ShardError;

/// One slice of a work list: shard `index` of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole work list (a run without `--shard`).
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Shard `index` of `count` (1-based), or an error saying what is wrong.
    pub fn new(index: usize, count: usize) -> Result<Shard, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::BadSpec(format!(
                "shard {index}/{count}: the index must be between 1 and the count ({count}), and the count at least 1"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether item `position` (0-based) of the work list is this shard's.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count + 1 == self.index
    }

    /// The positions (0-based) of this shard's items in a work list of `len` items.
    pub fn positions(&self, len: usize) -> Vec<usize> {
        (0..len).filter(|&p| self.owns(p)).collect()
    }

    /// The items of `items` that are this shard's, in their order.
    pub fn slice<T: Clone>(&self, items: &[T]) -> Vec<T> {
        self.positions(items.len())
            .into_iter()
            .map(|p| items[p].clone())
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What `--shard` says: a fixed shard, or `auto` (the scheduler's environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardSpec {
    Fixed(Shard),
    Auto,
}

impl std::str::FromStr for ShardSpec {
    type Err = ShardError;
    fn from_str(text: &str) -> Result<ShardSpec, ShardError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Ok(ShardSpec::Auto);
        }
        let bad =
            || ShardError::BadSpec(format!("'{text}' is not I/N (1-based, e.g. 2/4) or auto"));
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index = i.trim().parse::<usize>().map_err(|_| bad())?;
        let count = n.trim().parse::<usize>().map_err(|_| bad())?;
        Ok(ShardSpec::Fixed(Shard::new(index, count)?))
    }
}

/// The variables `--shard auto` reads.
pub const SLURM_TASK_ID: &str = "SLURM_ARRAY_TASK_ID";
pub const SLURM_TASK_MIN: &str = "SLURM_ARRAY_TASK_MIN";
pub const SLURM_TASK_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
pub const SLURM_TASK_STEP: &str = "SLURM_ARRAY_TASK_STEP";
pub const K8S_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";
/// Kubernetes gives a pod its index but not the Job's `completions`: the Job's template
/// sets this to the same number (scripts/k8s/replay-indexed-job.yaml).
pub const SHARD_COUNT_VAR: &str = "REPLAY_SHARD_COUNT";

/// The shard `--shard auto` means in an environment (`lookup` reads one variable):
///
/// - Slurm array task: shard `(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) / STEP + 1` of
///   `SLURM_ARRAY_TASK_COUNT`, so `--array=0-3`, `--array=1-4` and `--array=10-16:2` all
///   give shards 1…N (an array with holes, `--array=1,5,9`, has no such mapping and is
///   refused).
/// - Kubernetes Indexed Job: shard `JOB_COMPLETION_INDEX + 1` (the index is 0-based) of
///   `REPLAY_SHARD_COUNT` (set it to the Job's `completions`).
pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<(Shard, String), ShardError> {
    let number = |name: &str| -> Result<Option<usize>, ShardError> {
        match lookup(name) {
            None => Ok(None),
            Some(v) if v.trim().is_empty() => Ok(None),
            Some(v) => v.trim().parse::<usize>().map(Some).map_err(|_| {
                ShardError::BadSpec(format!("--shard auto: {name}={v} is not a whole number"))
            }),
        }
    };
    if let Some(id) = number(SLURM_TASK_ID)? {
        let count = number(SLURM_TASK_COUNT)?.ok_or_else(|| {
            ShardError::BadSpec(format!(
                "--shard auto: {SLURM_TASK_ID} is set but {SLURM_TASK_COUNT} is not (Slurm sets both in an array job)"
            ))
        })?;
        let min = number(SLURM_TASK_MIN)?.unwrap_or(0);
        let step = number(SLURM_TASK_STEP)?.unwrap_or(1).max(1);
        if id < min || (id - min) % step != 0 || (id - min) / step >= count {
            return Err(ShardError::BadSpec(format!(
                "--shard auto: {SLURM_TASK_ID}={id} is not one of {count} tasks from {SLURM_TASK_MIN}={min} in steps of {step}; \
                 give the array as a range (--array=1-{count}) or pass --shard I/N"
            )));
        }
        let shard = Shard::new((id - min) / step + 1, count)?;
        return Ok((
            shard,
            format!("{SLURM_TASK_ID}={id} {SLURM_TASK_MIN}={min} {SLURM_TASK_COUNT}={count}"),
        ));
    }
    if let Some(index) = number(K8S_COMPLETION_INDEX)? {
        let count = number(SHARD_COUNT_VAR)?.ok_or_else(|| {
            ShardError::BadSpec(format!(
                "--shard auto: {K8S_COMPLETION_INDEX} is set but {SHARD_COUNT_VAR} is not (set it to the Job's completions)"
            ))
        })?;
        let shard = Shard::new(index + 1, count)?;
        return Ok((
            shard,
            format!("{K8S_COMPLETION_INDEX}={index} {SHARD_COUNT_VAR}={count}"),
        ));
    }
    Err(ShardError::BadSpec(format!(
        "--shard auto outside a Slurm array job or a Kubernetes Indexed Job: neither {SLURM_TASK_ID} nor {K8S_COMPLETION_INDEX} is set (pass --shard I/N)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_shards_of_a_list_partition_it_and_interleave() {
        let items: Vec<usize> = (0..10).collect();
        let slices: Vec<Vec<usize>> = (1..=3)
            .map(|i| Shard::new(i, 3).unwrap().slice(&items))
            .collect();
        assert_eq!(slices[0], [0, 3, 6, 9]);
        assert_eq!(slices[1], [1, 4, 7]);
        assert_eq!(slices[2], [2, 5, 8]);
        // More shards than items: the extra ones are empty, never an error.
        assert!(Shard::new(12, 12).unwrap().slice(&items).is_empty());
        assert_eq!(Shard::WHOLE.slice(&items), items);
    }

    #[test]
    fn specs_parse_one_based_and_refuse_the_rest() {
        assert_eq!(
            "2/4".parse::<ShardSpec>().unwrap(),
            ShardSpec::Fixed(Shard { index: 2, count: 4 })
        );
        assert_eq!("AUTO".parse::<ShardSpec>().unwrap(), ShardSpec::Auto);
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "-1/3", ""] {
            let err = bad.parse::<ShardSpec>().unwrap_err().to_string();
            assert!(err.contains("shard") || err.contains("I/N"), "{bad}: {err}");
        }
    }

    #[test]
    fn slurm_ids_map_to_shards_whatever_the_arrays_first_index() {
        let from = |id: &str, min: &str, count: &str| {
            from_env(env(&[
                (SLURM_TASK_ID, id),
                (SLURM_TASK_MIN, min),
                (SLURM_TASK_COUNT, count),
            ]))
            .map(|(s, _)| s)
        };
        assert_eq!(from("0", "0", "4").unwrap(), Shard::new(1, 4).unwrap());
        assert_eq!(from("3", "0", "4").unwrap(), Shard::new(4, 4).unwrap());
        assert_eq!(from("1", "1", "4").unwrap(), Shard::new(1, 4).unwrap());
        assert_eq!(from("4", "1", "4").unwrap(), Shard::new(4, 4).unwrap());
        assert_eq!(from("17", "10", "8").unwrap(), Shard::new(8, 8).unwrap());
        assert!(from("5", "1", "4").is_err());
        // A stepped array: 10, 12, 14.
        let stepped = from_env(env(&[
            (SLURM_TASK_ID, "14"),
            (SLURM_TASK_MIN, "10"),
            (SLURM_TASK_STEP, "2"),
            (SLURM_TASK_COUNT, "3"),
        ]))
        .unwrap();
        assert_eq!(stepped.0, Shard::new(3, 3).unwrap());
        let missing_count = from_env(env(&[(SLURM_TASK_ID, "1")])).unwrap_err();
        assert!(missing_count.to_string().contains(SLURM_TASK_COUNT));
    }

    #[test]
    fn kubernetes_indexes_are_zero_based_and_need_the_count() {
        let (shard, how) =
            from_env(env(&[(K8S_COMPLETION_INDEX, "0"), (SHARD_COUNT_VAR, "3")])).unwrap();
        assert_eq!(shard, Shard::new(1, 3).unwrap());
        assert!(how.contains("JOB_COMPLETION_INDEX=0"));
        let err = from_env(env(&[(K8S_COMPLETION_INDEX, "2")])).unwrap_err();
        assert!(err.to_string().contains(SHARD_COUNT_VAR), "{err}");
        let err = from_env(env(&[])).unwrap_err();
        assert!(err.to_string().contains("--shard I/N"), "{err}");
    }
}
