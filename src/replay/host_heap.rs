//! The host heap between replay units: what a unit's tensors freed goes back to the system.
//!
//! libtorch allocates host tensors with the C library's `malloc`. glibc keeps what is freed
//! in its heap for later allocations and raises its `mmap` threshold after freeing a large
//! block, so the resident memory left after a unit depends on how the units before it
//! fragmented the heap: in the hour-long soak (issue 34) the RSS between units wandered
//! between 576 and 674 MB from round to round over the same ops. `malloc_trim` after each unit
//! returns the free pages, so every unit starts from the same resident floor. It runs outside
//! every timed region, before the next unit's set-up and warm-up; where the C library is not
//! glibc it does nothing.

/// Gives the host heap's free pages back to the system (glibc's `malloc_trim`).
pub fn release_free() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}
