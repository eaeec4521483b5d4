//! [`ShimError`]: a failure reported by libtorch through the shim, and the helpers that turn
//! the shim's C strings into it. C++ exceptions come back as these; they never unwind into Rust.

use std::ffi::{c_char, CStr, CString};

use super::sys;

/// A failure reported by libtorch (its message, without the C++ backtrace).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ShimError(pub String);

/// libtorch's messages can run to a hundred lines (every dispatch key registered for an op):
/// keep the first paragraph, which says what went wrong.
fn first_paragraph(text: &str) -> String {
    let head = text.split("\n\n").next().unwrap_or(text).trim();
    let mut out: String = head.chars().take(600).collect();
    if out.len() < head.len() {
        out.push_str("...");
    }
    out
}

/// Takes ownership of a string the shim allocated and returns it whole.
///
/// # Safety
/// `s` is null or a NUL-terminated string the shim returned and nobody has freed.
pub(crate) unsafe fn take_whole_string(s: *mut c_char) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: the shim returns NUL-terminated strings from malloc, freed exactly once here.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    unsafe { sys::replay_free_string(s) };
    Some(text)
}

/// Takes ownership of an error message the shim allocated: its first paragraph.
pub(crate) fn take_error(s: *mut c_char) -> ShimError {
    // SAFETY: every error out-parameter of the shim is null or a string it allocated.
    let text = unsafe { take_whole_string(s) };
    ShimError(text.map_or_else(|| String::from("(no message)"), |t| first_paragraph(&t)))
}

/// `text` as a C string for the shim.
pub(crate) fn c_string(text: &str) -> Result<CString, ShimError> {
    CString::new(text).map_err(|_| ShimError(format!("'{text}' contains a NUL byte")))
}
