//! The benchmark grid: T × K × C × backend × semiring × phase, in the seed's order.

use super::compile_friendly::{self, Sampling};
use crate::suites::scan::{Phase, ScanDims, Semiring};

/// One configuration of the grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanCase {
    /// Sequence length T (positions), maximum duration K, labels C, batch B.
    pub t: usize,
    pub k: usize,
    pub c: usize,
    pub b: usize,
    /// Index into [`ScanGrid::backends`].
    pub backend: usize,
    pub backend_name: String,
    pub semiring: Semiring,
    pub phase: Phase,
}

impl ScanCase {
    /// The state-space size K·C (the seed's `KC` column).
    pub fn kc(&self) -> usize {
        self.k * self.c
    }

    pub fn dims(&self) -> ScanDims {
        ScanDims {
            batch: self.b,
            positions: self.t,
            durations: self.k,
            labels: self.c,
        }
    }

    /// `backend/semiring/phase`, the seed's label for a series.
    pub fn series(&self) -> String {
        format!(
            "{}/{}/{}",
            self.backend_name,
            self.semiring.name(),
            self.phase.name()
        )
    }

    /// A short description for progress lines.
    pub fn describe(&self) -> String {
        format!("T={} K={} C={} {}", self.t, self.k, self.c, self.series())
    }
}

/// The lists a run crosses.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanGrid {
    pub ts: Vec<usize>,
    pub ks: Vec<usize>,
    pub cs: Vec<usize>,
    pub batch: usize,
    pub backends: Vec<String>,
    pub semirings: Vec<Semiring>,
    pub phases: Vec<Phase>,
    /// `--compile-friendly`: only the sampled (T, K, C) configurations run.
    pub sampling: Option<Sampling>,
}

impl ScanGrid {
    /// Every case in the seed's order (`benchmark_memory_analysis.py`): backend, then
    /// semiring, then phase, then the (T, K, C) configurations with T outermost and C
    /// innermost. The order matters beyond tidiness: the inputs are drawn one case after
    /// another from one seeded generator, as the seed does, and the out-of-memory skip rule
    /// looks back at the cases before.
    pub fn cases(&self) -> Vec<ScanCase> {
        let configs = self.configs();
        let mut cases = Vec::new();
        for (backend, backend_name) in self.backends.iter().enumerate() {
            for &semiring in &self.semirings {
                for &phase in &self.phases {
                    for &(t, k, c) in &configs {
                        cases.push(ScanCase {
                            t,
                            k,
                            c,
                            b: self.batch,
                            backend,
                            backend_name: backend_name.clone(),
                            semiring,
                            phase,
                        });
                    }
                }
            }
        }
        cases
    }

    /// The (T, K, C) configurations, T outermost and C innermost: all of them, or those the
    /// compile-friendly sampling keeps.
    pub fn configs(&self) -> Vec<(usize, usize, usize)> {
        let mut all = Vec::new();
        for &t in &self.ts {
            for &k in &self.ks {
                for &c in &self.cs {
                    all.push((t, k, c));
                }
            }
        }
        match self.sampling {
            Some(sampling) => compile_friendly::sample(&all, sampling),
            None => all,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_run_backend_semiring_phase_then_t_k_c() {
        let grid = ScanGrid {
            ts: vec![8, 16],
            ks: vec![2, 3],
            cs: vec![1, 2],
            batch: 2,
            backends: vec!["cpu".into(), "torch".into()],
            semirings: vec![Semiring::Log, Semiring::Max],
            phases: vec![Phase::Forward, Phase::Both],
            sampling: None,
        };
        let cases = grid.cases();
        assert_eq!(cases.len(), 2 * 2 * 2 * 2 * 2 * 2);
        let key = |c: &ScanCase| (c.backend, c.semiring.name(), c.phase.name(), c.t, c.k, c.c);
        assert_eq!(key(&cases[0]), (0, "Log", "forward", 8, 2, 1));
        assert_eq!(key(&cases[1]), (0, "Log", "forward", 8, 2, 2));
        assert_eq!(key(&cases[2]), (0, "Log", "forward", 8, 3, 1));
        assert_eq!(key(&cases[4]), (0, "Log", "forward", 16, 2, 1));
        assert_eq!(key(&cases[8]), (0, "Log", "both", 8, 2, 1));
        assert_eq!(key(&cases[16]), (0, "Max", "forward", 8, 2, 1));
        assert_eq!(key(&cases[32]), (1, "Log", "forward", 8, 2, 1));
        assert_eq!(cases[32].backend_name, "torch");
        assert_eq!(cases[63].kc(), 6);
    }
}
