//! Every segmentation of a (tiny) sequence, listed one by one: the ground truth that the
//! recurrences are checked against (entropy, marginals, expected segment count).

use super::ScanProblem;

/// One segmentation: its score (the sum of its edges' log-potentials) and the flat indices of
/// its edges in `edge`.
#[derive(Debug, Clone)]
pub struct Segmentation {
    pub score: f64,
    pub edges: Vec<usize>,
}

/// All segmentations of sequence `b`: a start label at position 0, then segments of duration
/// `1..=max_duration` with a label each, ending exactly at position `len − 1`. The count grows
/// exponentially; keep `len` and `C` tiny.
pub fn segmentations(p: &ScanProblem, b: usize) -> Vec<Segmentation> {
    let mut all = Vec::new();
    for start in 0..p.dims.labels {
        extend(
            p,
            b,
            0,
            start,
            Segmentation {
                score: 0.0,
                edges: Vec::new(),
            },
            &mut all,
        );
    }
    all
}

fn extend(
    p: &ScanProblem,
    b: usize,
    pos: usize,
    label: usize,
    so_far: Segmentation,
    all: &mut Vec<Segmentation>,
) {
    let d = p.dims;
    let last = p.lengths[b] - 1;
    if pos == last {
        all.push(so_far);
        return;
    }
    for dur in 1..=d.max_duration().min(last - pos) {
        for next in 0..d.labels {
            let i = d.index(b, pos, d.slice_of(dur), next, label);
            let mut edges = so_far.edges.clone();
            edges.push(i);
            extend(
                p,
                b,
                pos + dur,
                next,
                Segmentation {
                    score: so_far.score + p.edge[i] as f64,
                    edges,
                },
                all,
            );
        }
    }
}

/// The segmentation distribution of sequence `b`: (log Z, probabilities in the order of
/// [`segmentations`]).
pub fn distribution(segs: &[Segmentation]) -> (f64, Vec<f64>) {
    let max = segs
        .iter()
        .map(|s| s.score)
        .fold(f64::NEG_INFINITY, f64::max);
    let log_z = max + segs.iter().map(|s| (s.score - max).exp()).sum::<f64>().ln();
    (
        log_z,
        segs.iter().map(|s| (s.score - log_z).exp()).collect(),
    )
}

/// The Shannon entropy of the segmentation distribution of each sequence.
pub fn entropy(p: &ScanProblem) -> Vec<f64> {
    (0..p.dims.batch)
        .map(|b| {
            let (_, probs) = distribution(&segmentations(p, b));
            -probs
                .iter()
                .filter(|&&q| q > 0.0)
                .map(|q| q * q.ln())
                .sum::<f64>()
        })
        .collect()
}

/// Per sequence, the expected number of segments; and the edge marginals of all sequences
/// (layout of `edge`).
pub fn marginals_and_expected_segments(p: &ScanProblem) -> (Vec<f64>, Vec<f64>) {
    let mut marginals = vec![0.0; p.dims.edge_len()];
    let mut expected = Vec::new();
    for b in 0..p.dims.batch {
        let segs = segmentations(p, b);
        let (_, probs) = distribution(&segs);
        let mut count = 0.0;
        for (s, q) in segs.iter().zip(&probs) {
            count += q * s.edges.len() as f64;
            for &i in &s.edges {
                marginals[i] += q;
            }
        }
        expected.push(count);
    }
    (marginals, expected)
}

/// The exact gradient of Σ_b H_b with respect to `edge`, over every segmentation: with p_s
/// the probability of segmentation s, φ_{s,e} its count of edge e (0 or 1) and μ_e the
/// marginal, `dH/dθ_e = −Σ_s p_s (φ_{s,e} − μ_e) log p_s` (the covariance of φ_e with
/// log p; differentiate `H = −Σ_s p_s log p_s` with `∂ log p_s/∂θ_e = φ_{s,e} − μ_e`).
pub fn entropy_gradient(p: &ScanProblem) -> Vec<f64> {
    let mut grad = vec![0.0; p.dims.edge_len()];
    let stride = p.dims.sequence_stride();
    for b in 0..p.dims.batch {
        let segs = segmentations(p, b);
        let (_, probs) = distribution(&segs);
        let mut marginals = vec![0.0; stride];
        for (s, q) in segs.iter().zip(&probs) {
            for &i in &s.edges {
                marginals[i - b * stride] += q;
            }
        }
        let own = &mut grad[b * stride..(b + 1) * stride];
        for (s, &q) in segs.iter().zip(&probs) {
            if q == 0.0 {
                continue;
            }
            let log_q = q.ln();
            let mut counts = vec![0.0; stride];
            for &i in &s.edges {
                counts[i - b * stride] += 1.0;
            }
            for ((g, &phi), &mu) in own.iter_mut().zip(&counts).zip(&marginals) {
                *g -= q * (phi - mu) * log_q;
            }
        }
    }
    grad
}
