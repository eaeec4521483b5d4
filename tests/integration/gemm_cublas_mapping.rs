//! The cuBLAS call replay derives for a GEMM (`GemmParams.cublas`) computes the op's product,
//! proven without a GPU: the call is run through a host reference of cuBLAS's column-major
//! semantics (`cublas_reference`, written from the cuBLAS documentation) on the very memory
//! PyTorch's operands occupy, and compared with libtorch's own result on the CPU.
//!
//! Two memories are used:
//! - the op's **recorded** tensors (sizes and strides from `Input Dims`/`Input Strides`):
//!   proves the whole derivation, from the trace's strides to the column-major call;
//! - the operands as **replay** lays them out from `GemmParams`' row-major fields (as
//!   `tier2_gemm::TorchGemmTarget` allocates them on the CPU): proves that the two halves of
//!   a `GemmParams`, row-major and `cublas`, describe the same product. This one also covers
//!   traces without strides, whose layout comes from the kernel name.
//!
//! The buffers handed to the reference are cut to the sizes replay's `CublasGemmTarget`
//! allocates (`column_major_elements`), so a call reading past them fails here as well.
//! This file holds the cases; the checker is `gemm_cublas_check`.

use crate::common;
use crate::gemm_cublas_check::{check, check_recorded_op, check_replay_layout, Recorded};
use replay::signature::gemm::gemm_from_op;
use replay::signature::kernel_kind::blas_transposes_in_kernel_name;
use replay::signature::op_inputs::OpInputs;
use replay::signature::{self, Tier};
use replay::trace;

#[test]
fn nn_nt_tn_tt_products_match_libtorch() {
    let f = r#"["float", "float"]"#;
    let none = r#"["", ""]"#;
    check(
        "NN",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[7, 1], [3, 1]]",
        none,
    );
    // B = X.t(): stored by columns.
    check(
        "B transposed",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[7, 1], [1, 7]]",
        none,
    );
    check(
        "A transposed",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[1, 5], [3, 1]]",
        none,
    );
    check(
        "both transposed",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[1, 5], [1, 7]]",
        none,
    );
}

#[test]
fn padded_leading_dimensions_match_libtorch() {
    let f = r#"["float", "float"]"#;
    let none = r#"["", ""]"#;
    // Rows 11 apart (a column slice of a wider matrix), and B by columns 9 apart.
    check(
        "padded A rows",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[11, 1], [3, 1]]",
        none,
    );
    check(
        "padded B columns",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[7, 1], [1, 9]]",
        none,
    );
    check(
        "padded A columns",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[1, 8], [1, 9]]",
        none,
    );
    // h100_vit_infer's CLS-token rows x[:, 0] of a [4, 197, 768] tensor: ld 151296 (k cut to
    // 96 and n to 40 to keep the naive reference quick; the leading dimension is the trace's).
    check(
        "ViT CLS rows, ld 151296",
        "aten::addmm",
        "[[40], [4, 96], [96, 40], [], []]",
        r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
        "[[1], [151296, 1], [1, 96], [], []]",
        r#"["", "", "", "1", "1"]"#,
    );
    // Neither stride is 1: PyTorch copies the operand to a contiguous matrix first.
    check(
        "copied A",
        "aten::mm",
        "[[5, 7], [7, 3]]",
        f,
        "[[14, 2], [3, 1]]",
        none,
    );
}

#[test]
fn batched_strided_products_match_libtorch() {
    let f = r#"["float", "float"]"#;
    let none = r#"["", ""]"#;
    check(
        "bmm NN",
        "aten::bmm",
        "[[3, 5, 7], [3, 7, 4]]",
        f,
        "[[35, 7, 1], [28, 4, 1]]",
        none,
    );
    // B by columns, padded (ld 10), batch entries 40 apart; A's entries 50 apart.
    check(
        "bmm padded, transposed B",
        "aten::bmm",
        "[[3, 5, 7], [3, 7, 4]]",
        f,
        "[[50, 7, 1], [40, 1, 10]]",
        none,
    );
    check(
        "baddbmm beta 0.5 alpha 2",
        "aten::baddbmm",
        "[[3, 5, 4], [3, 5, 7], [3, 7, 4], [], []]",
        r#"["float", "float", "float", "Scalar", "Scalar"]"#,
        "[[20, 4, 1], [35, 1, 5], [28, 4, 1], [], []]",
        r#"["", "", "", "0.5", "2"]"#,
    );
    // A right operand broadcast over the batch (batch stride 0).
    check(
        "matmul broadcast B",
        "aten::matmul",
        "[[3, 5, 7], [1, 7, 4]]",
        f,
        "[[35, 7, 1], [28, 4, 1]]",
        none,
    );
    check(
        "matmul 4-D",
        "aten::matmul",
        "[[2, 3, 5, 7], [2, 3, 7, 4]]",
        f,
        "[[105, 35, 7, 1], [84, 28, 1, 7]]",
        none,
    );
    // Batch dimensions swapped (x.transpose(0, 1) of a contiguous [3, 2, 5, 7]): they do
    // not merge into one batch stride, so libtorch's reshape copies the operand.
    check(
        "matmul 4-D, batch dimensions transposed",
        "aten::matmul",
        "[[2, 3, 5, 7], [2, 3, 7, 4]]",
        f,
        "[[35, 70, 7, 1], [84, 28, 1, 7]]",
        none,
    );
}

#[test]
fn addends_and_scalars_match_libtorch() {
    let t = r#"["float", "float", "float", "Scalar", "Scalar"]"#;
    check(
        "addmm beta 1",
        "aten::addmm",
        "[[3], [5, 7], [7, 3], [], []]",
        t,
        "[[1], [7, 1], [1, 7], [], []]",
        r#"["", "", "", "1", "1"]"#,
    );
    check(
        "addmm beta 0.5 alpha 2, full addend",
        "aten::addmm",
        "[[5, 3], [5, 7], [7, 3], [], []]",
        t,
        "[[3, 1], [7, 1], [3, 1], [], []]",
        r#"["", "", "", "0.5", "2"]"#,
    );
    check(
        "linear with bias, 3-D input",
        "aten::linear",
        "[[2, 5, 7], [4, 7], [4]]",
        r#"["float", "float", "float"]"#,
        "[[35, 7, 1], [7, 1], [1]]",
        r#"["", "", ""]"#,
    );
    check(
        "addmv beta 0.5 alpha 2, strided vector",
        "aten::addmv",
        "[[5], [5, 7], [7], [], []]",
        r#"["float", "float", "float", "Scalar", "Scalar"]"#,
        "[[1], [7, 1], [3], [], []]",
        r#"["", "", "", "0.5", "2"]"#,
    );
}

#[test]
fn vector_and_folded_products_match_libtorch() {
    let f = r#"["float", "float"]"#;
    let none = r#"["", ""]"#;
    check("mv", "aten::mv", "[[5, 7], [7]]", f, "[[7, 1], [1]]", none);
    check(
        "mv, A transposed",
        "aten::mv",
        "[[5, 7], [7]]",
        f,
        "[[1, 5], [2]]",
        none,
    );
    check(
        "matmul by a vector",
        "aten::matmul",
        "[[3, 5, 7], [7]]",
        f,
        "[[35, 7, 1], [1]]",
        none,
    );
    check(
        "matmul of a vector over a batch",
        "aten::matmul",
        "[[7], [3, 7, 4]]",
        f,
        "[[1], [28, 4, 1]]",
        none,
    );
    check(
        "matmul folding a 3-D left operand",
        "aten::matmul",
        "[[2, 5, 7], [7, 4]]",
        f,
        "[[35, 7, 1], [1, 7]]",
        none,
    );
    // The batch and row dimensions swapped (x.transpose(0, 1) of a contiguous [5, 2, 7]):
    // they do not fold into one row stride, so libtorch's reshape copies the input.
    check(
        "matmul folding a transposed 3-D left operand",
        "aten::matmul",
        "[[2, 5, 7], [7, 4]]",
        f,
        "[[7, 14, 1], [4, 1]]",
        none,
    );
    check(
        "linear on a transposed 3-D input",
        "aten::linear",
        "[[2, 5, 7], [4, 7], [4]]",
        r#"["float", "float", "float"]"#,
        "[[7, 14, 1], [7, 1], [1]]",
        r#"["", "", ""]"#,
    );
}

#[test]
fn half_and_bfloat16_products_match_libtorch() {
    for (dtype, name) in [("c10::Half", "fp16"), ("c10::BFloat16", "bf16")] {
        check(
            &format!("{name} linear-shaped addmm"),
            "aten::addmm",
            "[[24], [9, 32], [32, 24], [], []]",
            &format!(r#"["{dtype}", "{dtype}", "{dtype}", "Scalar", "Scalar"]"#),
            "[[1], [32, 1], [1, 32], [], []]",
            r#"["", "", "", "1", "1"]"#,
        );
        check(
            &format!("{name} mm, A transposed"),
            "aten::mm",
            "[[9, 32], [32, 24]]",
            &format!(r#"["{dtype}", "{dtype}"]"#),
            "[[1, 9], [24, 1]]",
            r#"["", ""]"#,
        );
    }
}

/// Caps on the shrunk shapes of the real signatures: the naive f64 reference would need
/// seconds for the largest ones (BERT's 141 x 30522 x 512 vocabulary projection).
const MAX_M: i64 = 64;
const MAX_N: i64 = 96;

/// `inputs` with m and n cut to at most [`MAX_M`] x [`MAX_N`]: only sizes change, never
/// strides, types, scalars, transposes or k. A dense layout stays dense (or becomes padded,
/// with the trace's leading dimension) and k, the length each dot product runs over, stays
/// the trace's.
fn shrink(case: &str, op: &str, dims: &serde_json::Value) -> serde_json::Value {
    let mut dims = dims.clone();
    let (a, b, addend) = match op {
        "aten::mm" => (0, 1, None),
        "aten::addmm" => (1, 2, Some(0)),
        other => panic!("{case}: teach `shrink` the arguments of {other}"),
    };
    let size = |dims: &serde_json::Value, arg: usize, dim: usize| {
        dims[arg][dim].as_i64().expect("a recorded size")
    };
    let n = size(&dims, b, 1);
    dims[a][0] = size(&dims, a, 0).min(MAX_M).into();
    dims[b][1] = n.min(MAX_N).into();
    if let Some(addend) = addend {
        let addend_dims = dims[addend].as_array_mut().expect("addend dims");
        if let Some(last) = addend_dims.last_mut() {
            if last.as_i64() == Some(n) {
                *last = n.min(MAX_N).into();
            }
        }
        if addend_dims.len() == 2 {
            addend_dims[0] = addend_dims[0].as_i64().expect("size").min(MAX_M).into();
        }
    }
    dims
}

#[test]
fn every_gemm_signature_of_the_shared_traces_matches_libtorch() {
    let traces = common::all_shared_traces();
    let mut checked = Vec::new();
    for path in &traces {
        let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
        let file = signature::classify(&trace, path);
        let trace_name = path.file_name().unwrap().to_string_lossy().into_owned();
        for s in file.signatures.iter().filter(|s| s.tier == Tier::Gemm) {
            let (Some(params), Some(op), Some(inputs)) = (&s.gemm, &s.op, &s.inputs) else {
                continue;
            };
            let case = format!("{trace_name}: {} {}", op.name, s.name);
            let text = |v: &Option<serde_json::Value>| v.as_ref().map(|v| v.to_string());
            let dims = inputs.dims.as_ref().expect("recorded dims");
            let shrunk_dims = shrink(&case, &op.name, dims).to_string();
            let (types, strides, concrete) = (
                text(&inputs.types),
                text(&inputs.strides),
                text(&inputs.concrete),
            );
            let name_transposes = blas_transposes_in_kernel_name(&s.name);
            let shrunk_inputs = OpInputs::parse(
                Some(&shrunk_dims),
                types.as_deref(),
                strides.as_deref(),
                concrete.as_deref(),
            )
            .expect("shrunk inputs parse");
            let shrunk = gemm_from_op(&op.name, &shrunk_inputs, params.role, name_transposes)
                .unwrap_or_else(|e| panic!("{case}: shrunk: {e}"));
            assert_eq!(
                (
                    shrunk.cublas.transa,
                    shrunk.cublas.transb,
                    shrunk.k,
                    shrunk.bias
                ),
                (
                    params.cublas.transa,
                    params.cublas.transb,
                    params.k,
                    params.bias
                ),
                "{case}: shrinking keeps the call's structure"
            );
            check_replay_layout(&case, &shrunk);
            // With recorded strides, also the memory the op's own tensors occupy.
            if let (Some(types), Some(strides), Some(concrete)) = (&types, &strides, &concrete) {
                let recorded = Recorded {
                    op: &op.name,
                    dims: &shrunk_dims,
                    types,
                    strides,
                    concrete,
                };
                check_recorded_op(&case, &recorded, name_transposes);
            }
            checked.push(case);
        }
    }
    // bert 4, vit 4, the CUDA-graph training trace 6, mi250 2, resnet50 5 (as classified today).
    assert!(
        checked.len() >= 21,
        "GEMM signatures checked: {}\n{}",
        checked.len(),
        checked.join("\n")
    );
}
