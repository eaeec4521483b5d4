//! Pretty JSON, newline-terminated.

use serde::Serialize;

pub fn to_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    // Serialising our own plain data types cannot fail; fall back to `null` rather than panic.
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_else(|_| b"null".to_vec());
    bytes.push(b'\n');
    bytes
}
