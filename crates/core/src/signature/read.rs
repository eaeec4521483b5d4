//! Reading a signature file back, for replay.

use std::path::{Path, PathBuf};

use super::schema::{SignatureFile, SCHEMA_VERSION};

/// A signature file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SignatureFileError {
    #[error("{path}: cannot read signature file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: not a signature file (write one with `replay classify`): {message} at line {line}, column {column}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },

    #[error("{path}: signature file schema version {found}; this build reads version {supported} (re-run `replay classify`)")]
    UnsupportedVersion {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
}

/// Reads a signature file written by `replay classify`, refusing other schema versions.
pub fn read_file(path: &Path) -> Result<SignatureFile, SignatureFileError> {
    let bytes = std::fs::read(path).map_err(|source| SignatureFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_bytes(&bytes, path)
}

/// [`read_file`] on a file's bytes; `path` names the file in errors.
pub fn read_bytes(bytes: &[u8], path: &Path) -> Result<SignatureFile, SignatureFileError> {
    let invalid = |error: serde_json::Error| invalid(error, path);
    // The version is checked before the body, so that a file from another version is
    // reported as such rather than as whichever field changed.
    #[derive(serde::Deserialize)]
    struct VersionOnly {
        schema_version: u64,
    }
    let version: VersionOnly = serde_json::from_slice(bytes).map_err(invalid)?;
    if version.schema_version != u64::from(SCHEMA_VERSION) {
        return Err(SignatureFileError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_slice(bytes).map_err(invalid)
}

/// A parse error as the file's error, its position apart from its message.
pub(super) fn invalid(error: serde_json::Error, path: &Path) -> SignatureFileError {
    SignatureFileError::Invalid {
        path: path.to_path_buf(),
        line: error.line(),
        column: error.column(),
        message: match error.to_string().rfind(" at line ") {
            Some(at) => error.to_string()[..at].to_owned(),
            None => error.to_string(),
        },
    }
}
