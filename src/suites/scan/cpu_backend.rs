//! The `cpu` backend: [`CpuScan`] behind the [`ScanBackend`] interface.
//!
//! Timing: the calls run on the host, so the measurement core times the timed part of each
//! call with the monotonic clock (the CPU kernel is synchronous, so the clock sees the whole
//! work). [`Phase::Backward`] runs an untimed [`CpuScan::forward_saving`] and times
//! [`CpuScan::backward_from`] alone; [`Phase::Both`] times the two; [`Phase::Forward`] the
//! streaming forward. What a call returns is dropped after the clock stops.
//!
//! Memory: measured by the process's counting allocator
//! ([`crate::measure::counting_allocator`]): the peak of live bytes since the last reset, less
//! what was live at the reset. It covers the kernel's buffers (saved rows, gradient,
//! per-thread workspaces) and, the count being process-wide, whatever other threads allocate
//! meanwhile. There is no caching allocator, so `reserved` equals `allocated`.
//!
//! The potentials count too. The kernel reads the caller's edge tensor in place, so the
//! allocator never sees it during a measurement: counted alone, a forward's peak was the
//! per-thread ring (reused across calls) plus whatever the measurement core allocated, and
//! did not grow with the problem (K=4, C=3: 1.78e-5 GB; K=4, C=6, four times the
//! potentials: 8.49e-7 GB). The seed's `torch.cuda.max_memory_allocated` counts every tensor
//! live on the device, the potentials `[B, T−1, K, C, C]` first, and the torch backend copies
//! them into a tensor inside its peak: the peak here is the bytes of the inputs the call
//! reads (edge and lengths) plus what was allocated above the baseline, so it grows with
//! B·T·K·C² like theirs.

use replay_core::measure::{segment, Placement, Timer};

use super::{
    MemoryPeak, Phase, PreparedScan, ScanBackend, ScanError, ScanOutput, ScanProblem, Semiring,
};
use crate::kernels::semiring_scan::cpu::CpuScan;
use crate::measure::counting_allocator;

/// The CPU kernel as a scan backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend {
    scan: CpuScan,
}

impl CpuBackend {
    pub fn new(scan: CpuScan) -> Self {
        CpuBackend { scan }
    }

    /// `threads` sequences at once (`None`: one per core).
    pub fn with_threads(threads: Option<usize>) -> Self {
        CpuBackend {
            scan: threads.map_or_else(CpuScan::default, CpuScan::with_threads),
        }
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
        let problem = problem.clone();
        Ok(Box::new(PreparedCpuScan {
            scan: self.scan,
            problem,
            semiring,
            baseline: counting_allocator::reset_peak(),
        }))
    }
}

/// The bytes of what a call reads in place: the potentials (float32) and the lengths.
pub fn input_bytes(problem: &ScanProblem) -> u64 {
    (std::mem::size_of_val(problem.edge) + std::mem::size_of_val(problem.lengths.as_slice())) as u64
}

/// The problem stays where the caller keeps it: the CPU kernel reads it in place.
struct PreparedCpuScan<'p> {
    scan: CpuScan,
    problem: ScanProblem<'p>,
    semiring: Semiring,
    /// Bytes live at the last reset of the peak.
    baseline: usize,
}

impl PreparedCpuScan<'_> {
    /// One call of `phase`, its timed part a segment of `timer`.
    fn timed_call(&self, phase: Phase, timer: &mut dyn Timer) -> Result<(), ScanError> {
        let (p, semiring) = (&self.problem, self.semiring);
        match phase {
            Phase::Forward => {
                let values = segment(timer, || {
                    Ok::<_, ScanError>(std::hint::black_box(self.scan.forward(p, semiring)))
                })?;
                drop(values);
            }
            Phase::Backward => {
                let saved = self.scan.forward_saving(p, semiring)?;
                let grad = segment(timer, || {
                    Ok::<_, ScanError>(std::hint::black_box(self.scan.backward_from(p, &saved)?))
                })?;
                drop((saved, grad));
            }
            Phase::Both => {
                let (saved, grad) = segment(timer, || {
                    let saved = self.scan.forward_saving(p, semiring)?;
                    let grad = std::hint::black_box(self.scan.backward_from(p, &saved)?);
                    Ok::<_, ScanError>((saved, grad))
                })?;
                drop((saved, grad));
            }
        }
        Ok(())
    }
}

impl PreparedScan for PreparedCpuScan<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run_calls(
        &mut self,
        phase: Phase,
        calls: u64,
        timer: &mut dyn Timer,
    ) -> Result<(), ScanError> {
        (0..calls).try_for_each(|_| self.timed_call(phase, timer))
    }

    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
        let (p, semiring) = (&self.problem, self.semiring);
        Ok(match phase {
            Phase::Forward => ScanOutput {
                values: self.scan.forward(p, semiring),
                grad: None,
            },
            Phase::Backward | Phase::Both => {
                let g = self.scan.backward(p, semiring)?;
                ScanOutput {
                    values: g.values,
                    grad: Some(g.grad),
                }
            }
        })
    }

    fn reset_peak_memory(&mut self) {
        self.baseline = counting_allocator::reset_peak();
    }

    fn peak_memory(&self) -> MemoryPeak {
        let allocated = counting_allocator::peak().saturating_sub(self.baseline) as u64;
        let bytes = allocated + input_bytes(&self.problem);
        MemoryPeak {
            allocated: bytes,
            reserved: bytes,
        }
    }
}
