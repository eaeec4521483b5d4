//! What a fuzz target is, and what the bodies share.

/// A fuzz target: its name (the `fuzz/fuzz_targets/NAME.rs` binary, the `fuzz/corpus/NAME/`
/// folder) and its body.
#[derive(Clone, Copy)]
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
}

/// The bytes as text where they are UTF-8 (the readers of text take nothing else).
pub(super) fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}
