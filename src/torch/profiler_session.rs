//! libtorch's profiler (Kineto) in replay's own process, started with the settings
//! `replay capture` profiles with (`scripts/capture_trace.py`: `torch.profiler.profile(
//! activities=[CPU] (+ [CUDA] on a GPU), record_shapes=True, with_stack=False)`), through the
//! same C++ calls that Python's `profile` makes (`shim/profiler.cpp`). A session only counts
//! what it recorded; nothing is exported. The host measurement prices the profiler per event
//! with it: the same op stream run with and without a session.

use std::marker::PhantomData;
use std::ptr;

use super::shim_error::{take_error, ShimError};
use super::sys;

/// What one session recorded, by kind of event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// CPU op events (`cpu_op`): one per op through the dispatcher, nested ones included.
    pub cpu_ops: u64,
    /// Of those, the ones carrying their input shapes (`record_shapes` at work).
    pub cpu_ops_with_shapes: u64,
    /// CUDA runtime and driver calls (`cuda_runtime`, `cuda_driver`).
    pub runtime: u64,
    /// Device activities and anything else (kernels, copies).
    pub other: u64,
}

impl EventCounts {
    /// The sum of two sessions' counts.
    pub fn plus(self, other: EventCounts) -> EventCounts {
        EventCounts {
            cpu_ops: self.cpu_ops + other.cpu_ops,
            cpu_ops_with_shapes: self.cpu_ops_with_shapes + other.cpu_ops_with_shapes,
            runtime: self.runtime + other.runtime,
            other: self.other + other.other,
        }
    }
}

/// A running profiler session on this thread, stopped by [`ProfilerSession::stop`] (or, its
/// events dropped, when it goes out of scope). Not `Send`: libtorch records the ops of the
/// thread that started it, which must also stop it.
pub struct ProfilerSession {
    running: bool,
    _thread_bound: PhantomData<*const ()>,
}

impl ProfilerSession {
    /// Starts a session with capture's settings, CUDA activities too when `with_cuda`.
    pub fn start(with_cuda: bool) -> Result<ProfilerSession, ShimError> {
        let mut error = ptr::null_mut();
        // SAFETY: `error` is a valid out-pointer; the shim catches every C++ exception.
        let rc = unsafe { sys::replay_profiler_start(i32::from(with_cuda), &mut error) };
        if rc != 0 {
            return Err(take_error(error));
        }
        Ok(ProfilerSession {
            running: true,
            _thread_bound: PhantomData,
        })
    }

    /// Starts and stops a first session, which loads and initialises Kineto (and CUPTI on a
    /// GPU), with libtorch's known noise of that moment held back from standard error (as
    /// `capture_trace.py` holds it back): Kineto's `gpuGetDeviceCount failed` of a CUDA build
    /// on a machine without a GPU, its `STAGE:`/`USDT:` progress lines. Every other line it
    /// writes is passed on.
    pub fn prime(with_cuda: bool) -> Result<(), ShimError> {
        with_stderr_filtered(&["gpuGetDeviceCount failed", "STAGE:", "USDT:"], || {
            ProfilerSession::start(with_cuda)?.stop().map(drop)
        })
    }

    /// Stops the session and counts what it recorded.
    pub fn stop(mut self) -> Result<EventCounts, ShimError> {
        self.running = false;
        stop_raw()
    }
}

impl Drop for ProfilerSession {
    fn drop(&mut self) {
        if self.running {
            // A session left running would record every later op of this thread.
            let _ = stop_raw();
        }
    }
}

/// Runs `work` with file descriptor 2 going to a temporary file, then writes every line of it
/// that holds none of `noise` to standard error. Where the file cannot be had, `work` runs as
/// it is.
fn with_stderr_filtered<T>(noise: &[&str], work: impl FnOnce() -> T) -> T {
    use std::io::{Read as _, Seek as _, Write as _};
    use std::os::fd::FromRawFd as _;
    // SAFETY: tmpfile either fails (null) or returns a FILE* this function closes once.
    let file = unsafe { libc::tmpfile() };
    if file.is_null() {
        return work();
    }
    // SAFETY: plain descriptor calls on descriptors this function owns (the FILE*'s, the copy
    // of 2); each is closed once, and 2 is put back before anything else is written.
    let (fd, saved) = unsafe {
        let fd = libc::fileno(file);
        (fd, libc::dup(2))
    };
    if saved < 0 || unsafe { libc::dup2(fd, 2) } < 0 {
        // SAFETY: as above.
        unsafe {
            if saved >= 0 {
                libc::close(saved);
            }
            libc::fclose(file);
        }
        return work();
    }
    let out = work();
    let _ = std::io::stderr().flush();
    // SAFETY: as above; `copy` is a fresh descriptor of the temporary file that `held` owns.
    let mut held = unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
        let copy = libc::dup(fd);
        libc::fclose(file);
        (copy >= 0).then(|| std::fs::File::from_raw_fd(copy))
    };
    let mut text = String::new();
    if let Some(held) = held.as_mut() {
        let _ = held.rewind();
        let _ = held.read_to_string(&mut text);
    }
    let mut stderr = std::io::stderr().lock();
    for line in text
        .lines()
        .filter(|l| !noise.iter().any(|n| l.contains(n)))
    {
        let _ = writeln!(stderr, "{line}");
    }
    out
}

fn stop_raw() -> Result<EventCounts, ShimError> {
    let mut raw = sys::RawProfilerCounts::default();
    let mut error = ptr::null_mut();
    // SAFETY: both out-pointers are valid for the call; the shim catches every C++ exception.
    let rc = unsafe { sys::replay_profiler_stop(&mut raw, &mut error) };
    if rc != 0 {
        return Err(take_error(error));
    }
    Ok(EventCounts {
        cpu_ops: raw.cpu_ops,
        cpu_ops_with_shapes: raw.cpu_ops_with_shapes,
        runtime: raw.runtime,
        other: raw.other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind, Tensor};

    #[test]
    fn a_session_counts_the_ops_it_saw_with_their_shapes() {
        let x = Tensor::zeros([2, 3], (Kind::Float, Device::Cpu));
        let session = ProfilerSession::start(false).unwrap();
        for _ in 0..10 {
            let _ = x.f_view_([3, 2]).unwrap();
            let _ = x.f_select(0, 1).unwrap();
        }
        let counts = session.stop().unwrap();
        // A view is one event; a select two (it calls aten::as_strided).
        assert_eq!(counts.cpu_ops, 30, "{counts:?}");
        assert_eq!(counts.cpu_ops_with_shapes, 30, "{counts:?}");
        assert_eq!(counts.runtime, 0, "{counts:?}");
        // Nothing is recorded once it stopped, and a later session starts cleanly.
        ProfilerSession::prime(false).unwrap();
        let session = ProfilerSession::start(false).unwrap();
        let counts = session.stop().unwrap();
        assert_eq!(counts.cpu_ops, 0, "{counts:?}");
    }
}
