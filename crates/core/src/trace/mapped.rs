//! A large trace file mapped into memory rather than read.
//!
//! Reading a 120 MB uncompressed trace makes the kernel zero 120 MB of fresh pages and then
//! copy the file into them: on the 2-core VM that was a third of `replay classify`'s time,
//! before any parsing. Mapping the file shares the page cache's pages instead (populated
//! in one call). Only regular files of [`MIN_MAPPED_BYTES`] or more are mapped; anything
//! else, or a failed mapping, is read as before.
//!
//! A mapping shows the file as it is on disk while it is read: a trace rewritten in place
//! meanwhile parses as whatever mix of old and new the parser sees (as a read would, minus
//! its snapshot), and one truncated meanwhile ends the process with SIGBUS. Profilers
//! write a trace once and then leave it, which is what makes this acceptable.

use std::fs::File;
use std::ops::Deref;

/// Below this, a read costs too little for a mapping to be worth its set-up.
pub(super) const MIN_MAPPED_BYTES: u64 = 16 << 20;

/// A read-only, private mapping of a whole file.
pub(super) struct MappedFile {
    start: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value; sharing `&[u8]` views of it
// between threads is as safe as sharing any immutable byte slice.
unsafe impl Send for MappedFile {}
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// The whole of `file` (of `len` bytes, not zero), or `None` where it cannot be mapped.
    #[cfg(target_os = "linux")]
    pub(super) fn map(file: &File, len: u64) -> Option<MappedFile> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).ok().filter(|&len| len > 0)?;
        // SAFETY: a fresh private read-only mapping of an open descriptor; the kernel
        // chooses the address, and failure is reported as MAP_FAILED, checked below.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        (start != libc::MAP_FAILED).then_some(MappedFile { start, len })
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn map(_file: &File, _len: u64) -> Option<MappedFile> {
        None
    }
}

impl Deref for MappedFile {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `start` is a live mapping of `len` readable bytes until `drop`.
        unsafe { std::slice::from_raw_parts(self.start.cast::<u8>(), self.len) }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`, once; no view outlives `self`.
        unsafe {
            libc::munmap(self.start, self.len);
        }
    }
}
