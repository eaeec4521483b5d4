//! The replay stage: one replay of each tier on the device, checked against the same work
//! done by libtorch on the CPU.

use tch::{Kind, Tensor};

use crate::signature::gemm::gemm_from_op;
use crate::signature::op_inputs::OpInputs;
use crate::signature::schema::{
    GemmKernelRole, GemmOperand, GemmParams, MemcpyKind, MemcpyParams, MemoryKind, MemsetParams,
};

use crate::device::Device;
use crate::replay::tier1_memory::{CpuMemoryTarget, MemoryWork};
use crate::replay::tier2_gemm::TorchGemmTarget;
use crate::torch::{OpArg, PreparedOp};

use super::outcome::{check, Check};
use super::tensor_error::max_relative_error;

/// A `linear`-shaped GEMM as the profiler records `aten::mm(x, weight.t())`: A by rows,
/// B a transposed view, so the cuBLAS call is `T, N` with swapped operands.
pub const M: i64 = 96;
pub const N: i64 = 48;
pub const K: i64 = 64;

pub fn test_gemm_params() -> Result<GemmParams, String> {
    let dims = format!("[[{M}, {K}], [{K}, {N}]]");
    let strides = format!("[[{K}, 1], [1, {K}]]");
    let inputs = OpInputs::parse(
        Some(&dims),
        Some(r#"["float", "float"]"#),
        Some(&strides),
        Some(r#"["", ""]"#),
    )
    .ok_or("could not build the test op inputs")?;
    gemm_from_op("aten::mm", &inputs, GemmKernelRole::Main, None)
}

fn f32_bytes(t: &Tensor) -> Result<Vec<u8>, String> {
    let flat = t.to_kind(Kind::Float).contiguous().view([-1]);
    let values = Vec::<f32>::try_from(&flat).map_err(|e| e.to_string())?;
    Ok(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

fn tier3_layer_norm(device: &Device) -> Result<String, String> {
    let device = device.torch();
    let _guard = tch::no_grad_guard();
    tch::manual_seed(7);
    let x = Tensor::randn([4, 128], (Kind::Float, Device::host().torch()));
    let w = Tensor::randn([128], (Kind::Float, Device::host().torch()));
    let b = Tensor::randn([128], (Kind::Float, Device::host().torch()));
    let want = x.layer_norm([128], Some(&w), Some(&b), 1e-5, false);
    let args = vec![
        OpArg::Tensor(x.to_device(device)),
        OpArg::IntList(vec![128]),
        OpArg::Tensor(w.to_device(device)),
        OpArg::Tensor(b.to_device(device)),
        OpArg::Double(1e-5),
        OpArg::Bool(false),
    ];
    let mut op = PreparedOp::new("aten::layer_norm", "", args).map_err(|e| e.0)?;
    op.run(1).map_err(|e| e.0)?;
    let got = op
        .last_output()
        .ok_or("aten::layer_norm returned no tensor")?
        .to_device(Device::host().torch());
    let err = max_relative_error(&got, &want)?;
    if err < 1e-4 {
        Ok(format!(
            "aten::layer_norm through the dispatcher on {device:?}: max relative error {err:.1e}"
        ))
    } else {
        Err(format!(
            "aten::layer_norm on {device:?} differs from the CPU by {err:.3e}"
        ))
    }
}

pub(super) fn cpu_checks() -> Vec<Check> {
    let mut checks = Vec::new();
    checks.push(check(1, "host memcpy 1 MiB", {
        let p = MemcpyParams {
            kind: MemcpyKind::HtoD,
            src: MemoryKind::Pageable,
            dst: MemoryKind::Device,
            bytes: 1 << 20,
        };
        CpuMemoryTarget::new(MemoryWork::Copy(p))
            .map_err(|e| e.to_string())
            .and_then(|mut t| {
                crate::measure::Target::run(&mut t, 1)
                    .map_err(|e| e.to_string())
                    .map(|_| t)
            })
            .and_then(|t| {
                (t.output() == t.input())
                    .then(|| "every byte copied".to_string())
                    .ok_or_else(|| "bytes differ".to_string())
            })
    }));
    checks.push(check(1, "host memset 64 KiB", {
        CpuMemoryTarget::new(MemoryWork::Set(MemsetParams { bytes: 64 << 10 }))
            .map_err(|e| e.to_string())
            .and_then(|mut t| {
                crate::measure::Target::run(&mut t, 3)
                    .map_err(|e| e.to_string())
                    .map(|_| t)
            })
            .and_then(|t| {
                t.output()
                    .iter()
                    .all(|&b| b == 2)
                    .then(|| "every byte set".to_string())
                    .ok_or_else(|| "bytes not set".to_string())
            })
    }));
    checks.push(check(
        2,
        "torch mm with the recorded layouts",
        (|| {
            let params = test_gemm_params()?;
            let mut target =
                TorchGemmTarget::new(&params, Device::host()).map_err(|e| e.to_string())?;
            let (a, b, out) = target.operands_and_result().map_err(|e| e.to_string())?;
            if a.stride() != [K, 1] || b.stride() != [1, K] {
                return Err(format!(
                    "operand layouts {:?} / {:?} are not the recorded [{K}, 1] / [1, {K}]",
                    a.stride(),
                    b.stride()
                ));
            }
            let want = a.to_kind(Kind::Double).mm(&b.to_kind(Kind::Double));
            let err = max_relative_error(&out, &want)?;
            (err < 1e-4)
                .then(|| format!("{M}x{N}x{K} fp32, max relative error {err:.1e} against fp64"))
                .ok_or(format!("error {err:.3e}"))
        })(),
    ));
    checks.push(check(
        3,
        "libtorch dispatcher",
        tier3_layer_norm(Device::host()),
    ));
    checks
}

pub(super) fn cuda_checks(dev: &crate::device::CudaDevice) -> Vec<Check> {
    use crate::replay::tier1_memory::cuda::CudaMemoryTarget;
    use crate::replay::tier2_gemm::cuda::CublasGemmTarget;
    let mut checks = Vec::new();
    for (name, kind, src, dst) in [
        (
            "cudaMemcpy HtoD pageable",
            MemcpyKind::HtoD,
            MemoryKind::Pageable,
            MemoryKind::Device,
        ),
        (
            "cudaMemcpy HtoD pinned",
            MemcpyKind::HtoD,
            MemoryKind::Pinned,
            MemoryKind::Device,
        ),
        (
            "cudaMemcpy DtoH pinned",
            MemcpyKind::DtoH,
            MemoryKind::Device,
            MemoryKind::Pinned,
        ),
        (
            "cudaMemcpy DtoD",
            MemcpyKind::DtoD,
            MemoryKind::Device,
            MemoryKind::Device,
        ),
    ] {
        let p = MemcpyParams {
            kind,
            src,
            dst,
            bytes: 4 << 20,
        };
        checks.push(check(
            1,
            name,
            CudaMemoryTarget::new(dev, MemoryWork::Copy(p))
                .map_err(|e| e.to_string())
                .and_then(|mut t| t.verify())
                .map(|_| "4 MiB, every byte checked".into()),
        ));
    }
    checks.push(check(
        1,
        "cudaMemset",
        CudaMemoryTarget::new(dev, MemoryWork::Set(MemsetParams { bytes: 1 << 20 }))
            .map_err(|e| e.to_string())
            .and_then(|mut t| t.verify())
            .map(|_| "1 MiB zeroed".into()),
    ));
    checks.push(check(2, "cublasGemmEx row-major via column-major swap", (|| {
        let params = test_gemm_params()?;
        let _guard = tch::no_grad_guard();
        tch::manual_seed(3);
        let a = Tensor::randn([M, K], (Kind::Float, Device::host().torch()));
        let w = Tensor::randn([N, K], (Kind::Float, Device::host().torch()));
        let want = a.mm(&w.tr());
        // cuBLAS's operands are PyTorch's swapped: each is uploaded in its storage order.
        let bytes_of = |op: GemmOperand| match op {
            GemmOperand::RowMajorA => f32_bytes(&a),
            GemmOperand::RowMajorB => f32_bytes(&w),
        };
        let mut target = CublasGemmTarget::new(dev, &params).map_err(|e| e.to_string())?;
        let out = target.run_on(&bytes_of(params.cublas.operand_a)?, &bytes_of(params.cublas.operand_b)?)?;
        let values: Vec<f32> = out.chunks_exact(4).take((M * N) as usize).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let got = Tensor::from_slice(&values).view([M, N]);
        let err = max_relative_error(&got, &want)?;
        (err < 1e-4).then(|| format!("{M}x{N}x{K} fp32 (TF32 off), max relative error {err:.1e} against libtorch CPU")).ok_or(format!("cuBLAS result differs from libtorch CPU by {err:.3e}"))
    })()));
    checks.push(check(
        3,
        "libtorch dispatcher on the GPU",
        tier3_layer_norm(&Device::Cuda(dev.clone())),
    ));
    checks.push(check(
        0,
        "l2_flush kernel (embedded fatbin)",
        (|| {
            let cache = crate::kernels::KernelCache::default();
            let mut flusher = crate::device::cache_flush::CudaL2Flusher::new(dev, &cache)
                .map_err(|e| e.to_string())?;
            flusher.flush().map_err(|e| e.to_string())?;
            Ok(format!("loaded and ran on {}", dev.info.name))
        })(),
    ));
    // The GPU side of the tests that return early on a machine with a driver.
    for (tier, name, run) in super::counterparts::CHECKS {
        checks.push(check(tier, name, run(dev)));
    }
    checks
}
