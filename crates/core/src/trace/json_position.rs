//! Where in the JSON text a serde_json error is: its line and column as a byte offset, and
//! its message without the position serde_json appends.

/// The byte offset in `bytes` of serde_json's (1-based) line and column.
pub(super) fn offset_of_line_column(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line {
        match bytes
            .get(line_start..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        {
            Some(newline) => line_start += newline + 1,
            None => break,
        }
    }
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// serde_json appends " at line L column C"; our messages place the position themselves.
pub(super) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}
