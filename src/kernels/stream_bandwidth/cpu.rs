//! replay's own CPU bandwidth kernels: copy and triad over float32 buffers, split over a worker
//! pool kept for the process, with non-temporal (streaming) stores where the CPU has them.
//!
//! How they reach the machine's limit, as STREAM and likwid-bench do:
//! - every thread gets one contiguous chunk, the same chunk on every call (`broadcast`: thread
//!   `i` of the pool always runs chunk `i`), and chunks start on page boundaries so no two
//!   threads share a page or a cache line;
//! - the threads are pinned, one per CPU ([`pinned_worker_pool`]), so that none waits for a
//!   core at the start of a call;
//! - the buffers are allocated untouched (above glibc's mmap threshold an allocation is fresh
//!   pages) and first written by the threads that later use them, so on a NUMA machine each
//!   chunk's pages live on its thread's node;
//! - stores bypass the caches (`vmovntps`, AVX-512, AVX or SSE, picked at run time), so no
//!   destination line is read before it is written: the traffic is what
//!   [`StreamKernel::bytes`] counts. Elsewhere (not x86-64) a plain loop runs instead.

use std::alloc::{alloc, dealloc, Layout};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use super::stream_kernel::{StreamKernel, TRIAD_SCALAR};
use crate::cpu::worker_pool::{pinned_worker_pool, worker_pool};
use crate::kernels::KernelError;

/// Buffers and chunks start on page boundaries (4 KiB, 1,024 floats).
const PAGE_BYTES: usize = 4096;
const PAGE_FLOATS: usize = PAGE_BYTES / 4;

/// How the kernels store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreIsa {
    /// 64-byte `vmovntps` (`_mm512_stream_ps`).
    Avx512,
    /// 32-byte `vmovntps` (`_mm256_stream_ps`).
    Avx,
    /// 16-byte `movntps` (`_mm_stream_ps`): every x86-64 has it.
    Sse,
    /// Ordinary stores in a plain loop (the compiler may call `memcpy` for the copy).
    Portable,
}

impl StoreIsa {
    pub const ALL: [StoreIsa; 4] = [
        StoreIsa::Avx512,
        StoreIsa::Avx,
        StoreIsa::Sse,
        StoreIsa::Portable,
    ];

    /// The widest streaming store this CPU has.
    pub fn detect() -> StoreIsa {
        StoreIsa::ALL
            .into_iter()
            .find(|isa| isa.available())
            .unwrap_or(StoreIsa::Portable)
    }

    pub fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                StoreIsa::Avx512 => is_x86_feature_detected!("avx512f"),
                StoreIsa::Avx => is_x86_feature_detected!("avx"),
                StoreIsa::Sse | StoreIsa::Portable => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == StoreIsa::Portable
        }
    }

    /// Whether its stores are non-temporal.
    pub fn streaming(self) -> bool {
        self != StoreIsa::Portable
    }

    pub fn name(self) -> &'static str {
        match self {
            StoreIsa::Avx512 => "avx512",
            StoreIsa::Avx => "avx",
            StoreIsa::Sse => "sse",
            StoreIsa::Portable => "portable",
        }
    }

    pub fn parse(name: &str) -> Option<StoreIsa> {
        StoreIsa::ALL.into_iter().find(|isa| isa.name() == name)
    }
}

/// How replay's CPU kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuKernelConfig {
    pub threads: usize,
    pub isa: StoreIsa,
    /// Pin thread `i` to the `i`-th allowed CPU (when the system lets it).
    pub pin: bool,
}

impl CpuKernelConfig {
    /// `threads` pinned threads storing with the widest streaming store the CPU has.
    pub fn with_threads(threads: usize) -> CpuKernelConfig {
        CpuKernelConfig {
            threads,
            isa: StoreIsa::detect(),
            pin: true,
        }
    }
}

/// Thread `i`'s elements of `n` split over `threads`: contiguous, page-aligned starts, every
/// element in exactly one chunk (the last ones may be shorter or empty).
pub fn chunk_ranges(n: usize, threads: usize) -> Vec<Range<usize>> {
    let threads = threads.max(1);
    let per = n.div_ceil(threads).div_ceil(PAGE_FLOATS) * PAGE_FLOATS;
    (0..threads)
        .map(|i| {
            let start = (i * per).min(n);
            start..((i + 1) * per).min(n)
        })
        .collect()
}

/// `len` floats on a page boundary, written first by the threads that use them.
struct AlignedBuffer {
    ptr: NonNull<f32>,
    len: usize,
    layout: Layout,
}

// SAFETY: the buffer owns its memory exactly as a Vec<f32> does.
unsafe impl Send for AlignedBuffer {}
unsafe impl Sync for AlignedBuffer {}

impl AlignedBuffer {
    /// Allocates `len` floats and has thread `i` of `pool` write `value` over chunk `i`: the
    /// first touch of each page happens on the thread that will use it.
    fn first_touched(
        len: usize,
        ranges: &[Range<usize>],
        pool: Option<&rayon::ThreadPool>,
        value: f32,
    ) -> Result<AlignedBuffer, KernelError> {
        let too_big = || KernelError::OutOfMemory(format!("{len} floats do not fit in memory"));
        let bytes = len.max(1).checked_mul(4).ok_or_else(too_big)?;
        let layout = Layout::from_size_align(bytes, PAGE_BYTES).map_err(|_| too_big())?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) } as *mut f32;
        let ptr = NonNull::new(raw).ok_or_else(|| {
            KernelError::OutOfMemory(format!("cannot allocate {} MiB", bytes >> 20))
        })?;
        // SAFETY: `len` floats were just allocated at `ptr` (uninitialised, hence MaybeUninit).
        let whole =
            unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr() as *mut MaybeUninit<f32>, len) };
        run_parts(pool, split_mut(whole, ranges), |chunk| {
            chunk.fill(MaybeUninit::new(value))
        });
        Ok(AlignedBuffer { ptr, len, layout })
    }

    fn as_slice(&self) -> &[f32] {
        // SAFETY: every element was written by `first_touched` (the ranges cover 0..len).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as above, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `alloc` with this layout.
        unsafe { dealloc(self.ptr.as_ptr() as *mut u8, self.layout) }
    }
}

/// Splits `slice` into the given consecutive ranges (which start at 0 and cover it).
fn split_mut<'a, T>(mut slice: &'a mut [T], ranges: &[Range<usize>]) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (head, rest) = std::mem::take(&mut slice).split_at_mut(r.len());
        parts.push(head);
        slice = rest;
    }
    parts
}

/// Runs `work` on part `i` on thread `i` of `pool` (one part per thread), or on the calling
/// thread one after another without a pool.
fn run_parts<T: Send>(pool: Option<&rayon::ThreadPool>, parts: Vec<T>, work: impl Fn(T) + Sync) {
    match pool {
        Some(pool) if pool.current_num_threads() == parts.len() => {
            // Each slot is taken once, by its own thread: the locks are never contended.
            let slots: Vec<Mutex<Option<T>>> =
                parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
            pool.broadcast(|ctx| {
                let part = slots
                    .get(ctx.index())
                    .and_then(|slot| slot.lock().ok()?.take());
                if let Some(part) = part {
                    work(part);
                }
            });
        }
        _ => parts.into_iter().for_each(work),
    }
}

/// The three STREAM arrays of one size, on one set of threads.
pub struct CpuStream {
    a: AlignedBuffer,
    b: AlignedBuffer,
    c: AlignedBuffer,
    ranges: Vec<Range<usize>>,
    pool: Option<Arc<rayon::ThreadPool>>,
    pinned: bool,
    isa: StoreIsa,
}

impl CpuStream {
    /// `n` floats per array as `config` says. The arrays start as STREAM's: a = 1, b = 2,
    /// c = 0.
    pub fn new(n: usize, config: CpuKernelConfig) -> Result<CpuStream, KernelError> {
        let CpuKernelConfig { threads, isa, pin } = config;
        if !isa.available() {
            return Err(KernelError::InvalidInput(format!(
                "this CPU has no {} streaming stores",
                isa.name()
            )));
        }
        // Pinned if it can be, else unpinned; without a pool at all (the system refused
        // threads) the calling thread does all of it.
        let pinned_pool = (threads > 1 && pin)
            .then(|| pinned_worker_pool(threads))
            .flatten();
        let pinned = pinned_pool.is_some();
        let pool = pinned_pool.or_else(|| (threads > 1).then(|| worker_pool(threads)).flatten());
        let ranges = chunk_ranges(n, if pool.is_some() { threads } else { 1 });
        let touch = |value| AlignedBuffer::first_touched(n, &ranges, pool.as_deref(), value);
        Ok(CpuStream {
            a: touch(1.0)?,
            b: touch(2.0)?,
            c: touch(0.0)?,
            ranges,
            pool,
            pinned,
            isa,
        })
    }

    /// The threads that run each call.
    pub fn threads(&self) -> usize {
        self.ranges.len()
    }

    pub fn isa(&self) -> StoreIsa {
        self.isa
    }

    /// Whether each thread is pinned to its own CPU.
    pub fn pinned(&self) -> bool {
        self.pinned
    }

    pub fn len(&self) -> usize {
        self.a.len
    }

    pub fn is_empty(&self) -> bool {
        self.a.len == 0
    }

    /// Runs one call of `kernel` over the whole arrays.
    pub fn run(&mut self, kernel: StreamKernel) {
        let isa = self.isa;
        let pool = self.pool.as_deref();
        match kernel {
            StreamKernel::Copy => {
                let src = self.a.as_slice();
                let parts: Vec<_> = split_mut(self.b.as_mut_slice(), &self.ranges)
                    .into_iter()
                    .zip(&self.ranges)
                    .map(|(dst, r)| (dst, &src[r.clone()]))
                    .collect();
                run_parts(pool, parts, |(dst, src)| copy_chunk(isa, dst, src));
            }
            StreamKernel::Triad => {
                let (b, c) = (self.b.as_slice(), self.c.as_slice());
                let parts: Vec<_> = split_mut(self.a.as_mut_slice(), &self.ranges)
                    .into_iter()
                    .zip(&self.ranges)
                    .map(|(dst, r)| (dst, &b[r.clone()], &c[r.clone()]))
                    .collect();
                run_parts(pool, parts, |(dst, b, c)| {
                    triad_chunk(isa, dst, b, c, TRIAD_SCALAR)
                });
            }
        }
    }

    pub fn a(&self) -> &[f32] {
        self.a.as_slice()
    }

    pub fn b(&self) -> &[f32] {
        self.b.as_slice()
    }

    /// The arrays to fill with other values (tests).
    pub fn arrays_mut(&mut self) -> (&mut [f32], &mut [f32], &mut [f32]) {
        (
            self.a.as_mut_slice(),
            self.b.as_mut_slice(),
            self.c.as_mut_slice(),
        )
    }
}

/// `dst = src` with `isa`'s stores.
fn copy_chunk(isa: StoreIsa, dst: &mut [f32], src: &[f32]) {
    debug_assert!(isa.available());
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `CpuStream::new` checked that the CPU has the instructions of `isa`.
        match isa {
            StoreIsa::Avx512 => return unsafe { x86::copy_avx512(dst, src) },
            StoreIsa::Avx => return unsafe { x86::copy_avx(dst, src) },
            StoreIsa::Sse => return unsafe { x86::copy_sse(dst, src) },
            StoreIsa::Portable => {}
        }
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// `dst = b + s·c` with `isa`'s stores: a multiply, then an add (never fused, so every path
/// rounds alike).
fn triad_chunk(isa: StoreIsa, dst: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    debug_assert!(isa.available());
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `CpuStream::new` checked that the CPU has the instructions of `isa`.
        match isa {
            StoreIsa::Avx512 => return unsafe { x86::triad_avx512(dst, b, c, s) },
            StoreIsa::Avx => return unsafe { x86::triad_avx(dst, b, c, s) },
            StoreIsa::Sse => return unsafe { x86::triad_sse(dst, b, c, s) },
            StoreIsa::Portable => {}
        }
    }
    for ((d, b), c) in dst.iter_mut().zip(b).zip(c) {
        *d = *b + s * *c;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Elements before `ptr` reaches an `align`-byte boundary (at most `n`): streaming stores
    /// must be aligned to their width, so these go through ordinary stores.
    fn head(ptr: *const f32, align: usize, n: usize) -> usize {
        let off = ptr as usize % align;
        if off == 0 {
            0
        } else {
            ((align - off) / 4).min(n)
        }
    }

    /// One copy and one triad over vectors of `$lanes` floats, four vectors an iteration
    /// (four independent load/store streams keep enough lines in flight), aligned head and
    /// tail with ordinary stores, and an `sfence` at the end so the streamed data is visible
    /// before the call returns.
    ///
    /// The loops bump pointers rather than index from a base: indexed from `base + head`, LLVM
    /// addressed every load as `-0xc0(base, head, 1)` and every store through an extra `lea`,
    /// and that AVX-512 copy ran 18 % slower (48 against 59 GB/s, 2 threads, quiet EPYC VM)
    /// than the same loop written with pointers, which matches likwid-bench's.
    macro_rules! streaming_kernels {
        ($copy:ident, $triad:ident, $feature:literal, $lanes:literal,
         $loadu:ident, $stream:ident, $add:ident, $mul:ident, $set1:ident) => {
            #[target_feature(enable = $feature)]
            pub unsafe fn $copy(dst: &mut [f32], src: &[f32]) {
                let n = dst.len().min(src.len());
                let h = head(dst.as_ptr(), 4 * $lanes, n);
                dst[..h].copy_from_slice(&src[..h]);
                let body = (n - h) / $lanes * $lanes;
                let mut d = dst.as_mut_ptr().add(h);
                let mut s = src.as_ptr().add(h);
                let unrolled_end = d.add(body / (4 * $lanes) * (4 * $lanes));
                let end = d.add(body);
                while d < unrolled_end {
                    let x0 = $loadu(s);
                    let x1 = $loadu(s.add($lanes));
                    let x2 = $loadu(s.add(2 * $lanes));
                    let x3 = $loadu(s.add(3 * $lanes));
                    $stream(d, x0);
                    $stream(d.add($lanes), x1);
                    $stream(d.add(2 * $lanes), x2);
                    $stream(d.add(3 * $lanes), x3);
                    d = d.add(4 * $lanes);
                    s = s.add(4 * $lanes);
                }
                while d < end {
                    $stream(d, $loadu(s));
                    d = d.add($lanes);
                    s = s.add($lanes);
                }
                let t = h + body;
                dst[t..n].copy_from_slice(&src[t..n]);
                _mm_sfence();
            }

            #[target_feature(enable = $feature)]
            pub unsafe fn $triad(dst: &mut [f32], b: &[f32], c: &[f32], scalar: f32) {
                let n = dst.len().min(b.len()).min(c.len());
                let h = head(dst.as_ptr(), 4 * $lanes, n);
                for i in 0..h {
                    dst[i] = b[i] + scalar * c[i];
                }
                let body = (n - h) / $lanes * $lanes;
                let mut d = dst.as_mut_ptr().add(h);
                let (mut bp, mut cp) = (b.as_ptr().add(h), c.as_ptr().add(h));
                let unrolled_end = d.add(body / (4 * $lanes) * (4 * $lanes));
                let end = d.add(body);
                let sv = $set1(scalar);
                while d < unrolled_end {
                    let (b0, c0) = ($loadu(bp), $loadu(cp));
                    let (b1, c1) = ($loadu(bp.add($lanes)), $loadu(cp.add($lanes)));
                    let (b2, c2) = ($loadu(bp.add(2 * $lanes)), $loadu(cp.add(2 * $lanes)));
                    let (b3, c3) = ($loadu(bp.add(3 * $lanes)), $loadu(cp.add(3 * $lanes)));
                    $stream(d, $add(b0, $mul(sv, c0)));
                    $stream(d.add($lanes), $add(b1, $mul(sv, c1)));
                    $stream(d.add(2 * $lanes), $add(b2, $mul(sv, c2)));
                    $stream(d.add(3 * $lanes), $add(b3, $mul(sv, c3)));
                    d = d.add(4 * $lanes);
                    bp = bp.add(4 * $lanes);
                    cp = cp.add(4 * $lanes);
                }
                while d < end {
                    $stream(d, $add($loadu(bp), $mul(sv, $loadu(cp))));
                    d = d.add($lanes);
                    bp = bp.add($lanes);
                    cp = cp.add($lanes);
                }
                for i in h + body..n {
                    dst[i] = b[i] + scalar * c[i];
                }
                _mm_sfence();
            }
        };
    }

    streaming_kernels!(
        copy_avx512,
        triad_avx512,
        "avx512f",
        16,
        _mm512_loadu_ps,
        _mm512_stream_ps,
        _mm512_add_ps,
        _mm512_mul_ps,
        _mm512_set1_ps
    );
    streaming_kernels!(
        copy_avx,
        triad_avx,
        "avx",
        8,
        _mm256_loadu_ps,
        _mm256_stream_ps,
        _mm256_add_ps,
        _mm256_mul_ps,
        _mm256_set1_ps
    );
    streaming_kernels!(
        copy_sse,
        triad_sse,
        "sse",
        4,
        _mm_loadu_ps,
        _mm_stream_ps,
        _mm_add_ps,
        _mm_mul_ps,
        _mm_set1_ps
    );

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_head_reaches_the_boundary_and_never_passes_the_end() {
            assert_eq!(super::head(64 as *const f32, 64, 100), 0);
            assert_eq!(super::head(68 as *const f32, 64, 100), 15);
            assert_eq!(super::head(124 as *const f32, 64, 100), 1);
            assert_eq!(super::head(68 as *const f32, 64, 3), 3);
            assert_eq!(super::head(36 as *const f32, 32, 100), 7);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available() -> Vec<StoreIsa> {
        StoreIsa::ALL
            .into_iter()
            .filter(|i| i.available())
            .collect()
    }

    #[test]
    fn chunks_cover_every_element_once_from_page_boundaries() {
        for n in [0, 1, 1023, 1024, 1025, 5000, 33_554_432, 33_554_433] {
            for threads in [1, 2, 3, 7, 16] {
                let ranges = chunk_ranges(n, threads);
                assert_eq!(ranges.len(), threads);
                let mut next = 0;
                for r in &ranges {
                    assert_eq!(r.start, next, "n={n} threads={threads}");
                    assert!(r.start <= r.end);
                    assert!(r.start % PAGE_FLOATS == 0 || r.start == n);
                    next = r.end;
                }
                assert_eq!(next, n);
            }
        }
        // Large arrays are shared out evenly.
        let r = chunk_ranges(33_554_432, 2);
        assert_eq!((r[0].len(), r[1].len()), (16_777_216, 16_777_216));
    }

    #[test]
    fn every_isa_copies_and_triads_every_element_exactly() {
        // Odd lengths, lengths below one vector, and several threads with short last chunks.
        for isa in available() {
            for n in [1, 3, 15, 17, 63, 64, 65, 1000, 4097, 100_003] {
                for threads in [1, 3] {
                    let config = CpuKernelConfig {
                        threads,
                        isa,
                        pin: threads == 3,
                    };
                    let mut s = CpuStream::new(n, config).unwrap();
                    let (a, b, c) = s.arrays_mut();
                    for i in 0..n {
                        a[i] = i as f32 * 0.5 + 1.0;
                        b[i] = -(i as f32);
                        c[i] = (i % 97) as f32 * 0.25 - 3.0;
                    }
                    s.run(StreamKernel::Copy);
                    for i in 0..n {
                        assert_eq!(s.b()[i], i as f32 * 0.5 + 1.0, "{isa:?} n={n} i={i}");
                    }
                    s.run(StreamKernel::Triad);
                    for i in 0..n {
                        let want = s.b()[i] + TRIAD_SCALAR * ((i % 97) as f32 * 0.25 - 3.0);
                        assert_eq!(s.a()[i], want, "{isa:?} n={n} i={i}");
                    }
                }
            }
        }
    }

    #[test]
    fn unaligned_slices_take_the_head_and_tail_paths() {
        // Chunks of a CpuStream always start aligned; these start 1..15 floats past a boundary.
        let src: Vec<f32> = (0..300).map(|i| i as f32 + 0.5).collect();
        let c: Vec<f32> = (0..300).map(|i| (i as f32).sqrt()).collect();
        for isa in available() {
            for off in 0..16 {
                for len in [0, 1, 20, 200 - off] {
                    let mut dst = vec![-1.0f32; 300];
                    copy_chunk(isa, &mut dst[off..off + len], &src[off..off + len]);
                    assert_eq!(&dst[off..off + len], &src[off..off + len], "{isa:?}");
                    assert!(dst[..off].iter().all(|&x| x == -1.0));
                    assert!(
                        dst[off + len..].iter().all(|&x| x == -1.0),
                        "{isa:?} wrote past"
                    );
                    let r = off..off + len;
                    triad_chunk(
                        isa,
                        &mut dst[r.clone()],
                        &src[r.clone()],
                        &c[r.clone()],
                        3.0,
                    );
                    for i in r {
                        assert_eq!(dst[i], src[i] + 3.0 * c[i], "{isa:?} off={off} i={i}");
                    }
                }
            }
        }
    }

    #[test]
    fn arrays_start_as_streams_do_and_threads_are_counted() {
        let config = |threads, pin| CpuKernelConfig {
            threads,
            isa: StoreIsa::Portable,
            pin,
        };
        let s = CpuStream::new(5000, config(2, false)).unwrap();
        assert_eq!(s.threads(), 2);
        assert!(!s.pinned());
        assert_eq!(s.len(), 5000);
        assert!(s.a().iter().all(|&x| x == 1.0) && s.b().iter().all(|&x| x == 2.0));
        assert_eq!(s.a().as_ptr() as usize % PAGE_BYTES, 0);
        let one = CpuStream::new(10, config(1, true)).unwrap();
        assert_eq!(one.threads(), 1);
        assert!(!one.pinned(), "one thread runs on the caller's");
        // Pinned when there are CPUs enough, unpinned (never refused) when not.
        let cpus = crate::cpu::worker_pool::allowed_cpus().map_or(0, |c| c.len());
        let two = CpuStream::new(10, config(2, true)).unwrap();
        assert_eq!(two.pinned(), cfg!(target_os = "linux") && cpus >= 2);
        let many = CpuStream::new(10, config(cpus + 1, true)).unwrap();
        assert!(!many.pinned());
        assert_eq!(many.threads(), cpus + 1);
    }

    #[test]
    fn the_widest_streaming_store_is_detected_and_names_round_trip() {
        let isa = StoreIsa::detect();
        assert!(isa.available());
        #[cfg(target_arch = "x86_64")]
        {
            assert!(isa.streaming());
            if is_x86_feature_detected!("avx512f") {
                assert_eq!(isa, StoreIsa::Avx512);
            }
        }
        for isa in StoreIsa::ALL {
            assert_eq!(StoreIsa::parse(isa.name()), Some(isa));
        }
        assert!(!StoreIsa::Portable.streaming());
        assert_eq!(StoreIsa::parse("avx2"), None);
    }
}
