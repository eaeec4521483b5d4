//! The selftest's semiring-scan checks: the device's own scan kernel (the Rust kernel on the
//! CPU, `cuda/semiring_scan.cu` on a GPU) against the float64 reference, forward and
//! backward, in every semiring, on the shapes where kernels go wrong: sequences shorter than
//! T (down to one position), K larger than T, a single label, several warps' worth of terms.

use super::outcome::{check, Check};
use crate::suites::scan::bench::check::check_output;
use crate::suites::scan::{Phase, ScanBackend, ScanDims, ScanError, ScanProblem, Semiring};

/// One problem: its dims and lengths.
struct Shape {
    dims: ScanDims,
    lengths: &'static [usize],
}

const SHAPES: [Shape; 3] = [
    // Four sequences of different lengths (one of a single position), 5·3 = 15 terms a step.
    Shape {
        dims: ScanDims {
            batch: 4,
            positions: 23,
            durations: 6,
            labels: 3,
        },
        lengths: &[23, 17, 1, 5],
    },
    // K > T and C = 1.
    Shape {
        dims: ScanDims {
            batch: 2,
            positions: 5,
            durations: 9,
            labels: 1,
        },
        lengths: &[5, 3],
    },
    // More terms a step (11·7 = 77) than a warp has lanes, and more labels than one warp.
    Shape {
        dims: ScanDims {
            batch: 2,
            positions: 40,
            durations: 12,
            labels: 7,
        },
        lengths: &[40, 31],
    },
];

/// Edge potentials in [−2, 2) from a fixed integer hash: the same on every machine, no
/// random-number library needed.
fn potentials(len: usize, salt: u64) -> Vec<f32> {
    (0..len as u64)
        .map(|i| {
            let mut z = (i ^ (salt << 40)).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// One check per semiring: every shape's forward and both phases against the reference.
pub fn scan_checks(backend: &dyn ScanBackend) -> Vec<Check> {
    Semiring::ALL
        .iter()
        .map(|&semiring| {
            let name = format!(
                "{} scan kernel, {semiring} forward and backward",
                backend.name()
            );
            check(0, &name, run_semiring(backend, semiring))
        })
        .collect()
}

fn run_semiring(backend: &dyn ScanBackend, semiring: Semiring) -> Result<String, String> {
    let mut cases = 0;
    for (salt, shape) in SHAPES.iter().enumerate() {
        let edge = potentials(shape.dims.edge_len(), salt as u64);
        let problem = ScanProblem::new(shape.dims, &edge, Some(shape.lengths))
            .map_err(|e| ScanError::from(e).to_string())?;
        let mut scan = backend
            .prepare(&problem, semiring)
            .map_err(|e| e.to_string())?;
        for phase in [Phase::Forward, Phase::Both] {
            let output = scan.run_once(phase).map_err(|e| e.to_string())?;
            check_output(&problem, semiring, phase, &output)
                .map_err(|wrong| format!("{:?}, {}: {wrong}", shape.dims, phase.name()))?;
            cases += 1;
        }
    }
    Ok(format!(
        "{cases} cases (lengths down to 1, K > T, C = 1) match the float64 reference"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::semiring_scan::cpu::CpuScan;
    use crate::suites::scan::cpu_backend::CpuBackend;
    use crate::suites::scan::{MemoryPeak, PreparedScan, ScanError, ScanOutput};

    #[test]
    fn the_cpu_kernel_passes_every_scan_check() {
        let checks = scan_checks(&CpuBackend::new(CpuScan::with_threads(2)));
        assert_eq!(checks.len(), 3);
        for c in &checks {
            assert!(c.passed, "{}: {}", c.name, c.detail);
            assert_eq!(c.tier, 0);
        }
    }

    /// A backend whose gradient is off by a little in one entry: the check must catch it.
    struct Skewed(CpuBackend);
    struct SkewedScan<'p>(Box<dyn PreparedScan + 'p>);

    impl ScanBackend for Skewed {
        fn name(&self) -> &'static str {
            "skewed"
        }
        fn prepare<'p>(
            &self,
            problem: &ScanProblem<'p>,
            semiring: Semiring,
        ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
            Ok(Box::new(SkewedScan(self.0.prepare(problem, semiring)?)))
        }
    }

    impl PreparedScan for SkewedScan<'_> {
        fn placement(&self) -> replay_core::measure::Placement<'_> {
            self.0.placement()
        }
        fn run_calls(
            &mut self,
            phase: Phase,
            calls: u64,
            timer: &mut dyn replay_core::measure::Timer,
        ) -> Result<(), ScanError> {
            self.0.run_calls(phase, calls, timer)
        }
        fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
            let mut out = self.0.run_once(phase)?;
            if let Some(g) = out.grad.as_mut() {
                let at = g.len() / 2;
                g[at] += 0.01;
            }
            Ok(out)
        }
        fn reset_peak_memory(&mut self) {}
        fn peak_memory(&self) -> MemoryPeak {
            MemoryPeak::default()
        }
    }

    #[test]
    fn a_gradient_off_by_a_hundredth_fails_the_check() {
        let checks = scan_checks(&Skewed(CpuBackend::new(CpuScan::with_threads(1))));
        assert!(checks.iter().all(|c| !c.passed), "{checks:?}");
        assert!(checks[0].detail.contains("both"), "{}", checks[0].detail);
    }

    #[test]
    fn potentials_are_spread_over_the_range() {
        let p = potentials(10_000, 1);
        let (lo, hi) = p
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(lo >= -2.0 && hi < 2.0 && lo < -1.9 && hi > 1.9, "{lo} {hi}");
        assert_ne!(potentials(8, 0), potentials(8, 1));
    }
}
