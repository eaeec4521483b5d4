//! The three semirings of the seed's scan, as the kernels take them (the suite parses them
//! from the user's words and has the float64 scalar operations of its reference).

use std::fmt;

/// Which semiring the scan runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Semiring {
    /// (logsumexp, +): the log-partition function; its gradient is the edge marginals.
    Log,
    /// (max, +): the Viterbi score; its gradient is the indicator of the best segmentation.
    Max,
    /// Pairs (log Z, H) with torch-struct's entropy ⊕: the entropy of the segmentation
    /// distribution.
    Entropy,
}

impl Semiring {
    pub const ALL: [Semiring; 3] = [Semiring::Log, Semiring::Max, Semiring::Entropy];

    /// The seed's spelling (`Log`, `Max`, `Entropy`), used in CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            Semiring::Log => "Log",
            Semiring::Max => "Max",
            Semiring::Entropy => "Entropy",
        }
    }
}

impl fmt::Display for Semiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
