//! PyTorch Execution Traces: both schema versions of the shared ETs (PARAM et_replay's test
//! inputs) and the torch.compile one read into one model, tied to their Kineto traces by
//! record-function ids, and what `classify --execution-trace` records with one.

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::json;

use replay_core::execution_trace::{self, link, EtError, ExecutionTrace, SchemaVersion, TensorRef};
use replay_core::trace;

use crate::common::{replay, repo_root};

fn shared_et(name: &str) -> PathBuf {
    repo_root().join("../shared/traces/et").join(name)
}

/// A bloom-tiny CPU step and its Execution Trace, captured together by
/// `scripts/capture_trace.py --zoo bloom-tiny --execution-trace` (torch 2.11).
fn bloom_tiny_pair() -> (PathBuf, PathBuf) {
    let dir = repo_root().join("crates/core/tests/data/et");
    (
        dir.join("bloom_tiny_cpu.json.gz"),
        dir.join("bloom_tiny_cpu.et.json.gz"),
    )
}

fn load(path: &Path) -> ExecutionTrace {
    execution_trace::load(path).unwrap_or_else(|e| panic!("{e}"))
}

fn first<'a>(et: &'a ExecutionTrace, name: &str) -> &'a execution_trace::EtNode {
    et.nodes
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no {name} in {}", et.path.display()))
}

#[test]
fn the_linear_et_of_schema_1_0_1_keeps_schemas_values_and_tensor_identities() {
    let et = load(&shared_et("linear_et.json.gz"));
    assert_eq!(et.schema, "1.0.1");
    assert_eq!(et.version, SchemaVersion::V1_0);
    assert_eq!((et.nodes.len(), et.pid), (931, Some(24248)));
    let addmm = first(&et, "aten::addmm");
    assert_eq!(
        addmm.op_schema.as_deref(),
        Some(
            "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar \
             alpha=1) -> Tensor"
        )
    );
    assert_eq!(
        (addmm.id, addmm.rf_id, addmm.parent),
        (14, Some(5), Some(9))
    );
    assert_eq!(addmm.overload(), Some(""));
    let types: Vec<&str> = addmm.inputs.iter().map(|a| a.ty.as_str()).collect();
    assert_eq!(
        types,
        [
            "Tensor(float)",
            "Tensor(float)",
            "Tensor(float)",
            "Int",
            "Int"
        ]
    );
    assert_eq!(
        addmm.inputs[0].tensors,
        [TensorRef {
            tensor_id: 7,
            storage_id: 8,
            offset: 0,
            numel: 1024,
            itemsize: 4,
            device: Some("cuda:0".into()),
        }]
    );
    assert_eq!(
        (&addmm.inputs[3].value, &addmm.inputs[4].value),
        (&json!(1), &json!(1))
    );
    assert_eq!(addmm.outputs[0].shape, json!([512, 1024]));
    // aten::t is a view: its output is another tensor on its input's storage.
    let t = first(&et, "aten::t");
    assert_eq!(t.overload(), Some(""));
    let (input, output) = (&t.inputs[0].tensors[0], &t.outputs[0].tensors[0]);
    assert_eq!(input.storage_id, output.storage_id);
    assert_ne!(input.tensor_id, output.tensor_id);
    // Every op node has a record-function id of its own.
    let ops: Vec<u64> = et
        .nodes
        .iter()
        .filter_map(|n| n.rf_id.filter(|&id| id > 0))
        .collect();
    let mut distinct = ops.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!((ops.len(), distinct.len()), (928, 928));
    assert_eq!(et.operators().count(), 710);
}

#[test]
fn the_resnet_et_of_schema_1_1_0_reads_the_same_fields_from_its_attrs() {
    let et = load(&shared_et("resnet_et.json.gz"));
    assert_eq!(et.schema, "1.1.0-chakra.0.0.4");
    assert_eq!(et.version, SchemaVersion::V1_1);
    assert_eq!(et.nodes.len(), 14392);
    let view = first(&et, "aten::view");
    assert_eq!(
        (view.id, view.rf_id, view.parent),
        (221, Some(7), Some(220))
    );
    assert_eq!(
        view.op_schema.as_deref(),
        Some("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    );
    assert_eq!(view.inputs[1].ty, "GenericList[Int]");
    assert_eq!(view.inputs[1].value, json!([-1]));
    assert_eq!(
        view.inputs[0].tensors[0].storage_id,
        view.outputs[0].tensors[0].storage_id
    );
    let convolutions: Vec<_> = et
        .nodes
        .iter()
        .filter(|n| n.name == "aten::convolution")
        .collect();
    assert_eq!(convolutions.len(), 159);
    assert!(convolutions
        .iter()
        .all(|n| n.op_schema.as_deref().is_some_and(
            |s| s.starts_with("aten::convolution(Tensor input, Tensor weight, Tensor? bias")
        )));
    // A tensor list keeps each element's identity.
    let cat = first(&et, "aten::cat");
    assert!(cat.inputs[0].ty.starts_with("GenericList[Tensor"));
    assert!(cat.inputs[0].tensors.len() >= 2, "{:?}", cat.inputs[0]);
}

#[test]
fn the_torch_compile_et_of_schema_1_1_1_keeps_strides_and_generated_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(shared_et("pt2_et.json.tar.gz"))
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("tar runs");
    assert!(status.success());
    let et = load(&dir.path().join("pt2_et.json"));
    assert_eq!(et.schema, "1.1.1-chakra.0.0.4");
    assert_eq!((et.version, et.nodes.len()), (SchemaVersion::V1_1, 20));
    let mm = first(&et, "aten::mm");
    assert_eq!(mm.overload(), Some("out"));
    let strides: Vec<_> = mm.inputs.iter().map(|a| a.strides.clone()).collect();
    assert_eq!(
        strides,
        [
            Some(json!([4, 1])),
            Some(json!([1, 4])),
            Some(json!([4, 1]))
        ]
    );
    // Inductor's extern kernel writes into its `out=` buffer: the output is that input.
    assert_eq!(mm.inputs[2].tensors, mm.outputs[0].tensors);
    let triton = first(&et, "triton_poi_fused_add_cos_neg_sin_0");
    assert_eq!(triton.kernel_backend.as_deref(), Some("triton"));
    assert!(triton
        .kernel_file
        .as_deref()
        .is_some_and(|f| f.ends_with(".py")));
    assert_eq!(triton.op_schema, None);
}

/// The shared Kineto traces were recorded in 2023 by a profiler that wrote no record-function
/// ids (every `args` lacks `Record function id`): their ETs are linked by op order and shapes
/// (`link_order`; the core's `execution_trace_order` tests check the links). The linear pair
/// is one run and links; the resnet pair is not even one model (ET: a ResNet-50 under DDP,
/// pid 1734239, 2024-06-30; Kineto: a ResNet-18, pid 23442, 2023-07-12) and is refused, as is
/// the linear ET beside the resnet trace.
#[test]
fn the_shared_kineto_traces_carry_no_record_function_ids_and_link_by_op_order_or_are_refused() {
    for (et_name, kineto_name, ops) in [
        ("resnet_et.json.gz", "resnet_kineto.json.gz", 39506),
        ("linear_et.json.gz", "resnet_kineto.json.gz", 39506),
    ] {
        let et = load(&shared_et(et_name));
        let kineto_path = shared_et(kineto_name);
        let kineto = trace::load(&kineto_path).unwrap();
        let error = link::link(&et, &kineto, &kineto_path).unwrap_err();
        assert!(matches!(error, EtError::NotThisTrace { .. }));
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "{} does not belong to {}: none of the Kineto trace's {ops} ops records a \
                 record-function id, and matched by op order and shapes",
                shared_et(et_name).display(),
                kineto_path.display()
            )),
            "{message}"
        );
    }
    linear_et_refused_beside(&shared_et("resnet_kineto.json.gz"), "resnet_kineto.json.gz");
    replay()
        .args(["classify", "--trace"])
        .arg(shared_et("linear_kineto.json.gz"))
        .arg("--execution-trace")
        .arg(shared_et("linear_et.json.gz"))
        .arg("--out")
        .arg(tempfile::tempdir().unwrap().path().join("s.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "710 of 37078 ops linked by op order and shapes (in step window, 710 of the \
             Execution Trace's 710 operators matched (0 not)",
        ));
}

#[test]
fn a_malformed_execution_trace_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (kineto, _) = bloom_tiny_pair();
    for (name, text, what) in [
        ("cut.et.json", "{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1", "invalid JSON"),
        ("kineto.et.json", "{\"traceEvents\": []}", "not an Execution Trace: no `schema`"),
        ("v9.et.json", "{\"schema\": \"9.0\", \"nodes\": []}", "schema 9.0 is not one"),
        (
            "node.et.json",
            "{\"schema\": \"1.1.0\", \"nodes\": [{\"id\": 5, \"name\": \"aten::mm\", \"inputs\": []}]}",
            "node 5 (aten::mm): `inputs` is an object of values, shapes and types",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        replay()
            .args(["classify", "--trace"])
            .arg(&kineto)
            .arg("--execution-trace")
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join("s.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(path.display().to_string()))
            .stderr(predicate::str::contains(what));
    }
}

#[test]
fn a_captured_pair_links_every_op_by_record_function_id() {
    let (kineto_path, et_path) = bloom_tiny_pair();
    let et = load(&et_path);
    assert!(et.schema.starts_with("1.1."), "{}", et.schema);
    let kineto = trace::load(&kineto_path).unwrap();
    let links = link::link(&et, &kineto, &kineto_path).unwrap();
    assert_eq!(links.kineto_ops, 357);
    assert_eq!(
        (
            links.kineto_ops_with_id,
            links.linked,
            links.name_mismatches,
            links.unknown_ids
        ),
        (357, 357, 0, 0)
    );
    // Every linked op is its node: same name, and where the node has a schema, the schema
    // is of that op.
    for &event in links.node_of_event.keys() {
        let node = links.node(&et, event).unwrap();
        let name = kineto.name(&kineto.events[event]);
        assert_eq!(node.name, name);
        if let Some(schema) = &node.op_schema {
            assert_eq!(
                execution_trace::operator_of_schema(schema),
                name,
                "{schema}"
            );
        }
    }
}

/// Recorded with `ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE` (as `replay
/// capture --execution-trace` sets it), every node with an integer input tensor records its
/// range, read by argument position.
#[test]
fn a_captured_pair_records_the_value_ranges_of_integer_inputs() {
    let (_, et_path) = bloom_tiny_pair();
    let et = load(&et_path);
    let embeddings: Vec<_> = et
        .nodes
        .iter()
        .filter(|n| n.name == "aten::embedding")
        .collect();
    assert!(!embeddings.is_empty());
    for node in &embeddings {
        // aten::embedding(Tensor weight, Tensor indices, ...): the float weight has no range;
        // the token ids are inside the table.
        let rows = node.inputs[0].shape[0].as_i64().unwrap();
        assert_eq!(node.input_ranges.len(), 1, "{:?}", node.input_ranges);
        let range = node.input_ranges[0];
        assert_eq!((range.input, range.element), (1, None));
        assert!(
            0 <= range.min && range.min <= range.max && range.max < rows,
            "{range:?}"
        );
    }
    // Only integer tensors get one: every ranged argument is an integer tensor.
    let ranged: Vec<_> = et
        .nodes
        .iter()
        .filter(|n| !n.input_ranges.is_empty())
        .collect();
    for node in &ranged {
        for range in &node.input_ranges {
            let ty = &node.inputs[range.input].ty;
            assert!(
                ty.contains("long") || ty.contains("int"),
                "{} input {}: {ty}",
                node.name,
                range.input
            );
        }
    }
    assert!(ranged.len() >= embeddings.len());
}

#[test]
fn an_execution_trace_of_another_run_is_refused_naming_both_files() {
    let (kineto_path, _) = bloom_tiny_pair();
    let kineto = trace::load(&kineto_path).unwrap();
    // The resnet ET has nodes for ids 1..357 too, but they are other ops.
    let et = load(&shared_et("resnet_et.json.gz"));
    let message = link::link(&et, &kineto, &kineto_path)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with(&format!(
            "{} does not belong to {}: of the Kineto trace's 357 ops with a record-function id, ",
            shared_et("resnet_et.json.gz").display(),
            kineto_path.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("they were recorded in different steps or runs"),
        "{message}"
    );
    linear_et_refused_beside(&kineto_path, "bloom_tiny_cpu.json.gz");
}

/// `classify --trace KINETO --execution-trace linear_et.json.gz` exits 2 saying the ET does
/// not belong to the trace, naming both files (`kineto_name` is how the message names KINETO).
fn linear_et_refused_beside(kineto: &std::path::Path, kineto_name: &str) {
    replay()
        .args(["classify", "--trace"])
        .arg(kineto)
        .arg("--execution-trace")
        .arg(shared_et("linear_et.json.gz"))
        .arg("--out")
        .arg(tempfile::tempdir().unwrap().path().join("s.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "linear_et.json.gz does not belong to",
        ))
        .stderr(predicate::str::contains(kineto_name));
}

#[test]
fn classify_records_each_ops_exact_schema_and_values() {
    let (kineto, et) = bloom_tiny_pair();
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (
        dir.path().join("with.json"),
        dir.path().join("without.json"),
    );
    replay()
        .args(["classify", "--trace"])
        .arg(&kineto)
        .arg("--execution-trace")
        .arg(&et)
        .arg("--out")
        .arg(&with)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "357 of 357 ops linked by record-function id",
        ));
    replay()
        .args(["classify", "--trace"])
        .arg(&kineto)
        .arg("--out")
        .arg(&without)
        .assert()
        .success();
    let with = replay_core::signature::read_file(&with).unwrap();
    let without = replay_core::signature::read_file(&without).unwrap();
    // The same signatures; only the op's schema and values are added.
    let ids = |f: &replay_core::signature::SignatureFile| {
        f.signatures
            .iter()
            .map(|s| s.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&with), ids(&without));
    assert!(without.source.execution_trace.is_none());
    let source = with.source.execution_trace.as_ref().unwrap();
    assert_eq!(source.signatures_linked, source.signatures_with_op);
    assert_eq!(source.invocations_linked, source.invocations);
    assert_eq!(source.signatures_with_schema, source.signatures_with_op);
    // The ranges of a signature are the union over its linked invocations' nodes.
    let et_nodes = load(&et);
    let embedding = with
        .signatures
        .iter()
        .find(|s| s.name == "aten::embedding")
        .unwrap();
    let recorded: Vec<_> = et_nodes
        .nodes
        .iter()
        .filter(|n| n.name == "aten::embedding")
        .flat_map(|n| n.input_ranges.iter().copied())
        .collect();
    let ranges = &embedding.op.as_ref().unwrap().input_ranges;
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    assert_eq!(
        (ranges[0].min, ranges[0].max),
        (
            recorded.iter().map(|r| r.min).min().unwrap(),
            recorded.iter().map(|r| r.max).max().unwrap()
        )
    );
    let with_ranges = with
        .signatures
        .iter()
        .filter(|s| s.op.as_ref().is_some_and(|op| !op.input_ranges.is_empty()))
        .count() as u64;
    assert_eq!(source.signatures_with_ranges, with_ranges);
    assert!(with_ranges >= 1);
    for signature in &with.signatures {
        let op = signature.op.as_ref().unwrap();
        let schema = op.schema.as_deref().unwrap();
        assert_eq!(
            execution_trace::operator_of_schema(schema),
            op.name,
            "{schema}"
        );
        assert!(
            !op.exact_inputs.is_empty() || schema.contains("()"),
            "{schema}"
        );
    }
    // A layer norm's scalars: the normalized shape and eps, as the model passed them.
    let layer_norm = with
        .signatures
        .iter()
        .find(|s| s.name == "aten::layer_norm")
        .unwrap();
    let op = layer_norm.op.as_ref().unwrap();
    assert!(op
        .schema
        .as_deref()
        .unwrap()
        .starts_with("aten::layer_norm(Tensor input, SymInt[] normalized_shape"));
    let values: Vec<Option<&serde_json::Value>> =
        op.exact_inputs.iter().map(|i| i.value.as_ref()).collect();
    assert_eq!(values[0], None, "the input tensor has no value");
    assert_eq!(values[1], Some(&json!([64])));
    assert!(
        values[4]
            .and_then(|v| v.as_f64())
            .is_some_and(|eps| eps > 0.0 && eps < 1e-3),
        "{values:?}"
    );
    // A file written before the fields existed still reads.
    let mut old: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("with.json")).unwrap()).unwrap();
    for signature in old["signatures"].as_array_mut().unwrap() {
        let op = signature["op"].as_object_mut().unwrap();
        op.remove("schema");
        op.remove("exact_inputs");
        op.remove("input_ranges");
    }
    old["source"]
        .as_object_mut()
        .unwrap()
        .remove("execution_trace");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, serde_json::to_vec(&old).unwrap()).unwrap();
    let back = replay_core::signature::read_file(&old_path).unwrap();
    assert_eq!(ids(&back), ids(&without));
    // And one classified with an ET before ranges were read.
    let mut before_ranges: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("with.json")).unwrap()).unwrap();
    for signature in before_ranges["signatures"].as_array_mut().unwrap() {
        signature["op"]
            .as_object_mut()
            .unwrap()
            .remove("input_ranges");
    }
    before_ranges["source"]["execution_trace"]
        .as_object_mut()
        .unwrap()
        .remove("signatures_with_ranges");
    std::fs::write(&old_path, serde_json::to_vec(&before_ranges).unwrap()).unwrap();
    let back = replay_core::signature::read_file(&old_path).unwrap();
    let source = back.source.execution_trace.unwrap();
    assert_eq!((source.linked_ops, source.signatures_with_ranges), (357, 0));
    assert!(back
        .signatures
        .iter()
        .all(|s| s.op.as_ref().is_some_and(|op| op.input_ranges.is_empty())));
}
