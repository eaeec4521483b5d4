//! An op's recorded inputs (`record_shapes=True`): `Input Dims`, `Input type`, `Input
//! Strides` (contiguous) and `Concrete Inputs`, rendered once as JSON text.

use crate::event::Value;

/// The bfloat16 tensors of a mixed-precision model, as the profiler names their dtype.
pub const BF16: &str = "c10::BFloat16";
pub const F32: &str = "float";
pub const I64: &str = "long int";

/// One input of an op.
#[derive(Clone, Debug)]
pub enum Input<'a> {
    Tensor(&'a [u64], &'a str),
    Scalar(&'a str),
    /// An absent optional (`None`): no dims, no type.
    Absent,
}

fn strides(dims: &[u64]) -> Vec<u64> {
    let mut out = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * dims[i + 1];
    }
    out
}

fn list(values: &[u64]) -> String {
    let inner: Vec<String> = values.iter().map(u64::to_string).collect();
    format!("[{}]", inner.join(", "))
}

fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// The four recorded-input arguments of an op with these inputs.
pub fn recorded(inputs: &[Input<'_>]) -> Vec<(&'static str, Value)> {
    let mut dims = Vec::new();
    let mut types = Vec::new();
    let mut stride = Vec::new();
    let mut concrete = Vec::new();
    for input in inputs {
        match input {
            Input::Tensor(d, t) => {
                dims.push(list(d));
                types.push(quoted(t));
                stride.push(list(&strides(d)));
                concrete.push(quoted(""));
            }
            Input::Scalar(v) => {
                dims.push("[]".into());
                types.push(quoted("Scalar"));
                stride.push("[]".into());
                concrete.push(quoted(v));
            }
            Input::Absent => {
                dims.push("[]".into());
                types.push(quoted(""));
                stride.push("[]".into());
                concrete.push(quoted(""));
            }
        }
    }
    let join = |parts: Vec<String>| Value::Raw(format!("[{}]", parts.join(", ")));
    vec![
        ("Concrete Inputs", join(concrete)),
        ("Input type", join(types)),
        ("Input Strides", join(stride)),
        ("Input Dims", join(dims)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_strides_and_scalars_render_as_the_profiler_writes_them() {
        let args = recorded(&[Input::Tensor(&[4, 197, 768], BF16), Input::Scalar("1")]);
        let get = |key: &str| match &args.iter().find(|(k, _)| *k == key).unwrap().1 {
            Value::Raw(text) => text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(get("Input Dims"), "[[4, 197, 768], []]");
        assert_eq!(get("Input Strides"), "[[151296, 768, 1], []]");
        assert_eq!(get("Input type"), "[\"c10::BFloat16\", \"Scalar\"]");
        assert_eq!(get("Concrete Inputs"), "[\"\", \"1\"]");
    }
}
