//! The ops that launch nothing (views, reshapes, no-op conversions): one call of each through
//! libtorch's dispatcher on a tiny tensor of the device, timed on the host. A trace records
//! hundreds of them per step (BLOOM-560M: 96 `aten::reshape`, 72 `aten::select`, ...), and their
//! host time is what a replay of the launching ops alone misses.
//!
//! Each op is called as eager C++ calls it, through tch's `f_*` wrappers (the dispatcher's
//! unboxed path; each call also pays tch's few nanoseconds of wrapping its result), except the
//! two tch answers without the dispatcher: `contiguous` (tch returns an already contiguous
//! tensor itself) and `size` (tch reads it off the tensor), which go through the dispatcher
//! boxed, by name ([`PreparedOp`]), as TorchScript's interpreter calls every op. An op's figure is
//! its whole call, the ops nested inside it included (`aten::flatten` calls `aten::view`).

use tch::{Kind, Tensor};

use super::error::HostError;
use super::timing::{measure_rounds, Figure, HostCalls, Plan};
use crate::device::Device;
use crate::measure::Target;
use crate::torch::{OpArg, PreparedOp};

/// One op that launches nothing, ready to be called.
pub struct NoLaunchOp {
    /// Its name as a trace records it (`aten::view`).
    pub name: &'static str,
    pub call: Box<dyn FnMut() -> Result<(), HostError>>,
}

fn op(name: &'static str, call: impl FnMut() -> Result<(), HostError> + 'static) -> NoLaunchOp {
    NoLaunchOp {
        name,
        call: Box::new(call),
    }
}

/// One call's tensor dropped: only the dispatcher's work is kept.
fn done(result: Result<Tensor, tch::TchError>) -> Result<(), HostError> {
    result.map(drop).map_err(HostError::from)
}

fn shim(error: crate::torch::ShimError) -> HostError {
    HostError::Torch(error.to_string())
}

/// The ops, each on its own tiny tensors on `device` (float32 [2, 3, 4] unless it needs another
/// shape).
pub fn no_launch_ops(device: &Device) -> Result<Vec<NoLaunchOp>, HostError> {
    let options = (Kind::Float, device.torch());
    let x = || Tensor::f_zeros([2, 3, 4], options);
    let row = Tensor::f_zeros([1, 4], options)?;
    let matrix = Tensor::f_zeros([3, 4], options)?;
    let mut contiguous =
        PreparedOp::new("aten::contiguous", "", vec![OpArg::Tensor(x()?)]).map_err(shim)?;
    let mut size = PreparedOp::new(
        "aten::size",
        "int",
        vec![OpArg::Tensor(x()?), OpArg::Int(1)],
    )
    .map_err(shim)?;
    let (view, reshape, select, slice) = (x()?, x()?, x()?, x()?);
    let (transpose, permute, unsqueeze, flatten) = (x()?, x()?, x()?, x()?);
    let (to, detach) = (x()?, x()?);
    Ok(vec![
        op("aten::view", move || done(view.f_view_([6, 4]))),
        op("aten::reshape", move || done(reshape.f_reshape([4, 6]))),
        op("aten::select", move || done(select.f_select(0, 1))),
        op("aten::slice", move || done(slice.f_slice(1, 0, 2, 1))),
        op("aten::transpose", move || done(transpose.f_transpose(0, 1))),
        op("aten::permute", move || done(permute.f_permute([2, 0, 1]))),
        op("aten::unsqueeze", move || done(unsqueeze.f_unsqueeze(0))),
        op("aten::flatten", move || done(flatten.f_flatten(0, -1))),
        op("aten::expand", move || done(row.f_expand([3, 4], false))),
        op("aten::t", move || done(matrix.f_tr())),
        // Already float32: libtorch returns the tensor itself.
        op("aten::to", move || {
            done(to.f_to_dtype(Kind::Float, false, false))
        }),
        op("aten::detach", move || done(detach.f_detach())),
        op("aten::contiguous", move || contiguous.run(1).map_err(shim)),
        op("aten::size", move || size.run(1).map_err(shim)),
    ])
}

/// Each op's cost per call, in the order of `ops`.
pub fn measure_ops(ops: &mut [NoLaunchOp], plan: &Plan) -> Result<Vec<Figure>, HostError> {
    let mut targets: Vec<HostCalls<_>> = ops
        .iter_mut()
        .map(|op| HostCalls::new(|| (op.call)()))
        .collect();
    let mut refs: Vec<&mut dyn Target> = targets.iter_mut().map(|t| t as &mut dyn Target).collect();
    measure_rounds(&mut refs, plan)
}

/// The median of `values` (the middle one, or the mean of the two middle ones); `None` when
/// there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_runs_on_the_cpu_and_the_median_is_the_middle() {
        let mut ops = no_launch_ops(Device::host()).unwrap();
        assert_eq!(ops.len(), 14);
        for op in &mut ops {
            (op.call)().unwrap_or_else(|e| panic!("{}: {e}", op.name));
        }
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
