//! The checker behind `gemm_cublas_mapping`'s cases: a GEMM op as recorded (its dims, types,
//! strides and scalars) is turned into replay's `GemmParams`, and its cuBLAS call is run through
//! the host reference of cuBLAS (`cublas_reference`) on the memory PyTorch's operands occupy,
//! then on the layout replay allocates, each against libtorch's own product on the CPU.

use crate::cublas_reference;

use crate::common;

use cublas_reference::{gemm, gemm_strided_batched, GemmCall, Transpose};
use replay::replay::tier2_gemm::cuda::column_major_elements;
use replay::replay::tier2_gemm::TorchGemmTarget;
use replay::replay::tier3_tensors::storage_len;
use replay::signature::gemm::gemm_from_op;
use replay::signature::op_inputs::OpInputs;
use replay::signature::{BlasOp, GemmKernelRole, GemmOperand, GemmParams};
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

/// A tensor as PyTorch holds it: flat storage and a strided view of it.
struct Strided {
    storage: Tensor,
    view: Tensor,
}

fn strided(kind: Kind, sizes: &[i64], strides: &[i64]) -> Strided {
    let _turn = common::torch_generator_turn();
    let storage =
        Tensor::randn([storage_len(sizes, strides)], (Kind::Float, Device::Cpu)).to_kind(kind);
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
pub(crate) struct Recorded<'a> {
    pub(crate) op: &'a str,
    pub(crate) dims: &'a str,
    pub(crate) types: &'a str,
    pub(crate) strides: &'a str,
    pub(crate) concrete: &'a str,
}

/// Builds the recorded tensors, runs the op through libtorch and replay's cuBLAS call
/// through the reference on the same memory, and compares.
pub(crate) fn check_recorded_op(
    case: &str,
    r: &Recorded<'_>,
    name_transposes: Option<(BlasOp, BlasOp)>,
) {
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
pub(crate) fn check_replay_layout(case: &str, p: &GemmParams) {
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
        TorchGemmTarget::new(p, replay::device::Device::host())
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
pub(crate) fn check(case: &str, op: &str, dims: &str, types: &str, strides: &str, concrete: &str) {
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
