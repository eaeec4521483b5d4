//! An operator's inputs as the PyTorch profiler recorded them (`record_shapes=True`):
//! per positional argument its `Input Dims`, `Input type`, `Input Strides` and
//! `Concrete Inputs`, as one typed value per argument. The columns themselves are read by
//! [`OpInputs`] alone; this is the replay's typed view of what it read.

use serde_json::Value;

use super::dtype::Dtype;
use super::op_inputs::OpInputs;

/// One recorded argument.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedInput {
    /// A tensor: dtype as recorded, sizes, and strides when the profiler recorded them.
    Tensor {
        dtype: Dtype,
        sizes: Vec<i64>,
        strides: Option<Vec<i64>>,
    },
    /// A list of tensors; the profiler records their shapes (PyTorch ≥ 2.1) but not their dtype.
    TensorList {
        tensors: Vec<(Vec<i64>, Option<Vec<i64>>)>,
    },
    /// A scalar (int, float, bool, ScalarType code, ...), with its value when recorded.
    Scalar(Option<ScalarValue>),
    /// An int or float list, with its values when recorded.
    ScalarList(Option<Vec<ScalarValue>>),
    /// An empty type: None, or a value the profiler does not record (strings, devices, generators).
    Unrecorded,
    /// A type we do not know how to rebuild (`GenericList`, custom classes...).
    Other(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarValue {
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// Parses a `Concrete Inputs` scalar: `1`, `0.`, `9.9999999999999998e-13`, `True`, `False`.
pub fn parse_scalar(text: &str) -> Option<ScalarValue> {
    let text = text.trim();
    match text {
        "True" | "true" => return Some(ScalarValue::Bool(true)),
        "False" | "false" => return Some(ScalarValue::Bool(false)),
        "" => return None,
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(ScalarValue::Int(i));
    }
    text.parse::<f64>().ok().map(ScalarValue::Float)
}

/// Parses a `Concrete Inputs` list: `[1, 512]`, `[-1]`, `[]`.
pub fn parse_scalar_list(text: &str) -> Option<Vec<ScalarValue>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(parse_scalar).collect()
}

/// Builds the typed inputs from the four recorded arrays (any may be missing or `null`,
/// as in traces made without `record_shapes`). Returns `None` when there is no `Input type`.
pub fn from_profiler_args(
    dims: &Value,
    types: &Value,
    strides: &Value,
    concrete: &Value,
) -> Option<Vec<RecordedInput>> {
    types.as_array()?;
    // Without `Input Dims` every argument has no recorded sizes, as an empty list says.
    let no_dims = Value::Array(Vec::new());
    let dims = if dims.is_array() { dims } else { &no_dims };
    let inputs = OpInputs::from_values(Some(dims), Some(types), Some(strides), Some(concrete))?;
    Some(from_op_inputs(&inputs))
}

/// The typed inputs of what [`OpInputs`] read: one per entry of `Input type`.
pub fn from_op_inputs(inputs: &OpInputs) -> Vec<RecordedInput> {
    inputs
        .types
        .iter()
        .enumerate()
        .map(|(i, ty)| typed_input(inputs, i, ty))
        .collect()
}

/// Argument `i`, recorded with type name `ty`.
fn typed_input(inputs: &OpInputs, i: usize, ty: &str) -> RecordedInput {
    let sizes = inputs.dims.get(i).cloned().flatten();
    let strides = inputs
        .strides
        .as_ref()
        .and_then(|all| all.get(i).cloned().flatten());
    let concrete = inputs
        .concrete
        .as_ref()
        .and_then(|all| all.get(i))
        .map_or("", String::as_str);
    match ty {
        "" => RecordedInput::Unrecorded,
        "Scalar" => RecordedInput::Scalar(parse_scalar(concrete)),
        "ScalarList" => RecordedInput::ScalarList(parse_scalar_list(concrete)),
        // One size list and one stride list per tensor of the list.
        "TensorList" => {
            let nested = |raw: Option<&Value>| raw.and_then(Value::as_array).cloned();
            let shapes: Vec<Vec<i64>> = nested(inputs.raw_dims.get(i))
                .map(|a| a.iter().filter_map(int_list).collect())
                .unwrap_or_default();
            let stride_lists: Vec<Option<Vec<i64>>> =
                nested(inputs.raw_strides.as_ref().and_then(|all| all.get(i)))
                    .map(|a| a.iter().map(int_list).collect())
                    .unwrap_or_default();
            let tensors = shapes
                .into_iter()
                .enumerate()
                .map(|(j, shape)| (shape, stride_lists.get(j).cloned().flatten()))
                .collect();
            RecordedInput::TensorList { tensors }
        }
        other => match Dtype::from_recorded(other) {
            Some(dtype) => {
                // `[]` strides are "not recorded", unless the tensor is a 0-d one.
                let zero_dim = sizes.as_ref().is_some_and(Vec::is_empty);
                RecordedInput::Tensor {
                    dtype,
                    strides: strides.filter(|st| !st.is_empty() || zero_dim),
                    sizes: sizes.unwrap_or_default(),
                }
            }
            None => RecordedInput::Other(other.to_string()),
        },
    }
}

fn int_list(value: &Value) -> Option<Vec<i64>> {
    value.as_array()?.iter().map(Value::as_i64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_layer_norm_from_the_h100_bert_trace() {
        let inputs = from_profiler_args(
            &json!([[1, 141, 512], [], [512], [512], [], []]),
            &json!([
                "c10::BFloat16",
                "ScalarList",
                "c10::BFloat16",
                "c10::BFloat16",
                "Scalar",
                "Scalar"
            ]),
            &json!([[72192, 512, 1], [], [1], [1], [], []]),
            &json!(["", "[512]", "", "", "9.9999999999999998e-13", "True"]),
        )
        .unwrap();
        assert_eq!(
            inputs[0],
            RecordedInput::Tensor {
                dtype: Dtype::BFloat16,
                sizes: vec![1, 141, 512],
                strides: Some(vec![72192, 512, 1])
            }
        );
        assert_eq!(
            inputs[1],
            RecordedInput::ScalarList(Some(vec![ScalarValue::Int(512)]))
        );
        assert_eq!(
            inputs[4],
            RecordedInput::Scalar(Some(ScalarValue::Float(1e-12)))
        );
        assert_eq!(
            inputs[5],
            RecordedInput::Scalar(Some(ScalarValue::Bool(true)))
        );
    }

    #[test]
    fn reads_tensor_lists_and_missing_strides() {
        let inputs = from_profiler_args(
            &json!([[[4, 1, 768], [4, 196, 768]], []]),
            &json!(["TensorList", "Scalar"]),
            &json!([[[0, 768, 1], [150528, 1, 196]], []]),
            &json!(["", "1"]),
        )
        .unwrap();
        assert_eq!(
            inputs[0],
            RecordedInput::TensorList {
                tensors: vec![
                    (vec![4, 1, 768], Some(vec![0, 768, 1])),
                    (vec![4, 196, 768], Some(vec![150528, 1, 196]))
                ]
            }
        );
        // PyTorch 2.0-era traces: no strides, no concrete inputs.
        let old = from_profiler_args(
            &json!([[8, 16], []]),
            &json!(["float", "Scalar"]),
            &Value::Null,
            &Value::Null,
        )
        .unwrap();
        assert_eq!(
            old[0],
            RecordedInput::Tensor {
                dtype: Dtype::Float32,
                sizes: vec![8, 16],
                strides: None
            }
        );
        assert_eq!(old[1], RecordedInput::Scalar(None));
    }

    /// Classification reads the trace's text, the replay a signature file's values: one
    /// reader ([`OpInputs`]) gives both the same arguments, a tensor list's strides included
    /// (which the flat per-argument strides of [`OpInputs::tensor`] leave out).
    #[test]
    fn text_and_values_are_read_by_one_reader() {
        let (dims, types, strides, concrete) = (
            json!([[[4, 1, 768], [4, 196, 768]], [2, 3], []]),
            json!(["TensorList", "float", "Scalar"]),
            json!([[[0, 768, 1], [150528, 1, 196]], [3, 1], []]),
            json!(["", "", "1"]),
        );
        let parsed = OpInputs::parse(
            Some(&dims.to_string()),
            Some(&types.to_string()),
            Some(&strides.to_string()),
            Some(&concrete.to_string()),
        )
        .unwrap();
        let from_values = from_profiler_args(&dims, &types, &strides, &concrete).unwrap();
        assert_eq!(from_op_inputs(&parsed), from_values);
        assert_eq!(
            from_values[0],
            RecordedInput::TensorList {
                tensors: vec![
                    (vec![4, 1, 768], Some(vec![0, 768, 1])),
                    (vec![4, 196, 768], Some(vec![150528, 1, 196]))
                ]
            }
        );
        assert!(parsed.tensor(0).is_none());
        assert_eq!(parsed.tensor(1).unwrap().strides, Some(&[3i64, 1][..]));
        assert_eq!(
            from_values[2],
            RecordedInput::Scalar(Some(ScalarValue::Int(1)))
        );
    }

    #[test]
    fn scalars_and_lists() {
        assert_eq!(
            parse_scalar("9223372036854775807"),
            Some(ScalarValue::Int(i64::MAX))
        );
        assert_eq!(parse_scalar("0."), Some(ScalarValue::Float(0.0)));
        assert_eq!(parse_scalar("-0.001"), Some(ScalarValue::Float(-0.001)));
        assert_eq!(parse_scalar("nonsense"), None);
        assert_eq!(parse_scalar_list("[0, 2, 1, 3]").unwrap().len(), 4);
        assert_eq!(parse_scalar_list("[]"), Some(vec![]));
        assert_eq!(parse_scalar_list("1, 2"), None);
        assert_eq!(Dtype::from_recorded("GenericList"), None);
    }
}
