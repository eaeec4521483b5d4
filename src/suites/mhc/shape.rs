//! One configuration of the pipeline: the seed's sizes and dtype, the sizes of its tensors,
//! and the memory a run needs (checked before anything is allocated).

use super::MhcError;

/// The seed's module constants (`MHC(n_streams=4, tmax=20, rms_eps=1e-5, alpha=0.01)`).
pub const RMS_EPS: f64 = 1e-5;
pub const ALPHA: f64 = 0.01;
pub use crate::kernels::mhc_sinkhorn::{MhcDtype, SINKHORN_EPS, SINKHORN_ITERS};

/// The seed's defaults: `--bs 16 --seq 4096 --dim 7168 --n_streams 4 --dtype bfloat16`.
pub const DEFAULT_BS: usize = 16;
pub const DEFAULT_SEQ: usize = 4096;
pub const DEFAULT_DIM: usize = 7168;
pub const DEFAULT_STREAMS: usize = 4;
/// `--sweep-bs`: the seed README's batch sizes.
pub const SWEEP_BS: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// `--quick`: a size that runs in seconds (B·T = 512 tokens of n·D = 4096).
pub const QUICK: (usize, usize, usize) = (2, 256, 1024);

/// The sizes of one run: B, T, D, n and the dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MhcShape {
    pub batch: usize,
    pub seq: usize,
    pub dim: usize,
    pub streams: usize,
    pub dtype: MhcDtype,
}

impl MhcShape {
    pub fn new(
        batch: usize,
        seq: usize,
        dim: usize,
        streams: usize,
        dtype: MhcDtype,
    ) -> Result<MhcShape, MhcError> {
        for (name, v) in [("--bs", batch), ("--seq", seq), ("--dim", dim)] {
            if v == 0 {
                return Err(MhcError::InvalidInput(format!("{name} must be at least 1")));
            }
        }
        if !(1..=16).contains(&streams) {
            return Err(MhcError::InvalidInput(format!(
                "--n-streams {streams}: the fused kernels take 1 to 16 streams (n×n matrices up to 16×16)"
            )));
        }
        let shape = MhcShape {
            batch,
            seq,
            dim,
            streams,
            dtype,
        };
        if shape.stream_elements().is_none() {
            return Err(MhcError::InvalidInput(format!(
                "B·T·n·D = {batch}·{seq}·{streams}·{dim} does not fit in 64 bits"
            )));
        }
        Ok(shape)
    }

    /// B·T: the (b, t) positions, each with its own n×n matrix.
    pub fn tokens(&self) -> usize {
        self.batch * self.seq
    }

    /// n·D: the width RMSNorm and the Linear see.
    pub fn width(&self) -> usize {
        self.streams * self.dim
    }

    /// n²: the Linear's output width, one n×n matrix per token.
    pub fn mix(&self) -> usize {
        self.streams * self.streams
    }

    fn stream_elements(&self) -> Option<usize> {
        self.batch
            .checked_mul(self.seq)?
            .checked_mul(self.streams)?
            .checked_mul(self.dim)
    }

    /// Bytes of `x_streams` (B, T, n, D): what stage 0 copies and stage 3 writes again.
    pub fn stream_bytes(&self) -> u64 {
        self.stream_elements().unwrap_or(usize::MAX) as u64 * self.dtype.bytes() as u64
    }

    /// Bytes of the (B, T, n²) logits or mixing matrices in the dtype.
    pub fn mix_bytes(&self) -> u64 {
        (self.tokens() * self.mix() * self.dtype.bytes()) as u64
    }

    /// Host memory every run needs at its peak: x_streams, two (B, T, n, D) results (the
    /// fused output, kept, and torch's einsum output while it is timed), (B, T, D) for `x` while x_streams is made
    /// from it, the small (B, T, n²) tensors, and with `offload` the pinned host copies of
    /// the input and the result.
    pub fn host_bytes_needed(&self, offload: bool) -> u64 {
        let streams = self.stream_bytes();
        let mut total = 3 * streams + streams / self.streams as u64 + 16 * self.mix_bytes();
        if offload {
            total += 2 * streams;
        }
        total
    }

    /// What torch's stage 1 needs on top: libtorch's CPU RMSNorm is a composition that
    /// upcasts x_streams to float32 and keeps about three float32 copies of it alive (measured:
    /// peak 7.4× x_streams in bfloat16, 3.3× in float32, at B = 1 of the seed's size).
    pub fn torch_linear_extra_bytes(&self) -> u64 {
        self.stream_bytes() * 12 / self.dtype.bytes() as u64
    }

    pub fn describe(&self) -> String {
        format!(
            "B={} T={} D={} n={} {}",
            self.batch,
            self.seq,
            self.dim,
            self.streams,
            self.dtype.name()
        )
    }
}

/// Refuses a configuration that needs more than `available` bytes, with both numbers.
pub fn check_fits(needed: u64, available: Option<u64>, shape: &MhcShape) -> Result<(), MhcError> {
    match available {
        Some(free) if needed > free => Err(MhcError::WouldNotFit(format!(
            "{} needs about {:.1} GiB of host memory (x_streams alone is {:.2} GiB) but only {:.1} GiB \
             is available (MemAvailable); use a smaller --bs/--seq/--dim or --quick",
            shape.describe(),
            gib(needed),
            gib(shape.stream_bytes()),
            gib(free)
        ))),
        _ => Ok(()),
    }
}

pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_default_x_streams_is_3_5_gib_in_bfloat16() {
        let s = MhcShape::new(16, 4096, 7168, 4, MhcDtype::Bfloat16).unwrap();
        assert_eq!(s.stream_bytes(), 16 * 4096 * 4 * 7168 * 2);
        assert!((gib(s.stream_bytes()) - 3.5).abs() < 1e-9);
        assert_eq!(s.tokens(), 65536);
        assert_eq!(s.width(), 28672);
        assert_eq!(s.mix(), 16);
        // x_streams, two results and x: 11.4 GiB; torch's RMSNorm needs 21 GiB more.
        assert!((gib(s.host_bytes_needed(false)) - 11.4).abs() < 0.05);
        assert!((gib(s.torch_linear_extra_bytes()) - 21.0).abs() < 1e-9);
    }

    #[test]
    fn a_configuration_larger_than_memory_is_refused_with_the_numbers() {
        let s = MhcShape::new(32, 4096, 7168, 4, MhcDtype::Float32).unwrap();
        let err = check_fits(s.host_bytes_needed(false), Some(8 << 30), &s).unwrap_err();
        assert!(err.is_usage_error());
        let text = err.to_string();
        assert!(
            text.contains("GiB of host memory") && text.contains("8.0 GiB"),
            "{text}"
        );
        assert!(check_fits(1 << 20, Some(8 << 30), &s).is_ok());
        assert!(check_fits(u64::MAX, None, &s).is_ok());
    }

    #[test]
    fn bad_sizes_are_usage_errors() {
        assert!(MhcShape::new(0, 1, 1, 4, MhcDtype::Float32).is_err());
        assert!(MhcShape::new(1, 1, 1, 17, MhcDtype::Float32)
            .unwrap_err()
            .is_usage_error());
        assert_eq!("bf16".parse::<MhcDtype>(), Ok(MhcDtype::Bfloat16));
        assert!("int8".parse::<MhcDtype>().is_err());
    }
}
