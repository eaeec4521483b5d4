//! The seed's compile-friendly sampling (`--compile-friendly`): the (T, K, C) configurations
//! grouped into canonical shapes — T rounded up to a T bucket, K·C up to a K·C bucket — at
//! most `--max-canonical-shapes` of those shapes kept, evenly spaced, and at most
//! `--samples-per-shape` configurations run per shape, evenly spaced too.
//!
//! The seed does it so that `torch.compile` builds a few shapes instead of one per
//! configuration. Replay compiles nothing at run time (its kernels are built with the
//! binary), so here it is only what users rely on it for: a grid reducer that still spans
//! the grid's range of T and K·C.

use std::collections::BTreeMap;

/// The seed's sequence-length buckets.
pub const T_BUCKETS: [usize; 6] = [64, 128, 256, 512, 1024, 2048];
/// The seed's state-space (K·C) buckets.
pub const KC_BUCKETS: [usize; 8] = [12, 24, 48, 72, 96, 144, 192, 288];

/// `--max-canonical-shapes` and `--samples-per-shape`, with the seed's defaults 8 and 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    pub max_canonical_shapes: usize,
    pub samples_per_shape: usize,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            max_canonical_shapes: 8,
            samples_per_shape: 2,
        }
    }
}

/// One canonical shape: its T bucket and K·C bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CanonicalShape {
    pub t: usize,
    pub kc: usize,
}

impl CanonicalShape {
    /// The shape a configuration falls in: the smallest bucket at least as large, or the
    /// largest bucket for a value above them all.
    pub fn of(t: usize, k: usize, c: usize) -> CanonicalShape {
        CanonicalShape {
            t: bucket(t, &T_BUCKETS),
            kc: bucket(k * c, &KC_BUCKETS),
        }
    }

    /// The (k, c) the seed compiles for this shape near (K, C): k·c = the K·C bucket, with
    /// |k − K| + 0.5·|c − C| least (ties: the smaller k).
    pub fn canonical_kc(&self, k: usize, c: usize) -> (usize, usize) {
        let cost = |kk: usize, cc: usize| kk.abs_diff(k) as f64 + 0.5 * cc.abs_diff(c) as f64;
        (1..=self.kc)
            .filter(|kk| self.kc.is_multiple_of(*kk))
            .map(|kk| (kk, self.kc / kk))
            .min_by(|a, b| cost(a.0, a.1).total_cmp(&cost(b.0, b.1)))
            .unwrap_or((k, c))
    }
}

fn bucket(value: usize, buckets: &[usize]) -> usize {
    buckets
        .iter()
        .copied()
        .find(|&b| b >= value)
        .unwrap_or(buckets[buckets.len() - 1])
}

/// `count` indices spread evenly over `0..n` (the first and the last included), all of them
/// when `count >= n`.
fn evenly_spaced(n: usize, count: usize) -> Vec<usize> {
    match (n, count) {
        (0, _) | (_, 0) => Vec::new(),
        _ if count >= n => (0..n).collect(),
        (_, 1) => vec![0],
        _ => (0..count)
            .map(|i| ((i * (n - 1)) as f64 / (count - 1) as f64).round() as usize)
            .collect(),
    }
}

/// The configurations of `configs` (in the grid's order) that the sampling keeps, still in
/// that order.
pub fn sample(configs: &[(usize, usize, usize)], sampling: Sampling) -> Vec<(usize, usize, usize)> {
    let mut groups: BTreeMap<CanonicalShape, Vec<usize>> = BTreeMap::new();
    for (i, &(t, k, c)) in configs.iter().enumerate() {
        groups
            .entry(CanonicalShape::of(t, k, c))
            .or_default()
            .push(i);
    }
    let shapes: Vec<&Vec<usize>> = groups.values().collect();
    let mut kept: Vec<usize> = evenly_spaced(shapes.len(), sampling.max_canonical_shapes)
        .into_iter()
        .flat_map(|s| {
            let members = shapes[s];
            evenly_spaced(members.len(), sampling.samples_per_shape)
                .into_iter()
                .map(move |m| members[m])
        })
        .collect();
    kept.sort_unstable();
    kept.into_iter().map(|i| configs[i]).collect()
}

/// The canonical shapes that `configs` span, sorted.
pub fn shapes(configs: &[(usize, usize, usize)]) -> Vec<CanonicalShape> {
    let mut shapes: Vec<CanonicalShape> = configs
        .iter()
        .map(|&(t, k, c)| CanonicalShape::of(t, k, c))
        .collect();
    shapes.sort_unstable();
    shapes.dedup();
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cross(ts: &[usize], ks: &[usize], cs: &[usize]) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        for &t in ts {
            for &k in ks {
                for &c in cs {
                    out.push((t, k, c));
                }
            }
        }
        out
    }

    #[test]
    fn configurations_fall_in_the_seeds_buckets() {
        assert_eq!(
            CanonicalShape::of(128, 4, 3),
            CanonicalShape { t: 128, kc: 12 }
        );
        assert_eq!(
            CanonicalShape::of(200, 8, 6),
            CanonicalShape { t: 256, kc: 48 }
        );
        assert_eq!(
            CanonicalShape::of(4096, 24, 12),
            CanonicalShape { t: 2048, kc: 288 }
        );
        assert_eq!(CanonicalShape { t: 256, kc: 48 }.canonical_kc(8, 6), (8, 6));
        assert_eq!(CanonicalShape { t: 256, kc: 72 }.canonical_kc(8, 6), (8, 9));
    }

    #[test]
    fn the_quick_example_keeps_four_shapes_one_config_each() {
        // The seed README's quick comparison: T 256,512,1024, K 8,16, C 6,12 (12 configs,
        // K·C 48, 96, 96, 192: 9 canonical shapes), 4 shapes, 1 sample each.
        let configs = cross(&[256, 512, 1024], &[8, 16], &[6, 12]);
        assert_eq!(shapes(&configs).len(), 9);
        let kept = sample(
            &configs,
            Sampling {
                max_canonical_shapes: 4,
                samples_per_shape: 1,
            },
        );
        assert_eq!(kept.len(), 4, "{kept:?}");
        assert_eq!(shapes(&kept).len(), 4);
        // The first and the last shape are kept: the range of T and K·C is spanned.
        assert_eq!(kept[0], (256, 8, 6));
        assert_eq!(kept[3], (1024, 16, 12));
    }

    #[test]
    fn defaults_bound_the_grid_and_keep_its_order() {
        let configs = cross(&[128, 256, 512, 1024], &[4, 8, 12, 16], &[3, 6, 9, 12]);
        let kept = sample(&configs, Sampling::default());
        assert!(kept.len() <= 8 * 2 && kept.len() >= 8, "{kept:?}");
        assert_eq!(shapes(&kept).len(), 8);
        let mut sorted = kept.clone();
        sorted.sort_by_key(|x| configs.iter().position(|y| y == x));
        assert_eq!(kept, sorted);
        // A grid smaller than the limits is kept whole.
        let small = cross(&[128], &[4], &[3, 6]);
        assert_eq!(sample(&small, Sampling::default()), small);
    }
}
