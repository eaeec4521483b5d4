//! The process's global allocator: the system allocator (glibc malloc under the policy of
//! [`super::host_allocator`]) with a count of the bytes live now and the most live at once,
//! so that a CPU backend reports the memory it really allocated, not an estimate.
//!
//! The count is process-wide: everything any thread allocates through Rust's allocator adds
//! to it (memory that a C library such as libtorch gets from malloc itself does not). A
//! measurement is a [`reset_peak`], the work, then [`peak`] minus what [`reset_peak`]
//! returned; keep other threads quiet meanwhile.
//!
//! Cost: one relaxed atomic add per allocation and free, plus a relaxed load of the peak that
//! turns into an atomic max only while the peak is being raised. The hot loops of the kernels
//! allocate nothing, so this stays off their timings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Bytes handed out and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes live at once since the last [`reset_peak`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// [`System`] with the counts above.
pub struct CountingAllocator;

impl CountingAllocator {
    #[inline]
    fn grew(by: usize) {
        let now = LIVE.fetch_add(by, Relaxed) + by;
        if now > PEAK.load(Relaxed) {
            PEAK.fetch_max(now, Relaxed);
        }
    }

    #[inline]
    fn shrank(by: usize) {
        LIVE.fetch_sub(by, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` with the caller's arguments unchanged; the
// counts are only updated after a successful allocation and never affect what is returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            Self::grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        if !ptr.is_null() {
            Self::grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        Self::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = System.realloc(ptr, layout, new_size);
        if !new.is_null() {
            if new_size >= layout.size() {
                Self::grew(new_size - layout.size());
            } else {
                Self::shrank(layout.size() - new_size);
            }
        }
        new
    }
}

/// Bytes live now.
pub fn live() -> usize {
    LIVE.load(Relaxed)
}

/// The most bytes live at once since the last [`reset_peak`] (or since the start).
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}

/// Starts a new peak from what is live now, and returns that (the baseline to subtract).
pub fn reset_peak() -> usize {
    let now = LIVE.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library installs the allocator, so the unit tests run under it: a large buffer
    /// raises the peak by at least its size, and freeing it lowers what is live. Other tests
    /// of this binary allocate concurrently, so only lower bounds can be checked here.
    #[test]
    fn a_buffer_raises_the_peak_by_its_size() {
        const SIZE: usize = 64 << 20;
        let base = reset_peak();
        let buffer = std::hint::black_box(vec![1u8; SIZE]);
        assert!(peak() >= base + SIZE, "peak {} base {base}", peak());
        assert!(live() >= SIZE);
        drop(buffer);
        assert!(peak() >= base + SIZE);
    }
}
