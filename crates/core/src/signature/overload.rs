//! Picks the overload of an aten operator that matches what the profiler recorded.
//!
//! The profiler records every schema argument positionally (kwarg-only ones too) with a coarse
//! type: a dtype name for tensors, `Scalar`, `ScalarList`, `TensorList` or empty. Several
//! overloads can share a name (`aten::add.Tensor` and `aten::add.Scalar`); the right one is the
//! overload whose argument types accept every recorded input, preferring exact kinds
//! (an int for `int`) over conversions (an int for `Scalar`), and never an `out=` overload for
//! a functional call. Compiled code is the exception ([`CallSite::Compiled`]): Inductor's
//! output code calls its extern kernels with `out=` (`extern_kernels.mm(a, b, out=buf)`), so
//! the profiler records the output buffer as a trailing input, and there an `out=` overload
//! that takes every recorded input is the call that was made.
//!
//! [`choose`] is the one rule that decides which recorded inputs are an op's arguments:
//! tier 3 (`replay::overload::resolve`, with libtorch's schemas) builds its call from it, and
//! classification derives a GEMM's shape from the inputs it keeps (`OpInputs::arguments_of`,
//! with the GEMM ops' schemas of [`super::gemm_schemas`]), so both read the same arguments.
//! Pure: the schemas come from the caller, so this needs no libtorch.

use serde::Deserialize;

pub use super::call_site::CallSite;
use super::recorded::{RecordedInput, ScalarValue};

/// One argument of an operator schema, as libtorch's dispatcher declares it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SchemaArg {
    pub name: String,
    /// libtorch's type string: `Tensor`, `Tensor?`, `int[]`, `SymInt[]`, `Scalar`, `ScalarType?`, ...
    #[serde(rename = "type")]
    pub ty: String,
    pub has_default: bool,
    pub kwarg_only: bool,
    /// Written to (`Tensor(a!)`): in-place and `out=` arguments.
    pub writes: bool,
}

/// One overload of an operator: `aten::add.Tensor` is overload `Tensor` of `aten::add`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OpSchema {
    pub overload: String,
    pub args: Vec<SchemaArg>,
    pub returns: usize,
}

/// The operator and overload names of a schema text: (`aten::add`, `Tensor`) for
/// `aten::add.Tensor(Tensor self, ...) -> Tensor`, an empty overload for the default one
/// (`aten::t(...)`). The namespace's `::` holds no dot: the overload follows the name's dot.
pub fn schema_name(schema: &str) -> (&str, &str) {
    let head = schema.split('(').next().unwrap_or("").trim();
    match head.rfind("::") {
        Some(ns) => match head[ns..].find('.') {
            Some(dot) => (&head[..ns + dot], &head[ns + dot + 1..]),
            None => (head, ""),
        },
        None => head.split_once('.').unwrap_or((head, "")),
    }
}

/// Why a recorded call matches no overload of its op.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OverloadError {
    /// Every overload refused the inputs; each says why (`(default): argument 'dim' ...`).
    #[error("no overload of {op} matches the recorded inputs ({})", .reasons.join("; "))]
    NoMatch { op: String, reasons: Vec<String> },
    /// The op's schemas could not be had (libtorch knows no such operator).
    #[error("no schema of {op}: {message}")]
    NoSchema { op: String, message: String },
}

/// How one schema argument is filled.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgPlan {
    /// Build a tensor from the recorded input at this position.
    Tensor,
    TensorList {
        optional_elements: bool,
    },
    /// A scalar converted to what the schema wants.
    Scalar(ScalarValue, ScalarTarget),
    ScalarList(Vec<ScalarValue>, ListTarget),
    /// The schema's default value (the profiler did not record this argument, or its value).
    Default,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarTarget {
    Int,
    Float,
    Bool,
    /// `Scalar`: keeps the recorded kind.
    Number,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ListTarget {
    Int,
    Float,
    Bool,
}

/// The chosen overload and how to fill each of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct OverloadChoice {
    pub overload: String,
    pub args: Vec<ArgPlan>,
    /// The schema's name of each argument (`input`, `weight`, ...).
    pub arg_names: Vec<String>,
    /// Leading recorded inputs that are not arguments of the call (see [`choose`]).
    pub skip: usize,
}

/// A schema type without optionality and fixed list lengths: `int[1]?` -> (`int[]`, true).
fn normalize(ty: &str) -> (String, bool) {
    let (base, optional) = match ty.strip_suffix('?') {
        Some(b) => (b, true),
        None => (ty, false),
    };
    let mut out = String::with_capacity(base.len());
    let mut in_brackets = false;
    for c in base.chars() {
        match c {
            '[' => {
                in_brackets = true;
                out.push('[');
            }
            ']' => {
                in_brackets = false;
                out.push(']');
            }
            _ if in_brackets => {}
            _ => out.push(c),
        }
    }
    (out, optional)
}

fn scalar_target(base: &str) -> Option<ScalarTarget> {
    Some(match base {
        "int" | "SymInt" | "ScalarType" | "Layout" | "MemoryFormat" => ScalarTarget::Int,
        "float" => ScalarTarget::Float,
        "bool" => ScalarTarget::Bool,
        "Scalar" => ScalarTarget::Number,
        _ => return None,
    })
}

/// Score of filling `arg` from `input` (higher is better), or `Err(reason)` when it cannot.
fn plan_arg(arg: &SchemaArg, input: Option<&RecordedInput>) -> Result<(ArgPlan, u32), String> {
    let (base, optional) = normalize(&arg.ty);
    let fallback = |what: &str| -> Result<(ArgPlan, u32), String> {
        if arg.has_default {
            Ok((ArgPlan::Default, 1))
        } else if optional {
            Ok((ArgPlan::None, 1))
        } else {
            Err(format!(
                "argument '{}' ({}) is required but {what}",
                arg.name, arg.ty
            ))
        }
    };
    let Some(input) = input else {
        return fallback("was not recorded");
    };
    match input {
        RecordedInput::Tensor { .. } => match base.as_str() {
            "Tensor" => Ok((ArgPlan::Tensor, 3)),
            _ => Err(format!(
                "a tensor was recorded for '{}' ({})",
                arg.name, arg.ty
            )),
        },
        RecordedInput::TensorList { .. } => match base.as_str() {
            "Tensor[]" => Ok((
                ArgPlan::TensorList {
                    optional_elements: false,
                },
                3,
            )),
            "Tensor?[]" => Ok((
                ArgPlan::TensorList {
                    optional_elements: true,
                },
                3,
            )),
            _ => Err(format!(
                "a tensor list was recorded for '{}' ({})",
                arg.name, arg.ty
            )),
        },
        RecordedInput::Scalar(value) => {
            let Some(target) = scalar_target(&base) else {
                return Err(format!(
                    "a scalar was recorded for '{}' ({})",
                    arg.name, arg.ty
                ));
            };
            let Some(value) = *value else {
                return fallback("its value was not recorded");
            };
            let score = match (value, target) {
                (ScalarValue::Int(_), ScalarTarget::Int)
                | (ScalarValue::Float(_), ScalarTarget::Float)
                | (ScalarValue::Bool(_), ScalarTarget::Bool) => 3,
                (_, ScalarTarget::Number) => 2,
                (ScalarValue::Int(_), ScalarTarget::Float) => 1,
                (ScalarValue::Int(0 | 1), ScalarTarget::Bool) => 1,
                (ScalarValue::Bool(_), ScalarTarget::Int) => 1,
                _ => {
                    return Err(format!(
                        "'{}' ({}) cannot take the recorded {value:?}",
                        arg.name, arg.ty
                    ))
                }
            };
            Ok((ArgPlan::Scalar(value, target), score))
        }
        RecordedInput::ScalarList(values) => {
            let target = match base.as_str() {
                "int[]" | "SymInt[]" => ListTarget::Int,
                "float[]" => ListTarget::Float,
                "bool[]" => ListTarget::Bool,
                _ => {
                    return Err(format!(
                        "a scalar list was recorded for '{}' ({})",
                        arg.name, arg.ty
                    ))
                }
            };
            match values {
                Some(values) => {
                    let fits = values.iter().all(|v| {
                        matches!(
                            (target, v),
                            (ListTarget::Int, ScalarValue::Int(_))
                                | (ListTarget::Bool, ScalarValue::Bool(_))
                                | (
                                    ListTarget::Float,
                                    ScalarValue::Int(_) | ScalarValue::Float(_)
                                )
                        )
                    });
                    if !fits {
                        return Err(format!(
                            "'{}' ({}) cannot take the recorded list",
                            arg.name, arg.ty
                        ));
                    }
                    Ok((ArgPlan::ScalarList(values.clone(), target), 3))
                }
                None => fallback("its values were not recorded"),
            }
        }
        RecordedInput::Unrecorded => {
            if base == "Tensor" && !optional {
                return Err(format!(
                    "argument '{}' is a required tensor but nothing was recorded",
                    arg.name
                ));
            }
            fallback("its value is not recorded by the profiler")
        }
        RecordedInput::Other(ty) => Err(format!(
            "argument '{}': cannot rebuild a recorded {ty}",
            arg.name
        )),
    }
}

/// Plans one overload, or says why it does not fit.
pub fn plan_overload(
    op_name: &str,
    schema: &OpSchema,
    inputs: &[RecordedInput],
    out_allowed: bool,
) -> Result<(OverloadChoice, u32), String> {
    if inputs.len() > schema.args.len() {
        return Err(format!(
            "{} inputs recorded, the overload takes {}",
            inputs.len(),
            schema.args.len()
        ));
    }
    // An in-place op (`aten::add_`) writes `self` by design; anything else that writes is an
    // `out=` overload, which a functional call never used.
    let in_place = op_name.ends_with('_');
    let mut score = 0;
    let mut args = Vec::with_capacity(schema.args.len());
    for (i, arg) in schema.args.iter().enumerate() {
        if arg.writes && !(in_place && i == 0) && !out_allowed {
            return Err(format!(
                "writes its argument '{}' (an out= overload)",
                arg.name
            ));
        }
        let (plan, s) = plan_arg(arg, inputs.get(i))?;
        score += s;
        args.push(plan);
    }
    Ok((
        OverloadChoice {
            overload: schema.overload.clone(),
            args,
            arg_names: schema.args.iter().map(|a| a.name.clone()).collect(),
            skip: 0,
        },
        score,
    ))
}

/// The best overload of `op_name` for the recorded inputs, or every overload's reason for not fitting.
///
/// Ops called from TorchScript are sometimes recorded with extra *leading* inputs: the
/// profiler reads the interpreter's stack and takes values left below the op's arguments
/// (`aten::tanh` recorded with two tensors). When no overload accepts every recorded input,
/// the shortest run of trailing inputs that an overload accepts is used, and `skip` says how
/// many leading inputs were left out. In compiled code ([`CallSite::Compiled`]) an `out=`
/// overload that takes every recorded input comes before that fallback.
pub fn choose(
    op_name: &str,
    schemas: &[OpSchema],
    inputs: &[RecordedInput],
    site: CallSite,
) -> Result<OverloadChoice, OverloadError> {
    let exact = choose_exact(op_name, schemas, inputs, false);
    if exact.is_ok() {
        return exact;
    }
    if site == CallSite::Compiled {
        if let Ok(choice) = choose_exact(op_name, schemas, inputs, true) {
            return Ok(choice);
        }
    }
    for skip in 1..inputs.len() {
        if let Ok(mut choice) = choose_exact(op_name, schemas, &inputs[skip..], false) {
            choice.skip = skip;
            return Ok(choice);
        }
    }
    exact
}

/// The overload an Execution Trace names (`overload`: `Tensor` for `aten::add.Tensor(...)`),
/// planned against the recorded inputs: `None` when `schemas` has no overload of that name
/// (libtorch does not know it; the caller then matches as [`choose`] does), else the plan or
/// why the inputs do not fit it. The ET says this overload was called, so an `out=` overload
/// is taken as it is; leading inputs that are not arguments are left out as in [`choose`].
pub fn choose_named(
    op_name: &str,
    schemas: &[OpSchema],
    overload: &str,
    inputs: &[RecordedInput],
) -> Option<Result<OverloadChoice, OverloadError>> {
    let schema = schemas.iter().find(|s| s.overload == overload)?;
    let mut first_reason = None;
    for skip in 0..inputs.len().max(1) {
        match plan_overload(op_name, schema, inputs.get(skip..).unwrap_or(&[]), true) {
            Ok((mut choice, _)) => {
                choice.skip = skip;
                return Some(Ok(choice));
            }
            Err(reason) => {
                first_reason.get_or_insert(reason);
            }
        }
    }
    let name = if overload.is_empty() {
        "(default)"
    } else {
        overload
    };
    Some(Err(OverloadError::NoMatch {
        op: op_name.to_owned(),
        reasons: vec![format!("{name}: {}", first_reason.unwrap_or_default())],
    }))
}

fn choose_exact(
    op_name: &str,
    schemas: &[OpSchema],
    inputs: &[RecordedInput],
    out_allowed: bool,
) -> Result<OverloadChoice, OverloadError> {
    let mut best: Option<(OverloadChoice, u32)> = None;
    let mut reasons = Vec::new();
    for schema in schemas {
        match plan_overload(op_name, schema, inputs, out_allowed) {
            Ok((choice, score)) => {
                if best.as_ref().is_none_or(|(_, s)| score > *s) {
                    best = Some((choice, score));
                }
            }
            Err(reason) => {
                let name = if schema.overload.is_empty() {
                    "(default)"
                } else {
                    &schema.overload
                };
                reasons.push(format!("{name}: {reason}"));
            }
        }
    }
    best.map(|(choice, _)| choice)
        .ok_or_else(|| OverloadError::NoMatch {
            op: op_name.to_owned(),
            reasons,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_execution_traces_overload_is_taken_even_where_matching_refuses_it() {
        // `add(a, b, alpha=1, out=c)`: an eager call matched by schema may not be `out=`.
        let inputs = [
            tensor(),
            tensor(),
            RecordedInput::Scalar(Some(ScalarValue::Int(1))),
            tensor(),
        ];
        assert!(choose("aten::add", &add_overloads(), &inputs, CallSite::Eager).is_err());
        let choice = choose_named("aten::add", &add_overloads(), "out", &inputs)
            .unwrap()
            .unwrap();
        assert_eq!((choice.overload.as_str(), choice.skip), ("out", 0));
        // An overload libtorch does not have is None: the caller falls back to matching.
        assert!(choose_named("aten::add", &add_overloads(), "Tensor_mode", &inputs).is_none());
        // One whose arguments the inputs do not fit says why.
        let error = choose_named(
            "aten::add",
            &add_overloads(),
            "Scalar",
            &[tensor(), tensor()],
        )
        .unwrap()
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("Scalar: a tensor was recorded for 'other'"),
            "{error}"
        );
    }
    use crate::signature::dtype::Dtype;

    fn arg(name: &str, ty: &str, has_default: bool) -> SchemaArg {
        SchemaArg {
            name: name.into(),
            ty: ty.into(),
            has_default,
            kwarg_only: false,
            writes: false,
        }
    }

    fn tensor() -> RecordedInput {
        RecordedInput::Tensor {
            dtype: Dtype::Float32,
            sizes: vec![2, 3],
            strides: Some(vec![3, 1]),
        }
    }

    fn add_overloads() -> Vec<OpSchema> {
        vec![
            OpSchema {
                overload: "Tensor".into(),
                args: vec![
                    arg("self", "Tensor", false),
                    arg("other", "Tensor", false),
                    arg("alpha", "Scalar", true),
                ],
                returns: 1,
            },
            OpSchema {
                overload: "Scalar".into(),
                args: vec![
                    arg("self", "Tensor", false),
                    arg("other", "Scalar", false),
                    arg("alpha", "Scalar", true),
                ],
                returns: 1,
            },
            OpSchema {
                overload: "out".into(),
                args: vec![
                    arg("self", "Tensor", false),
                    arg("other", "Tensor", false),
                    arg("alpha", "Scalar", true),
                    SchemaArg {
                        writes: true,
                        ..arg("out", "Tensor", false)
                    },
                ],
                returns: 1,
            },
        ]
    }

    #[test]
    fn tensor_or_scalar_other_picks_the_right_add() {
        let alpha = RecordedInput::Scalar(Some(ScalarValue::Int(1)));
        let choice = choose(
            "aten::add",
            &add_overloads(),
            &[tensor(), tensor(), alpha.clone()],
            CallSite::Eager,
        )
        .unwrap();
        assert_eq!(choice.overload, "Tensor");
        assert_eq!(
            choice.args[2],
            ArgPlan::Scalar(ScalarValue::Int(1), ScalarTarget::Number)
        );
        let other = RecordedInput::Scalar(Some(ScalarValue::Float(0.5)));
        let choice = choose(
            "aten::add",
            &add_overloads(),
            &[tensor(), other, alpha],
            CallSite::Eager,
        )
        .unwrap();
        assert_eq!(choice.overload, "Scalar");
    }

    #[test]
    fn torchscript_extra_leading_inputs_are_skipped() {
        // As bloom-tiny's TorchScript trace records `1 + tanh(...)`: three tensors and two
        // scalars for aten::add.Scalar(self, other, alpha).
        let one = RecordedInput::Scalar(Some(ScalarValue::Int(1)));
        let inputs = [tensor(), tensor(), tensor(), one.clone(), one];
        let choice = choose("aten::add", &add_overloads(), &inputs, CallSite::Eager).unwrap();
        assert_eq!((choice.overload.as_str(), choice.skip), ("Scalar", 2));
        // Exact matches never skip.
        let choice = choose(
            "aten::add",
            &add_overloads(),
            &[tensor(), tensor()],
            CallSite::Eager,
        )
        .unwrap();
        assert_eq!(choice.skip, 0);
    }

    #[test]
    fn out_overloads_are_never_chosen_for_functional_calls() {
        let err = plan_overload(
            "aten::add",
            &add_overloads()[2],
            &[tensor(), tensor()],
            false,
        )
        .unwrap_err();
        assert!(err.contains("out="), "{err}");
    }

    #[test]
    fn compiled_code_calls_extern_kernels_with_out() {
        // Inductor's `extern_kernels.mm(a, b, out=buf)` as the H200 and CPU captures of
        // bloom-tiny recorded it: [5,64] x [64,1000] (a transposed weight) into [5,1000].
        let t = |sizes: Vec<i64>, strides: Vec<i64>| RecordedInput::Tensor {
            dtype: Dtype::Float32,
            sizes,
            strides: Some(strides),
        };
        let inputs = [
            t(vec![5, 64], vec![64, 1]),
            t(vec![64, 1000], vec![1, 64]),
            t(vec![5, 1000], vec![1000, 1]),
        ];
        let mm = crate::signature::gemm_schemas::gemm_op_schemas("aten::mm").unwrap();
        let compiled = choose("aten::mm", mm, &inputs, CallSite::Compiled).unwrap();
        assert_eq!((compiled.overload.as_str(), compiled.skip), ("out", 0));
        assert_eq!(compiled.arg_names, ["self", "mat2", "out"]);
        // The same inputs from eager code or TorchScript read as a leading stack value: the
        // reading that made replay multiply [64,1000] by [5,1000].
        let eager = choose("aten::mm", mm, &inputs, CallSite::Eager).unwrap();
        assert_eq!((eager.overload.as_str(), eager.skip), ("", 1));
        // A functional match still comes first in compiled code.
        let two = choose("aten::mm", mm, &inputs[..2], CallSite::Compiled).unwrap();
        assert_eq!((two.overload.as_str(), two.skip), ("", 0));
    }

    #[test]
    fn in_place_ops_may_write_self() {
        let schema = OpSchema {
            overload: "Tensor".into(),
            args: vec![
                SchemaArg {
                    writes: true,
                    ..arg("self", "Tensor", false)
                },
                arg("other", "Tensor", false),
            ],
            returns: 1,
        };
        assert!(plan_overload("aten::add_", &schema, &[tensor(), tensor()], false).is_ok());
    }

    #[test]
    fn unrecorded_arguments_take_defaults_or_none() {
        // aten::gelu(Tensor self, *, str approximate='none'): the profiler records the str as "".
        let gelu = OpSchema {
            overload: String::new(),
            args: vec![
                arg("self", "Tensor", false),
                arg("approximate", "str", true),
            ],
            returns: 1,
        };
        let choice = choose(
            "aten::gelu",
            &[gelu],
            &[tensor(), RecordedInput::Unrecorded],
            CallSite::Eager,
        )
        .unwrap();
        assert_eq!(choice.args, vec![ArgPlan::Tensor, ArgPlan::Default]);
        // An optional tensor with nothing recorded is None.
        let sdpa_mask = arg("attn_mask", "Tensor?", false);
        assert_eq!(
            plan_arg(&sdpa_mask, Some(&RecordedInput::Unrecorded))
                .unwrap()
                .0,
            ArgPlan::None
        );
        // A required tensor with nothing recorded cannot be rebuilt.
        assert!(plan_arg(
            &arg("self", "Tensor", false),
            Some(&RecordedInput::Unrecorded)
        )
        .is_err());
    }

    #[test]
    fn lists_and_fixed_length_types() {
        assert_eq!(normalize("int[1]?"), ("int[]".to_string(), true));
        assert_eq!(normalize("SymInt[]"), ("SymInt[]".to_string(), false));
        let dims = RecordedInput::ScalarList(Some(vec![ScalarValue::Int(1)]));
        let (plan, _) = plan_arg(&arg("dim", "int[1]?", false), Some(&dims)).unwrap();
        assert_eq!(
            plan,
            ArgPlan::ScalarList(vec![ScalarValue::Int(1)], ListTarget::Int)
        );
        let err = plan_arg(&arg("x", "Tensor", false), Some(&dims)).unwrap_err();
        assert!(err.contains("scalar list"));
    }

    #[test]
    fn a_missing_required_value_says_which_argument() {
        let cat = OpSchema {
            overload: String::new(),
            args: vec![arg("tensors", "Tensor[]", false), arg("dim", "int", false)],
            returns: 1,
        };
        let inputs = [
            RecordedInput::TensorList { tensors: vec![] },
            RecordedInput::Scalar(None),
        ];
        let err = choose("aten::cat", &[cat], &inputs, CallSite::Eager)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'dim'") && err.contains("not recorded"),
            "{err}"
        );
    }
}
