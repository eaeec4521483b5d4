//! The step in real time (`replay sequence`): the rebuilt ops of a step called back to back,
//! as the model's host issues them, and timed as one call by the measurement core.
//!
//! Everything replay does per op is done before: inputs bound (on a flowing step, each call
//! already linked to its producers' outputs in the shim), the route chosen, the targets built.
//! The timed loop only calls each op's [`Target::run`]; nothing reads a clock or records an
//! event between ops. The core puts one timing around the whole step: the monotonic clock on
//! the CPU; on a GPU, CUDA events on the ops' stream at the step's two ends, with no blocking
//! kernel ([`DeviceStream::unblocked`]), so that the device runs the kernels as the host issues
//! them and the step's time is the host's where the host bounds it.
//!
//! What the loop itself costs is measured the same way: the same loop over as many ops, each
//! a no-op ([`NoOp`]), or each an empty dispatcher call made as replay makes its calls
//! ([`empty_calls`]).

use tch::{Kind, Tensor};

use super::registry::SetupError;
use super::rotating_op::RotatingOp;
use super::tier3_libtorch::LibtorchOpTarget;
use crate::device::Device;
use crate::measure::{DeviceStream, MeasureError, Placement, Target};
use crate::torch::{OpArg, PreparedOp};

/// The op an empty call calls: `aten::size.int(Tensor self, int dim) -> int`, a dispatcher
/// call whose kernel reads a field of the tensor and launches nothing.
pub const EMPTY_OP: &str = "aten::size.int";

/// A step's rebuilt ops called in order as one call: one call is one run of the step.
pub struct RealTimeStep {
    ops: Vec<Box<dyn Target>>,
    /// The first op's stream timed without the blocking kernel, where its timer has one.
    unblocked: Option<Box<dyn DeviceStream>>,
}

impl RealTimeStep {
    /// `ops` run where the first one does (the host, or one device stream): the sequence's
    /// placement check has made sure of that before.
    pub fn new(ops: Vec<Box<dyn Target>>) -> RealTimeStep {
        let unblocked = match ops.first().map(|op| op.placement()) {
            Some(Placement::Stream(stream)) => stream.unblocked(),
            _ => None,
        };
        RealTimeStep { ops, unblocked }
    }

    /// The ops in the loop.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl Target for RealTimeStep {
    fn placement(&self) -> Placement<'_> {
        match (&self.unblocked, self.ops.first()) {
            (Some(stream), _) => Placement::Stream(stream.as_ref()),
            (None, Some(op)) => op.placement(),
            (None, None) => Placement::Host,
        }
    }

    /// The ops back to back. The core times the whole call as one segment (the trait's
    /// `run_timed`): one timing around the step, none between its ops.
    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            for op in &mut self.ops {
                op.run(1)?;
            }
        }
        Ok(())
    }

    /// Each op's own preparation of a sample, outside the timed region.
    fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        self.ops.iter_mut().try_for_each(|op| op.prepare_sample())
    }
}

/// An op that does nothing, on the host: the loop's own cost.
pub struct NoOp;

impl Target for NoOp {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, _calls: u64) -> Result<(), MeasureError> {
        Ok(())
    }
}

/// `count` empty dispatcher calls ([`EMPTY_OP`]), each prepared and run as replay runs a
/// rebuilt op (a [`LibtorchOpTarget`] on the CPU device `cpu`: `no_grad`, the prepared boxed
/// call through the shim), each on a one-element tensor of `device`, all placed on the host.
pub fn empty_calls(
    count: usize,
    device: &Device,
    cpu: &Device,
) -> Result<Vec<Box<dyn Target>>, SetupError> {
    let tensor = Tensor::f_zeros([1], (Kind::Float, device.torch()))
        .map_err(|e| SetupError::Failed(format!("a tensor for {EMPTY_OP}: {e}")))?;
    (0..count)
        .map(|_| {
            let args = vec![OpArg::Tensor(tensor.shallow_clone()), OpArg::Int(0)];
            let call =
                PreparedOp::new("aten::size", "int", args).map_err(|e| SetupError::Failed(e.0))?;
            let target = LibtorchOpTarget::new(RotatingOp::new(vec![call]), cpu)?;
            Ok(Box::new(target) as Box<dyn Target>)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceSpec;
    use crate::measure::{
        measure_detailed, BatchTiming, MeasureConfig, MonotonicClock, SyntheticStream, Timer,
    };
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    /// Spins for a fixed time on the host, counting its calls.
    struct Spin(Duration, Rc<Cell<u64>>);

    impl Target for Spin {
        fn placement(&self) -> Placement<'_> {
            Placement::Host
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                self.1.set(self.1.get() + 1);
                let t = Instant::now();
                while t.elapsed() < self.0 {}
            }
            Ok(())
        }
    }

    fn spins(us: &[u64], calls: &Rc<Cell<u64>>) -> Vec<Box<dyn Target>> {
        us.iter()
            .map(|&us| Box::new(Spin(Duration::from_micros(us), calls.clone())) as Box<dyn Target>)
            .collect()
    }

    /// Counts segments; times nothing.
    #[derive(Default)]
    struct Counting {
        starts: u32,
        stops: u32,
    }

    impl Timer for Counting {
        fn start(&mut self) -> Result<(), MeasureError> {
            self.starts += 1;
            Ok(())
        }
        fn stop(&mut self) -> Result<(), MeasureError> {
            self.stops += 1;
            Ok(())
        }
        fn take_batch(&mut self) -> BatchTiming {
            BatchTiming::default()
        }
        fn running(&self) -> BatchTiming {
            BatchTiming::default()
        }
    }

    #[test]
    fn the_step_is_one_timed_segment_around_all_its_ops() {
        let calls = Rc::new(Cell::new(0));
        let mut step = RealTimeStep::new(spins(&[1, 1, 1, 1, 1], &calls));
        assert_eq!(step.len(), 5);
        let mut timer = Counting::default();
        step.run_timed(1, &mut timer).unwrap();
        assert_eq!((timer.starts, timer.stops), (1, 1));
        assert_eq!(calls.get(), 5, "every op ran once");
    }

    #[test]
    fn the_step_in_real_time_is_its_ops_back_to_back() {
        let calls = Rc::new(Cell::new(0));
        let mut step = RealTimeStep::new(spins(&[300, 900], &calls));
        let measured = measure_detailed(
            &mut step,
            &MeasureConfig::fixed_runs(2, 10),
            &MonotonicClock::new(),
        )
        .unwrap();
        assert_eq!(calls.get(), 2 * 12, "2 warm-up and 10 timed runs of 2 ops");
        let s = &measured.summary;
        assert_eq!(s.samples, 10);
        assert_eq!(s.timer.as_deref(), Some("monotonic clock"));
        // At least the two spins, and not much more on a loaded machine.
        assert!(s.median >= 1200.0 && s.median < 2400.0, "{s:?}");
        assert!(s.min >= 1200.0, "a run timed less than its ops: {s:?}");
    }

    /// A stream whose timer blocks, and its unblocked self, told apart by name.
    struct Blocking(SyntheticStream);

    impl DeviceStream for Blocking {
        fn timer(&self) -> Result<Box<dyn Timer>, MeasureError> {
            self.0.timer()
        }
        fn timer_name(&self) -> String {
            "behind a blocker".into()
        }
        fn unblocked(&self) -> Option<Box<dyn DeviceStream>> {
            Some(Box::new(SyntheticStream::new()))
        }
    }

    struct OnStream(Blocking);

    impl Target for OnStream {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.0)
        }
        fn run(&mut self, _calls: u64) -> Result<(), MeasureError> {
            Ok(())
        }
    }

    #[test]
    fn on_a_device_the_step_is_timed_on_its_stream_without_the_blocker() {
        let ops: Vec<Box<dyn Target>> = vec![Box::new(OnStream(Blocking(SyntheticStream::new())))];
        assert_eq!(ops[0].placement().timer_name(), "behind a blocker");
        let step = RealTimeStep::new(ops);
        assert_eq!(
            step.placement().timer_name(),
            SyntheticStream::new().timer_name()
        );
        assert!(matches!(
            RealTimeStep::new(vec![]).placement(),
            Placement::Host
        ));
    }

    #[test]
    fn the_loops_own_cost_is_measured_per_op_and_small() {
        let _no_grad = tch::no_grad_guard();
        let cpu = Device::open(DeviceSpec::Cpu).unwrap();
        let config = MeasureConfig::with_time_budget(Duration::from_millis(200));
        let n = 200;
        let mut noops = RealTimeStep::new((0..n).map(|_| Box::new(NoOp) as _).collect());
        let noop = measure_detailed(&mut noops, &config, &MonotonicClock::new()).unwrap();
        let mut calls = RealTimeStep::new(empty_calls(n, &cpu, &cpu).unwrap());
        let empty = measure_detailed(&mut calls, &config, &MonotonicClock::new()).unwrap();
        let (noop, empty) = (
            noop.summary.median / n as f64,
            empty.summary.median / n as f64,
        );
        // A no-op costs nanoseconds; an empty dispatcher call more, and well under 50 µs.
        assert!((0.0..0.5).contains(&noop), "{noop}");
        assert!(empty > noop && empty < 50.0, "{empty} vs {noop}");
    }
}
