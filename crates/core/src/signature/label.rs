//! A signature's short, readable name: its op with the shapes and dtypes it was called
//! with (`aten::linear [1,5,1024]×[250880,1024] f32`), so that the five `aten::linear`
//! signatures of a model can be told apart at a glance; a copy or memset by its direction
//! and size.

use std::fmt::Write as _;

use super::call_site::CallSite;
use super::dtype::Dtype;
use super::op_inputs::OpInputs;
use super::schema::{RecordedInputs, Signature};

/// The label of `signature`: `op [sizes]×[sizes] dtypes` for work launched by an op whose
/// inputs were recorded, `name bytes` for a copy or memset, the bare name otherwise.
pub fn signature_label(signature: &Signature) -> String {
    if let Some(bytes) = signature
        .memcpy
        .map(|m| m.bytes)
        .or(signature.memset.map(|m| m.bytes))
    {
        return format!("{} {}", signature.name, bytes_text(bytes));
    }
    // A kernel is known by its op (the kernel's own name says little to a model's author);
    // a host op of a CPU-only trace is its own op.
    let op = signature
        .op
        .as_ref()
        .map_or(signature.name.as_str(), |op| op.name.as_str());
    let site = signature
        .op
        .as_ref()
        .map_or(CallSite::Eager, |op| CallSite::of_ancestry(&op.ancestry));
    match signature.inputs.as_ref().and_then(|i| shapes(op, i, site)) {
        Some(shapes) => format!("{op} {shapes}"),
        None => op.to_owned(),
    }
}

/// `[1,5,1024]×[250880,1024] f32`: the tensor arguments of `op` (less any leading inputs
/// TorchScript left on its stack, see [`OpInputs::arguments_of`]) and their distinct dtypes.
/// `None` when no tensor argument was recorded.
fn shapes(op: &str, inputs: &RecordedInputs, site: CallSite) -> Option<String> {
    let parsed = OpInputs::from_values(
        inputs.dims.as_ref(),
        inputs.types.as_ref(),
        inputs.strides.as_ref(),
        inputs.concrete.as_ref(),
    )?
    .at(site);
    let arguments = parsed.arguments_of(op);
    let mut sizes: Vec<String> = Vec::new();
    let mut dtypes: Vec<&'static str> = Vec::new();
    for index in 0..arguments.dims.len() {
        // Only real tensors: an omitted optional tensor records `[]` with no dtype.
        let Some(tensor) = arguments.tensor(index) else {
            continue;
        };
        let Some(dtype) = Dtype::from_recorded(tensor.type_name) else {
            continue;
        };
        let joined: Vec<String> = tensor.sizes.iter().map(i64::to_string).collect();
        sizes.push(format!("[{}]", joined.join(",")));
        let short = short_dtype(dtype);
        if !dtypes.contains(&short) {
            dtypes.push(short);
        }
    }
    if sizes.is_empty() {
        return None;
    }
    let mut out = sizes.join("×");
    let _ = write!(out, " {}", dtypes.join(","));
    Some(out)
}

/// The short spelling of a dtype in labels (`f32`, `bf16`, `i64`).
fn short_dtype(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Float32 => "f32",
        Dtype::Float64 => "f64",
        Dtype::Float16 => "f16",
        Dtype::BFloat16 => "bf16",
        Dtype::Int64 => "i64",
        Dtype::Int32 => "i32",
        Dtype::Int16 => "i16",
        Dtype::Int8 => "i8",
        Dtype::UInt8 => "u8",
        Dtype::Bool => "bool",
        Dtype::Complex32 => "c32",
        Dtype::Complex64 => "c64",
        Dtype::Complex128 => "c128",
        Dtype::Float8E4m3fn => "f8e4m3",
        Dtype::Float8E5m2 => "f8e5m2",
        Dtype::Float8E4m3fnuz => "f8e4m3fnuz",
        Dtype::Float8E5m2fnuz => "f8e5m2fnuz",
    }
}

/// `512 B`, `4.0 KiB`, `1.5 MiB`.
fn bytes_text(bytes: u64) -> String {
    crate::memory_size::size_text_to(bytes, 1)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::signature::schema::{LaunchingOp, MemcpyKind, MemcpyParams, MemoryKind};

    /// The committed signature file of the real BERT trace.
    fn bert() -> Vec<Signature> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../signatures/h100_bert_small_infer.json");
        crate::signature::read_file(&path)
            .expect("committed signature file reads")
            .signatures
    }

    fn with_inputs(
        template: &Signature,
        op: &str,
        dims: serde_json::Value,
        types: serde_json::Value,
    ) -> Signature {
        Signature {
            op: Some(LaunchingOp {
                name: op.into(),
                ancestry: Vec::new(),
                module: None,
                ancestor_inputs: Vec::new(),
                schema: None,
                exact_inputs: Vec::new(),
                input_ranges: Vec::new(),
            }),
            inputs: Some(RecordedInputs {
                dims: Some(dims),
                types: Some(types),
                strides: None,
                concrete: None,
            }),
            memcpy: None,
            memset: None,
            ..template.clone()
        }
    }

    #[test]
    fn ops_are_labelled_with_their_tensor_shapes_and_dtypes() {
        let signatures = bert();
        // The real addmm of the BERT trace: bias, input, weight, and two scalars.
        let addmm = signatures
            .iter()
            .find(|s| s.op.as_ref().is_some_and(|o| o.name == "aten::addmm"))
            .expect("an addmm");
        let label = signature_label(addmm);
        assert!(label.starts_with("aten::addmm ["), "{label}");
        assert!(label.ends_with(" bf16"), "{label}");
        assert_eq!(label.matches('×').count(), 2, "three tensors: {label}");

        let template = &signatures[1];
        let linear = with_inputs(
            template,
            "aten::linear",
            json!([[1, 5, 1024], [250880, 1024], []]),
            json!(["float", "float", ""]),
        );
        assert_eq!(
            signature_label(&linear),
            "aten::linear [1,5,1024]×[250880,1024] f32"
        );
        // TorchScript's extra leading input (the residual stream) is not an argument.
        let stacked = with_inputs(
            template,
            "aten::linear",
            json!([[1, 16, 768], [1, 16, 768], [768, 768], [768]]),
            json!(["float", "float", "float", "float"]),
        );
        assert_eq!(
            signature_label(&stacked),
            "aten::linear [1,16,768]×[768,768]×[768] f32"
        );
        let mixed = with_inputs(
            template,
            "aten::embedding",
            json!([[250880, 1024], [1, 5], [], []]),
            json!(["c10::BFloat16", "long int", "Int", "Bool"]),
        );
        assert_eq!(
            signature_label(&mixed),
            "aten::embedding [250880,1024]×[1,5] bf16,i64"
        );
        // Nothing recorded: the op alone.
        let bare = Signature {
            inputs: None,
            ..linear.clone()
        };
        assert_eq!(signature_label(&bare), "aten::linear");
    }

    #[test]
    fn copies_are_labelled_with_their_size() {
        let template = &bert()[0];
        let copy = Signature {
            name: "Memcpy HtoD (Pageable -> Device)".into(),
            memcpy: Some(MemcpyParams {
                kind: MemcpyKind::HtoD,
                src: MemoryKind::Pageable,
                dst: MemoryKind::Device,
                bytes: 3 * 1024 * 1024 / 2,
            }),
            ..template.clone()
        };
        assert_eq!(
            signature_label(&copy),
            "Memcpy HtoD (Pageable -> Device) 1.5 MiB"
        );
        assert_eq!(bytes_text(1), "1 B");
        assert_eq!(bytes_text(4096), "4.0 KiB");
    }
}
