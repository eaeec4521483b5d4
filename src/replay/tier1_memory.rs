//! Tier 1: the CUDA runtime's own copies and fills (`cudaMemcpy*`, `cudaMemset*`), with the
//! byte count, direction and host-memory kind (pinned or pageable) the trace recorded.
//!
//! On CUDA they run through cudarc on the replay stream; on the CPU the same bytes are copied
//! or set in host memory, which is what a CPU run of the model does instead.

use std::hint::black_box;

use tch::{Kind, Tensor};

use crate::measure::{MeasureError, Placement, Target};
use crate::signature::schema::{MemcpyKind, MemcpyParams, MemoryKind, MemsetParams};

/// What a tier-1 signature asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryWork {
    Copy(MemcpyParams),
    Set(MemsetParams),
}

/// Host memory of the kind the trace recorded: pinned (page-locked, DMA-able) or pageable
/// (a plain allocation, which the driver stages through a pinned bounce buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMemory {
    Pinned,
    Pageable,
}

/// The host-side memory kind a copy needs, if one end is on the host. Anything other than an
/// explicit `Pinned` is treated as pageable: that is the slower, safer assumption, and it is
/// what `Host`/`Unknown` (ROCm, old traces) most often are.
pub fn host_memory(params: &MemcpyParams) -> Option<HostMemory> {
    let host_end = match params.kind {
        MemcpyKind::HtoD => params.src,
        MemcpyKind::DtoH => params.dst,
        MemcpyKind::HtoH => params.src,
        MemcpyKind::DtoD | MemcpyKind::PtoP => return None,
    };
    Some(if host_end == MemoryKind::Pinned {
        HostMemory::Pinned
    } else {
        HostMemory::Pageable
    })
}

/// Replays tier-1 work in host memory. Its buffers are libtorch byte tensors, so that the
/// counting CPU allocator behind a re-run step's measured peak sees them as it sees every
/// other op's tensors.
///
/// What a run reads comes first, in the order declared (`repr(C)`): the bytes' places and
/// the work, 48 bytes, one cache line or two; the tensors that own the bytes after them.
#[repr(C)]
pub struct CpuMemoryTarget {
    /// The tensors' bytes, located once. Asking libtorch on every run (`Tensor::data_ptr`:
    /// the tensor's handle, its `TensorImpl`, its storage, three dependent loads that a step
    /// of 1640 small memsets finds out of cache, op after op) cost a re-run step 12-18 ns
    /// per op; `Tensor::numel` before it (the sizes copied into a new `Vec`) some 50.
    dst_bytes: RawBytes,
    src_bytes: RawBytes,
    work: MemoryWork,
    /// Contiguous `Uint8` tensors on the CPU, owned by this target alone and never resized:
    /// they hold the bytes (and keep them counted) for as long as the target lives; the runs
    /// reach the bytes through `src_bytes` and `dst_bytes`. A memset has no source: no
    /// tensor, whose handle, `TensorImpl` and storage would only spread the step's targets
    /// further apart in memory.
    #[allow(dead_code)]
    src: Option<Tensor>,
    #[allow(dead_code)]
    dst: Tensor,
}

/// Where a tensor's bytes are and how many: its data pointer and length, read once.
#[derive(Debug, Clone, Copy)]
struct RawBytes {
    ptr: *mut u8,
    len: usize,
}

impl RawBytes {
    /// The bytes of `t`, a contiguous `Uint8` CPU tensor, if any.
    fn of(t: Option<&Tensor>) -> RawBytes {
        let len = t.map_or(0, Tensor::numel);
        let ptr = match t {
            Some(t) if len > 0 => t.data_ptr() as *mut u8,
            _ => std::ptr::null_mut(),
        };
        RawBytes { ptr, len }
    }

    /// The bytes, read.
    ///
    /// # Safety
    /// The tensor they were read from is alive, unresized, for the borrow.
    unsafe fn slice<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` is the data of a live contiguous CPU tensor of `len` bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, written.
    ///
    /// # Safety
    /// As [`RawBytes::slice`], and nothing else reads or writes them for the borrow.
    unsafe fn slice_mut<'a>(self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `slice`; the caller holds the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl CpuMemoryTarget {
    pub fn new(work: MemoryWork) -> Result<CpuMemoryTarget, tch::TchError> {
        let bytes = match work {
            MemoryWork::Copy(p) => p.bytes,
            MemoryWork::Set(p) => p.bytes,
        } as i64;
        let options = (Kind::Uint8, crate::device::Device::host().torch());
        // Filled now, so every page is touched and page faults are not timed.
        let src = match work {
            MemoryWork::Copy(_) => Some(Tensor::f_full([bytes], 0x5A, options)?),
            MemoryWork::Set(_) => None,
        };
        let dst = Tensor::f_zeros([bytes], options)?;
        Ok(CpuMemoryTarget {
            work,
            src_bytes: RawBytes::of(src.as_ref()),
            dst_bytes: RawBytes::of(Some(&dst)),
            src,
            dst,
        })
    }
}

impl CpuMemoryTarget {
    /// The destination buffer, to check what a replay wrote.
    pub fn output(&self) -> &[u8] {
        // SAFETY: `dst` is this target's, alive and never resized; `&self` excludes `run`.
        unsafe { self.dst_bytes.slice() }
    }

    pub fn input(&self) -> &[u8] {
        // SAFETY: as in `output`, for `src`.
        unsafe { self.src_bytes.slice() }
    }
}

impl Target for CpuMemoryTarget {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        // SAFETY: both tensors are this target's alone, alive and never resized, and
        // `&mut self` holds the only access to them; `src` and `dst` are distinct storages.
        let (src, dst) = unsafe { (self.src_bytes.slice(), self.dst_bytes.slice_mut()) };
        for i in 0..calls {
            match self.work {
                MemoryWork::Copy(_) => dst.copy_from_slice(black_box(src)),
                MemoryWork::Set(_) => dst.fill(black_box(i as u8)),
            }
            black_box(&mut *dst);
        }
        Ok(())
    }
}

/// Replays tier-1 work with the CUDA runtime's copies and fills on the replay stream.
pub mod cuda {
    use std::sync::Arc;

    use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};

    use super::*;
    use crate::device::CudaDevice;
    use crate::measure::cuda_timing::CudaStreamHandle;

    enum Buffers {
        HtoD {
            host: Host,
            device: CudaSlice<u8>,
        },
        DtoH {
            device: CudaSlice<u8>,
            host: Host,
        },
        DtoD {
            src: CudaSlice<u8>,
            dst: CudaSlice<u8>,
        },
        Set {
            device: CudaSlice<u8>,
        },
    }

    enum Host {
        Pinned(PinnedHostSlice<u8>),
        Pageable(Vec<u8>),
    }

    pub struct CudaMemoryTarget {
        stream: Arc<CudaStream>,
        buffers: Buffers,
        placement: CudaStreamHandle,
    }

    fn err(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> MeasureError {
        move |e| MeasureError::target(crate::device::cuda::CudaCallError { call, source: e })
    }

    impl CudaMemoryTarget {
        pub fn new(
            device: &CudaDevice,
            work: MemoryWork,
        ) -> Result<CudaMemoryTarget, MeasureError> {
            let stream = device.stream.clone();
            let ctx = &device.context;
            let alloc_host = |bytes: usize, kind: HostMemory| -> Result<Host, MeasureError> {
                Ok(match kind {
                    // Default flags, as PyTorch's pinned allocator (cudaHostAlloc) uses.
                    // SAFETY: the bytes are written by the copies before anything reads them.
                    HostMemory::Pinned => Host::Pinned(
                        unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
                            .map_err(err("cuMemHostAlloc"))?,
                    ),
                    HostMemory::Pageable => Host::Pageable(vec![0x5A; bytes]),
                })
            };
            let buffers = match work {
                MemoryWork::Set(p) => Buffers::Set {
                    device: stream
                        .alloc_zeros::<u8>(p.bytes as usize)
                        .map_err(err("cuMemAlloc"))?,
                },
                MemoryWork::Copy(p) => {
                    let bytes = p.bytes as usize;
                    let dev = || stream.alloc_zeros::<u8>(bytes).map_err(err("cuMemAlloc"));
                    match p.kind {
                        MemcpyKind::HtoD => Buffers::HtoD { host: alloc_host(bytes, host_memory(&p).unwrap_or(HostMemory::Pageable))?, device: dev()? },
                        MemcpyKind::DtoH => Buffers::DtoH { device: dev()?, host: alloc_host(bytes, host_memory(&p).unwrap_or(HostMemory::Pageable))? },
                        MemcpyKind::DtoD => Buffers::DtoD { src: dev()?, dst: dev()? },
                        MemcpyKind::PtoP => {
                            return Err(MeasureError::target(
                                "a peer-to-peer copy needs two GPUs with peer access; it is not replayed on one device",
                            ))
                        }
                        MemcpyKind::HtoH => {
                            return Err(MeasureError::target("a host-to-host copy involves no GPU; replay it with --device cpu"))
                        }
                    }
                }
            };
            // A copy from or to pageable host memory makes the host wait for the device (to
            // pageable memory until it is done; from it as soon as the staging buffer is
            // full), which behind the blocking kernel would wait for its timeout: timed
            // without it.
            let pageable = matches!(
                &buffers,
                Buffers::HtoD {
                    host: Host::Pageable(_),
                    ..
                } | Buffers::DtoH {
                    host: Host::Pageable(_),
                    ..
                }
            );
            Ok(CudaMemoryTarget {
                placement: CudaStreamHandle::replay(&stream)
                    .with_blocking_kernel(device.blocking_kernel && !pageable),
                stream,
                buffers,
            })
        }

        /// Runs the replayed call once on known data and checks the bytes arrived
        /// (`replay selftest`).
        pub fn verify(&mut self) -> Result<(), String> {
            let e = |call: &'static str| {
                move |err: cudarc::driver::DriverError| format!("{call}: {err}")
            };
            let pattern = |n: usize| (0..n).map(|i| (i * 31 % 251) as u8).collect::<Vec<u8>>();
            let stream = self.stream.clone();
            match &mut self.buffers {
                Buffers::HtoD { host, device } => {
                    let expected = pattern(device.len());
                    match host {
                        Host::Pinned(h) => h
                            .as_mut_slice()
                            .map_err(e("pinned host"))?
                            .copy_from_slice(&expected),
                        Host::Pageable(h) => h.copy_from_slice(&expected),
                    }
                    self.issue_one().map_err(|err| err.to_string())?;
                    let Buffers::HtoD { device, .. } = &self.buffers else {
                        unreachable!()
                    };
                    let got = stream.clone_dtoh(device).map_err(e("cuMemcpyDtoH"))?;
                    (got == expected)
                        .then_some(())
                        .ok_or_else(|| "host-to-device copy delivered wrong bytes".into())
                }
                Buffers::DtoH { device, .. } => {
                    let expected = pattern(device.len());
                    stream
                        .memcpy_htod(&expected, device)
                        .map_err(e("cuMemcpyHtoD"))?;
                    self.issue_one().map_err(|err| err.to_string())?;
                    stream.synchronize().map_err(e("cuStreamSynchronize"))?;
                    let Buffers::DtoH { host, .. } = &self.buffers else {
                        unreachable!()
                    };
                    let got: Vec<u8> = match host {
                        Host::Pinned(h) => h.as_slice().map_err(e("pinned host"))?.to_vec(),
                        Host::Pageable(h) => h.clone(),
                    };
                    (got == expected)
                        .then_some(())
                        .ok_or_else(|| "device-to-host copy delivered wrong bytes".into())
                }
                Buffers::DtoD { src, .. } => {
                    let expected = pattern(src.len());
                    stream
                        .memcpy_htod(&expected, src)
                        .map_err(e("cuMemcpyHtoD"))?;
                    self.issue_one().map_err(|err| err.to_string())?;
                    let Buffers::DtoD { dst, .. } = &self.buffers else {
                        unreachable!()
                    };
                    let got = stream.clone_dtoh(dst).map_err(e("cuMemcpyDtoH"))?;
                    (got == expected)
                        .then_some(())
                        .ok_or_else(|| "device-to-device copy delivered wrong bytes".into())
                }
                Buffers::Set { device } => {
                    let junk = vec![0xAB; device.len()];
                    stream
                        .memcpy_htod(&junk, device)
                        .map_err(e("cuMemcpyHtoD"))?;
                    self.issue_one().map_err(|err| err.to_string())?;
                    let Buffers::Set { device } = &self.buffers else {
                        unreachable!()
                    };
                    let got = stream.clone_dtoh(device).map_err(e("cuMemcpyDtoH"))?;
                    got.iter()
                        .all(|&b| b == 0)
                        .then_some(())
                        .ok_or_else(|| "memset left non-zero bytes".into())
                }
            }
        }

        fn issue_one(&mut self) -> Result<(), MeasureError> {
            let s = &self.stream;
            match &mut self.buffers {
                Buffers::HtoD {
                    host: Host::Pinned(h),
                    device,
                } => s.memcpy_htod(h, device).map_err(err("cuMemcpyHtoDAsync")),
                Buffers::HtoD {
                    host: Host::Pageable(h),
                    device,
                } => s
                    .memcpy_htod(h.as_slice(), device)
                    .map_err(err("cuMemcpyHtoDAsync")),
                Buffers::DtoH {
                    device,
                    host: Host::Pinned(h),
                } => s.memcpy_dtoh(device, h).map_err(err("cuMemcpyDtoHAsync")),
                Buffers::DtoH {
                    device,
                    host: Host::Pageable(h),
                } => s
                    .memcpy_dtoh(device, h.as_mut_slice())
                    .map_err(err("cuMemcpyDtoHAsync")),
                Buffers::DtoD { src, dst } => {
                    s.memcpy_dtod(src, dst).map_err(err("cuMemcpyDtoDAsync"))
                }
                Buffers::Set { device } => s.memset_zeros(device).map_err(err("cuMemsetD8Async")),
            }
        }
    }

    impl Target for CudaMemoryTarget {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.placement)
        }

        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            (0..calls).try_for_each(|_| self.issue_one())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure, MeasureConfig, MonotonicClock, TimedTarget};
    use std::time::Duration;

    fn copy(kind: MemcpyKind, src: MemoryKind, dst: MemoryKind, bytes: u64) -> MemcpyParams {
        MemcpyParams {
            kind,
            src,
            dst,
            bytes,
        }
    }

    #[test]
    fn pinned_or_pageable_as_the_trace_says() {
        use MemoryKind::*;
        assert_eq!(
            host_memory(&copy(MemcpyKind::HtoD, Pinned, Device, 8)),
            Some(HostMemory::Pinned)
        );
        assert_eq!(
            host_memory(&copy(MemcpyKind::HtoD, Pageable, Device, 8)),
            Some(HostMemory::Pageable)
        );
        assert_eq!(
            host_memory(&copy(MemcpyKind::DtoH, Device, Pinned, 8)),
            Some(HostMemory::Pinned)
        );
        assert_eq!(
            host_memory(&copy(MemcpyKind::DtoH, Device, Unknown, 8)),
            Some(HostMemory::Pageable)
        );
        assert_eq!(
            host_memory(&copy(MemcpyKind::DtoD, Device, Device, 8)),
            None
        );
    }

    #[test]
    fn cpu_copy_really_copies_and_is_timed() {
        let mut target = CpuMemoryTarget::new(MemoryWork::Copy(copy(
            MemcpyKind::HtoD,
            MemoryKind::Pageable,
            MemoryKind::Device,
            1 << 20,
        )))
        .unwrap();
        let timing = TimedTarget::new(&mut target).unwrap().batch(3).unwrap();
        assert!(target.output().iter().all(|&b| b == 0x5A));
        assert!(
            target.dst.equal(target.src.as_ref().unwrap()),
            "copied between the tensors themselves"
        );
        assert!(timing.device > Duration::ZERO);
        let summary = measure(
            &mut target,
            &MeasureConfig::with_time_budget(Duration::from_millis(50)),
            &MonotonicClock::new(),
        )
        .unwrap();
        assert!(summary.samples >= 10);
    }

    #[test]
    fn cpu_memset_fills() {
        let mut target =
            CpuMemoryTarget::new(MemoryWork::Set(MemsetParams { bytes: 4096 })).unwrap();
        target.run(8).unwrap();
        assert!(target.output().iter().all(|&b| b == 7));
        // The bytes run writes through the pointer it located once are the libtorch tensor's,
        // the storage the counting allocator counts, read back here through libtorch.
        assert_eq!(
            target.dst.sum(Kind::Int64).int64_value(&[]),
            7 * 4096,
            "the memset wrote the target's tensor"
        );
        target.run(3).unwrap();
        assert_eq!(target.dst.max().int64_value(&[]), 2);
    }
}
