//! The semiring scan's CPU kernel against the float64 reference, and the reference against
//! enumeration of every segmentation on tiny cases (issue 15's correctness goals).

use replay::kernels::semiring_scan::cpu::CpuScan;
use replay::suites::scan::enumeration;
use replay::suites::scan::reference;
use replay::suites::scan::semiring::{EntropyOps, LogOps};
use replay::suites::scan::{ScanDims, ScanError, ScanProblem, Semiring};

use crate::scan_support;

use scan_support::{assert_absolute, assert_gradient, assert_relative, cases, Case};

fn describe(case: &Case) -> String {
    case.describe()
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
fn bad_inputs_are_clear_errors() {
    let dims = ScanDims {
        batch: 2,
        positions: 4,
        durations: 3,
        labels: 2,
    };
    let edge = vec![0.0; dims.edge_len()];
    let short = vec![0.0; dims.edge_len() - 1];
    let err = ScanError::from(ScanProblem::new(dims, &short, None).unwrap_err());
    assert!(
        matches!(err, ScanError::InvalidInput(_)) && err.to_string().contains("edge has 71 values"),
        "{err}"
    );
    let err = ScanError::from(ScanProblem::new(dims, &edge, Some(&[4, 5])).unwrap_err());
    assert!(
        err.to_string()
            .contains("length 5 of sequence 1 is outside 1..=4"),
        "{err}"
    );
    assert!(ScanProblem::new(dims, &edge, Some(&[4, 0])).is_err());
    assert!(ScanProblem::new(dims, &edge, Some(&[4])).is_err());
    assert!(ScanProblem::new(ScanDims { labels: 0, ..dims }, &[], None).is_err());
    let p = ScanProblem::new(dims, &edge, None).unwrap();
    let other_edge = vec![0.0; ScanDims { batch: 1, ..dims }.edge_len()];
    let other = ScanProblem::new(ScanDims { batch: 1, ..dims }, &other_edge, None).unwrap();
    let saved = CpuScan::default()
        .forward_saving(&other, Semiring::Log)
        .unwrap();
    let err = ScanError::from(CpuScan::default().backward_from(&p, &saved).unwrap_err());
    assert!(matches!(err, ScanError::InvalidInput(_)), "{err}");
    assert_eq!("ENTROPY".parse::<Semiring>().unwrap(), Semiring::Entropy);
    assert!(matches!(
        "sum".parse::<Semiring>(),
        Err(ScanError::UnknownSemiring(_))
    ));
}

/// The reference's Entropy gradient (from the marginals' derivative along θ) and the CPU's
/// reverse pass, against the exact gradient over every segmentation.
#[test]
fn entropy_gradient_matches_enumeration() {
    for case in cases().into_iter().take(6) {
        let p = case.problem();
        let exact = enumeration::entropy_gradient(&p);
        let reference = reference::entropy_gradient(&p);
        let scale = exact.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        for (i, (&r, &e)) in reference.iter().zip(&exact).enumerate() {
            assert!(
                (r - e).abs() <= 1e-6 * scale.max(1.0),
                "{}: dH/dθ[{i}] reference {r}, enumeration {e}",
                describe(&case)
            );
        }
        let cpu = CpuScan::default().backward(&p, Semiring::Entropy).unwrap();
        assert_relative(
            &cpu.values,
            &enumeration::entropy(&p),
            1e-4,
            "H from the saving forward",
        );
        assert_gradient(
            &cpu.grad,
            &exact,
            1e-3,
            &format!("Entropy grad of {}", describe(&case)),
        );
    }
}

/// A second, independent check: float64 central differences of the reference's H, one
/// coordinate at a time (H_b depends only on sequence b's block, so only that is re-run).
#[test]
fn entropy_gradient_matches_central_differences_of_the_reference() {
    const STEP: f64 = 1e-5;
    for case in [
        Case::random(11, 2, 9, 4, 3, &[9, 6]),
        Case::random(12, 1, 6, 8, 2, &[]),
    ] {
        let cpu = CpuScan::with_threads(2)
            .backward(&case.problem(), Semiring::Entropy)
            .unwrap();
        let d = case.dims;
        let one = ScanDims { batch: 1, ..d };
        let stride = d.sequence_stride();
        let mut numeric = vec![0.0; d.edge_len()];
        for b in 0..d.batch {
            // The sequence's block in float64, perturbed one entry at a time; the reference
            // reads float32, so the difference is taken on an exactly representable step.
            let block: Vec<f32> = case.edge[b * stride..(b + 1) * stride].to_vec();
            for i in 0..stride {
                let h_at = |x: f32| {
                    let mut edge = block.clone();
                    edge[i] = x;
                    let p = ScanProblem::new(one, &edge, Some(&case.lengths[b..b + 1])).unwrap();
                    reference::forward(&p, Semiring::Entropy)[0]
                };
                let (up, down) = (
                    (block[i] as f64 + STEP) as f32,
                    (block[i] as f64 - STEP) as f32,
                );
                numeric[b * stride + i] = (h_at(up) - h_at(down)) / (up as f64 - down as f64);
            }
        }
        assert_gradient(
            &cpu.grad,
            &numeric,
            1e-3,
            &format!(
                "Entropy grad against central differences, {}",
                describe(&case)
            ),
        );
    }
}

/// Long sequences: log Z and H run into the thousands, where float32 spacing is ~1e-4; the
/// kernel keeps rows as float64 bases and float32 residuals so that its gradients stay
/// accurate (absolute rows made the error grow as T²: 1e-2 of max |grad| for Entropy here).
#[test]
fn long_sequences_keep_their_gradients_accurate() {
    let case = Case::random(42, 2, 2048, 8, 3, &[2048, 1500]);
    let p = case.problem();
    for (semiring, want) in [
        (Semiring::Log, reference::log_marginals(&p)),
        (Semiring::Entropy, reference::entropy_gradient(&p)),
    ] {
        let got = CpuScan::default().backward(&p, semiring).unwrap();
        assert_relative(
            &got.values,
            &reference::forward(&p, semiring),
            1e-6,
            &format!("{semiring} value, T = 2048"),
        );
        assert_gradient(
            &got.grad,
            &want,
            1e-4,
            &format!("{semiring} gradient, T = 2048"),
        );
    }
}
