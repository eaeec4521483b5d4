//! One allocator policy for everything replay times on the host: the isolated replays, the full
//! model and the Python process that captures the trace.
//!
//! Why: glibc's malloc serves a block at or above its mmap threshold with a fresh `mmap`, and
//! by default it moves that threshold to the size of the last mmapped block freed. A replay that
//! allocates and frees the same 3.2 MB output in a loop therefore maps, page-faults and unmaps it
//! on every call (a ResNet-50 1×1 convolution: 3.0 ms a call against 0.77 ms from the heap, on
//! this VM), while inside the model the same convolution is usually served from the heap,
//! depending on which larger tensors the model freed before. With the dynamic threshold,
//! isolated times depend on allocation history the replay cannot reproduce (ResNet-50 at
//! batch 1 was over-predicted by 17 %, −0.4 % with the policy below).
//!
//! So replay fixes both thresholds at start-up, which also switches glibc's adjustment off: blocks
//! under 32 MiB (glibc's own ceiling for the dynamic threshold, the value a long-running process
//! tends to) come from the heap, and the heap is trimmed only when 128 MiB are free at its top.
//! The capture subprocess gets the same through glibc's environment variables, so the trace, the
//! replays and the model all run under one policy. `REPLAY_GLIBC_MALLOC=dynamic` leaves glibc's
//! defaults alone (for comparing with a process that has them).

/// Blocks at or above this size are mmapped (glibc's maximum for the dynamic threshold).
pub const MMAP_THRESHOLD: usize = 32 << 20;
/// Free memory at the top of the heap beyond this is returned to the system.
pub const TRIM_THRESHOLD: usize = 128 << 20;
/// Set to `dynamic` to keep glibc's own, history-dependent thresholds.
pub const POLICY_VAR: &str = "REPLAY_GLIBC_MALLOC";

/// Whether the fixed policy applies (the default) or the user asked for glibc's own.
pub fn fixed_policy_requested() -> bool {
    std::env::var(POLICY_VAR).map_or(true, |v| v != "dynamic")
}

/// Fixes this process's thresholds (call first thing in `main`, before libtorch allocates).
/// Returns whether glibc accepted both; elsewhere than glibc it does nothing and returns false.
pub fn fix_thresholds() -> bool {
    if !fixed_policy_requested() {
        return false;
    }
    set_thresholds()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> bool {
    let (Ok(mmap), Ok(trim)) = (
        libc::c_int::try_from(MMAP_THRESHOLD),
        libc::c_int::try_from(TRIM_THRESHOLD),
    ) else {
        return false;
    };
    // SAFETY: mallopt only changes malloc's tuning parameters; both values are in range.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, mmap) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, trim) == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> bool {
    false
}

/// The environment that gives a child process (the capture's Python) the same policy.
pub fn child_env() -> Vec<(&'static str, String)> {
    if !fixed_policy_requested() {
        return Vec::new();
    }
    vec![
        ("MALLOC_MMAP_THRESHOLD_", MMAP_THRESHOLD.to_string()),
        ("MALLOC_TRIM_THRESHOLD_", TRIM_THRESHOLD.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_gets_the_thresholds_the_process_sets() {
        // The variable is unset in the test environment: the fixed policy applies.
        if std::env::var_os(POLICY_VAR).is_some() {
            return;
        }
        let env = child_env();
        assert_eq!(
            env,
            vec![
                ("MALLOC_MMAP_THRESHOLD_", "33554432".to_string()),
                ("MALLOC_TRIM_THRESHOLD_", "134217728".to_string()),
            ]
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_accepts_the_thresholds() {
        assert!(set_thresholds());
    }
}
