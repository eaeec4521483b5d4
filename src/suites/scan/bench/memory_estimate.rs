//! The seed's memory estimates (`benchmarks/lib/memory.py`), by backend family: what a
//! configuration would need, before running it. They fill the `memory_*_gb` columns and
//! drive the `--max-memory-gb` skip; measured peaks are separate columns.

/// Bytes of one float32.
const FLOAT_BYTES: u64 = 4;

/// How a backend keeps its state, which decides the seed's formulas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryModel {
    /// A streaming scan over a ring buffer whose autograd keeps state per position: the
    /// seed's `linear_scan_streaming` (our `cpu` and `torch`).
    Streaming,
    /// A fused kernel with a padded ring buffer and no per-position autograd state: the
    /// seed's `triton` family (our `cuda`).
    Fused,
}

impl MemoryModel {
    /// The model of a backend name; `None` for a name the seed has no formula for.
    pub fn of_backend(name: &str) -> Option<MemoryModel> {
        match crate::suites::scan::backends::canonical_backend(name).unwrap_or("") {
            "cpu" | "torch" => Some(MemoryModel::Streaming),
            "cuda" => Some(MemoryModel::Fused),
            _ => None,
        }
    }
}

/// Estimated bytes by category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryEstimate {
    /// The edge potentials `[B, T−1, K, C, C]`.
    pub potentials: u64,
    /// The DP state (the ring buffer and the output).
    pub dp_state: u64,
    /// Intermediate tensors of one step.
    pub workspace: u64,
    /// What autograd keeps for the backward.
    pub autograd: u64,
}

impl MemoryEstimate {
    /// The seed's `estimate_memory_breakdown(T, K, C, B, backend)`, in bytes; all zero for a
    /// backend without a model (as the seed's `else` branch).
    pub fn new(model: Option<MemoryModel>, t: usize, k: usize, c: usize, b: usize) -> Self {
        let (t, k, c, b) = (t as u64, k as u64, c as u64, b as u64);
        let n = t.saturating_sub(1);
        let potentials = b * n * k * c * c * FLOAT_BYTES;
        match model {
            Some(MemoryModel::Streaming) => {
                let dp_state = b * k * c * FLOAT_BYTES + b * c * FLOAT_BYTES;
                MemoryEstimate {
                    potentials,
                    dp_state,
                    workspace: b * k * c * c * FLOAT_BYTES + b * k * c * FLOAT_BYTES,
                    autograd: potentials + dp_state * n,
                }
            }
            Some(MemoryModel::Fused) => {
                let c_pad = c.max(1).next_power_of_two();
                MemoryEstimate {
                    potentials,
                    dp_state: b * k * c_pad * FLOAT_BYTES + b * FLOAT_BYTES,
                    workspace: b * c * FLOAT_BYTES,
                    autograd: potentials,
                }
            }
            None => MemoryEstimate {
                potentials,
                ..MemoryEstimate::default()
            },
        }
    }

    pub fn total(&self) -> u64 {
        self.potentials + self.dp_state + self.workspace + self.autograd
    }
}

/// Bytes in GiB, as the seed's `bytes_to_gb` divides (by 1024³) before rounding.
pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_formulas_by_hand() {
        // T=128, K=4, C=3, B=4: N=127.
        // potentials = 4·127·4·9·4 = 73 152; dp = 4·4·3·4 + 4·3·4 = 192 + 48 = 240;
        // workspace = 4·4·9·4 + 4·4·3·4 = 576 + 192 = 768; autograd = 73 152 + 240·127 = 103 632.
        let e = MemoryEstimate::new(Some(MemoryModel::Streaming), 128, 4, 3, 4);
        assert_eq!(
            e,
            MemoryEstimate {
                potentials: 73_152,
                dp_state: 240,
                workspace: 768,
                autograd: 103_632
            }
        );
        assert_eq!(e.total(), 73_152 + 240 + 768 + 103_632);
        // The seed's largest default: T=1024, K=24, C=12: potentials = 4·1023·24·144·4
        // = 56 567 808 bytes = 0.05268 GiB.
        let big = MemoryEstimate::new(Some(MemoryModel::Streaming), 1024, 24, 12, 4);
        assert_eq!(big.potentials, 56_567_808);
        assert!((gib(big.potentials) - 0.052_682_876_586_914_06).abs() < 1e-15);
    }

    #[test]
    fn fused_formulas_pad_c_to_a_power_of_two() {
        // T=256, K=8, C=6 (C_PAD = 8), B=2: N=255; potentials = 2·255·8·36·4 = 587 520;
        // dp = 2·8·8·4 + 2·4 = 512 + 8 = 520; workspace = 2·6·4 = 48; autograd = potentials.
        let e = MemoryEstimate::new(Some(MemoryModel::Fused), 256, 8, 6, 2);
        assert_eq!(
            e,
            MemoryEstimate {
                potentials: 587_520,
                dp_state: 520,
                workspace: 48,
                autograd: 587_520
            }
        );
        // C=1 pads to 1, C=9 to 16.
        assert_eq!(
            MemoryEstimate::new(Some(MemoryModel::Fused), 2, 1, 1, 1).dp_state,
            4 + 4
        );
        assert_eq!(
            MemoryEstimate::new(Some(MemoryModel::Fused), 2, 1, 9, 1).dp_state,
            16 * 4 + 4
        );
    }

    #[test]
    fn backends_map_to_the_seed_families() {
        assert_eq!(MemoryModel::of_backend("cpu"), Some(MemoryModel::Streaming));
        assert_eq!(
            MemoryModel::of_backend("torch"),
            Some(MemoryModel::Streaming)
        );
        assert_eq!(MemoryModel::of_backend("cuda"), Some(MemoryModel::Fused));
        assert_eq!(MemoryModel::of_backend("other"), None);
        // The seed's names, as the seed estimates them.
        assert_eq!(
            MemoryModel::of_backend("linear_scan_streaming"),
            Some(MemoryModel::Streaming)
        );
        assert_eq!(MemoryModel::of_backend("triton"), Some(MemoryModel::Fused));
    }
}
