//! The seed's five tables (`benchmarks/analyze_benchmarks.py`), with its file names, columns
//! and row order (pandas' `groupby` sorts its keys; rows inside a group keep file order).

use replay_core::export::rows::Row;
use serde_json::Value;

use super::results::Measured;
use super::stats::{distinct, group_by, max, mean, min, std};

/// One table: its file name, columns and rows.
pub struct Table {
    pub file: &'static str,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The table of `columns` whose rows hold one value per column, in the columns' order.
    fn new(file: &'static str, columns: &[&'static str], rows: Vec<Vec<Value>>) -> Table {
        let rows = rows
            .into_iter()
            .map(|values| {
                debug_assert_eq!(values.len(), columns.len(), "{file}");
                Row {
                    cells: columns.iter().copied().zip(values).collect(),
                }
            })
            .collect();
        Table {
            file,
            columns: columns.to_vec(),
            rows,
        }
    }
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn optional(v: Option<f64>) -> Value {
    v.map_or(Value::Null, number)
}

/// `a / b`, NaN where `b` is not positive.
fn over(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// pandas' `round(3)`, except that a nonzero value keeps 3 significant digits (as the bench
/// rounds its rows): a kB-scale peak is not written as 0.0.
fn round3(v: f64) -> f64 {
    crate::suites::scan::rounding::round_like_seed(v, 3)
}

/// `summary_stats.csv`: per (backend, semiring, phase), the time's mean/std/min/max, the
/// peak's mean/max, the throughput's mean/max and the KC and T ranges, rounded to 3 places.
pub fn summary_stats(rows: &[Measured]) -> Table {
    let groups = group_by(rows, |r| {
        (r.backend.as_str(), r.semiring.as_str(), r.phase.as_str())
    });
    let out = groups
        .into_iter()
        .map(|((backend, semiring, phase), g)| {
            let of = |f: &dyn Fn(&Measured) -> Option<f64>| -> Vec<f64> {
                g.iter().filter_map(|r| f(r)).collect()
            };
            let times = of(&|r| Some(r.time_ms));
            let peaks = of(&|r| r.peak_gb);
            let tput = of(&|r| Some(r.positions_per_sec()));
            let kc = of(&|r| Some(r.kc as f64));
            let t = of(&|r| Some(r.t as f64));
            let r = |v: Option<f64>| optional(v.map(round3));
            vec![
                backend.into(),
                semiring.into(),
                phase.into(),
                r(mean(&times)),
                r(std(&times)),
                r(min(&times)),
                r(max(&times)),
                r(mean(&peaks)),
                r(max(&peaks)),
                r(mean(&tput)),
                r(max(&tput)),
                r(min(&kc)),
                r(max(&kc)),
                r(min(&t)),
                r(max(&t)),
            ]
        })
        .collect();
    let columns = [
        "backend",
        "semiring",
        "phase",
        "time_ms_median_mean",
        "time_ms_median_std",
        "time_ms_median_min",
        "time_ms_median_max",
        "peak_allocated_gb_mean",
        "peak_allocated_gb_max",
        "positions_per_sec_mean",
        "positions_per_sec_max",
        "KC_min",
        "KC_max",
        "T_min",
        "T_max",
    ];
    Table::new("summary_stats.csv", &columns, out)
}

/// A backward/forward pair of one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct BackwardForward {
    pub backend: String,
    pub semiring: String,
    pub t: u64,
    pub kc: u64,
    pub ratio: f64,
}

/// `backward_forward_ratios.csv`: per (backend, semiring, T, K, C) with both phases, the
/// backward's time over the forward's.
pub fn backward_forward_ratios(rows: &[Measured]) -> (Table, Vec<BackwardForward>) {
    let groups = group_by(rows, |r| {
        (r.backend.as_str(), r.semiring.as_str(), r.t, r.k, r.c)
    });
    let mut table = Vec::new();
    let mut pairs = Vec::new();
    for ((backend, semiring, t, k, c), g) in groups {
        let time = |phase: &str| g.iter().find(|r| r.phase == phase).map(|r| r.time_ms);
        if let (Some(fwd), Some(bwd)) = (time("forward"), time("backward")) {
            let ratio = over(bwd, fwd);
            table.push(vec![
                backend.into(),
                semiring.into(),
                t.into(),
                k.into(),
                c.into(),
                (k * c).into(),
                number(fwd),
                number(bwd),
                number(ratio),
            ]);
            pairs.push(BackwardForward {
                backend: backend.to_string(),
                semiring: semiring.to_string(),
                t,
                kc: k * c,
                ratio,
            });
        }
    }
    let columns = [
        "backend",
        "semiring",
        "T",
        "K",
        "C",
        "KC",
        "forward_ms",
        "backward_ms",
        "ratio",
    ];
    (
        Table::new("backward_forward_ratios.csv", &columns, table),
        pairs,
    )
}

/// One semiring's time over Log's on the same configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Overhead {
    pub backend: String,
    pub semiring: String,
    pub phase: String,
    pub overhead: f64,
}

/// `semiring_overhead.csv`: per (backend, phase, T, K, C) that has a Log row, every semiring's
/// time over Log's (Log itself included, at 1).
pub fn semiring_overhead(rows: &[Measured]) -> (Table, Vec<Overhead>) {
    let groups = group_by(rows, |r| {
        (r.backend.as_str(), r.phase.as_str(), r.t, r.k, r.c)
    });
    let mut table = Vec::new();
    let mut overheads = Vec::new();
    for ((backend, phase, t, k, c), g) in groups {
        let Some(log) = g.iter().find(|r| r.semiring == "Log").map(|r| r.time_ms) else {
            continue;
        };
        for r in g {
            let overhead = over(r.time_ms, log);
            table.push(vec![
                backend.into(),
                r.semiring.as_str().into(),
                phase.into(),
                t.into(),
                k.into(),
                c.into(),
                (k * c).into(),
                number(r.time_ms),
                number(log),
                number(overhead),
            ]);
            overheads.push(Overhead {
                backend: backend.to_string(),
                semiring: r.semiring.clone(),
                phase: phase.to_string(),
                overhead,
            });
        }
    }
    let columns = [
        "backend",
        "semiring",
        "phase",
        "T",
        "K",
        "C",
        "KC",
        "time_ms",
        "log_time_ms",
        "overhead",
    ];
    (
        Table::new("semiring_overhead.csv", &columns, table),
        overheads,
    )
}

/// `crossover_points.csv`: for each ordered pair of backends (a, b) and each (semiring, phase,
/// T), the smallest KC at which a is faster than b (the seed asks it of its streaming scan
/// against its Triton backends; here of every pair the file holds). Configurations are matched
/// on KC as the seed merges them.
pub fn crossover_points(rows: &[Measured]) -> Table {
    let backends = distinct(rows.iter().map(|r| r.backend.as_str()));
    let groups = group_by(rows, |r| (r.semiring.as_str(), r.phase.as_str(), r.t));
    let mut out = Vec::new();
    for &a in &backends {
        for &b in backends.iter().filter(|&&b| b != a) {
            for (&(semiring, phase, t), g) in &groups {
                let mut of_a: Vec<&&Measured> = g.iter().filter(|r| r.backend == a).collect();
                of_a.sort_by_key(|r| r.kc);
                let first = of_a.iter().find_map(|ra| {
                    g.iter()
                        .filter(|rb| rb.backend == b && rb.kc == ra.kc)
                        .find(|rb| ra.time_ms < rb.time_ms)
                        .map(|rb| (ra, rb))
                });
                if let Some((ra, rb)) = first {
                    out.push(vec![
                        semiring.into(),
                        phase.into(),
                        t.into(),
                        ra.kc.into(),
                        a.into(),
                        b.into(),
                        number(ra.time_ms),
                        number(rb.time_ms),
                        number(rb.time_ms / ra.time_ms),
                    ]);
                }
            }
        }
    }
    let columns = [
        "semiring",
        "phase",
        "T",
        "crossover_KC",
        "backend_a",
        "backend_b",
        "time_a_ms",
        "time_b_ms",
        "speedup",
    ];
    Table::new("crossover_points.csv", &columns, out)
}

/// One configuration against the baseline backend.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineRatio {
    pub backend: String,
    pub semiring: String,
    pub phase: String,
    pub t: u64,
    pub kc: u64,
    pub time_ratio: f64,
    pub memory_ratio: Option<f64>,
}

/// `baseline_ratios.csv`: every row's time and peak over the baseline backend's on the same
/// (semiring, phase, T, K, C); empty when the baseline is not in the file.
pub fn baseline_ratios(rows: &[Measured], baseline: &str) -> (Table, Vec<BaselineRatio>) {
    let groups = group_by(rows, |r| {
        (r.semiring.as_str(), r.phase.as_str(), r.t, r.k, r.c)
    });
    let mut table = Vec::new();
    let mut ratios = Vec::new();
    for ((semiring, phase, t, k, c), g) in groups {
        let Some(base) = g.iter().find(|r| r.backend == baseline) else {
            continue;
        };
        for r in &g {
            let time_ratio = over(r.time_ms, base.time_ms);
            let memory_ratio = match (r.peak_gb, base.peak_gb) {
                (Some(p), Some(b)) if b > 0.0 => Some(p / b),
                _ => None,
            };
            table.push(vec![
                r.backend.as_str().into(),
                semiring.into(),
                phase.into(),
                t.into(),
                k.into(),
                c.into(),
                (k * c).into(),
                number(r.time_ms),
                number(base.time_ms),
                number(time_ratio),
                optional(r.peak_gb),
                optional(base.peak_gb),
                optional(memory_ratio),
            ]);
            ratios.push(BaselineRatio {
                backend: r.backend.clone(),
                semiring: semiring.to_string(),
                phase: phase.to_string(),
                t,
                kc: k * c,
                time_ratio,
                memory_ratio,
            });
        }
    }
    let columns = [
        "backend",
        "semiring",
        "phase",
        "T",
        "K",
        "C",
        "KC",
        "time_ms",
        "baseline_time_ms",
        "time_ratio",
        "peak_gb",
        "baseline_memory_gb",
        "memory_ratio",
    ];
    (Table::new("baseline_ratios.csv", &columns, table), ratios)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(backend: &str, semiring: &str, phase: &str, t: u64, k: u64, c: u64, ms: f64) -> Measured {
        Measured {
            t,
            k,
            c,
            b: 4,
            kc: k * c,
            backend: backend.into(),
            semiring: semiring.into(),
            phase: phase.into(),
            time_ms: ms,
            peak_gb: Some(ms / 100.0),
        }
    }

    fn f(row: &Row, column: &str) -> f64 {
        row.get(column).and_then(Value::as_f64).unwrap()
    }

    /// Numbers chosen so every ratio is exact.
    fn rows() -> Vec<Measured> {
        vec![
            m("torch", "Log", "forward", 128, 4, 3, 40.0),
            m("cpu", "Log", "forward", 128, 4, 3, 0.5),
            m("cpu", "Log", "backward", 128, 4, 3, 1.5),
            m("cpu", "Max", "forward", 128, 4, 3, 0.25),
            m("torch", "Log", "forward", 128, 8, 3, 60.0),
            m("cpu", "Log", "forward", 128, 8, 3, 80.0),
        ]
    }

    #[test]
    fn summary_groups_sorted_with_sample_std() {
        let t = summary_stats(&rows());
        let keys: Vec<_> = t
            .rows
            .iter()
            .map(|r| {
                format!(
                    "{}/{}/{}",
                    r.get("backend").unwrap().as_str().unwrap(),
                    r.get("semiring").unwrap().as_str().unwrap(),
                    r.get("phase").unwrap().as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                "cpu/Log/backward",
                "cpu/Log/forward",
                "cpu/Max/forward",
                "torch/Log/forward"
            ]
        );
        // cpu/Log/forward: 0.5 and 80: mean 40.25, sample std sqrt(2)·39.75 = 56.215.
        let cpu_fwd = &t.rows[1];
        assert_eq!(f(cpu_fwd, "time_ms_median_mean"), 40.25);
        assert_eq!(f(cpu_fwd, "time_ms_median_std"), 56.215);
        assert_eq!(f(cpu_fwd, "KC_max"), 24.0);
        // positions/s at 0.5 ms: 4·128 / 0.0005 = 1 024 000.
        assert_eq!(f(cpu_fwd, "positions_per_sec_max"), 1_024_000.0);
        // A single row has no sample std.
        assert_eq!(t.rows[0].get("time_ms_median_std"), Some(&Value::Null));
    }

    #[test]
    fn backward_over_forward_and_semiring_over_log() {
        let (t, pairs) = backward_forward_ratios(&rows());
        assert_eq!(t.rows.len(), 1);
        assert_eq!(f(&t.rows[0], "ratio"), 3.0);
        assert_eq!(pairs[0].kc, 12);
        let (t, o) = semiring_overhead(&rows());
        let max = o.iter().find(|o| o.semiring == "Max").unwrap();
        assert_eq!(max.overhead, 0.5);
        // Log rows are in the table at 1 (the seed keeps them too).
        assert!(t.rows.iter().any(|r| f(r, "overhead") == 1.0));
    }

    #[test]
    fn crossover_is_the_smallest_kc_where_a_wins() {
        let t = crossover_points(&rows());
        let find = |a: &str, b: &str| {
            t.rows
                .iter()
                .find(|r| {
                    r.get("backend_a") == Some(&Value::from(a))
                        && r.get("backend_b") == Some(&Value::from(b))
                })
                .map(|r| (f(r, "crossover_KC"), f(r, "speedup")))
        };
        // cpu beats torch at KC 12 (40 / 0.5 = 80x); torch beats cpu only at KC 24.
        assert_eq!(find("cpu", "torch"), Some((12.0, 80.0)));
        assert_eq!(find("torch", "cpu"), Some((24.0, 80.0 / 60.0)));
    }

    #[test]
    fn ratios_against_the_baseline_and_a_missing_baseline() {
        let (t, ratios) = baseline_ratios(&rows(), "torch");
        let cpu_small = ratios
            .iter()
            .find(|r| {
                r.backend == "cpu" && r.kc == 12 && r.phase == "forward" && r.semiring == "Log"
            })
            .unwrap();
        assert_eq!(cpu_small.time_ratio, 0.5 / 40.0);
        assert_eq!(cpu_small.memory_ratio, Some(0.005 / 0.4));
        // The baseline against itself, and the cpu backward has no torch backward to compare.
        assert_eq!(t.rows.len(), 4);
        let (t, _) = baseline_ratios(&rows(), "cuda");
        assert!(t.rows.is_empty());
    }
}
