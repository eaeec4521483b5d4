//! A Kineto trace's missing input columns, taken from its Execution Trace.
//!
//! A trace profiled without `record_shapes` records no `Input Dims`: its ops fold into
//! signatures without shapes, and no kernel they launch can be replayed. The ET recorded the
//! same calls with every argument's shape, dtype and value (and, from schema 1.1.1 on,
//! strides). Each op linked to a node ([`super::link`]), and each op of an iteration that
//! repeats the ET's ([`super::link_repeats`]), that recorded no inputs is given the node's in
//! the profiler's own columns, as `record_shapes` would have written them:
//!
//! | ET argument | `Input Dims` | `Input type` | `Concrete Inputs` |
//! | --- | --- | --- | --- |
//! | `Tensor(float)` | its shape | `float` | `""` |
//! | `GenericList[Tensor(..), ..]` | the shapes | `TensorList` | `""` |
//! | `Int`, `Double`, `Bool` | `[]` | `Scalar` | `1`, `-0.01`, `True` |
//! | `GenericList[Int, ..]` | `[]` | `ScalarList` | `[1024, 1]` |
//! | anything else (`None`, `Device`, `String`, an undefined tensor) | `[]` | `""` | `""` |
//!
//! `Input Strides` is written only where the ET recorded every tensor argument's strides;
//! otherwise the op is read as an op of a PyTorch that recorded none (contiguous tensors, a
//! GEMM's layout from its kernel's name). An op that recorded its inputs is never changed.
//! Classification then runs on the completed trace, so invocations of different shapes make
//! different signatures, as they would have.

use serde_json::Value;

use crate::trace::{Category, FxHashMap, RecordedInputs, StringTableFull, Trace};

use super::link::EtLinks;
use super::link_repeats::repeats;
use super::node::{EtArg, EtNode, ExecutionTrace};

/// How many ops were given their inputs from the Execution Trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filled {
    /// Linked ops that recorded no inputs.
    pub linked: u64,
    /// Ops of the iterations that repeat the ET's, and the iterations.
    pub repeated: u64,
    pub iterations: u64,
    /// Of all of them, those given strides (the ET recorded them).
    pub with_strides: u64,
}

impl Filled {
    /// One line for the run's log; `None` when nothing was filled.
    pub fn describe(&self) -> Option<String> {
        if self.linked + self.repeated == 0 {
            return None;
        }
        let strides = if self.with_strides == self.linked + self.repeated {
            "with strides".to_owned()
        } else if self.with_strides == 0 {
            "without strides (the Execution Trace records none: contiguous tensors assumed)"
                .to_owned()
        } else {
            format!("{} of them with strides", self.with_strides)
        };
        Some(format!(
            "input shapes, dtypes and values taken from the Execution Trace (the Kineto trace \
             recorded none) for {} linked ops and {} ops of {} iterations that repeat its \
             own, {strides}",
            self.linked, self.repeated, self.iterations
        ))
    }
}

/// Gives every op of `trace` that recorded no inputs and is linked to a node of `et` by
/// `links`, or stands in an iteration that repeats the ET's, the node's inputs.
pub fn fill_inputs(
    trace: &mut Trace,
    et: &ExecutionTrace,
    links: &EtLinks,
) -> Result<Filled, StringTableFull> {
    let mut filled = Filled::default();
    let linked = unrecorded(trace, &links.node_of_event);
    if linked.is_empty() {
        return Ok(filled);
    }
    let found = repeats(et, trace, &links.node_of_event);
    let repeated = unrecorded(trace, &found.node_of_event);
    filled.iterations = found.iterations;
    // Strides are written where the ET records them at all (schema 1.1.1 on), not for an op
    // of no tensor argument in an ET that records none.
    let strided = et
        .nodes
        .iter()
        .any(|n| n.inputs.iter().any(|a| a.strides.is_some()));
    // Each node's columns once: the iterations that repeat the ET's take the same ones.
    let mut columns_of: FxHashMap<usize, RecordedInputs> = FxHashMap::default();
    for (pairs, count) in [
        (linked, &mut filled.linked),
        (repeated, &mut filled.repeated),
    ] {
        for (event, node) in pairs {
            let inputs = match columns_of.get(&node) {
                Some(&inputs) => inputs,
                None => {
                    let inputs = recorded_inputs(trace, &et.nodes[node], strided)?;
                    columns_of.insert(node, inputs);
                    inputs
                }
            };
            filled.with_strides += u64::from(inputs.strides.is_some());
            trace.events[event].args.inputs = inputs;
            *count += 1;
        }
    }
    Ok(filled)
}

/// The (event, node) pairs of `node_of_event` whose event is an op that recorded no inputs,
/// in event order. Ops only: an annotation (`record_function`) records none, nor has its node.
fn unrecorded(trace: &Trace, node_of_event: &FxHashMap<usize, usize>) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = node_of_event
        .iter()
        .map(|(&event, &node)| (event, node))
        .filter(|&(event, _)| {
            let event = &trace.events[event];
            event.category == Category::CpuOp && !event.args.inputs.is_recorded()
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

/// `node`'s inputs as the profiler's columns, interned in `trace`'s strings.
fn recorded_inputs(
    trace: &mut Trace,
    node: &EtNode,
    strided: bool,
) -> Result<RecordedInputs, StringTableFull> {
    let mut columns = Columns::of(node);
    if !strided {
        columns.strides = None;
    }
    let mut intern = |value: &Value| trace.strings.intern(&profiler_json(value));
    Ok(RecordedInputs {
        dims: Some(intern(&Value::Array(columns.dims))?),
        types: Some(intern(&strings(columns.types))?),
        strides: match columns.strides {
            Some(strides) => Some(intern(&Value::Array(strides))?),
            None => None,
        },
        concrete: Some(intern(&strings(columns.concrete))?),
    })
}

/// `value` as the profiler's JSON writer lays a column out (`[[1, 5], [], ["", "1"]]`: a comma
/// and a space between elements), so that a column taken from the ET reads, and keys a
/// signature, as the one `record_shapes` would have written.
fn profiler_json(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(profiler_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn strings(texts: Vec<String>) -> Value {
    Value::Array(texts.into_iter().map(Value::String).collect())
}

/// A node's inputs in the profiler's four columns, one entry per argument.
#[derive(Debug, Default, PartialEq)]
pub struct Columns {
    pub dims: Vec<Value>,
    pub types: Vec<String>,
    /// `None` unless every tensor argument recorded its strides.
    pub strides: Option<Vec<Value>>,
    pub concrete: Vec<String>,
}

impl Columns {
    pub fn of(node: &EtNode) -> Columns {
        let mut columns = Columns {
            strides: Some(Vec::new()),
            ..Columns::default()
        };
        for arg in &node.inputs {
            let (dims, ty, concrete) = column(arg);
            let undefined = arg.tensor_dtype() == Some(UNDEFINED_TENSOR);
            let holds_tensors = !undefined
                && (!arg.tensors.is_empty()
                    || arg.is_tensor()
                    || arg.ty.starts_with("GenericList[Tensor"));
            // The profiler writes `[]` for what holds no tensor (the ET: one `[]` per element
            // of an int list).
            let strides = match (&arg.strides, holds_tensors) {
                (Some(strides), true) => Some(strides.clone()),
                (_, false) => Some(Value::Array(Vec::new())),
                (None, true) => None,
            };
            columns.strides = columns.strides.take().zip(strides).map(|(mut all, s)| {
                all.push(s);
                all
            });
            columns.dims.push(dims);
            columns.types.push(ty);
            columns.concrete.push(concrete);
        }
        columns
    }
}

/// The dtype an Execution Trace gives an undefined tensor (`weight=None` of `nll_loss`).
const UNDEFINED_TENSOR: &str = "nullptr (uninitialized)";

/// One argument's `Input Dims`, `Input type` and `Concrete Inputs` entries.
fn column(arg: &EtArg) -> (Value, String, String) {
    let empty = || Value::Array(Vec::new());
    if let Some(dtype) = arg.tensor_dtype() {
        // An undefined tensor (an optional one not given) is recorded as a tensor of this type.
        if dtype == UNDEFINED_TENSOR {
            return (empty(), String::new(), String::new());
        }
        return (arg.shape.clone(), dtype.to_owned(), String::new());
    }
    if let Some(elements) = arg.ty.strip_prefix("GenericList[") {
        if elements.starts_with("Tensor") {
            return (arg.shape.clone(), "TensorList".into(), String::new());
        }
        if let Some(values) = arg.value.as_array() {
            let texts: Option<Vec<String>> = values.iter().map(scalar_text).collect();
            if let Some(texts) = texts {
                return (
                    empty(),
                    "ScalarList".into(),
                    format!("[{}]", texts.join(", ")),
                );
            }
        }
        return (empty(), String::new(), String::new());
    }
    match (arg.ty.as_str(), scalar_text(&arg.value)) {
        ("Int" | "Double" | "Bool", Some(text)) => (empty(), "Scalar".into(), text),
        _ => (empty(), String::new(), String::new()),
    }
}

/// A number or boolean as the profiler writes it (`1`, `-0.01`, `1.`, `True`).
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64().map(double_text),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(true) => Some("True".into()),
        Value::Bool(false) => Some("False".into()),
        _ => None,
    }
}

/// A double as the profiler writes an argument's value (c10's `IValue` printing): `%.17g`, with
/// a `.` after an integral value (`1.`, `0.25`, `1.0000000000000001e-05`).
fn double_text(d: f64) -> String {
    if !d.is_finite() {
        return d.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0." } else { "0." }.into();
    }
    const DIGITS: i32 = 17;
    // The exponent %g decides by is the one of the value rounded to 17 digits.
    let scientific = format!("{:.*e}", (DIGITS - 1) as usize, d);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |text: &str| -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text.to_owned()
        }
    };
    let mut text = if !(-4..DIGITS).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        trim(&format!("{:.*}", (DIGITS - 1 - exponent) as usize, d))
    };
    if d.fract() == 0.0 && !text.contains(['e', '.']) {
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arg(ty: &str, value: Value, shape: Value, strides: Option<Value>) -> EtArg {
        EtArg {
            value,
            ty: ty.into(),
            shape,
            strides,
            tensors: Vec::new(),
        }
    }

    #[test]
    fn doubles_are_written_as_the_profiler_writes_them() {
        // As in the Kineto traces of ../shared and bloom-tiny's (layer_norm's eps, baddbmm's
        // beta and alpha, BERT's eps).
        assert_eq!(double_text(1.0), "1.");
        assert_eq!(double_text(0.25), "0.25");
        assert_eq!(double_text(1e-5), "1.0000000000000001e-05");
        assert_eq!(double_text(1e-12), "9.9999999999999998e-13");
        assert_eq!(double_text(-0.01), "-0.01");
        assert_eq!(double_text(0.0), "0.");
        assert_eq!(double_text(100.0), "100.");
        assert_eq!(double_text(1e20), "1e+20");
    }

    #[test]
    fn an_addmm_node_becomes_the_profilers_columns() {
        let mut node = EtNode::named(14, "aten::addmm");
        let tensor = |shape: Value| {
            arg(
                "Tensor(float)",
                json!([7, 8, 0, 1024, 4, "cuda:0"]),
                shape,
                None,
            )
        };
        node.inputs = vec![
            tensor(json!([1024])),
            tensor(json!([512, 1024])),
            tensor(json!([1024, 1024])),
            arg("Int", json!(1), json!([]), None),
            arg("Double", json!(-0.01), json!([]), None),
        ];
        let columns = Columns::of(&node);
        assert_eq!(
            Value::Array(columns.dims),
            json!([[1024], [512, 1024], [1024, 1024], [], []])
        );
        assert_eq!(
            columns.types,
            ["float", "float", "float", "Scalar", "Scalar"]
        );
        assert_eq!(columns.concrete, ["", "", "", "1", "-0.01"]);
        assert_eq!(columns.strides, None, "1.0.x records no strides");
    }

    #[test]
    fn lists_none_and_strides_follow_the_profilers_conventions() {
        let mut node = EtNode::named(1, "aten::sum");
        node.inputs = vec![
            arg(
                "Tensor(c10::Half)",
                json!([1, 2, 0, 6, 2, "cpu"]),
                json!([2, 3]),
                Some(json!([1, 2])),
            ),
            arg("GenericList[Int,Int]", json!([0, 1]), json!([[], []]), None),
            arg("Bool", json!(false), json!([]), None),
            arg("None", json!("<None>"), json!([]), None),
            arg(
                "Tensor(nullptr (uninitialized))",
                json!([0, 0, 0, 0, 0, "cpu"]),
                json!([]),
                None,
            ),
            arg(
                "GenericList[Tensor(float),Tensor(float)]",
                json!([[3, 4, 0, 2, 4, "cpu"], [5, 6, 0, 2, 4, "cpu"]]),
                json!([[2], [2]]),
                Some(json!([[1], [1]])),
            ),
        ];
        let columns = Columns::of(&node);
        assert_eq!(
            Value::Array(columns.dims),
            json!([[2, 3], [], [], [], [], [[2], [2]]])
        );
        assert_eq!(
            columns.types,
            ["c10::Half", "ScalarList", "Scalar", "", "", "TensorList"]
        );
        assert_eq!(columns.concrete, ["", "[0, 1]", "False", "", "", ""]);
        assert_eq!(
            columns.strides.map(Value::Array),
            Some(json!([[1, 2], [], [], [], [], [[1], [1]]]))
        );
    }
}
