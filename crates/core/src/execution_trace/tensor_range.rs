//! The value ranges of a node's integral input tensors (`tensor_range`), typed.
//!
//! With `ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE` set, PyTorch's
//! ExecutionTraceObserver (torch 2.11 here) writes, on every node with an integral input
//! tensor (not `bool`), the attribute `tensor_range`: a JSON object as a string,
//! `{"0":[1,4],"1":[0,1]}`, from the tensor's number to its `[min, max]`. The number is not the argument's position: the
//! observer counts the input tensors one by one, the elements of tensor lists and tuples
//! included, and `None` arguments or list elements not at all (`gather(self, dim, index)`
//! numbers `self` 0 and `index` 1). [`parse`] turns it back into argument positions.

use serde_json::Value;

use crate::signature::InputRange;

use super::node::EtArg;

/// Where each input tensor of a node sits, in the order the observer numbers them: the
/// argument's position, and the element's position for a tensor in a list or tuple.
pub fn tensor_slots(inputs: &[EtArg]) -> Vec<(usize, Option<usize>)> {
    let mut slots = Vec::new();
    for (position, arg) in inputs.iter().enumerate() {
        if arg.ty.starts_with("Tensor") {
            slots.push((position, None));
            continue;
        }
        let Some(elements) = list_element_types(&arg.ty) else {
            continue;
        };
        for (element, ty) in elements.into_iter().enumerate() {
            // A tensor is written `Tensor(dtype)`; a nested list holds as many as it names.
            for _ in 0..ty.matches("Tensor(").count() {
                slots.push((position, Some(element)));
            }
        }
    }
    slots
}

/// The element types of a list or tuple type (`GenericList[Tensor(long),None]`,
/// `Tuple[Tensor(float),Int]`), split at its top-level commas; `None` for other types.
fn list_element_types(ty: &str) -> Option<Vec<&str>> {
    let open = ty.find('[')?;
    let inner = ty[open + 1..].strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let mut elements = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                elements.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    elements.push(&inner[start..]);
    Some(elements)
}

/// The ranges a `tensor_range` text records for a node with `inputs`, by argument position,
/// or what is wrong with it.
pub fn parse(text: &str, inputs: &[EtArg]) -> Result<Vec<InputRange>, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("`tensor_range` is a JSON object as text, not {text:?}: {e}"))?;
    let Value::Object(entries) = value else {
        return Err(format!(
            "`tensor_range` maps input tensor numbers to [min, max], not {text:?}"
        ));
    };
    let slots = tensor_slots(inputs);
    let mut ranges = Vec::with_capacity(entries.len());
    for (key, bounds) in &entries {
        let number: usize = key
            .parse()
            .map_err(|_| format!("`tensor_range` key {key:?} is not an input tensor's number"))?;
        let &(input, element) = slots.get(number).ok_or_else(|| {
            format!(
                "`tensor_range` names input tensor {number}, but the node has {} input tensors",
                slots.len()
            )
        })?;
        let pair = bounds.as_array().map(Vec::as_slice);
        let (min, max) = match pair {
            Some([min, max]) => match (min.as_i64(), max.as_i64()) {
                (Some(min), Some(max)) if min <= max => (min, max),
                _ => {
                    return Err(format!(
                        "`tensor_range` of input tensor {number} is [min, max] with min <= max, \
                         not {bounds}"
                    ))
                }
            },
            _ => {
                return Err(format!(
                    "`tensor_range` of input tensor {number} is [min, max], not {bounds}"
                ))
            }
        };
        InputRange::union_into(
            &mut ranges,
            &[InputRange {
                input,
                element,
                min,
                max,
            }],
        );
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arg(ty: &str) -> EtArg {
        EtArg {
            value: json!(null),
            ty: ty.into(),
            shape: json!([]),
            strides: None,
            tensors: Vec::new(),
        }
    }

    fn range(input: usize, element: Option<usize>, min: i64, max: i64) -> InputRange {
        InputRange {
            input,
            element,
            min,
            max,
        }
    }

    #[test]
    fn tensors_are_numbered_across_arguments_and_list_elements() {
        // aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False): the
        // observer's own test records `{"0":[1,4],"1":[0,1]}`.
        let gather = [
            arg("Tensor(long int)"),
            arg("Int"),
            arg("Tensor(long int)"),
            arg("Bool"),
        ];
        assert_eq!(
            parse(r#"{"0":[1,4],"1":[0,1]}"#, &gather).unwrap(),
            [range(0, None, 1, 4), range(2, None, 0, 1)]
        );
        // aten::index.Tensor(Tensor self, Tensor?[] indices): `x[:, i, j]`; None is not counted.
        let index = [
            arg("Tensor(float)"),
            arg("GenericList[None,Tensor(long int),Tensor(long int)]"),
        ];
        assert_eq!(
            tensor_slots(&index),
            [(0, None), (1, Some(1)), (1, Some(2))]
        );
        assert_eq!(
            parse(r#"{"1":[0,6],"2":[-3,2]}"#, &index).unwrap(),
            [range(1, Some(1), 0, 6), range(1, Some(2), -3, 2)]
        );
        assert_eq!(
            list_element_types("GenericList[Tuple[Tensor(float),Int],None]"),
            Some(vec!["Tuple[Tensor(float),Int]", "None"])
        );
        assert_eq!(list_element_types("GenericList[]"), Some(vec![]));
        assert_eq!(list_element_types("Int"), None);
    }

    #[test]
    fn malformed_ranges_say_what_is_wrong() {
        let embedding = [arg("Tensor(float)"), arg("Tensor(long int)"), arg("Int")];
        for (text, message) in [
            (
                "[1, 2]",
                "`tensor_range` maps input tensor numbers to [min, max]",
            ),
            ("{\"1\": [0", "`tensor_range` is a JSON object as text"),
            (
                r#"{"2":[0,1]}"#,
                "names input tensor 2, but the node has 2 input tensors",
            ),
            (
                r#"{"x":[0,1]}"#,
                "key \"x\" is not an input tensor's number",
            ),
            (r#"{"1":[5,1]}"#, "[min, max] with min <= max, not [5,1]"),
            (r#"{"1":[5]}"#, "is [min, max], not [5]"),
        ] {
            let error = parse(text, &embedding).unwrap_err();
            assert!(error.contains(message), "{text}: {error}");
        }
    }
}
