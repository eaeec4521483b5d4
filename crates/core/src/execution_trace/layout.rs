//! The two node layouts of the Execution Trace schema versions, read into one model.
//!
//! `1.0.x` (PyTorch 2.0-2.1) writes every field flat on the node:
//! `{"id", "name", "parent", "rf_id", "op_schema", "inputs": [values], "input_shapes",
//! "input_types", "outputs", "output_shapes", "output_types", ...}`.
//! `1.1.x` (the Chakra-aligned schema, PyTorch 2.2 on) groups each side's values, shapes and
//! types (and, from 1.1.1, strides) and moves the scalar fields into `attrs`:
//! `{"id", "name", "ctrl_deps", "inputs": {"values", "shapes", "types", "strides"},
//! "outputs": {...}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 7}, ...]}`.

use serde_json::{Map, Value};

use super::node::{EtArg, EtNode, SchemaVersion, TensorRef};
use super::tensor_range::parse as parse_tensor_range;

/// The layout of schema `schema`, or `None` for a version replay does not read.
pub fn version_of(schema: &str) -> Option<SchemaVersion> {
    let mut parts = schema.split(['.', '-']);
    match (parts.next(), parts.next()) {
        (Some("1"), Some("0")) => Some(SchemaVersion::V1_0),
        (Some("1"), Some("1")) => Some(SchemaVersion::V1_1),
        _ => None,
    }
}

/// Why one node cannot be read, and which node it is (id and name, where it has them).
pub struct NodeError {
    pub id: i64,
    pub name: String,
    pub message: String,
}

/// Reads one node of a trace of layout `version`.
pub fn read_node(value: &Value, version: SchemaVersion) -> Result<EtNode, NodeError> {
    let fail = |id: i64, name: &str, message: String| NodeError {
        id,
        name: name.to_owned(),
        message,
    };
    let Some(object) = value.as_object() else {
        return Err(fail(-1, "?", format!("a node is an object, not {value}")));
    };
    let name = object.get("name").and_then(Value::as_str).unwrap_or("?");
    let Some(id) = object.get("id").and_then(Value::as_i64) else {
        return Err(fail(-1, name, "no integer `id`".into()));
    };
    let fail = |message: String| fail(id, name, message);
    let mut node = EtNode::named(id, name);
    let tensor_range = match version {
        SchemaVersion::V1_0 => {
            let tensor_range = read_fields(&mut node, object);
            node.parent = object.get("parent").and_then(Value::as_i64);
            node.inputs =
                flat_args(object, "inputs", "input_shapes", "input_types").map_err(fail)?;
            node.outputs =
                flat_args(object, "outputs", "output_shapes", "output_types").map_err(fail)?;
            tensor_range
        }
        SchemaVersion::V1_1 => {
            let attrs = match object.get("attrs") {
                None => Map::new(),
                Some(Value::Array(attrs)) => attrs
                    .iter()
                    .filter_map(|a| {
                        let name = a.get("name")?.as_str()?;
                        Some((name.to_owned(), a.get("value")?.clone()))
                    })
                    .collect(),
                Some(other) => return Err(fail(format!("`attrs` is a list, not {other}"))),
            };
            let tensor_range = read_fields(&mut node, &attrs);
            node.parent = object.get("ctrl_deps").and_then(Value::as_i64);
            node.inputs = grouped_args(object, "inputs").map_err(fail)?;
            node.outputs = grouped_args(object, "outputs").map_err(fail)?;
            tensor_range
        }
    };
    if let Some(text) = tensor_range {
        node.input_ranges = parse_tensor_range(&text, &node.inputs).map_err(fail)?;
    }
    Ok(node)
}

/// The scalar fields, from the node (1.0) or its `attrs` (1.1); returns the `tensor_range`
/// text, read once the inputs it numbers are.
fn read_fields(node: &mut EtNode, fields: &Map<String, Value>) -> Option<String> {
    let text = |key: &str| {
        fields
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    node.rf_id = fields.get("rf_id").and_then(Value::as_u64);
    node.op_schema = text("op_schema");
    node.seq_id = fields.get("seq_id").and_then(Value::as_i64);
    node.tid = fields.get("tid").and_then(Value::as_u64);
    node.scope = fields.get("scope").and_then(Value::as_u64);
    node.kernel_backend = text("kernel_backend");
    node.kernel_file = text("kernel_file");
    text("tensor_range")
}

fn list<'a>(object: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], String> {
    match object.get(key) {
        None => Ok(&[]),
        Some(Value::Array(values)) => Ok(values),
        Some(other) => Err(format!("`{key}` is a list, not {other}")),
    }
}

/// 1.0: `inputs`, `input_shapes`, `input_types` side by side on the node.
fn flat_args(
    object: &Map<String, Value>,
    values: &str,
    shapes: &str,
    types: &str,
) -> Result<Vec<EtArg>, String> {
    zip_args(
        (values, list(object, values)?),
        (shapes, list(object, shapes)?),
        (types, list(object, types)?),
        None,
    )
}

/// 1.1: `{"values", "shapes", "types"[, "strides"]}` under `inputs` or `outputs`.
fn grouped_args(object: &Map<String, Value>, side: &str) -> Result<Vec<EtArg>, String> {
    let group = match object.get(side) {
        None => return Ok(Vec::new()),
        Some(Value::Object(group)) => group,
        Some(other) => {
            return Err(format!(
                "`{side}` is an object of values, shapes and types in this schema, not {}",
                short(other)
            ))
        }
    };
    let key = |k: &str| format!("{side}.{k}");
    let strides = match group.get("strides") {
        Some(Value::Array(strides)) => Some(strides.as_slice()),
        _ => None,
    };
    zip_args(
        (&key("values"), list(group, "values")?),
        (&key("shapes"), list(group, "shapes")?),
        (&key("types"), list(group, "types")?),
        strides,
    )
}

/// The arguments from parallel lists, which must be as long as each other. Strides may be
/// shorter (1.1.1 leaves out the trailing scalars' strides).
fn zip_args(
    values: (&str, &[Value]),
    shapes: (&str, &[Value]),
    types: (&str, &[Value]),
    strides: Option<&[Value]>,
) -> Result<Vec<EtArg>, String> {
    if values.1.len() != types.1.len() || shapes.1.len() != types.1.len() {
        return Err(format!(
            "`{}` has {} entries, `{}` {} and `{}` {}",
            values.0,
            values.1.len(),
            shapes.0,
            shapes.1.len(),
            types.0,
            types.1.len()
        ));
    }
    let mut args = Vec::with_capacity(values.1.len());
    for (i, ((value, shape), ty)) in values.1.iter().zip(shapes.1).zip(types.1).enumerate() {
        let Some(ty) = ty.as_str() else {
            return Err(format!("`{}`[{i}] is a type name, not {ty}", types.0));
        };
        let tensors =
            tensors_of(ty, value).map_err(|why| format!("`{}`[{i}] ({ty}): {why}", values.0))?;
        args.push(EtArg {
            value: value.clone(),
            ty: ty.to_owned(),
            shape: shape.clone(),
            strides: strides.and_then(|s| s.get(i)).cloned(),
            tensors,
        });
    }
    Ok(args)
}

/// The tensors of an argument of type `ty`: its identity for a tensor, each element's for
/// a list of tensors, none otherwise (an undefined optional tensor has no identity list).
fn tensors_of(ty: &str, value: &Value) -> Result<Vec<TensorRef>, String> {
    if ty.starts_with("Tensor") {
        return match value {
            Value::Array(fields) => Ok(vec![tensor_ref(fields)?]),
            _ => Ok(Vec::new()),
        };
    }
    if ty.starts_with("GenericList[Tensor") {
        let Value::Array(elements) = value else {
            return Err(format!("a list of tensors is a list, not {}", short(value)));
        };
        return elements
            .iter()
            .filter(|e| e.as_str() != Some("<None>")) // `Tensor?[]`'s absent elements
            .map(|e| match e {
                Value::Array(fields) => tensor_ref(fields),
                other => Err(format!(
                    "a tensor is an identity list, not {}",
                    short(other)
                )),
            })
            .collect();
    }
    Ok(Vec::new())
}

/// `[tensor id, storage id, offset, element count, element size, device]`; older traces
/// leave out the device.
fn tensor_ref(fields: &[Value]) -> Result<TensorRef, String> {
    let int = |i: usize| fields.get(i).and_then(Value::as_i64);
    match (int(0), int(1), int(2), int(3), int(4), fields.len()) {
        (Some(tensor_id), Some(storage_id), Some(offset), Some(numel), Some(itemsize), 5 | 6) => {
            let device = match fields.get(5) {
                None => None,
                Some(Value::String(device)) => Some(device.clone()),
                Some(other) => return Err(format!("a tensor's device is a string, not {other}")),
            };
            Ok(TensorRef {
                tensor_id,
                storage_id,
                offset,
                numel,
                itemsize,
                device,
            })
        }
        _ => Err(format!(
            "a tensor is [tensor id, storage id, offset, element count, element size, device], \
             not {}",
            short(&Value::Array(fields.to_vec()))
        )),
    }
}

/// A value's JSON text, cut to a readable length for a message.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_versions_map_to_their_layouts() {
        assert_eq!(version_of("1.0.1"), Some(SchemaVersion::V1_0));
        assert_eq!(version_of("1.1.0-chakra.0.0.4"), Some(SchemaVersion::V1_1));
        assert_eq!(version_of("1.1.1-chakra.0.0.4"), Some(SchemaVersion::V1_1));
        assert_eq!(version_of("2.0.0"), None);
        assert_eq!(version_of(""), None);
    }

    #[test]
    fn a_tensor_whose_identity_is_short_names_the_argument() {
        let node = json!({"id": 9, "name": "aten::t", "rf_id": 2, "op_schema": "aten::t(Tensor(a) self) -> Tensor(a)",
            "inputs": [[5, 6, 0]], "input_shapes": [[4, 4]], "input_types": ["Tensor(float)"]});
        let error = read_node(&node, SchemaVersion::V1_0).err().unwrap();
        assert_eq!((error.id, error.name.as_str()), (9, "aten::t"));
        assert!(
            error
                .message
                .starts_with("`inputs`[0] (Tensor(float)): a tensor is"),
            "{}",
            error.message
        );
    }

    #[test]
    fn recorded_ranges_are_read_by_argument_position() {
        let node = |range: &str| {
            json!({"id": 12, "name": "aten::embedding", "ctrl_deps": 2,
                "inputs": {"values": [[3, 4, 0, 16000, 4, "cpu"], [5, 6, 0, 5, 8, "cpu"], -1, false, false],
                    "shapes": [[250, 64], [1, 5], [], [], []],
                    "types": ["Tensor(float)", "Tensor(long int)", "Int", "Bool", "Bool"]},
                "attrs": [{"name": "rf_id", "type": "uint64", "value": 9},
                    {"name": "tensor_range", "type": "string", "value": range}]})
        };
        // The weight is tensor 0 (float: no range); the indices tensor 1, argument 1.
        let read = read_node(&node(r#"{"1":[3,241]}"#), SchemaVersion::V1_1)
            .ok()
            .unwrap();
        assert_eq!(
            read.input_ranges,
            [crate::signature::InputRange {
                input: 1,
                element: None,
                min: 3,
                max: 241
            }]
        );
        // The observer writes an empty text where nothing was recorded.
        let none = read_node(&node(""), SchemaVersion::V1_1).ok().unwrap();
        assert!(none.input_ranges.is_empty());
        let error = read_node(&node(r#"{"2":[0,1]}"#), SchemaVersion::V1_1)
            .err()
            .unwrap();
        assert_eq!((error.id, error.name.as_str()), (12, "aten::embedding"));
        assert_eq!(
            error.message,
            "`tensor_range` names input tensor 2, but the node has 2 input tensors"
        );
    }

    #[test]
    fn lists_of_different_lengths_are_refused() {
        let node = json!({"id": 3, "name": "aten::view", "ctrl_deps": 2,
            "inputs": {"values": [[8, 9, 0, 64, 4, "cuda:0"], [-1]], "shapes": [[64]], "types": ["Tensor(float)", "GenericList[Int]"]},
            "attrs": [{"name": "rf_id", "type": "uint64", "value": 7}]});
        let error = read_node(&node, SchemaVersion::V1_1).err().unwrap();
        assert_eq!(
            error.message,
            "`inputs.values` has 2 entries, `inputs.shapes` 1 and `inputs.types` 2"
        );
        // The same node in the other layout is refused for its shape, not misread.
        let error = read_node(&node, SchemaVersion::V1_0).err().unwrap();
        assert!(
            error.message.starts_with("`inputs` is a list"),
            "{}",
            error.message
        );
    }
}
