//! Scan test cases shared by the scan test files: a seeded normal generator, the edge cases
//! issue 15 names, and tolerance checks against the float64 reference.
#![allow(dead_code)]

use replay::suites::scan::{ScanDims, ScanProblem};

/// splitmix64 and Box–Muller: a small seeded normal generator (no `rand` dependency).
pub struct Normal(pub u64);

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
    pub fn sample(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}

pub struct Case {
    pub dims: ScanDims,
    pub lengths: Vec<usize>,
    pub edge: Vec<f32>,
}

impl Case {
    pub fn random(
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

    pub fn problem(&self) -> ScanProblem<'_> {
        ScanProblem::new(self.dims, &self.edge, Some(&self.lengths)).unwrap()
    }

    pub fn describe(&self) -> String {
        format!("{:?} lengths {:?}", self.dims, self.lengths)
    }
}

/// Shorter lengths than T, K > T, C = 1, K = 1, T = 1, B > 1 with different lengths, and the
/// seed's middle configuration (the last two are too large to enumerate).
pub fn cases() -> Vec<Case> {
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

/// Every `got` within `tol` of `want`, relative to `max(|want|, 1)` (values: log Z, scores
/// and entropies).
pub fn assert_relative(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs() / w.abs().max(1.0);
        assert!(
            err <= tol,
            "{what}[{i}]: got {g}, reference {w} (relative error {err:.2e})"
        );
    }
}

/// Every `got` within `tol` of `want` in absolute terms.
pub fn assert_absolute(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let worst = got
        .iter()
        .zip(want)
        .enumerate()
        .map(|(i, (&g, &w))| (i, (g as f64 - w).abs()))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    assert!(
        worst.1 <= tol,
        "{what}: worst error {:.2e} at {} (got {}, reference {})",
        worst.1,
        worst.0,
        got[worst.0],
        want[worst.0]
    );
}

/// A gradient within `tol` of the reference, relative to the reference's largest magnitude
/// (entries of a gradient vary over orders of magnitude; an entry-wise relative error would
/// judge the float32 rounding of the tiny ones).
pub fn assert_gradient(got: &[f32], want: &[f64], tol: f64, what: &str) {
    let scale = want.iter().fold(0.0f64, |m, w| m.max(w.abs())).max(1e-12);
    assert_absolute(
        got,
        want,
        tol * scale,
        &format!("{what} (max |grad| {scale:.3})"),
    );
}
