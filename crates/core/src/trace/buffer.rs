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

/// No transparent huge pages for the rest of the process: for the streamed pass, which frees
/// and makes buffers block after block. The allocator (mimalloc) asks for huge pages on all
/// the memory it maps, and the kernel zeroes a whole 2 MiB page on its first touch each time
/// freed memory is given back and used again: with them, 8 gzipped ranks of 250 MB in one
/// classify spent 0.65-0.72 s of system time against 0.44-0.54 s without, wall 0.97x (paired
/// median of 8, 0.94-1.01), and 4 GB piped into classify 0.97x (5 pairs, 0.96-0.99; 27 Nov
/// 2026, the 2-core VM). Held traces keep them (their large buffers are made once, and huge
/// pages spared a tenth of `predict`'s time, above).
pub(super) fn no_huge_pages_from_now() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE sets a flag of this process that only changes how the
    // kernel backs memory touched from now on, never its contents; a failure (an old kernel)
    // leaves things as they were, so its result is ignored.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn huge_pages_are_off_once_asked() {
        super::no_huge_pages_from_now();
        // SAFETY: PR_GET_THP_DISABLE reads the flag; it takes no pointer.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(disabled, 1);
    }
}
