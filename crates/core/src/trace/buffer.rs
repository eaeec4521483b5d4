//! The large buffers a trace is read and inflated into, and its events' vector.
//!
//! A 100 MB trace is 25 000 pages of 4 KiB, each one a page fault on first write: on the
//! 2-core VM that was a tenth of `predict`'s time on the 1.4 MB cudagraph trace (26 MB
//! inflated). Asking for transparent huge pages (`MADV_HUGEPAGE`, honoured where
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or `always`) makes that a few
//! dozen faults. The advice is only a hint: where the kernel ignores it nothing changes.

/// Below this, huge pages cannot pay: a 2 MiB page would mostly hang over the buffer.
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

/// The 2 MiB huge page size of x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// An empty buffer with room for `capacity` items, backed by huge pages where the kernel
/// gives them.
pub(super) fn with_capacity<T>(capacity: usize) -> Vec<T> {
    let buffer = Vec::with_capacity(capacity);
    if capacity.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGE_MIN_BYTES {
        advise_huge_pages(&buffer);
    }
    buffer
}

/// A buffer of `len` zero bytes, backed by huge pages where the kernel gives them. A large
/// one comes zeroed from the kernel (`calloc`), so nothing writes the zeros.
pub(super) fn zeroed(len: usize) -> Vec<u8> {
    let buffer = vec![0u8; len];
    if len >= HUGE_PAGE_MIN_BYTES {
        advise_huge_pages(&buffer);
    }
    buffer
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(buffer: &Vec<T>) {
    // Only whole huge pages inside the allocation are advised.
    let start = buffer.as_ptr() as usize;
    let end = start + buffer.capacity() * std::mem::size_of::<T>();
    let aligned_start = start.next_multiple_of(HUGE_PAGE_BYTES);
    let aligned_end = end - end % HUGE_PAGE_BYTES;
    if aligned_end > aligned_start {
        // SAFETY: the range lies inside `buffer`'s own allocation, which outlives the call;
        // MADV_HUGEPAGE changes how the kernel backs those pages, never their contents, and
        // a failure (an old kernel, THP disabled) is harmless, so its result is ignored.
        unsafe {
            libc::madvise(
                aligned_start as *mut libc::c_void,
                aligned_end - aligned_start,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_buffer: &Vec<T>) {}
