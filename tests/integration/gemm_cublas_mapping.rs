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

use crate::cublas_reference;

use crate::common;

use cublas_reference::{gemm, gemm_strided_batched, GemmCall, Transpose};
use replay::replay::tier2_gemm::cuda::column_major_elements;
use replay::replay::tier2_gemm::TorchGemmTarget;
use replay::signature::gemm::gemm_from_op;
use replay::signature::kernel_kind::blas_transposes_in_kernel_name;
use replay::signature::op_inputs::OpInputs;
use replay::signature::{self, BlasOp, GemmKernelRole, GemmOperand, GemmParams, Tier};
use replay::trace;
use tch::{Device, Kind, Tensor};

/// libtorch kind of a recorded C++ type name.
fn kind_of(type_name: &str) -> Kind {
    match type_name {
        "float" => Kind::Float,
        "double" => Kind::Double,
        "c10::Half" => Kind::Half,
        "c10::BFloat16" => Kind::BFloat16,
        other => panic!("no test dtype for {other}"),
    }
}

fn kind_of_dtype(dtype: &str) -> Kind {
    match dtype {
        "float32" => Kind::Float,
        "float64" => Kind::Double,
        "float16" => Kind::Half,
        "bfloat16" => Kind::BFloat16,
        other => panic!("no test dtype for {other}"),
    }
}

/// Largest difference from the f64 reference, relative to the largest value, that rounding
/// alone explains: inputs are exact in every dtype, the result is rounded to the dtype
/// (bf16 keeps 8 significant bits, fp16 11) and libtorch sums in fp32. A wrong layout gives
/// errors of order 1.
fn tolerance(kind: Kind) -> f64 {
    match kind {
        Kind::Double => 1e-12,
        Kind::Float => 1e-5,
        Kind::Half => 3e-3,
        Kind::BFloat16 => 2e-2,
        other => panic!("no tolerance for {other:?}"),
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    let flat = t.to_kind(Kind::Double).contiguous().view([-1]);
    Vec::<f64>::try_from(&flat).expect("f64 tensor to Vec")
}

/// Elements of storage a view with these sizes and strides spans.
fn span(sizes: &[i64], strides: &[i64]) -> i64 {
    if sizes.contains(&0) {
        return 0;
    }
    1 + sizes
        .iter()
        .zip(strides)
        .map(|(&size, &stride)| (size - 1) * stride)
        .sum::<i64>()
}

/// A tensor as PyTorch holds it: flat storage and a strided view of it.
struct Strided {
    storage: Tensor,
    view: Tensor,
}

fn strided(kind: Kind, sizes: &[i64], strides: &[i64]) -> Strided {
    let _turn = common::torch_generator_turn();
    let storage = Tensor::randn([span(sizes, strides)], (Kind::Float, Device::Cpu)).to_kind(kind);
    let view = storage.as_strided(sizes, strides, 0);
    Strided { storage, view }
}

/// Runs the call replay issues for `p` (`tier2_gemm::cuda::CublasGemmTarget::issue_one`:
/// `p.cublas`, alpha, and beta only when there is an addend) on the host reference.
/// `a_memory`/`b_memory` are the storages of the row-major operands A and B; `c_start` is
/// the row-major result's memory before the call (PyTorch's addmm copies the addend there).
/// Returns that memory after the call.
fn run_replays_cublas_call(
    p: &GemmParams,
    a_memory: &[f64],
    b_memory: &[f64],
    c_start: Vec<f64>,
) -> Result<Vec<f64>, String> {
    let c = &p.cublas;
    let memory_of = |operand: GemmOperand| match operand {
        GemmOperand::RowMajorA => a_memory,
        GemmOperand::RowMajorB => b_memory,
    };
    let transpose = |op: BlasOp| match op {
        BlasOp::N => Transpose::N,
        BlasOp::T => Transpose::T,
    };
    // Stored before op: A is m x k for N, k x m for T; B is k x n for N, n x k for T.
    let (a_rows, a_cols) = match c.transa {
        BlasOp::N => (c.m, c.k),
        BlasOp::T => (c.k, c.m),
    };
    let (b_rows, b_cols) = match c.transb {
        BlasOp::N => (c.k, c.n),
        BlasOp::T => (c.n, c.k),
    };
    let allocated =
        |rows, cols, ld, stride| column_major_elements(rows, cols, ld, c.batch, stride) as usize;
    let a_len = allocated(a_rows, a_cols, c.lda, c.stride_a);
    let b_len = allocated(b_rows, b_cols, c.ldb, c.stride_b);
    let c_len = allocated(c.m, c.n, c.ldc, c.stride_c);
    let a_memory = memory_of(c.operand_a);
    let b_memory = memory_of(c.operand_b);
    let a_buffer = &a_memory[..a_len.min(a_memory.len())];
    let b_buffer = &b_memory[..b_len.min(b_memory.len())];
    let result_len = c_start.len();
    if c_len < result_len {
        return Err(format!(
            "replay allocates {c_len} elements for C, the result has {result_len}"
        ));
    }
    let mut c_buffer = c_start;
    c_buffer.resize(c_len, f64::NAN);
    let call = GemmCall {
        transa: transpose(c.transa),
        transb: transpose(c.transb),
        m: c.m as usize,
        n: c.n as usize,
        k: c.k as usize,
        alpha: p.alpha,
        lda: c.lda as usize,
        stride_a: c.stride_a.unwrap_or(0) as usize,
        ldb: c.ldb as usize,
        stride_b: c.stride_b.unwrap_or(0) as usize,
        beta: if p.bias { p.beta } else { 0.0 },
        ldc: c.ldc as usize,
        stride_c: c.stride_c.unwrap_or(0) as usize,
        batch: c.batch as usize,
    };
    if c.batch > 1 {
        gemm_strided_batched(&call, a_buffer, b_buffer, &mut c_buffer)?;
    } else {
        gemm(&call, a_buffer, b_buffer, &mut c_buffer)?;
    }
    c_buffer.truncate(result_len);
    Ok(c_buffer)
}

fn assert_close(got: &[f64], want: &[f64], kind: Kind, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: result sizes");
    let scale = want.iter().fold(1e-12f64, |m, v| m.max(v.abs()));
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    let relative = worst / scale;
    assert!(
        relative <= tolerance(kind),
        "{what}: the cuBLAS call differs from libtorch by {relative:.3e} of the largest value \
         (tolerance {:.0e} for {kind:?})",
        tolerance(kind)
    );
}

/// The row-major operand matrices of an op (`A[.., m, k]`, `B[.., k, n]`) and its addend,
/// as views of the recorded tensors.
struct OpOperands {
    a: Tensor,
    b: Tensor,
    a_storage: Tensor,
    b_storage: Tensor,
    addend: Option<Tensor>,
}

/// The memory cuBLAS is handed for a row-major operand: the recorded tensor's own storage
/// when the operand is a view of it with one of its two matrix strides 1 (ATen's
/// `prepare_matrix_for_cublas` uses it in place), else the contiguous copy ATen makes (a
/// `reshape` that cannot be a view, or a layout cuBLAS cannot read).
fn cublas_memory(view: &Tensor, storage: &Tensor) -> Vec<f64> {
    let strides = view.stride();
    let rank = strides.len();
    let start = storage.data_ptr() as usize;
    let end = start + storage.numel() * storage.kind().elt_size_in_bytes();
    let aliases = (start..end.max(start + 1)).contains(&(view.data_ptr() as usize));
    if aliases && (strides[rank - 1] == 1 || strides[rank - 2] == 1) {
        values(storage)
    } else {
        values(&view.contiguous())
    }
}

/// Recorded inputs of an op, as the profiler writes them (JSON text of each field).
struct Recorded<'a> {
    op: &'a str,
    dims: &'a str,
    types: &'a str,
    strides: &'a str,
    concrete: &'a str,
}

/// Builds the recorded tensors, runs the op through libtorch and replay's cuBLAS call
/// through the reference on the same memory, and compares.
fn check_recorded_op(case: &str, r: &Recorded<'_>, name_transposes: Option<(BlasOp, BlasOp)>) {
    let inputs = OpInputs::parse(
        Some(r.dims),
        Some(r.types),
        Some(r.strides),
        Some(r.concrete),
    )
    .unwrap_or_else(|| panic!("{case}: inputs parse"));
    let p = gemm_from_op(r.op, &inputs, GemmKernelRole::Main, name_transposes)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let dims: Vec<Vec<i64>> = serde_json::from_str(r.dims).expect("dims");
    let strides: Vec<Vec<i64>> = serde_json::from_str(r.strides).expect("strides");
    let types: Vec<String> = serde_json::from_str(r.types).expect("types");
    let concrete: Vec<String> = serde_json::from_str(r.concrete).expect("concrete");
    let scalar = |index: usize| -> f64 {
        concrete
            .get(index)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1.0)
    };
    let tensors: Vec<Option<Strided>> = (0..dims.len())
        .map(|i| {
            (!dims[i].is_empty() && types[i] != "Scalar")
                .then(|| strided(kind_of(&types[i]), &dims[i], &strides[i]))
        })
        .collect();
    let t = |i: usize| tensors[i].as_ref().expect("tensor argument");
    let _guard = tch::no_grad_guard();
    let (operands, torch_result) = match r.op {
        "aten::mm" | "aten::bmm" | "aten::matmul" | "aten::mv" => {
            let (a, b) = (t(0), t(1));
            let result = match r.op {
                "aten::mm" => a.view.mm(&b.view),
                "aten::bmm" => a.view.bmm(&b.view),
                "aten::mv" => a.view.mv(&b.view),
                _ => a.view.matmul(&b.view),
            };
            // As matrices: a vector on the right is a column, one on the left a row; a
            // left operand over a 2-D (or vector) right one folds its batch into rows.
            let (a_rank, b_rank) = (dims[0].len(), dims[1].len());
            let a_matrix = if a_rank == 1 {
                a.view.unsqueeze(0)
            } else if a_rank > 2 && b_rank <= 2 {
                a.view.reshape([-1, dims[0][a_rank - 1]])
            } else {
                a.view.shallow_clone()
            };
            let b_matrix = if b_rank == 1 {
                b.view.unsqueeze(-1)
            } else if a_rank > 2 && b_rank > 2 {
                b.view
                    .reshape([-1, dims[1][b_rank - 2], dims[1][b_rank - 1]])
            } else {
                b.view.shallow_clone()
            };
            // Batches of more than one dimension are merged by reshape (a view, or a copy).
            let a_matrix = if a_rank > 2 && b_rank > 2 {
                a.view
                    .reshape([-1, dims[0][a_rank - 2], dims[0][a_rank - 1]])
            } else {
                a_matrix
            };
            let operands = OpOperands {
                a: a_matrix,
                b: b_matrix,
                a_storage: a.storage.shallow_clone(),
                b_storage: b.storage.shallow_clone(),
                addend: None,
            };
            (operands, result)
        }
        "aten::addmm" | "aten::baddbmm" | "aten::addmv" => {
            let (addend, a, b) = (t(0), t(1), t(2));
            let (beta, alpha) = (scalar(3), scalar(4));
            let result = if r.op == "aten::baddbmm" {
                addend.view.baddbmm(&a.view, &b.view, beta, alpha)
            } else if r.op == "aten::addmv" {
                &addend.view * beta + a.view.mv(&b.view) * alpha
            } else if (beta, alpha) == (1.0, 1.0) {
                addend.view.addmm(&a.view, &b.view)
            } else {
                // tch's addmm takes no beta/alpha: the op's definition, in its dtype.
                &addend.view * beta + a.view.mm(&b.view) * alpha
            };
            let b_matrix = if r.op == "aten::addmv" {
                b.view.unsqueeze(-1)
            } else {
                b.view.shallow_clone()
            };
            let operands = OpOperands {
                a: a.view.shallow_clone(),
                b: b_matrix,
                a_storage: a.storage.shallow_clone(),
                b_storage: b.storage.shallow_clone(),
                addend: Some(addend.view.shallow_clone()),
            };
            (operands, result)
        }
        "aten::linear" => {
            // B is weight^T: the weight's memory, read by columns.
            let (input, weight) = (t(0), t(1));
            let bias = tensors.get(2).and_then(Option::as_ref);
            let result = input
                .view
                .linear(&weight.view, bias.map(|b| b.view.shallow_clone()));
            let k = *dims[0].last().expect("input has dims");
            let operands = OpOperands {
                a: input.view.reshape([-1, k]),
                b: weight.view.tr(),
                a_storage: input.storage.shallow_clone(),
                b_storage: weight.storage.shallow_clone(),
                addend: bias.map(|b| b.view.shallow_clone()),
            };
            (operands, result)
        }
        other => panic!("{case}: no libtorch call for {other} in this test"),
    };
    let want = values(&torch_result);
    let c_start = match &operands.addend {
        Some(addend) => values(&addend.expand(torch_result.size(), false)),
        None => vec![0.0; want.len()],
    };
    let got = run_replays_cublas_call(
        &p,
        &cublas_memory(&operands.a, &operands.a_storage),
        &cublas_memory(&operands.b, &operands.b_storage),
        c_start,
    )
    .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_close(&got, &want, torch_result.kind(), case);
}

/// Builds the operands from `p`'s row-major fields as replay documents and lays them out
/// (`trans_*`: stored by columns, `ld*` between rows/columns, `stride_*` between batch
/// entries), checks that replay's CPU replay builds the same views, and compares the
/// cuBLAS call on that memory with libtorch's product.
fn check_replay_layout(case: &str, p: &GemmParams) {
    let view_of = |rows: u64, cols: u64, transposed: bool, ld: u64, stride: Option<u64>| {
        let (rows, cols, ld) = (rows as i64, cols as i64, ld as i64);
        let matrix = if transposed { [1, ld] } else { [ld, 1] };
        if p.batch > 1 {
            let stride = stride.unwrap_or_else(|| panic!("{case}: batched without a stride"));
            (
                vec![p.batch as i64, rows, cols],
                vec![stride as i64, matrix[0], matrix[1]],
            )
        } else {
            (vec![rows, cols], matrix.to_vec())
        }
    };
    let (a_sizes, a_strides) = view_of(p.m, p.k, p.trans_a, p.lda, p.stride_a);
    let (b_sizes, b_strides) = view_of(p.k, p.n, p.trans_b, p.ldb, p.stride_b);
    let a = strided(kind_of_dtype(&p.dtype_a), &a_sizes, &a_strides);
    let b = strided(kind_of_dtype(&p.dtype_b), &b_sizes, &b_strides);
    let out_kind = kind_of_dtype(&p.dtype_out);
    let bias = p.bias.then(|| {
        let _turn = common::torch_generator_turn();
        Tensor::randn([p.n as i64], (Kind::Float, Device::Cpu)).to_kind(out_kind)
    });

    // The target draws its operands from libtorch's generator.
    let mut target = {
        let _turn = common::torch_generator_turn();
        TorchGemmTarget::new(p, Device::Cpu)
    }
    .unwrap_or_else(|e| panic!("{case}: replay's CPU GEMM: {e}"));
    let (replay_a, replay_b, _) = target
        .operands_and_result()
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(
        (
            replay_a.size(),
            replay_a.stride(),
            replay_b.size(),
            replay_b.stride()
        ),
        (
            a_sizes.clone(),
            a_strides.clone(),
            b_sizes.clone(),
            b_strides.clone()
        ),
        "{case}: replay's CPU operands are laid out as GemmParams describes"
    );

    let _guard = tch::no_grad_guard();
    let product = if p.batch > 1 {
        a.view.bmm(&b.view)
    } else {
        a.view.mm(&b.view)
    };
    let mut want_tensor = product.to_kind(Kind::Double) * p.alpha;
    let mut c_start = vec![0.0; want_tensor.numel()];
    if let Some(bias) = &bias {
        let bias = bias.to_kind(Kind::Double);
        c_start = values(&bias.expand(want_tensor.size(), false));
        want_tensor += bias * p.beta;
    }
    let got = run_replays_cublas_call(p, &values(&a.storage), &values(&b.storage), c_start)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_close(&got, &values(&want_tensor), out_kind, case);
}

/// Shapes are small; each case names what it covers.
fn check(case: &str, op: &str, dims: &str, types: &str, strides: &str, concrete: &str) {
    let recorded = Recorded {
        op,
        dims,
        types,
        strides,
        concrete,
    };
    check_recorded_op(case, &recorded, None);
    let inputs = OpInputs::parse(Some(dims), Some(types), Some(strides), Some(concrete))
        .expect("inputs parse");
    let p = gemm_from_op(op, &inputs, GemmKernelRole::Main, None).expect("gemm");
    check_replay_layout(case, &p);
}

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
