//! Appending to a file whole or not at all, for the files runs add rows to as they go (CSV
//! rows, journals): a row the disk refused must not stay half-written.

use std::fs::File;
use std::io::Write;

/// Appends `bytes` to `file` whole or not at all: on an error (a full disk) the file is cut
/// back to its length before.
pub fn append_whole(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    let written = file.write_all(bytes).and_then(|()| file.flush());
    if written.is_err() {
        let _ = file.set_len(before);
    }
    written
}
