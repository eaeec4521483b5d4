//! `benchmark_full.csv` read back: the rows whose status is `ok` (the seed keeps its
//! `success` rows), with the seed's derived metrics. A missing file or column, or a number
//! that does not parse, is a [`ScanError::File`] naming the file.

use std::path::Path;

use crate::suites::scan::ScanError;

/// One timed configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub t: u64,
    pub k: u64,
    pub c: u64,
    pub b: u64,
    pub kc: u64,
    pub backend: String,
    pub semiring: String,
    pub phase: String,
    pub time_ms: f64,
    /// Empty in the CSV when the backend measured no peak.
    pub peak_gb: Option<f64>,
}

impl Measured {
    /// Sequence positions per second: `B·T / s`.
    pub fn positions_per_sec(&self) -> f64 {
        (self.b * self.t) as f64 / (self.time_ms / 1e3)
    }

    /// Peak memory per state-position in kB: `peak_gb · 1e6 / (T·KC)`.
    pub fn memory_per_state_kb(&self) -> Option<f64> {
        self.peak_gb.map(|g| g * 1e6 / (self.t * self.kc) as f64)
    }
}

const REQUIRED: [&str; 11] = [
    "T",
    "K",
    "C",
    "B",
    "KC",
    "backend",
    "semiring",
    "phase",
    "time_ms_median",
    "peak_allocated_gb",
    "status",
];

/// The `ok` rows of `path`, in file order.
pub fn load(path: &Path) -> Result<Vec<Measured>, ScanError> {
    let bad = |problem: String| ScanError::File {
        path: path.to_path_buf(),
        problem,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let headers = reader
        .headers()
        .map_err(|e| bad(format!("cannot read its header: {e}")))?
        .clone();
    let mut index = [0usize; REQUIRED.len()];
    for (slot, name) in index.iter_mut().zip(REQUIRED) {
        *slot = headers.iter().position(|h| h == name).ok_or_else(|| {
            bad(format!(
                "no column '{name}' (is it a benchmark_full.csv of replay bench scan?)"
            ))
        })?;
    }
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(format!("row {}: {e}", line + 2)))?;
        let field = |i: usize| record.get(index[i]).unwrap_or("").trim();
        if !crate::suites::scan::status::is_success(field(10)) {
            continue;
        }
        let not = |i: usize, what: &str| {
            bad(format!(
                "row {}: column {} is '{}', not {what}",
                line + 2,
                REQUIRED[i],
                field(i)
            ))
        };
        let int = |i: usize| {
            field(i)
                .parse::<u64>()
                .map_err(|_| not(i, "a whole number"))
        };
        let float = |i: usize| field(i).parse::<f64>().map_err(|_| not(i, "a number"));
        let time_ms = float(8)?;
        if time_ms.is_nan() || time_ms <= 0.0 {
            return Err(bad(format!(
                "row {}: an ok row with time_ms_median {time_ms}",
                line + 2
            )));
        }
        rows.push(Measured {
            t: int(0)?,
            k: int(1)?,
            c: int(2)?,
            b: int(3)?,
            kc: int(4)?,
            backend: field(5).to_string(),
            semiring: field(6).to_string(),
            phase: field(7).to_string(),
            time_ms,
            peak_gb: if field(9).is_empty() {
                None
            } else {
                Some(float(9)?)
            },
        });
    }
    Ok(rows)
}
