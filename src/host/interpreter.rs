//! TorchScript's interpreter per op: what a TorchScript model pays between two ops on top of
//! the ops themselves (the interpreter's instruction loop, its stack of IValues, the boxed call
//! into the dispatcher).
//!
//! A chain of cheap ops (view, view, add, mul, repeated on a [1, 4] float tensor) is traced into
//! a TorchScript module in this process (`CModule::create_by_tracing`: libtorch's tracer, as
//! `torch.jit.trace` runs it, with no Python and no file) and run through `CModule::forward`,
//! against the same ops called directly. Two lengths of chain, so that what one forward call
//! costs whatever its length (the call into the module, its graph executor's bookkeeping) drops
//! out of the slope:
//! interpreter per op = ((scripted(long) − scripted(short)) − (direct(long) − direct(short))) /
//! (long − short).
//!
//! The TensorExpr fuser is off while the module is optimised and timed (and put back as it was),
//! so that the graph executor runs every op of the chain rather than a fused kernel.

use tch::{CModule, Kind, Tensor};

use super::error::HostError;
use super::timing::{measure_rounds, Derived, Figure, HostCalls, Plan};
use crate::device::Device;
use crate::measure::Target;

/// Ops in one link of the chain (view, view, add, mul).
pub const OPS_PER_LINK: usize = 4;

/// The chain's two lengths, in links.
pub const SHORT_LINKS: usize = 10;
pub const LONG_LINKS: usize = 50;

/// What the interpreter measurement found.
#[derive(Debug, Clone, PartialEq)]
pub struct InterpreterCost {
    /// The interpreter's cost per op.
    pub per_op: Derived,
    /// Forward calls of the short and the long module, and the same ops called directly.
    pub scripted_short: Figure,
    pub scripted_long: Figure,
    pub direct_short: Figure,
    pub direct_long: Figure,
}

/// `links` links of the chain on `x` (shape [1, 4]) with `m` (shape [1, 4]).
fn chain(x: &Tensor, m: &Tensor, links: usize) -> Result<Tensor, tch::TchError> {
    let mut x = x.shallow_clone();
    for _ in 0..links {
        let y = x.f_view_([4, 1])?.f_view_([1, 4])?;
        x = y.f_add(m)?.f_mul(m)?;
    }
    Ok(x)
}

/// The chain traced into a module whose `forward(x, m)` runs it.
fn traced(x: &Tensor, m: &Tensor, links: usize) -> Result<CModule, HostError> {
    let mut failed = None;
    let module = CModule::create_by_tracing(
        "replay_host_interpreter",
        "forward",
        &[x.shallow_clone(), m.shallow_clone()],
        &mut |inputs: &[Tensor]| match chain(&inputs[0], &inputs[1], links) {
            Ok(out) => vec![out],
            Err(e) => {
                failed = Some(e);
                vec![inputs[0].shallow_clone()]
            }
        },
    )?;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(module),
    }
}

/// Restores the TensorExpr fuser's setting when dropped.
struct FuserOff {
    was: bool,
}

impl FuserOff {
    fn new() -> Result<FuserOff, HostError> {
        let was = tch::jit::f_get_tensor_expr_fuser_enabled()?;
        tch::jit::f_set_tensor_expr_fuser_enabled(false)?;
        Ok(FuserOff { was })
    }
}

impl Drop for FuserOff {
    fn drop(&mut self) {
        let _ = tch::jit::f_set_tensor_expr_fuser_enabled(self.was);
    }
}

/// Measures the interpreter's cost per op on `device` (a GPU synchronised before each timed
/// batch).
pub fn measure_interpreter(device: &Device, plan: &Plan) -> Result<InterpreterCost, HostError> {
    let _fuser = FuserOff::new()?;
    let x = Tensor::f_zeros([1, 4], (Kind::Float, device.torch()))?;
    let m = Tensor::f_ones([1, 4], (Kind::Float, device.torch()))?;
    let short = traced(&x, &m, SHORT_LINKS)?;
    let long = traced(&x, &m, LONG_LINKS)?;
    // The traced module computes what the chain computes.
    let expected = chain(&x, &m, SHORT_LINKS)?;
    let got = short.forward_ts(&[&x, &m])?;
    if !got.f_allclose(&expected, 1e-6, 1e-6, false)? {
        return Err(HostError::Measure(
            "the traced chain of ops computes something else than the ops called directly".into(),
        ));
    }
    let mut targets = [
        HostCalls::synchronising(forward(&short, &x, &m), device.cuda()),
        HostCalls::synchronising(forward(&long, &x, &m), device.cuda()),
        HostCalls::synchronising(direct(SHORT_LINKS, &x, &m), device.cuda()),
        HostCalls::synchronising(direct(LONG_LINKS, &x, &m), device.cuda()),
    ];
    let mut refs: Vec<&mut dyn Target> = targets.iter_mut().map(|t| t as &mut dyn Target).collect();
    let mut figures = measure_rounds(&mut refs, plan)?.into_iter();
    let mut next = || {
        figures
            .next()
            .ok_or_else(|| HostError::Measure("a figure is missing".into()))
    };
    let (scripted_short, scripted_long) = (next()?, next()?);
    let (direct_short, direct_long) = (next()?, next()?);
    let ops = ((LONG_LINKS - SHORT_LINKS) * OPS_PER_LINK) as f64;
    let per_op = Derived::of(
        &[&scripted_short, &scripted_long, &direct_short, &direct_long],
        |m| ((m[1] - m[0]) - (m[3] - m[2])) / ops,
    );
    Ok(InterpreterCost {
        per_op,
        scripted_short,
        scripted_long,
        direct_short,
        direct_long,
    })
}

type Work<'a> = Box<dyn FnMut() -> Result<(), HostError> + 'a>;

/// One forward call of `module` on `x`, `m`.
fn forward<'a>(module: &'a CModule, x: &Tensor, m: &Tensor) -> Work<'a> {
    let (x, m) = (x.shallow_clone(), m.shallow_clone());
    Box::new(move || {
        module
            .forward_ts(&[&x, &m])
            .map(drop)
            .map_err(HostError::from)
    })
}

/// The chain of `links` links called directly on `x`, `m`.
fn direct(links: usize, x: &Tensor, m: &Tensor) -> Work<'static> {
    let (x, m) = (x.shallow_clone(), m.shallow_clone());
    Box::new(move || chain(&x, &m, links).map(drop).map_err(HostError::from))
}
