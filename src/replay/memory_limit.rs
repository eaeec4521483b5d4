//! `--max-memory`: the host memory one replay may ask for, checked before a tensor is
//! allocated, so that a signature asking for more than the machine has (a size that fits the
//! address space, which an overcommitting kernel would grant and then answer with its OOM
//! killer) ends as `oom` with the sizes, and the run goes on. By default three quarters of
//! the memory available when the run starts (`MemAvailable` of /proc/meminfo).

use std::sync::atomic::{AtomicU64, Ordering};

/// `--max-memory`'s sizes.
pub use replay_core::memory_size::parse_size;
use replay_core::memory_size::{available_bytes, size_text};

/// Words every refusal carries: what `SetupError` reads as out of memory.
pub const OVER_LIMIT: &str = "over the memory replay allows itself";

/// The limit in bytes; 0 until set or first read.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the limit (`--max-memory`).
pub fn set(bytes: u64) {
    LIMIT.store(bytes.max(1), Ordering::SeqCst);
}

/// The limit in bytes: `--max-memory`, else three quarters of the memory available now.
pub fn limit() -> u64 {
    match LIMIT.load(Ordering::SeqCst) {
        0 => {
            let default = available_bytes().map_or(u64::MAX, |a| a / 4 * 3);
            LIMIT.store(default, Ordering::SeqCst);
            default
        }
        set => set,
    }
}

/// `Err` with the sizes when `bytes` (`None`: more than 2^64) is over the limit.
pub fn check(bytes: Option<u64>, what: &str) -> Result<(), String> {
    let limit = limit();
    match bytes {
        Some(b) if b <= limit => Ok(()),
        _ => Err(format!(
            "{what} needs {}, {OVER_LIMIT} ({} by --max-memory); not allocated",
            bytes.map_or("more than 2^64 bytes".into(), size_text),
            size_text(limit)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_over_the_limit_is_refused_with_the_sizes() {
        let limit = limit();
        assert!(check(Some(1), "a tensor").is_ok());
        let err = check(None, "argument 0").unwrap_err();
        assert!(
            err.contains("more than 2^64") && err.contains(OVER_LIMIT),
            "{err}"
        );
        if limit < u64::MAX {
            assert!(check(Some(limit + 1), "x").is_err());
        }
    }
}
