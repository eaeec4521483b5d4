//! The `torch` backend (the seed's streaming scan in libtorch, on the CPU here) against the
//! float64 reference and enumeration: every semiring × phase, lengths shorter than T, K > T,
//! C = 1, K = 1; Max's gradient on ties; and the benchmark's inputs equal to PyTorch's.

use crate::common;
use crate::float_tolerance::{draws_agree, normal_draw_error, ChainBound};

use replay::measure::{ClockTimer, Timer};
use replay::suites::scan::backends::open_backend;
use replay::suites::scan::enumeration;
use replay::suites::scan::reference;
use replay::suites::scan::torch_backend::TorchBackend;
use replay::suites::scan::{
    Phase, ScanBackend, ScanDims, ScanError, ScanOutput, ScanProblem, Semiring,
};

// The cases (a seeded normal generator independent of libtorch's) are the scan tests' shared ones.
use crate::scan_support::Case;

/// Shorter lengths than T (no sequence of the full length included), K > T, C = 1, K = 1,
/// T = 1, and a configuration of the seed's grid.
fn cases() -> Vec<Case> {
    vec![
        Case::random(1, 1, 8, 4, 3, &[]),
        Case::random(2, 3, 12, 5, 2, &[12, 7, 1]),
        Case::random(3, 2, 5, 9, 3, &[5, 3]),
        Case::random(4, 2, 10, 4, 1, &[10, 6]),
        Case::random(5, 2, 7, 1, 2, &[7, 4]),
        Case::random(6, 1, 1, 3, 2, &[]),
        Case::random(7, 3, 9, 3, 2, &[6, 4, 2]),
        Case::random(42, 4, 128, 12, 6, &[128, 101, 64, 3]),
    ]
}

fn run(case: &Case, semiring: Semiring, phase: Phase) -> ScanOutput {
    let problem = case.problem();
    let mut prepared = TorchBackend::cpu()
        .prepare(&problem, semiring)
        .unwrap_or_else(|e| panic!("{}: {e}", case.describe()));
    prepared
        .run_once(phase)
        .unwrap_or_else(|e| panic!("{} {semiring} {}: {e}", case.describe(), phase.name()))
}

fn assert_values_close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (b, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tolerance = 1e-4 * w.abs().max(1.0);
        assert!(
            (f64::from(g) - w).abs() <= tolerance,
            "{what}: value {b} is {g}, the reference says {w}"
        );
    }
}

fn assert_grad_close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let worst = got
        .iter()
        .zip(want)
        .enumerate()
        .map(|(i, (&g, &w))| (i, (f64::from(g) - w).abs()))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    assert!(
        worst.1 <= 1e-3,
        "{what}: gradient entry {} is {} against {} (error {})",
        worst.0,
        got[worst.0],
        want[worst.0],
        worst.1
    );
}

#[test]
fn every_semiring_and_phase_matches_the_reference() {
    for case in cases() {
        let problem = case.problem();
        for semiring in Semiring::ALL {
            let want = reference::forward(&problem, semiring);
            for phase in Phase::ALL {
                let what = format!("{} {semiring} {}", case.describe(), phase.name());
                let out = run(&case, semiring, phase);
                assert_values_close(&out.values, &want, &what);
                match (phase, &out.grad) {
                    (Phase::Forward, None) => {}
                    (Phase::Forward, Some(_)) => panic!("{what}: a forward returned a gradient"),
                    (_, None) => panic!("{what}: no gradient"),
                    (_, Some(grad)) => match semiring {
                        Semiring::Log => {
                            assert_grad_close(grad, &reference::log_marginals(&problem), &what)
                        }
                        Semiring::Max => {
                            assert_grad_close(grad, &reference::viterbi_indicator(&problem), &what)
                        }
                        // Checked against finite differences below (fewer cases: it is slow).
                        Semiring::Entropy => assert_eq!(grad.len(), case.edge.len(), "{what}"),
                    },
                }
            }
        }
    }
}

#[test]
fn entropy_equals_the_entropy_of_the_enumerated_distribution() {
    for case in [
        Case::random(11, 2, 5, 3, 2, &[5, 4]),
        Case::random(12, 1, 6, 7, 1, &[]),
        Case::random(13, 2, 4, 1, 3, &[4, 2]),
    ] {
        let want = enumeration::entropy(&case.problem());
        let out = run(&case, Semiring::Entropy, Phase::Forward);
        assert_values_close(&out.values, &want, &case.describe());
    }
}

/// The gradient of Σ H by central differences of the float64 reference's entropy.
#[test]
fn entropy_gradient_matches_finite_differences_of_the_reference() {
    for case in [
        Case::random(21, 2, 6, 3, 2, &[6, 4]),
        Case::random(22, 1, 5, 7, 2, &[]),
    ] {
        let out = run(&case, Semiring::Entropy, Phase::Both);
        let grad = out.grad.expect("both returns a gradient");
        let h = 1e-3f32;
        let total = |edge: &[f32]| -> f64 {
            let p = ScanProblem::new(case.dims, edge, Some(&case.lengths)).unwrap();
            reference::forward(&p, Semiring::Entropy).iter().sum()
        };
        let mut want = vec![0.0; case.edge.len()];
        for (i, w) in want.iter_mut().enumerate() {
            let mut edge = case.edge.clone();
            edge[i] += h;
            let up = total(&edge);
            edge[i] -= 2.0 * h;
            let down = total(&edge);
            // Divide by the step the float32 inputs really took.
            let step = f64::from(case.edge[i] + h) - f64::from(case.edge[i] - h);
            *w = (up - down) / step;
        }
        assert_grad_close(&grad, &want, &case.describe());
    }
}

/// Max on ties: all-equal edges make every segmentation optimal; torch's `max` sends the whole
/// gradient to the first maximum, so the gradient is one segmentation's indicator (all
/// durations 1, label 0 throughout) — the same tie rule as the reference's backtracking —
/// and never a split between the tied segmentations.
#[test]
fn max_gradient_on_ties_is_the_first_segmentation() {
    let dims = ScanDims {
        batch: 2,
        positions: 6,
        durations: 3,
        labels: 2,
    };
    let edge = vec![0.5f32; dims.edge_len()];
    let lengths = [6, 4];
    let problem = ScanProblem::new(dims, &edge, Some(&lengths)).unwrap();
    let mut prepared = TorchBackend::cpu()
        .prepare(&problem, Semiring::Max)
        .unwrap();
    let out = prepared.run_once(Phase::Both).unwrap();
    let grad = out.grad.unwrap();
    let want = reference::viterbi_indicator(&problem);
    assert_eq!(grad.iter().map(|&g| f64::from(g)).collect::<Vec<_>>(), want);
    // Sequence b of length len: len − 1 segments of duration 1 from label 0 to label 0.
    for (b, &len) in lengths.iter().enumerate() {
        for n in 0..dims.positions - 1 {
            let i = dims.index(b, n, 1, 0, 0);
            assert_eq!(grad[i], if n < len - 1 { 1.0 } else { 0.0 }, "b={b} n={n}");
        }
    }
    let ones: f32 = grad.iter().sum();
    assert_eq!(ones, (5 + 3) as f32);
    assert_values_close(&out.values, &[2.5, 1.5], "Viterbi score of constant edges");
}

#[test]
fn timed_runs_report_time_for_every_phase() {
    let case = Case::random(31, 2, 16, 4, 3, &[]);
    let problem = case.problem();
    for semiring in Semiring::ALL {
        let mut prepared = TorchBackend::cpu().prepare(&problem, semiring).unwrap();
        for phase in Phase::ALL {
            let mut timer = ClockTimer::new();
            prepared.run_calls(phase, 3, &mut timer).unwrap();
            let elapsed = timer.take_batch().device;
            assert!(elapsed.as_nanos() > 0, "{semiring} {}", phase.name());
        }
    }
}

#[test]
fn the_backend_is_registered_under_its_name() {
    let device = replay::device::Device::open(replay::device::DeviceSpec::Cpu).unwrap();
    let backend = open_backend("torch", &device).unwrap();
    assert_eq!(backend.name(), "torch");
    let err = open_backend("tensorflow", &device)
        .err()
        .expect("unknown name");
    assert!(
        matches!(&err, ScanError::InvalidInput(m) if m.contains("torch")),
        "{err}"
    );
}

/// The benchmark draws its edges with `torch.manual_seed(42); torch.randn(B, T−1, K, C, C)`;
/// libtorch's generator through tch gives the same numbers. The values were printed by torch
/// 2.11 in `.venv` (`torch.manual_seed(42); torch.randn(4, 127, 4, 3, 3).flatten()[...]`, on
/// AVX2/AVX-512 kernels); libtorch's default (scalar) kernels draw the same uniforms but round
/// Box–Muller differently, by up to `float_tolerance::normal_draw_error` each.
#[test]
fn seeded_inputs_are_the_ones_pytorch_draws() {
    let _turn = common::torch_generator_turn();
    tch::manual_seed(42);
    let edge = tch::Tensor::randn([4, 127, 4, 3, 3], (tch::Kind::Float, tch::Device::Cpu));
    let flat = Vec::<f32>::try_from(&edge.reshape([-1])).unwrap();
    assert_eq!(flat.len(), 18288);
    let python: [(usize, f32); 7] = [
        (0, 1.926_915_3),
        (1, 1.487_284_1),
        (2, 0.900_717_2),
        (3, -2.105_521),
        (9000, 1.288_896_8),
        (18286, -0.116_132_42),
        (18287, -0.467_748_07),
    ];
    for (i, want) in python {
        assert!(
            draws_agree(flat[i], f64::from(want)),
            "element {i}: {} vs {want} (tolerance {:.2e})",
            flat[i],
            2.0 * normal_draw_error(f64::from(want))
        );
    }
}

/// The seed's own numbers on the benchmark's input (`torch.manual_seed(42); edge =
/// torch.randn(4, 127, 8, 6, 6)`, lengths [128, 100, 37, 2]): printed by running
/// `SemiMarkov(S)._dp_scan_streaming(edge, lengths)` of torch-semimarkov fe28273 under torch
/// 2.11 (AVX-512 kernels), then `values.sum().backward()` (values = `v[0]`, or the entropy
/// half `v[1]`), with five gradient entries and Σ|grad|.
///
/// They are float32 results of another machine's kernels, so they are compared within the
/// bound of `float_tolerance::ChainBound`: a chain of (length − 1) steps through log-space
/// values as large as the sequence's log Z (the Log row), inputs within one draw's rounding of
/// PyTorch's. Log Z and Viterbi scores are log-space (an absolute tolerance); entropies,
/// marginals and Σ|grad| are exponentials of log-space differences (a relative one). Max's
/// gradient is the 0/1 indicator of the best segmentation, exact unless two segmentations
/// score within the tolerance, so it is compared exactly, zeros included: recorded zeros are
/// entries no segmentation reads (duration slice 0, positions past a sequence's end).
#[test]
fn the_seed_gives_the_same_numbers_on_the_benchmark_input() {
    let dims = ScanDims {
        batch: 4,
        positions: 128,
        durations: 8,
        labels: 6,
    };
    let edge = {
        let _turn = common::torch_generator_turn();
        tch::manual_seed(42);
        let drawn = tch::Tensor::randn([4, 127, 8, 6, 6], (tch::Kind::Float, tch::Device::Cpu));
        Vec::<f32>::try_from(&drawn.reshape([-1])).unwrap()
    };
    let lengths = [128, 100, 37, 2];
    let problem = ScanProblem::new(dims, &edge, Some(&lengths)).unwrap();
    let entries = [0usize, 5, 1000, 40000, 110000];
    let seed: [(Semiring, [f64; 4], [f64; 5], f64); 3] = [
        (
            Semiring::Log,
            [
                302.0408935546875,
                239.40655517578125,
                88.84437561035156,
                4.285447120666504,
            ],
            [0.0, 0.0, 3.433720485190861e-05, 1.1559062595978276e-09, 0.0],
            238.41744995117188,
        ),
        (
            Semiring::Max,
            [
                203.6081085205078,
                164.84835815429688,
                62.301780700683594,
                2.6149940490722656,
            ],
            [0.0; 5],
            256.0,
        ),
        (
            Semiring::Entropy,
            [
                195.5763702392578,
                150.0338592529297,
                55.078590393066406,
                3.1149861812591553,
            ],
            [0.0, 0.0, 0.0001442573411623016, 9.304659265296777e-09, 0.0],
            242.52926635742188,
        ),
    ];
    let input_error =
        normal_draw_error(edge.iter().map(|e| f64::from(e.abs())).fold(0.0, f64::max));
    let magnitude = |b: usize| seed[0].1[b].abs().max(seed[1].1[b].abs());
    let sequence = |b: usize| ChainBound {
        depth: lengths[b] - 1,
        magnitude: magnitude(b),
        input_error,
    };
    let batch = ChainBound {
        depth: dims.positions - 1,
        magnitude: (0..4).map(magnitude).fold(0.0, f64::max),
        input_error,
    };
    // The values of one semiring within the bounds of each sequence.
    let values_agree = |semiring: Semiring, got: &[f32], want: &[f64; 4]| {
        (0..4).all(|b| {
            let (got, bound) = (f64::from(got[b]), sequence(b));
            match semiring {
                Semiring::Log | Semiring::Max => bound.log_space_agrees(got, want[b]),
                Semiring::Entropy => bound.relatively_agrees(got, want[b]),
            }
        })
    };
    for (semiring, values, grad_entries, grad_abs_sum) in seed {
        let mut prepared = TorchBackend::cpu().prepare(&problem, semiring).unwrap();
        let out = prepared.run_once(Phase::Both).unwrap();
        assert!(
            values_agree(semiring, &out.values, &values),
            "{semiring}: values {:?} against the seed's {values:?} (tolerance {:.2e} on sequence 0)",
            out.values,
            sequence(0).log_space_tolerance()
        );
        let grad = out.grad.unwrap();
        let abs_sum: f64 = grad.iter().map(|g| f64::from(g.abs())).sum();
        for (&i, &want) in entries.iter().zip(&grad_entries) {
            let got = f64::from(grad[i]);
            let agrees = match semiring {
                Semiring::Max => got == want,
                Semiring::Log | Semiring::Entropy => {
                    sequence(i / dims.sequence_stride()).relatively_agrees(got, want)
                }
            };
            assert!(
                agrees,
                "{semiring} grad[{i}] = {got} against the seed's {want}"
            );
        }
        let agrees = match semiring {
            Semiring::Max => abs_sum == grad_abs_sum,
            Semiring::Log | Semiring::Entropy => batch.relatively_agrees(abs_sum, grad_abs_sum),
        };
        assert!(
            agrees,
            "{semiring}: Σ|grad| = {abs_sum} against the seed's {grad_abs_sum} (relative \
             tolerance {:.2e})",
            batch.relative_tolerance()
        );
    }

    // The tolerance still tells the semirings apart: a backend computing another semiring's
    // numbers fails on every value and on Σ|grad|.
    for (a, a_values, _, a_sum) in seed {
        for (b, b_values, _, b_sum) in seed {
            if a != b {
                assert!(
                    !values_agree(a, &b_values.map(|v| v as f32), &a_values),
                    "{a} {b}"
                );
                assert!(!batch.relatively_agrees(b_sum, a_sum), "{a} {b}");
            }
        }
    }
    // And a missing term: the scan with sequence 1 one position shorter (one step of its
    // chain left out) gives values outside the tolerance, in every semiring.
    let short = [128, 99, 37, 2];
    let problem = ScanProblem::new(dims, &edge, Some(&short)).unwrap();
    for (semiring, values, _, _) in seed {
        let mut prepared = TorchBackend::cpu().prepare(&problem, semiring).unwrap();
        let out = prepared.run_once(Phase::Forward).unwrap();
        assert!(
            !values_agree(semiring, &out.values, &values),
            "{semiring}: {:?} one step short still agrees with {values:?}",
            out.values
        );
    }
}
