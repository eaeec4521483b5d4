//! The two STREAM kernels replay runs itself, what each computes and how many bytes a call is
//! counted as moving.
//!
//! Bytes follow STREAM's convention: every array element read once and written once, nothing
//! for write-allocate (the read of a destination line before it is written). Streaming stores
//! avoid that read, so with them the count is the real traffic; without them (libtorch's copy,
//! a GPU) the hardware may move up to one more array's worth, which the count leaves out, as
//! STREAM and likwid-bench do.

/// The float32 elements in `size_mb` MiB, as the seed sizes its copy (`size_mb · 2²⁰ / 4`).
pub fn elements_in_mb(size_mb: u64) -> Option<usize> {
    usize::try_from(size_mb.checked_mul(1 << 20)? / 4).ok()
}

/// The `s` of the triad, STREAM's.
pub const TRIAD_SCALAR: f32 = 3.0;

/// One of replay's own bandwidth kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKernel {
    /// `b[i] = a[i]`.
    Copy,
    /// `a[i] = b[i] + s·c[i]`.
    Triad,
}

impl StreamKernel {
    pub const ALL: [StreamKernel; 2] = [StreamKernel::Copy, StreamKernel::Triad];

    pub fn name(self) -> &'static str {
        match self {
            StreamKernel::Copy => "copy",
            StreamKernel::Triad => "triad",
        }
    }

    /// The profile's `operation_type`.
    pub fn operation_type(self) -> &'static str {
        match self {
            StreamKernel::Copy => "memory_copy",
            StreamKernel::Triad => "memory_triad",
        }
    }

    /// Arrays read per element: one for the copy, two (b and c) for the triad.
    pub fn arrays_read(self) -> u64 {
        match self {
            StreamKernel::Copy => 1,
            StreamKernel::Triad => 2,
        }
    }

    /// Bytes a call over `n` floats is counted as moving: each array read plus the one
    /// written, 4 bytes an element (copy 2·n·4, triad 3·n·4; the seed's copy formula).
    pub fn bytes(self, n: usize) -> u64 {
        (self.arrays_read() + 1) * 4 * n as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_count_every_array_read_and_the_one_written() {
        assert_eq!(StreamKernel::Copy.bytes(1000), 8000);
        assert_eq!(StreamKernel::Triad.bytes(1000), 12000);
        // 128 MiB of floats copied: 256 MiB counted, the seed's 2·n·4.
        let n = elements_in_mb(128).unwrap();
        assert_eq!(n, 33_554_432);
        assert_eq!(StreamKernel::Copy.bytes(n), 256 << 20);
        assert_eq!(StreamKernel::Triad.bytes(n), 384 << 20);
    }

    #[test]
    fn sizes_too_large_for_the_machine_are_refused() {
        assert_eq!(elements_in_mb(0), Some(0));
        assert_eq!(elements_in_mb(1), Some(262_144));
        assert_eq!(elements_in_mb(u64::MAX), None);
    }
}
