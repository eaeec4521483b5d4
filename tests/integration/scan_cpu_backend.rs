//! The `cpu` backend through the backend interface (what the benchmark and `replay scan`
//! use): every semiring × phase against the float64 reference, on the edge cases issue 15
//! names. Values within 1e-4 relative (to max(|Z|, 1)); gradients within 1e-3 relative to
//! the reference's largest |grad| (Log: the marginals, ≤ 1; Max: the 0/1 indicator, exactly;
//! Entropy: [`reference::entropy_gradient`]).

use crate::scan_support;

use replay::device::{Device, DeviceSpec};
use replay::kernels::semiring_scan::cpu::CpuScan;
use replay::measure::{ClockTimer, Timer};
use replay::suites::scan::backends::open_backend;
use replay::suites::scan::cpu_backend::CpuBackend;
use replay::suites::scan::reference;
use replay::suites::scan::{Phase, ScanBackend, ScanDims, ScanError, ScanProblem, Semiring};
use scan_support::{assert_gradient, assert_relative, cases, Case};

fn reference_gradient(p: &ScanProblem, semiring: Semiring) -> Vec<f64> {
    match semiring {
        Semiring::Log => reference::log_marginals(p),
        Semiring::Max => reference::viterbi_indicator(p),
        Semiring::Entropy => reference::entropy_gradient(p),
    }
}

fn check_backend(backend: &dyn ScanBackend, case: &Case) {
    let p = case.problem();
    for semiring in Semiring::ALL {
        let values = reference::forward(&p, semiring);
        let grad = reference_gradient(&p, semiring);
        let mut prepared = backend.prepare(&p, semiring).unwrap();
        for phase in Phase::ALL {
            let what = format!("{semiring} {} of {}", phase.name(), case.describe());
            let out = prepared.run_once(phase).unwrap();
            assert_relative(&out.values, &values, 1e-4, &format!("{what}: values"));
            match (phase, out.grad) {
                (Phase::Forward, None) => {}
                (Phase::Forward, Some(_)) => panic!("{what}: a forward returned a gradient"),
                (_, None) => panic!("{what}: no gradient"),
                (_, Some(g)) => {
                    // Max's indicator is exact: the tie rule is shared with the reference.
                    let tol = if semiring == Semiring::Max { 0.0 } else { 1e-3 };
                    assert_gradient(&g, &grad, tol, &format!("{what}: gradient"));
                }
            }
            let mut timer = ClockTimer::new();
            prepared.run_calls(phase, 2, &mut timer).unwrap();
            let spent = timer.take_batch().device;
            assert!(spent.as_nanos() > 0, "{what}: the timed part took no time");
        }
    }
}

#[test]
fn every_semiring_and_phase_matches_the_reference() {
    let device = Device::open(DeviceSpec::Cpu).unwrap();
    let backend = open_backend("cpu", &device).unwrap();
    assert_eq!(backend.name(), "cpu");
    for case in cases() {
        check_backend(backend.as_ref(), &case);
    }
}

/// One thread and more threads than sequences give the same results.
#[test]
fn thread_counts_do_not_change_results() {
    let case = Case::random(9, 3, 30, 6, 4, &[30, 11, 25]);
    for threads in [1, 2, 8] {
        check_backend(&CpuBackend::new(CpuScan::with_threads(threads)), &case);
    }
}

/// Max ties go to the first candidate (smallest final label, then smallest duration and
/// source label at each step), through the interface as in the kernel: with equal potentials
/// the marked path is all duration-1 segments of label 0, the same as the reference's.
#[test]
fn max_ties_through_the_interface() {
    let dims = ScanDims {
        batch: 2,
        positions: 6,
        durations: 4,
        labels: 3,
    };
    let edge = vec![0.25; dims.edge_len()];
    let p = ScanProblem::new(dims, &edge, Some(&[6, 3])).unwrap();
    let mut prepared = CpuBackend::default().prepare(&p, Semiring::Max).unwrap();
    let grad = prepared.run_once(Phase::Both).unwrap().grad.unwrap();
    let marked: Vec<usize> = (0..grad.len()).filter(|&i| grad[i] == 1.0).collect();
    let mut want: Vec<usize> = (0..5).map(|n| dims.index(0, n, 1, 0, 0)).collect();
    want.extend((0..2).map(|n| dims.index(1, n, 1, 0, 0)));
    assert_eq!(marked, want);
    let reference = reference::viterbi_indicator(&p);
    assert_eq!(
        grad.iter().map(|&g| g as f64).collect::<Vec<_>>(),
        reference
    );
}

#[test]
fn backend_lookup_names_the_known_backends() {
    let device = Device::open(DeviceSpec::Cpu).unwrap();
    assert!(open_backend(" CPU ", &device).is_ok());
    let err = open_backend("numpy", &device).err().unwrap();
    assert!(
        matches!(err, ScanError::InvalidInput(_)) && err.to_string().contains("cpu"),
        "{err}"
    );
}
