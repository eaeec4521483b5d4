//! `replay selftest`: runs one replay of each tier on a device and checks the numbers against
//! the same work done by libtorch on the CPU. On a GPU this is the end-to-end proof that the
//! CUDA paths (cudarc copies, cuBLAS with the row-major to column-major swap, libtorch on the
//! GPU, the embedded flush kernel) compute what they claim; on the CPU it checks the host paths.
//!
//! With a model (`--model`), a second stage checks the whole model: its output on the device
//! against the same model on the CPU, its timing, and (driven from `crate::pipeline::selftest`,
//! which runs compare) the invariants of a `replay compare` report.

mod blocking;
mod calibrate;
pub mod counterparts;
mod mhc;
mod model;
mod outcome;
mod scan;
mod tensor_error;
mod tiers;

use crate::device::Device;

pub use model::{
    model_checks, model_tolerance, ModelReference, MODEL_OUTPUT_CHECK, MODEL_RUNS, MODEL_WARMUP,
};
pub(crate) use outcome::check;
pub use outcome::{model_check, Check, Stage};
pub use tiers::{test_gemm_params, K, M, N};

/// Every check for `device`.
pub fn run(device: &Device) -> Vec<Check> {
    use crate::suites::scan::cpu_backend::CpuBackend;
    use crate::suites::scan::cuda_backend::CudaBackend;
    match device {
        Device::Cpu(_) => {
            let mut checks = tiers::cpu_checks();
            checks.extend(scan::scan_checks(&CpuBackend::default()));
            checks.extend(calibrate::calibrate_checks(device));
            checks.extend(mhc::mhc_checks(None));
            checks
        }
        Device::Cuda(dev) => {
            let mut checks = tiers::cuda_checks(dev);
            match CudaBackend::new(dev) {
                Ok(backend) => checks.extend(scan::scan_checks(&backend)),
                Err(e) => checks.push(check(0, "cuda scan kernel", Err(e.to_string()))),
            }
            checks.extend(calibrate::calibrate_checks(device));
            checks.extend(mhc::mhc_checks(Some(dev)));
            checks
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tch::{Kind, Tensor};

    use super::model::compare_outputs;
    use super::tiers::cpu_checks;
    use super::*;
    use crate::signature::schema::{BlasOp, GemmOperand};

    #[test]
    fn the_test_gemm_is_a_swapped_tn_call() {
        let p = test_gemm_params().unwrap();
        assert_eq!((p.m, p.n, p.k), (M as u64, N as u64, K as u64));
        assert!(!p.trans_a && p.trans_b);
        // C^T[n, m] = B^T A^T: cuBLAS m is PyTorch's n, and its A is PyTorch's B (weight, by rows -> T).
        assert_eq!(
            (p.cublas.m, p.cublas.n, p.cublas.k),
            (N as u64, M as u64, K as u64)
        );
        assert_eq!((p.cublas.transa, p.cublas.transb), (BlasOp::T, BlasOp::N));
        assert_eq!(p.cublas.operand_a, GemmOperand::RowMajorB);
        assert_eq!(
            (p.cublas.lda, p.cublas.ldb, p.cublas.ldc),
            (K as u64, K as u64, N as u64)
        );
    }

    /// The output check with each dtype's bound, on a model's last layers (GEMM, GELU, layer
    /// norm, GEMM to 1000 logits) computed twice on the CPU in that dtype: once as libtorch
    /// does, once with every GEMM summed in K-chunks as a device's split-K kernel orders it.
    /// The second must pass (a bound tighter than the dtype's rounding would fail a correct
    /// device); the same with a GEMM reading its weight transposed, a wrong kernel, must fail
    /// (a bound too loose to catch it would pass).
    #[test]
    fn the_model_bound_accepts_another_summation_order_and_rejects_a_wrong_kernel() {
        let _guard = tch::no_grad_guard();
        tch::manual_seed(5);
        let cpu = (Kind::Float, Device::host().torch());
        let x = Tensor::randn([5, 64], cpu);
        let w1 = Tensor::randn([64, 64], cpu) / 8.0;
        let w2 = Tensor::randn([64, 1000], cpu) / 8.0;
        let split_k_mm = |a: &Tensor, b: &Tensor| {
            (0..a.size()[1] / 16)
                .map(|i| a.narrow(1, i * 16, 16).mm(&b.narrow(0, i * 16, 16)))
                .reduce(|sum, part| sum + part)
                .unwrap()
        };
        let head = |kind: Kind, split_k: bool, w1_transposed: bool| {
            let mm = |a: &Tensor, b: &Tensor| {
                if split_k {
                    split_k_mm(a, b)
                } else {
                    a.mm(b)
                }
            };
            let w1 = w1.to_kind(kind);
            let w1 = if w1_transposed { w1.tr() } else { w1 };
            let h = mm(&x.to_kind(kind), &w1).gelu("tanh").layer_norm(
                [64],
                None::<&Tensor>,
                None::<&Tensor>,
                1e-5,
                false,
            );
            mm(&h, &w2.to_kind(kind)).view([1, 5, 1000])
        };
        for kind in [Kind::Double, Kind::Float, Kind::Half, Kind::BFloat16] {
            let reference = ModelReference {
                path: "head.pt".into(),
                seq_len: 5,
                output: head(kind, false, false),
            };
            let reordered = compare_outputs(&head(kind, true, false), &reference);
            assert!(reordered.is_ok(), "{kind:?}: {reordered:?}");
            let wrong = compare_outputs(&head(kind, true, true), &reference).unwrap_err();
            assert!(wrong.contains("too large"), "{kind:?}: {wrong}");
        }
    }

    #[test]
    fn a_missing_model_or_a_bad_seq_len_is_a_usage_error_naming_it() {
        let missing = ModelReference::load(Path::new("/nonexistent/model.pt"), 5)
            .err()
            .unwrap();
        assert!(missing.is_usage_error());
        assert!(missing.to_string().contains("/nonexistent/model.pt"));
        let seq = ModelReference::load(Path::new("/nonexistent/model.pt"), 0)
            .err()
            .unwrap();
        assert!(seq.is_usage_error() && seq.to_string().contains("--seq-len"));
    }

    #[test]
    fn every_cpu_check_passes() {
        let checks = cpu_checks();
        assert_eq!(
            checks.iter().map(|c| c.tier).collect::<Vec<_>>(),
            vec![1, 1, 2, 3]
        );
        for c in &checks {
            assert!(c.passed, "{}: {}", c.name, c.detail);
        }
    }
}
