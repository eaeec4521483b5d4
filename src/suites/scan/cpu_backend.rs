//! The `cpu` backend: [`CpuScan`] behind the [`ScanBackend`] interface, timed with the
//! monotonic clock around each call (the CPU kernel is synchronous).
//!
//! It does not count its allocations: [`PreparedScan::peak_memory`] reports zero bytes,
//! which the benchmark writes as "not measured" (empty cells), never as a measurement.

use std::time::{Duration, Instant};

use super::cpu::CpuScan;
use super::{
    MemoryPeak, Phase, PreparedScan, ScanBackend, ScanError, ScanOutput, ScanProblem, Semiring,
};

/// The CPU kernel as a benchmark backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend {
    scan: CpuScan,
}

impl CpuBackend {
    pub fn new(scan: CpuScan) -> Self {
        CpuBackend { scan }
    }
}

impl ScanBackend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn prepare<'p>(
        &self,
        problem: &ScanProblem<'p>,
        semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
        Ok(Box::new(PreparedCpuScan {
            scan: self.scan,
            problem: problem.clone(),
            semiring,
        }))
    }
}

/// The problem stays where the caller keeps it: the CPU kernel reads it in place.
struct PreparedCpuScan<'p> {
    scan: CpuScan,
    problem: ScanProblem<'p>,
    semiring: Semiring,
}

impl PreparedScan for PreparedCpuScan<'_> {
    fn run_timed(&mut self, phase: Phase, calls: u64) -> Result<Duration, ScanError> {
        let mut total = Duration::ZERO;
        for _ in 0..calls {
            match phase {
                Phase::Forward => {
                    let start = Instant::now();
                    std::hint::black_box(self.scan.forward(&self.problem, self.semiring));
                    total += start.elapsed();
                }
                // The CPU backward recomputes its forward itself (it keeps every beta row),
                // so there is no separate forward to leave out: backward alone is the whole
                // call, as is forward-then-backward.
                Phase::Backward | Phase::Both => {
                    let start = Instant::now();
                    std::hint::black_box(self.scan.backward(&self.problem, self.semiring)?);
                    total += start.elapsed();
                }
            }
        }
        Ok(total)
    }

    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
        Ok(match phase {
            Phase::Forward => ScanOutput {
                values: self.scan.forward(&self.problem, self.semiring),
                grad: None,
            },
            Phase::Backward | Phase::Both => {
                let g = self.scan.backward(&self.problem, self.semiring)?;
                ScanOutput {
                    values: g.values,
                    grad: Some(g.grad),
                }
            }
        })
    }

    fn reset_peak_memory(&mut self) {}

    fn peak_memory(&self) -> MemoryPeak {
        MemoryPeak::default()
    }
}
