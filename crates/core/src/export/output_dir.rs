//! The files a run writes into its `--output-dir`, named in one place: the commands, the
//! selftest that reads a compare run back, and the suites all go through [`OutputDir`].

use std::path::{Path, PathBuf};

use crate::error::Result;

/// A file of an output folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFile {
    /// `replay isolated`: every signature's replay, as JSON and as CSV.
    IsolatedJson,
    IsolatedCsv,
    /// `replay full`: the whole model timed.
    FullModelTiming,
    /// `replay compare`: the trace it captured and the signatures it classified.
    Trace,
    Signatures,
    /// `replay compare`: the report, as JSON and as a page.
    ComparisonReport,
    ReportHtml,
    /// `replay sequence`: the step re-run in order, as JSON and its entries as CSV.
    SequenceJson,
    SequenceCsv,
    /// `replay compare`: the host's costs it measured (the host model's section).
    HostProfile,
}

impl OutputFile {
    /// The file's name inside the folder.
    pub fn name(self) -> &'static str {
        match self {
            OutputFile::IsolatedJson => "isolated.json",
            OutputFile::IsolatedCsv => "isolated.csv",
            OutputFile::FullModelTiming => "full_model_timing.json",
            OutputFile::Trace => "trace.json",
            OutputFile::Signatures => "signatures.json",
            OutputFile::ComparisonReport => "comparison_report.json",
            OutputFile::ReportHtml => "report.html",
            OutputFile::SequenceJson => "sequence.json",
            OutputFile::SequenceCsv => "sequence.csv",
            OutputFile::HostProfile => "host.json",
        }
    }
}

/// An output folder: where each [`OutputFile`] goes, written atomically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputDir {
    root: PathBuf,
}

impl OutputDir {
    pub fn new(root: impl Into<PathBuf>) -> OutputDir {
        OutputDir { root: root.into() }
    }

    /// Makes the folder (before any work: a folder that cannot be made would lose the run).
    pub fn ensure(&self) -> Result<()> {
        super::ensure_output_dir(&self.root)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `file` goes.
    pub fn path(&self, file: OutputFile) -> PathBuf {
        self.root.join(file.name())
    }

    /// Writes `file` whole or not at all ([`super::write_atomic`]).
    pub fn write(&self, file: OutputFile, bytes: &[u8]) -> Result<()> {
        super::write_atomic(&self.path(file), bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_its_own_name_and_writes_inside_the_folder() {
        let files = [
            OutputFile::IsolatedJson,
            OutputFile::IsolatedCsv,
            OutputFile::FullModelTiming,
            OutputFile::Trace,
            OutputFile::Signatures,
            OutputFile::ComparisonReport,
            OutputFile::ReportHtml,
        ];
        let mut names: Vec<_> = files.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), files.len());
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::new(dir.path().join("run"));
        out.ensure().unwrap();
        out.write(OutputFile::ComparisonReport, b"{}").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("run/comparison_report.json")).unwrap(),
            b"{}"
        );
    }
}
