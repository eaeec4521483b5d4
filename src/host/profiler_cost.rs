//! The profiler's own cost per recorded event, with the settings `replay capture` profiles with
//! (input shapes recorded; CUDA activities on when on a GPU: [`ProfilerSession`]), so that a
//! trace recorded on this machine can be un-inflated.
//!
//! A synthetic op stream is run with and without a profiler session, interleaved on the
//! measurement core. Each sample is one call, and each profiled call one session (started and
//! stopped outside the timed part, as a trace's step span lies inside its session), whose events
//! are counted. A session's first events cost more than the rest (the profiler fills its
//! buffers), so each stream is run at two lengths and the cost per event is the slope, the
//! remainder the cost per session:
//! - CPU op events, from the ops that launch nothing (each op of [`super::dispatch`] once per
//!   repetition): ((profiled − unprofiled)(long) − (profiled − unprofiled)(short)) / (CPU op
//!   events recorded (long) − (short));
//! - on a GPU, CUDA runtime events, from a stream of `fill_` on a one-element tensor (each an op
//!   event and a `cudaLaunchKernel`): what its profiled slope adds beyond its CPU op events at
//!   the first cost, per runtime event.

use tch::{Kind, Tensor};

use super::dispatch::NoLaunchOp;
use super::error::HostError;
use super::timing::{measure_rounds, Derived, Figure, Plan};
use crate::device::{CudaDevice, Device};
use crate::measure::{segment, MeasureError, Placement, Target, Timer};
use crate::torch::profiler_session::{EventCounts, ProfilerSession};
use crate::torch::work_target::synchronize_gpu;

/// Launches per repetition of the launching stream.
pub const FILLS_PER_REPETITION: u64 = 8;

/// Repetitions of a stream per call (per session, when profiled), short and long: a long
/// session holds about 1500 CPU op events of the no-launch stream, a model step's order.
pub const SHORT_REPETITIONS: u64 = 10;
pub const LONG_REPETITIONS: u64 = 60;

/// One stream at one length, measured both ways.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamCost {
    pub repetitions: u64,
    pub plain: Figure,
    pub profiled: Figure,
    /// Events one profiled call recorded.
    pub cpu_ops_per_call: f64,
    pub runtime_per_call: f64,
    pub other_per_call: f64,
    /// Share of the CPU op events that carried their input shapes (1 with capture's settings).
    pub with_shapes: f64,
}

impl StreamCost {
    /// What the profiler added to one call.
    fn added(m: &[f64]) -> f64 {
        m[1] - m[0]
    }
}

/// What the profiler measurement found.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilerCost {
    pub per_cpu_event: Derived,
    /// `None` where nothing launches (the CPU).
    pub per_runtime_event: Option<Derived>,
    /// A session's cost beyond its events (on the no-launch stream).
    pub per_session: Derived,
    /// The no-launch stream, short and long.
    pub no_launch: [StreamCost; 2],
    /// The launching stream, short and long (on a GPU).
    pub launching: Option<[StreamCost; 2]>,
    /// CUDA activities were on.
    pub with_cuda: bool,
}

/// A stream of calls, profiled (one session per timed batch) or not.
struct OpStream<'a> {
    call: Box<dyn FnMut() -> Result<(), HostError> + 'a>,
    /// `Some(with_cuda)`: each batch runs inside a session.
    profiled: Option<bool>,
    /// The opened GPU, synchronised before each batch and at the end of its session.
    gpu: Option<&'a CudaDevice>,
    counts: EventCounts,
    profiled_calls: u64,
}

impl<'a> OpStream<'a> {
    fn new(
        call: Box<dyn FnMut() -> Result<(), HostError> + 'a>,
        profiled: Option<bool>,
        gpu: Option<&'a CudaDevice>,
    ) -> OpStream<'a> {
        OpStream {
            call,
            profiled,
            gpu,
            counts: EventCounts::default(),
            profiled_calls: 0,
        }
    }

    fn issue(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            (self.call)().map_err(MeasureError::target)?;
        }
        Ok(())
    }

    fn cost(&self) -> (f64, f64, f64, f64) {
        let calls = self.profiled_calls.max(1) as f64;
        let c = &self.counts;
        let with_shapes = if c.cpu_ops == 0 {
            0.0
        } else {
            c.cpu_ops_with_shapes as f64 / c.cpu_ops as f64
        };
        (
            c.cpu_ops as f64 / calls,
            c.runtime as f64 / calls,
            c.other as f64 / calls,
            with_shapes,
        )
    }
}

impl Target for OpStream<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        self.issue(calls)
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        if let Some(gpu) = self.gpu {
            synchronize_gpu(gpu)?;
        }
        let Some(with_cuda) = self.profiled else {
            return segment(timer, || self.issue(calls));
        };
        let session = ProfilerSession::start(with_cuda).map_err(MeasureError::target)?;
        let ran = segment(timer, || self.issue(calls));
        if let Some(gpu) = self.gpu {
            // The batch's device work ends inside its session, as capture's step does.
            synchronize_gpu(gpu)?;
        }
        let counts = session.stop().map_err(MeasureError::target)?;
        ran?;
        self.counts = self.counts.plus(counts);
        self.profiled_calls += calls;
        Ok(())
    }
}

/// The plan of the streams: one call (one session) per sample.
pub const STREAM_PLAN: Plan = Plan {
    rounds: 3,
    budget_per_round: std::time::Duration::from_millis(40),
    min_samples_per_round: 8,
    min_sample_time: std::time::Duration::ZERO,
    max_calls_per_sample: 1,
};

/// Events the profiler records per call of each op (an op that calls others records them too:
/// `aten::flatten` → `aten::reshape` → `aten::view`), with capture's settings.
pub fn events_per_call(ops: &mut [NoLaunchOp], with_cuda: bool) -> Result<Vec<f64>, HostError> {
    const CALLS: u64 = 8;
    ProfilerSession::prime(with_cuda).map_err(shim)?;
    let _guard = tch::no_grad_guard();
    let mut out = Vec::with_capacity(ops.len());
    for op in ops.iter_mut() {
        let session = ProfilerSession::start(with_cuda).map_err(shim)?;
        let ran: Result<(), HostError> = (0..CALLS).try_for_each(|_| (op.call)());
        let counts = session.stop().map_err(shim)?;
        ran?;
        out.push(counts.cpu_ops as f64 / CALLS as f64);
    }
    Ok(out)
}

/// `repetitions` × [`FILLS_PER_REPETITION`] `fill_`s of a one-element tensor on `device` per
/// call: one launch each.
fn fills(
    device: &Device,
    repetitions: u64,
) -> Result<Box<dyn FnMut() -> Result<(), HostError>>, HostError> {
    let mut t = Tensor::f_zeros([1], (Kind::Float, device.torch()))?;
    Ok(Box::new(move || {
        for _ in 0..repetitions * FILLS_PER_REPETITION {
            drop(t.f_fill_(1.0)?);
        }
        Ok(())
    }))
}

fn shim(error: crate::torch::ShimError) -> HostError {
    HostError::Torch(format!("the profiler: {error}"))
}

/// Measures the profiler's cost per event on `device`, on the stream of `ops` (and, on a GPU,
/// one of launches).
pub fn measure_profiler(
    ops: &mut [NoLaunchOp],
    device: &Device,
    plan: &Plan,
) -> Result<ProfilerCost, HostError> {
    let cuda = device.cuda();
    let with_cuda = cuda.is_some();
    // The first session loads and initialises Kineto (and CUPTI on a GPU): outside any timing.
    ProfilerSession::prime(with_cuda).map_err(shim)?;
    let ops = std::cell::RefCell::new(ops);
    let ops = &ops;
    let no_launch = |repetitions: u64| -> Box<dyn FnMut() -> Result<(), HostError> + '_> {
        Box::new(move || {
            let mut ops = ops.borrow_mut();
            for _ in 0..repetitions {
                ops.iter_mut().try_for_each(|op| (op.call)())?;
            }
            Ok(())
        })
    };
    // Unprofiled and profiled, short then long, for each stream.
    let mut streams = Vec::new();
    for repetitions in [SHORT_REPETITIONS, LONG_REPETITIONS] {
        streams.push(OpStream::new(no_launch(repetitions), None, cuda));
        streams.push(OpStream::new(no_launch(repetitions), Some(with_cuda), cuda));
    }
    if with_cuda {
        for repetitions in [SHORT_REPETITIONS, LONG_REPETITIONS] {
            streams.push(OpStream::new(fills(device, repetitions)?, None, cuda));
            streams.push(OpStream::new(fills(device, repetitions)?, Some(true), cuda));
        }
    }
    let figures = {
        let mut refs: Vec<&mut dyn Target> =
            streams.iter_mut().map(|t| t as &mut dyn Target).collect();
        measure_rounds(&mut refs, plan)?
    };
    let cost_of = |plain: usize, repetitions: u64| -> StreamCost {
        let (cpu_ops_per_call, runtime_per_call, other_per_call, with_shapes) =
            streams[plain + 1].cost();
        StreamCost {
            repetitions,
            plain: figures[plain].clone(),
            profiled: figures[plain + 1].clone(),
            cpu_ops_per_call,
            runtime_per_call,
            other_per_call,
            with_shapes,
        }
    };
    let no_launch = [cost_of(0, SHORT_REPETITIONS), cost_of(2, LONG_REPETITIONS)];
    let [short, long] = &no_launch;
    let events = long.cpu_ops_per_call - short.cpu_ops_per_call;
    if events <= 0.0 {
        return Err(HostError::Measure(
            "the profiler recorded no more op events in the long stream than in the short one"
                .into(),
        ));
    }
    let four = [&short.plain, &short.profiled, &long.plain, &long.profiled];
    let per_event =
        |m: &[f64]| (StreamCost::added(&m[2..4]) - StreamCost::added(&m[0..2])) / events;
    let per_cpu_event = Derived::of(&four, per_event);
    let short_events = short.cpu_ops_per_call;
    let per_session = Derived::of(&four, |m| {
        StreamCost::added(&m[0..2]) - per_event(m) * short_events
    });
    let launching =
        with_cuda.then(|| [cost_of(4, SHORT_REPETITIONS), cost_of(6, LONG_REPETITIONS)]);
    let per_runtime_event = launching.as_ref().and_then(|[ls, ll]| {
        let runtime = ll.runtime_per_call - ls.runtime_per_call;
        let cpu = ll.cpu_ops_per_call - ls.cpu_ops_per_call;
        (runtime > 0.0).then(|| {
            let eight = [
                &short.plain,
                &short.profiled,
                &long.plain,
                &long.profiled,
                &ls.plain,
                &ls.profiled,
                &ll.plain,
                &ll.profiled,
            ];
            Derived::of(&eight, |m| {
                let slope = StreamCost::added(&m[6..8]) - StreamCost::added(&m[4..6]);
                (slope - per_event(&m[0..4]) * cpu) / runtime
            })
        })
    });
    Ok(ProfilerCost {
        per_cpu_event,
        per_runtime_event,
        per_session,
        no_launch,
        launching,
        with_cuda,
    })
}
