//! The semiring scan's CPU kernel against the float64 reference, and the reference against
//! enumeration of every segmentation on tiny cases (issue 15's correctness goals).

use replay::suites::scan::cpu::CpuScan;
use replay::suites::scan::enumeration;
use replay::suites::scan::reference;
use replay::suites::scan::semiring::{EntropyOps, LogOps};
use replay::suites::scan::{ScanDims, ScanError, ScanProblem, Semiring};

/// splitmix64 and Box–Muller: a small seeded normal generator (no `rand` dependency).
struct Normal(u64);

impl Normal {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn sample(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}

struct Case {
    dims: ScanDims,
    lengths: Vec<usize>,
    edge: Vec<f32>,
}

impl Case {
    fn random(
        seed: u64,
        batch: usize,
        positions: usize,
        durations: usize,
        labels: usize,
        lengths: &[usize],
    ) -> Case {
        let dims = ScanDims {
            batch,
            positions,
            durations,
            labels,
        };
        let mut rng = Normal(seed);
        let edge = (0..dims.edge_len()).map(|_| rng.sample()).collect();
        let lengths = if lengths.is_empty() {
            vec![positions; batch]
        } else {
            lengths.to_vec()
        };
        Case {
            dims,
            lengths,
            edge,
        }
    }
    fn problem(&self) -> ScanProblem<'_> {
        ScanProblem::new(self.dims, &self.edge, Some(&self.lengths)).unwrap()
    }
}

/// Shorter lengths than T, K > T, C = 1, K = 1, T = 1, B > 1 with different lengths, and the
/// seed's middle configuration.
fn cases() -> Vec<Case> {
    vec![
        Case::random(1, 1, 8, 4, 3, &[]),
        Case::random(2, 3, 12, 5, 2, &[12, 7, 1]),
        Case::random(3, 2, 5, 9, 3, &[5, 3]),
        Case::random(4, 2, 10, 4, 1, &[10, 6]),
        Case::random(5, 2, 7, 1, 2, &[7, 4]),
        Case::random(6, 1, 1, 3, 2, &[]),
        Case::random(7, 4, 40, 12, 6, &[40, 33, 17, 2]),
        Case::random(42, 4, 512, 12, 6, &[]),
    ]
}

fn describe(case: &Case) -> String {
    format!("{:?} lengths {:?}", case.dims, case.lengths)
}

fn assert_relative(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs() / w.abs().max(1.0);
        assert!(
            err <= tol,
            "{what}[{i}]: cpu {g}, reference {w} (relative error {err:.2e})"
        );
    }
}

fn assert_absolute(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    let worst = got
        .iter()
        .zip(want)
        .enumerate()
        .map(|(i, (&g, &w))| (i, (g as f64 - w).abs()))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    assert!(
        worst.1 <= tol,
        "{what}: worst error {:.2e} at {} (cpu {}, reference {})",
        worst.1,
        worst.0,
        got[worst.0],
        want[worst.0]
    );
}

#[test]
fn cpu_forward_matches_the_float64_reference_in_every_semiring() {
    for case in cases() {
        let p = case.problem();
        for semiring in Semiring::ALL {
            for threads in [1, 3] {
                let got = CpuScan::with_threads(threads).forward(&p, semiring);
                let want = reference::forward(&p, semiring);
                assert_relative(
                    &got,
                    &want,
                    1e-4,
                    &format!("{semiring} Z of {}", describe(&case)),
                );
            }
        }
    }
}

#[test]
fn cpu_log_gradient_is_the_reference_marginals() {
    for case in cases() {
        let p = case.problem();
        let got = CpuScan::default().backward(&p, Semiring::Log).unwrap();
        assert_relative(
            &got.values,
            &reference::forward(&p, Semiring::Log),
            1e-4,
            "log Z from backward",
        );
        assert_absolute(
            &got.grad,
            &reference::log_marginals(&p),
            1e-3,
            &format!("Log grad of {}", describe(&case)),
        );
    }
}

#[test]
fn cpu_max_gradient_is_the_reference_argmax_indicator() {
    for case in cases() {
        let p = case.problem();
        let got = CpuScan::default().backward(&p, Semiring::Max).unwrap();
        assert_relative(
            &got.values,
            &reference::forward(&p, Semiring::Max),
            1e-4,
            "Viterbi score from backward",
        );
        assert_absolute(
            &got.grad,
            &reference::viterbi_indicator(&p),
            0.0,
            &format!("Max grad of {}", describe(&case)),
        );
    }
}

/// The indicator marks one segmentation whose edges add up to the Viterbi score, which is
/// the best score over every segmentation.
#[test]
fn max_gradient_marks_the_best_segmentation() {
    for case in cases().into_iter().take(6) {
        let p = case.problem();
        let grad = CpuScan::default().backward(&p, Semiring::Max).unwrap();
        let stride = case.dims.sequence_stride();
        for b in 0..case.dims.batch {
            let best = enumeration::segmentations(&p, b)
                .iter()
                .map(|s| s.score)
                .fold(f64::NEG_INFINITY, f64::max);
            let own = &grad.grad[b * stride..(b + 1) * stride];
            assert!(own.iter().all(|&g| g == 0.0 || g == 1.0));
            let path: f64 = own
                .iter()
                .zip(&case.edge[b * stride..])
                .map(|(&g, &e)| g as f64 * e as f64)
                .sum();
            assert!(
                (path - best).abs() < 1e-4,
                "{}: path {path}, best {best}",
                describe(&case)
            );
            assert!((grad.values[b] as f64 - best).abs() < 1e-4);
        }
    }
}

/// Ties: with all potentials equal every segmentation ties; the documented rule picks the
/// smallest final label, then the smallest duration and source label at each step, so the
/// path is all duration-1 segments of label 0.
#[test]
fn max_ties_go_to_the_first_candidate() {
    let dims = ScanDims {
        batch: 1,
        positions: 5,
        durations: 3,
        labels: 2,
    };
    let edge = vec![0.5; dims.edge_len()];
    let p = ScanProblem::new(dims, &edge, None).unwrap();
    let grad = CpuScan::default().backward(&p, Semiring::Max).unwrap().grad;
    let marked: Vec<usize> = (0..grad.len()).filter(|&i| grad[i] == 1.0).collect();
    let want: Vec<usize> = (0..4).map(|n| dims.index(0, n, 1, 0, 0)).collect();
    assert_eq!(marked, want);
    assert_eq!(
        reference::viterbi_indicator(&p),
        grad.iter().map(|&g| g as f64).collect::<Vec<_>>()
    );
}

/// The reference's outside pass equals marginals counted over every segmentation; marginals
/// lie in [0, 1] and add up, per sequence, to the expected number of segments.
#[test]
fn log_marginals_are_segment_probabilities() {
    for case in cases().into_iter().take(6) {
        let p = case.problem();
        let (enumerated, expected_segments) = enumeration::marginals_and_expected_segments(&p);
        let reference = reference::log_marginals(&p);
        let cpu = CpuScan::default().backward(&p, Semiring::Log).unwrap().grad;
        for (i, (&r, &e)) in reference.iter().zip(&enumerated).enumerate() {
            assert!(
                (r - e).abs() < 1e-9,
                "{}: marginal {i} reference {r}, enumeration {e}",
                describe(&case)
            );
            assert!(
                (-1e-6..=1.0 + 1e-6).contains(&cpu[i]),
                "marginal {i} = {}",
                cpu[i]
            );
        }
        let stride = case.dims.sequence_stride();
        for (b, &count) in expected_segments.iter().enumerate() {
            let sum: f64 = cpu[b * stride..(b + 1) * stride]
                .iter()
                .map(|&g| g as f64)
                .sum();
            assert!(
                (sum - count).abs() < 1e-3,
                "{}: Σ marginals {sum}, E[segments] {count}",
                describe(&case)
            );
            if case.lengths[b] > 1 {
                assert!(count >= 1.0 && count <= (case.lengths[b] - 1) as f64 + 1e-9);
            }
        }
    }
}

/// log Z and the entropy H against the distribution over every segmentation.
#[test]
fn partition_and_entropy_match_enumeration() {
    for case in cases().into_iter().take(6) {
        let p = case.problem();
        let entropy = enumeration::entropy(&p);
        let pairs = reference::partition::<EntropyOps>(&p);
        let log_z = reference::partition::<LogOps>(&p);
        for b in 0..case.dims.batch {
            let (enum_log_z, _) = enumeration::distribution(&enumeration::segmentations(&p, b));
            assert!(
                (log_z[b] - enum_log_z).abs() < 1e-9,
                "{}: log Z",
                describe(&case)
            );
            assert!(
                (pairs[b].0 - enum_log_z).abs() < 1e-9,
                "{}: entropy pair's log Z",
                describe(&case)
            );
            assert!(
                (pairs[b].1 - entropy[b]).abs() < 1e-9,
                "{}: reference H {} enumeration {}",
                describe(&case),
                pairs[b].1,
                entropy[b]
            );
        }
        let cpu = CpuScan::default().forward(&p, Semiring::Entropy);
        assert_relative(
            &cpu,
            &entropy,
            1e-4,
            &format!("Entropy of {}", describe(&case)),
        );
    }
}

/// A single position has C segmentations of no edges: log Z = H = ln C, score 0.
#[test]
fn one_position_is_a_choice_of_start_label() {
    let dims = ScanDims {
        batch: 2,
        positions: 3,
        durations: 2,
        labels: 4,
    };
    let edge = vec![1.0; dims.edge_len()];
    let p = ScanProblem::new(dims, &edge, Some(&[1, 1])).unwrap();
    let cpu = CpuScan::default();
    let ln4 = 4f32.ln();
    assert!(cpu
        .forward(&p, Semiring::Log)
        .iter()
        .all(|&z| (z - ln4).abs() < 1e-6));
    assert!(cpu
        .forward(&p, Semiring::Entropy)
        .iter()
        .all(|&h| (h - ln4).abs() < 1e-6));
    assert_eq!(cpu.forward(&p, Semiring::Max), vec![0.0, 0.0]);
    assert!(cpu
        .backward(&p, Semiring::Log)
        .unwrap()
        .grad
        .iter()
        .all(|&g| g == 0.0));
}

#[test]
fn bad_inputs_and_missing_backwards_are_clear_errors() {
    let dims = ScanDims {
        batch: 2,
        positions: 4,
        durations: 3,
        labels: 2,
    };
    let edge = vec![0.0; dims.edge_len()];
    let short = vec![0.0; dims.edge_len() - 1];
    let err = ScanProblem::new(dims, &short, None).unwrap_err();
    assert!(
        matches!(err, ScanError::InvalidInput(_)) && err.to_string().contains("edge has 71 values"),
        "{err}"
    );
    let err = ScanProblem::new(dims, &edge, Some(&[4, 5])).unwrap_err();
    assert!(
        err.to_string()
            .contains("length 5 of sequence 1 is outside 1..=4"),
        "{err}"
    );
    assert!(ScanProblem::new(dims, &edge, Some(&[4, 0])).is_err());
    assert!(ScanProblem::new(dims, &edge, Some(&[4])).is_err());
    assert!(ScanProblem::new(ScanDims { labels: 0, ..dims }, &[], None).is_err());
    let p = ScanProblem::new(dims, &edge, None).unwrap();
    let err = CpuScan::default()
        .backward(&p, Semiring::Entropy)
        .unwrap_err();
    assert!(matches!(err, ScanError::NotImplemented(_)), "{err}");
    assert_eq!("ENTROPY".parse::<Semiring>().unwrap(), Semiring::Entropy);
    assert!(matches!(
        "sum".parse::<Semiring>(),
        Err(ScanError::UnknownSemiring(_))
    ));
}
