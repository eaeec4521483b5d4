//! What every scan backend (`cpu`, `torch`, `cuda`) offers the benchmark, the `replay scan`
//! tool and the tests: inputs prepared once on the backend's device, then forward, the
//! forward that keeps what the backward needs, and the backward. A backend says where its
//! calls run and marks the timed part of each call; the measurement core's timer for that
//! place (the monotonic clock on the CPU, CUDA events on the GPU stream) times it.

use replay_core::measure::{Placement, Timer};

use super::{ScanError, ScanProblem, Semiring};

/// What one benchmark row times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// The value only (inference): streaming, O(K·C) working memory per sequence.
    Forward,
    /// The backward alone, after an untimed forward that kept what it needs.
    Backward,
    /// The forward that keeps state, then the backward.
    Both,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Forward, Phase::Backward, Phase::Both];

    /// The seed's spelling, used on the command line and in CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::Both => "both",
        }
    }
}

impl std::str::FromStr for Phase {
    type Err = ScanError;
    fn from_str(s: &str) -> Result<Phase, ScanError> {
        Phase::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                ScanError::InvalidInput(format!(
                    "unknown phase '{s}' (expected forward, backward or both)"
                ))
            })
    }
}

/// The most memory a backend held at once while it ran, in bytes: `allocated` is what its
/// tensors and buffers used, `reserved` what its allocator held from the system (equal to
/// `allocated` where there is no caching allocator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryPeak {
    pub allocated: u64,
    pub reserved: u64,
}

/// The values of a scan and, after a backward, the gradient of their sum with respect to
/// `edge` (same layout as `edge`), copied back to the host.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanOutput {
    pub values: Vec<f32>,
    pub grad: Option<Vec<f32>>,
}

/// A backend: makes [`PreparedScan`]s.
pub trait ScanBackend {
    /// `cpu`, `torch` or `cuda`: the name in `--backends` and in CSV rows.
    fn name(&self) -> &'static str;

    /// Copies the problem to the backend's device and allocates what the semiring needs.
    /// A semiring or phase the backend lacks is [`ScanError::NotImplemented`]; memory it
    /// cannot get is [`ScanError::OutOfMemory`].
    fn prepare<'p>(
        &self,
        problem: &ScanProblem<'p>,
        semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError>;
}

/// One problem on one backend, ready to run again and again.
pub trait PreparedScan {
    /// Where the calls run: the host, or the GPU stream they are queued on.
    fn placement(&self) -> Placement<'_>;

    /// Runs `calls` times `phase` back to back, timing the timed part of each call as one
    /// segment of `timer` ([`replay_core::measure::segment`]; for [`Phase::Backward`], each
    /// call runs an untimed forward first). What a call returns is dropped after its segment.
    fn run_calls(
        &mut self,
        phase: Phase,
        calls: u64,
        timer: &mut dyn Timer,
    ) -> Result<(), ScanError>;

    /// Runs `phase` once and returns its results (values; and the gradient unless `phase` is
    /// [`Phase::Forward`]), for checking against the reference.
    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError>;

    /// Forgets the memory peak seen so far.
    fn reset_peak_memory(&mut self);

    /// The memory peak since the last reset (or since `prepare`), measured, not estimated.
    fn peak_memory(&self) -> MemoryPeak;
}
