//! The seed's matrix shape generators (`get_shapes_for_config` of torchao's microbenchmark
//! runner): each yields named `[m, k, n]` shapes in the seed's order and with its names.

use std::ops::RangeInclusive;

use serde::Serialize;

/// One GEMM shape of the grid: the input is (m, k), the Linear maps k to n.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedShape {
    pub name: String,
    pub m: i64,
    pub k: i64,
    pub n: i64,
}

impl NamedShape {
    pub fn new(name: impl Into<String>, [m, k, n]: [i64; 3]) -> NamedShape {
        NamedShape {
            name: name.into(),
            m,
            k,
            n,
        }
    }
}

/// A `matrix_shapes` entry of the config, with the seed's defaults already applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeGenerator {
    /// `custom`: the listed `[m, k, n]` shapes, each named `custom`.
    Custom(Vec<[i64; 3]>),
    /// `llama`: LLaMa-2 70B single-node weight shapes (fused attn.wqkv and ffn.w13) at a
    /// batch of 4 sequences of 4096 tokens.
    Llama,
    /// A grid of powers of two, over `min_power..=max_power`.
    Powers(PowerGrid, RangeInclusive<u32>),
}

/// The generators that take powers of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerGrid {
    /// `pow2`: [2^p]*3 for p in min..=max (default 10..=14).
    Pow2,
    /// `pow2_extended`: 2^p and 2^p + 2^(p-1), each cubed, for p in min..=max (default 10..=14).
    Pow2Extended,
    /// `small_sweep`: every (M, K, N) of powers of two in min..=max (default 10..=15) with
    /// M <= K <= N.
    SmallSweep,
    /// `sweep`: every (M, K, N) of powers of two in min..=max (default 8..=15).
    Sweep,
}

impl PowerGrid {
    /// The grid the config calls `name`, with the seed's default (min_power, max_power).
    pub fn named(name: &str) -> Option<(PowerGrid, (u32, u32))> {
        match name {
            "pow2" => Some((PowerGrid::Pow2, (10, 14))),
            "pow2_extended" => Some((PowerGrid::Pow2Extended, (10, 14))),
            "small_sweep" => Some((PowerGrid::SmallSweep, (10, 15))),
            "sweep" => Some((PowerGrid::Sweep, (8, 15))),
            _ => None,
        }
    }
}

/// The generator names the config accepts.
pub const GENERATOR_NAMES: [&str; 6] = [
    "custom",
    "llama",
    "pow2",
    "pow2_extended",
    "small_sweep",
    "sweep",
];

/// LLaMa-2 70B's fused weight shapes: M = batch 4 x 4096 tokens.
pub const LLAMA_SHAPES: [(&str, [i64; 3]); 4] = [
    ("attn.wqkv", [16384, 8192, 1280]),
    ("attn.w0", [16384, 1024, 8192]),
    ("ffn.w13", [16384, 8192, 7168]),
    ("ffn.w2", [16384, 3584, 8192]),
];

impl ShapeGenerator {
    /// The shapes, in the seed's order, named as the seed names them.
    pub fn shapes(&self) -> Vec<NamedShape> {
        match self {
            ShapeGenerator::Custom(shapes) => shapes
                .iter()
                .map(|s| NamedShape::new("custom", *s))
                .collect(),
            ShapeGenerator::Llama => LLAMA_SHAPES
                .iter()
                .map(|(name, s)| NamedShape::new(format!("llama_{name}"), *s))
                .collect(),
            ShapeGenerator::Powers(PowerGrid::Pow2, powers) => powers
                .clone()
                .enumerate()
                .map(|(i, p)| {
                    let v = 1i64 << p;
                    NamedShape::new(format!("pow2_{i}"), [v, v, v])
                })
                .collect(),
            ShapeGenerator::Powers(PowerGrid::Pow2Extended, powers) => powers
                .clone()
                .enumerate()
                .flat_map(|(i, p)| {
                    let v1 = 1i64 << p;
                    // 2^p + 2^(p-1); for p = 0 the seed's 2**-1 is 0.5, which no shape has.
                    let v2 = v1 + (v1 >> 1);
                    [
                        NamedShape::new(format!("pow2_extended_{}", i * 2), [v1, v1, v1]),
                        NamedShape::new(format!("pow2_extended_{}", i * 2 + 1), [v2, v2, v2]),
                    ]
                })
                .collect(),
            ShapeGenerator::Powers(PowerGrid::SmallSweep, powers) => cube(powers)
                .filter(|[m, k, n]| m <= k && k <= n)
                .enumerate()
                .map(|(i, s)| NamedShape::new(format!("small_sweep_{i}"), s))
                .collect(),
            ShapeGenerator::Powers(PowerGrid::Sweep, powers) => cube(powers)
                .enumerate()
                .map(|(i, s)| NamedShape::new(format!("sweep_{i}"), s))
                .collect(),
        }
    }
}

/// Every (2^a, 2^b, 2^c) for a, b, c in `powers`, M slowest, N fastest (the seed's loops).
fn cube(powers: &RangeInclusive<u32>) -> impl Iterator<Item = [i64; 3]> {
    let (min, max) = (*powers.start(), *powers.end());
    (min..=max).flat_map(move |a| {
        (min..=max).flat_map(move |b| (min..=max).map(move |c| [1i64 << a, 1i64 << b, 1i64 << c]))
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    fn dims(s: &NamedShape) -> (&str, [i64; 3]) {
        (s.name.as_str(), [s.m, s.k, s.n])
    }

    /// The shapes of the grid `name` over its default powers.
    fn default_grid(name: &str) -> Vec<NamedShape> {
        let (grid, (lo, hi)) = PowerGrid::named(name).unwrap();
        ShapeGenerator::Powers(grid, lo..=hi).shapes()
    }

    #[test]
    fn each_generator_has_the_seeds_count_names_and_first_and_last_shapes() {
        let custom = ShapeGenerator::Custom(vec![[1, 2, 3], [4, 5, 6]]).shapes();
        assert_eq!(custom.len(), 2);
        assert_eq!(dims(&custom[1]), ("custom", [4, 5, 6]));

        let llama = ShapeGenerator::Llama.shapes();
        assert_eq!(llama.len(), 4);
        assert_eq!(dims(&llama[0]), ("llama_attn.wqkv", [16384, 8192, 1280]));
        assert_eq!(dims(&llama[3]), ("llama_ffn.w2", [16384, 3584, 8192]));

        let pow2 = default_grid("pow2");
        assert_eq!(pow2.len(), 5);
        assert_eq!(dims(&pow2[0]), ("pow2_0", [1024, 1024, 1024]));
        assert_eq!(dims(&pow2[4]), ("pow2_4", [16384, 16384, 16384]));

        let ext = default_grid("pow2_extended");
        assert_eq!(ext.len(), 10);
        assert_eq!(dims(&ext[1]), ("pow2_extended_1", [1536, 1536, 1536]));
        assert_eq!(dims(&ext[9]), ("pow2_extended_9", [24576, 24576, 24576]));

        let sweep = default_grid("sweep");
        assert_eq!(sweep.len(), 512);
        assert_eq!(dims(&sweep[0]), ("sweep_0", [256, 256, 256]));
        assert_eq!(dims(&sweep[1]), ("sweep_1", [256, 256, 512]));
        assert_eq!(dims(&sweep[511]), ("sweep_511", [32768, 32768, 32768]));

        let small = default_grid("small_sweep");
        // Non-decreasing triples of 6 powers: C(6 + 2, 3) = 56.
        assert_eq!(small.len(), 56);
        assert_eq!(dims(&small[0]), ("small_sweep_0", [1024, 1024, 1024]));
        assert_eq!(dims(&small[55]), ("small_sweep_55", [32768, 32768, 32768]));
        assert!(small.iter().all(|s| s.m <= s.k && s.k <= s.n));
    }
}
