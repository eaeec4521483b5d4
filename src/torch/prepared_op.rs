//! [`PreparedOp`]: an aten operator called by name through libtorch's dispatcher, its
//! arguments bound once, run as often as a measurement needs. The safe layer over
//! [`super::sys`]: every pointer handed to the shim points into values this type owns.

use std::ffi::{c_void, CString};
use std::ptr;

use tch::Tensor;

use super::op_arg::OpArg;
use super::output_source::{InputLink, OutputSource};
use super::shim_error::{c_string, take_error, ShimError};
use super::sys::{self, ArgKind, RawArg, RawPreparedCall};

/// An operator call with its arguments bound, ready to run repeatedly.
pub struct PreparedOp {
    raw: *mut RawPreparedCall,
    name: String,
    /// Keeps the tensors alive for as long as the prepared stack refers to them.
    _args: Vec<OpArg>,
}

impl std::fmt::Debug for PreparedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedOp")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PreparedOp {
    /// Binds `args` (positional, schema order; missing trailing arguments take their schema
    /// defaults) to `name`.`overload`. The empty overload is the operator's default one.
    pub fn new(name: &str, overload: &str, mut args: Vec<OpArg>) -> Result<PreparedOp, ShimError> {
        let c_name = c_string(name)?;
        let c_overload = c_string(overload)?;
        // Raw views of the Rust-owned values; all of them outlive the prepare call below.
        let mut strings: Vec<CString> = Vec::new();
        let mut tensor_ptrs: Vec<Vec<*mut c_void>> = Vec::new();
        let mut bool_lists: Vec<Vec<i64>> = Vec::new();
        for arg in args.iter_mut() {
            match arg {
                OpArg::Str(s) => strings.push(c_string(s)?),
                OpArg::Tensor(t) => tensor_ptrs.push(vec![t.as_mut_ptr() as *mut c_void]),
                OpArg::TensorList(list) => tensor_ptrs.push(
                    list.iter_mut()
                        .map(|t| {
                            t.as_mut()
                                .map_or(ptr::null_mut(), |t| t.as_mut_ptr() as *mut c_void)
                        })
                        .collect(),
                ),
                OpArg::BoolList(list) => bool_lists.push(list.iter().map(|&b| b as i64).collect()),
                _ => {}
            }
        }
        let (mut next_string, mut next_tensors, mut next_bools) = (0, 0, 0);
        let mut raw_args = Vec::with_capacity(args.len());
        for arg in &args {
            let raw = match arg {
                OpArg::None => RawArg::empty(ArgKind::None),
                OpArg::Default => RawArg::empty(ArgKind::Default),
                OpArg::Tensor(_) | OpArg::TensorList(_) => {
                    let ptrs = &tensor_ptrs[next_tensors];
                    next_tensors += 1;
                    let kind = if matches!(arg, OpArg::Tensor(_)) {
                        ArgKind::Tensor
                    } else {
                        ArgKind::TensorList
                    };
                    RawArg {
                        tensors: ptrs.as_ptr(),
                        len: ptrs.len(),
                        ..RawArg::empty(kind)
                    }
                }
                OpArg::Int(v) => RawArg {
                    int_value: *v,
                    ..RawArg::empty(ArgKind::Int)
                },
                OpArg::Double(v) => RawArg {
                    double_value: *v,
                    ..RawArg::empty(ArgKind::Double)
                },
                OpArg::Bool(v) => RawArg {
                    int_value: i64::from(*v),
                    ..RawArg::empty(ArgKind::Bool)
                },
                OpArg::IntList(v) => RawArg {
                    ints: v.as_ptr(),
                    len: v.len(),
                    ..RawArg::empty(ArgKind::IntList)
                },
                OpArg::DoubleList(v) => RawArg {
                    doubles: v.as_ptr(),
                    len: v.len(),
                    ..RawArg::empty(ArgKind::DoubleList)
                },
                OpArg::BoolList(_) => {
                    let v = &bool_lists[next_bools];
                    next_bools += 1;
                    RawArg {
                        ints: v.as_ptr(),
                        len: v.len(),
                        ..RawArg::empty(ArgKind::BoolList)
                    }
                }
                OpArg::Str(_) => {
                    let s = &strings[next_string];
                    next_string += 1;
                    RawArg {
                        str_: s.as_ptr(),
                        ..RawArg::empty(ArgKind::String)
                    }
                }
            };
            raw_args.push(raw);
        }
        let mut error = ptr::null_mut();
        // SAFETY: every pointer in raw_args points into values alive until this call returns;
        // the shim copies what it keeps (IValues hold their own tensor references).
        let raw = unsafe {
            sys::replay_op_prepare(
                c_name.as_ptr(),
                c_overload.as_ptr(),
                raw_args.as_ptr(),
                raw_args.len(),
                &mut error,
            )
        };
        if raw.is_null() {
            return Err(take_error(error));
        }
        let full_name = if overload.is_empty() {
            name.to_string()
        } else {
            format!("{name}.{overload}")
        };
        Ok(PreparedOp {
            raw,
            name: full_name,
            _args: args,
        })
    }

    /// `aten::add.Tensor`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Calls the operator `calls` times, back to back.
    pub fn run(&mut self, calls: u64) -> Result<(), ShimError> {
        let mut error = ptr::null_mut();
        // SAFETY: `raw` is a live prepared call owned by self.
        let rc = unsafe { sys::replay_op_run(self.raw, calls, &mut error) };
        if rc != 0 {
            return Err(ShimError(format!("{}: {}", self.name, take_error(error).0)));
        }
        Ok(())
    }

    /// Whether each run keeps its output until the next (the default: what
    /// [`PreparedOp::last_output`] and a consumer's link read). Without, the output is freed as
    /// the run ends, as the model frees a tensor nobody reads: a re-run step without data
    /// flow holds no op's output between runs.
    pub fn keep_output(&mut self, keep: bool) {
        // SAFETY: `raw` is a live prepared call owned by self.
        unsafe { sys::replay_op_keep_output(self.raw, i32::from(keep)) }
    }

    /// A handle on the tensor bound as argument `arg` (element `element` of a tensor list):
    /// the same tensor the prepared call holds, so that changing it in place (`set_`)
    /// changes what the next call reads. `None` where the argument is no tensor.
    pub fn bound_tensor(&self, arg: usize, element: Option<usize>) -> Option<Tensor> {
        match (self._args.get(arg)?, element) {
            (OpArg::Tensor(t), None) => Some(t.shallow_clone()),
            (OpArg::TensorList(list), Some(i)) => list.get(i)?.as_ref().map(Tensor::shallow_clone),
            _ => None,
        }
    }

    /// The first tensor the last call returned.
    pub fn last_output(&self) -> Option<Tensor> {
        // SAFETY: returns a new heap `torch::Tensor*` (or null) that tch takes ownership of.
        let raw = unsafe { sys::replay_op_last_output(self.raw) };
        (!raw.is_null()).then(|| unsafe { Tensor::from_ptr(raw as *mut _) })
    }

    /// A shared handle on what this call returns, updated by each of its runs: what a
    /// consumer links its input to ([`PreparedOp::link_input`]).
    pub fn output_source(&self) -> OutputSource {
        // SAFETY: `raw` is a live prepared call owned by self; the source is new.
        let raw = unsafe { sys::replay_op_output_source(self.raw) };
        OutputSource { raw }
    }

    /// From now on, argument `arg` (element `element` of a tensor list) reads return
    /// `link.output` of `link.source`'s latest output on every run, once it has one: the shim
    /// puts the producer's output itself in the call's arguments, as the model passes it, so
    /// the call reads the producer's memory (views included) and replay does nothing per
    /// call but apply `link.views`, the views the model's view ops made of it. With
    /// `link.release_after`, this call is the source's last reader: after each of its runs the
    /// source lets go of the producer's output (freed unless a view or another call holds it),
    /// as the model frees a tensor once its last reader has run; the producer's next run
    /// gives it again.
    pub fn link_input(
        &mut self,
        arg: usize,
        element: Option<usize>,
        link: InputLink<'_>,
    ) -> Result<(), ShimError> {
        let element = element.map_or(-1, |e| i64::try_from(e).unwrap_or(i64::MAX));
        let views = super::view_ops::encode(link.views);
        let mut error = ptr::null_mut();
        // SAFETY: both are live objects owned by their wrappers; the shim shares (not takes)
        // the source's output and copies the sizes.
        let rc = unsafe {
            sys::replay_op_link_input(
                self.raw,
                arg,
                element,
                link.source.raw,
                link.output,
                views.as_ptr(),
                views.len(),
                i32::from(link.release_after),
                &mut error,
            )
        };
        if rc != 0 {
            return Err(ShimError(format!("{}: {}", self.name, take_error(error).0)));
        }
        Ok(())
    }
}

impl Drop for PreparedOp {
    fn drop(&mut self) {
        // SAFETY: created by replay_op_prepare, freed once.
        unsafe { sys::replay_op_free(self.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use replay_core::sequence_gaps::ViewOp;

    /// A link to the source's first return, as it is.
    fn first_output(source: &OutputSource, release_after: bool) -> InputLink<'_> {
        InputLink {
            source,
            output: 0,
            views: &[],
            release_after,
        }
    }
    use tch::{Device, Kind};

    #[test]
    fn calls_add_by_name_with_defaults() {
        let a = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
        let b = Tensor::full([2, 3], 2.0, (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::add",
            "Tensor",
            vec![OpArg::Tensor(a), OpArg::Tensor(b)],
        )
        .unwrap();
        op.run(3).unwrap();
        let out = op.last_output().unwrap();
        assert_eq!(out.size(), [2, 3]);
        assert_eq!(out.sum(Kind::Float).double_value(&[]), 18.0);
        assert_eq!(op.name(), "aten::add.Tensor");
    }

    #[test]
    fn scalar_int_list_and_optional_arguments() {
        // aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)
        let x = Tensor::ones([4, 5], (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::sum",
            "dim_IntList",
            vec![OpArg::Tensor(x), OpArg::IntList(vec![1]), OpArg::Bool(true)],
        )
        .unwrap();
        op.run(1).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [4, 1]);
        // aten::mul.Scalar(Tensor self, Scalar other)
        let y = Tensor::ones([3], (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::mul",
            "Scalar",
            vec![OpArg::Tensor(y), OpArg::Double(0.5)],
        )
        .unwrap();
        op.run(1).unwrap();
        assert_eq!(
            op.last_output().unwrap().sum(Kind::Float).double_value(&[]),
            1.5
        );
    }

    #[test]
    fn libtorch_errors_come_back_as_errors() {
        let a = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
        let b = Tensor::ones([4, 5], (Kind::Float, Device::Cpu));
        let mut op =
            PreparedOp::new("aten::mm", "", vec![OpArg::Tensor(a), OpArg::Tensor(b)]).unwrap();
        let err = op.run(1).unwrap_err();
        assert!(
            err.0.contains("aten::mm") && err.0.contains("cannot be multiplied"),
            "{err}"
        );
        let err = PreparedOp::new("aten::mm", "no_such_overload", vec![]).unwrap_err();
        assert!(!err.0.is_empty());
        let err = PreparedOp::new("aten::relu", "", vec![OpArg::None]).unwrap_err();
        assert!(err.0.contains("cannot be None"), "{err}");
    }

    #[test]
    fn optional_tensor_lists_for_index() {
        // aten::index.Tensor(Tensor self, Tensor?[] indices)
        let x = Tensor::arange(12, (Kind::Float, Device::Cpu)).view([3, 4]);
        let idx = Tensor::from_slice(&[2i64, 0]);
        let mut op = PreparedOp::new(
            "aten::index",
            "Tensor",
            vec![OpArg::Tensor(x), OpArg::TensorList(vec![None, Some(idx)])],
        )
        .unwrap();
        op.run(1).unwrap();
        let out = op.last_output().unwrap();
        assert_eq!(out.size(), [3, 2]);
        assert_eq!(out.double_value(&[1, 0]), 6.0);
    }

    #[test]
    fn a_linked_input_reads_its_producers_latest_output_itself() {
        // producer: x + 1; consumer: its output * 2, and cat([ones, its output]).
        let mut x = Tensor::zeros([3], (Kind::Float, Device::Cpu));
        let mut producer = PreparedOp::new(
            "aten::add",
            "Scalar",
            vec![OpArg::Tensor(x.shallow_clone()), OpArg::Double(1.0)],
        )
        .unwrap();
        let source = producer.output_source();
        assert!(source.tensor(0).is_none(), "nothing before the first run");
        let placeholder = Tensor::full([3], 100.0, (Kind::Float, Device::Cpu));
        let mut consumer = PreparedOp::new(
            "aten::mul",
            "Scalar",
            vec![OpArg::Tensor(placeholder), OpArg::Double(2.0)],
        )
        .unwrap();
        consumer
            .link_input(0, None, first_output(&source, false))
            .unwrap();
        // Before its producer ran, the call reads its own bound tensor.
        consumer.run(1).unwrap();
        assert_eq!(consumer.last_output().unwrap().double_value(&[0]), 200.0);
        let ones = Tensor::ones([3], (Kind::Float, Device::Cpu));
        let mut cat = PreparedOp::new(
            "aten::cat",
            "",
            vec![OpArg::TensorList(vec![
                Some(ones),
                Some(Tensor::zeros([3], (Kind::Float, Device::Cpu))),
            ])],
        )
        .unwrap();
        cat.link_input(0, Some(1), first_output(&source, false))
            .unwrap();
        for step in 1..=3 {
            let _ = x.fill_(f64::from(step));
            producer.run(1).unwrap();
            consumer.run(1).unwrap();
            cat.run(1).unwrap();
            let expected = 2.0 * (f64::from(step) + 1.0);
            assert_eq!(consumer.last_output().unwrap().double_value(&[2]), expected);
            assert_eq!(
                cat.last_output().unwrap().double_value(&[4]),
                f64::from(step) + 1.0
            );
            // The source is the producer's output itself: the same memory.
            assert_eq!(
                source.tensor(0).unwrap().data_ptr(),
                producer.last_output().unwrap().data_ptr()
            );
        }
        // The source outlives its call.
        drop(producer);
        assert_eq!(source.tensor(0).unwrap().double_value(&[0]), 4.0);
        // A link to no tensor argument, or past a list's end, is refused by name.
        let err = consumer
            .link_input(1, None, first_output(&source, false))
            .unwrap_err();
        assert!(
            err.0.contains("aten::mul.Scalar") && err.0.contains("no tensor"),
            "{err}"
        );
        let err = cat
            .link_input(0, Some(2), first_output(&source, false))
            .unwrap_err();
        assert!(err.0.contains("no element 2"), "{err}");
        let err = cat
            .link_input(9, None, first_output(&source, false))
            .unwrap_err();
        assert!(err.0.contains("argument 9"), "{err}");
    }

    #[test]
    fn the_last_reader_lets_go_of_its_producers_output_after_each_run() {
        // producer: x + 1; first reader: its output * 2; last reader: its output - 1, which
        // frees the producer's output once it has run, until the producer runs again.
        let x = Tensor::zeros([4], (Kind::Float, Device::Cpu));
        let mut producer = PreparedOp::new(
            "aten::add",
            "Scalar",
            vec![OpArg::Tensor(x), OpArg::Double(1.0)],
        )
        .unwrap();
        let source = producer.output_source();
        let placeholder = || Tensor::full([4], 100.0, (Kind::Float, Device::Cpu));
        let mut first = PreparedOp::new(
            "aten::mul",
            "Scalar",
            vec![OpArg::Tensor(placeholder()), OpArg::Double(2.0)],
        )
        .unwrap();
        let mut last = PreparedOp::new(
            "aten::sub",
            "Scalar",
            vec![
                OpArg::Tensor(placeholder()),
                OpArg::Double(1.0),
                OpArg::Double(1.0),
            ],
        )
        .unwrap();
        first
            .link_input(0, None, first_output(&source, false))
            .unwrap();
        last.link_input(0, None, first_output(&source, true))
            .unwrap();
        for _ in 0..2 {
            producer.run(1).unwrap();
            assert!(producer.last_output().is_some());
            first.run(1).unwrap();
            assert!(
                source.tensor(0).is_some(),
                "a reader before the last keeps it"
            );
            last.run(1).unwrap();
            assert!(source.tensor(0).is_none(), "freed after its last reader");
            assert!(
                producer.last_output().is_none(),
                "the producer's own handle too"
            );
            // Both read the producer's output (1), not their placeholders (100).
            assert_eq!(first.last_output().unwrap().double_value(&[0]), 2.0);
            assert_eq!(last.last_output().unwrap().double_value(&[3]), 0.0);
        }
    }

    #[test]
    fn a_linked_input_reads_a_later_return_and_the_view_a_view_op_made_of_it() {
        // producer: aten::max.dim of a [2, 3] tensor keeping the dim: values and indices, both
        // [2, 1]; the consumer reads the indices (return 1) viewed as [2] (what a view op not
        // re-run did in the model) and adds one.
        let x = Tensor::from_slice(&[1.0f32, 9.0, 3.0, 7.0, 2.0, 5.0]).reshape([2, 3]);
        let mut producer = PreparedOp::new(
            "aten::max",
            "dim",
            vec![OpArg::Tensor(x), OpArg::Int(1), OpArg::Bool(true)],
        )
        .unwrap();
        let source = producer.output_source();
        let placeholder = Tensor::zeros([2], (Kind::Int64, Device::Cpu));
        let mut consumer = PreparedOp::new(
            "aten::add",
            "Scalar",
            vec![OpArg::Tensor(placeholder), OpArg::Int(1)],
        )
        .unwrap();
        let views = [ViewOp::Reshape(vec![2])];
        let link = InputLink {
            source: &source,
            output: 1,
            views: &views,
            release_after: false,
        };
        consumer.link_input(0, None, link).unwrap();
        producer.run(1).unwrap();
        assert_eq!(source.tensor(1).unwrap().size(), [2, 1]);
        assert!(source.tensor(2).is_none(), "max.dim returns two");
        consumer.run(1).unwrap();
        let out = consumer.last_output().unwrap();
        assert_eq!(out.size(), [2]);
        // The shim applies every kind of view as tch does: the max values (return 0, [2, 1])
        // transposed, expanded to [3, 2], its row 1 sliced from 1: [7] after the max.
        let views = [
            ViewOp::T,
            ViewOp::Expand(vec![3, 2]),
            ViewOp::Select(0, 1),
            ViewOp::Slice {
                dim: 0,
                start: Some(1),
                end: None,
                step: 1,
            },
        ];
        let mut viewer = PreparedOp::new(
            "aten::mul",
            "Scalar",
            vec![
                OpArg::Tensor(Tensor::zeros([1], (Kind::Float, Device::Cpu))),
                OpArg::Int(1),
            ],
        )
        .unwrap();
        let link = InputLink {
            source: &source,
            output: 0,
            views: &views,
            release_after: false,
        };
        viewer.link_input(0, None, link).unwrap();
        viewer.run(1).unwrap();
        let viewed = viewer.last_output().unwrap();
        let expected = crate::torch::apply_views(&source.tensor(0).unwrap(), &views).unwrap();
        assert_eq!(
            (viewed.size(), viewed.double_value(&[0])),
            (expected.size(), 7.0)
        );
        assert_eq!(
            (out.int64_value(&[0]), out.int64_value(&[1])),
            (2, 1),
            "argmax + 1 of each row"
        );
    }
}
