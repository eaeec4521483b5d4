//! Tier 2 on the CPU (or any device libtorch drives): the GEMM op itself through libtorch
//! (`mm`, `addmm`, `bmm`, `baddbmm`) with the recorded layouts, the weight-like operand
//! rotated through copies so that it comes from memory as in a forward pass.

use tch::{Kind, Tensor};

use crate::device::Device;
use crate::measure::{MeasureError, Placement, Target};
use crate::replay::parameter_copies::{first_call, CopyBudget};
use crate::signature::schema::GemmParams;
use crate::torch::dtype::kind_from_name;
use replay_core::sequence_plan::Role;

/// Why a GEMM cannot be set up through libtorch.
#[derive(Debug, thiserror::Error)]
pub enum TorchGemmError {
    /// Not replayable here (a dtype libtorch has no GEMM for, FP8 on a device without it).
    #[error("{0}")]
    Unsupported(String),
    /// libtorch refused the call with the recorded layouts.
    #[error("libtorch rejected the GEMM: {0}")]
    Rejected(#[source] tch::TchError),
    /// Building an operand failed.
    #[error(transparent)]
    Torch(#[from] tch::TchError),
}

/// The row-major operand shapes and strides a [`GemmParams`] describes, for one batch entry
/// `A[m, k]`, `B[k, n]`. `trans_*` means the operand is stored column-major.
pub fn operand_layout(rows: u64, cols: u64, transposed: bool, ld: u64) -> ([i64; 2], [i64; 2]) {
    let sizes = [rows as i64, cols as i64];
    let strides = if transposed {
        [1, ld.max(1) as i64]
    } else {
        [ld.max(1) as i64, 1]
    };
    (sizes, strides)
}

/// Elements of storage an operand with these sizes/strides spans.
fn span(sizes: [i64; 2], strides: [i64; 2]) -> i64 {
    if sizes.contains(&0) {
        0
    } else {
        1 + (sizes[0] - 1) * strides[0] + (sizes[1] - 1) * strides[1]
    }
}

/// Which operand of the row-major product `C = A @ B`.
#[derive(Debug, Clone, Copy)]
enum Side {
    A,
    B,
}

/// Elements of storage operand `side` of `p` spans, every batch included.
fn operand_span(p: &GemmParams, side: Side) -> i64 {
    let (rows, cols, transposed, ld, batch_stride) = match side {
        Side::A => (p.m, p.k, p.trans_a, p.lda, p.stride_a),
        Side::B => (p.k, p.n, p.trans_b, p.ldb, p.stride_b),
    };
    let (sizes, strides) = operand_layout(rows, cols, transposed, ld);
    let one = span(sizes, strides);
    let bstride = batch_stride.map(|s| s as i64).unwrap_or(one);
    if p.batch > 1 {
        one + (p.batch as i64 - 1) * bstride
    } else {
        one
    }
}

/// Elements of storage of the A and B operands a replay of `p` allocates.
pub fn operand_spans(p: &GemmParams) -> [i64; 2] {
    [operand_span(p, Side::A), operand_span(p, Side::B)]
}

/// Builds a random operand `side` of `p` with exactly the recorded layout (batched when
/// `batch > 1`).
fn operand(
    kind: Kind,
    p: &GemmParams,
    side: Side,
    device: &Device,
) -> Result<Tensor, tch::TchError> {
    let batch = p.batch;
    let (rows, cols, transposed, ld, batch_stride) = match side {
        Side::A => (p.m, p.k, p.trans_a, p.lda, p.stride_a),
        Side::B => (p.k, p.n, p.trans_b, p.ldb, p.stride_b),
    };
    let (sizes, strides) = operand_layout(rows, cols, transposed, ld);
    let one = span(sizes, strides);
    let bstride = batch_stride.map(|s| s as i64).unwrap_or(one);
    let total = operand_span(p, side);
    // In a re-run step, the memory plan's buffer: the weight operand of an unbatched GEMM
    // is a parameter, everything else an activation.
    let role = match side {
        Side::B if batch <= 1 => Role::Parameter,
        _ => Role::Activation,
    };
    let base = match crate::replay::sequence_buffers::planned(kind, total.max(0), role) {
        Some(planned) => planned?,
        None => Tensor::f_randn([total.max(0)], (Kind::Float, device.torch()))?.f_to_kind(kind)?,
    };
    if batch > 1 {
        base.f_as_strided(
            [batch as i64, sizes[0], sizes[1]],
            [bstride, strides[0], strides[1]],
            None::<i64>,
        )
    } else {
        base.f_as_strided(sizes, strides, None::<i64>)
    }
}

/// A GEMM replayed through libtorch on the CPU (or any device libtorch drives).
pub struct TorchGemmTarget {
    a: Tensor,
    b: Tensor,
    /// Copies of the weight-like operand B, used in turn (see
    /// [`crate::replay::parameter_copies`]).
    b_pool: Vec<Tensor>,
    next_b: usize,
    bias: Option<Tensor>,
    alpha: f64,
    beta: f64,
    batched: bool,
    activation: Option<String>,
    device: Device,
}

impl TorchGemmTarget {
    pub fn new(p: &GemmParams, device: &Device) -> Result<TorchGemmTarget, TorchGemmError> {
        Self::with_copies(p, device, Some(CopyBudget::UNTIMED))
    }

    /// [`Self::new`], the weight's copies bounded by `copies` (see
    /// [`crate::replay::parameter_copies`]); with `None`, one weight operand only: a call in
    /// its place in a re-run model (`replay sequence`), where every op instance has its own
    /// weights already.
    pub fn with_copies(
        p: &GemmParams,
        device: &Device,
        copies: Option<CopyBudget>,
    ) -> Result<TorchGemmTarget, TorchGemmError> {
        let unsupported = |dtype: &str| {
            TorchGemmError::Unsupported(format!("dtype {dtype} has no libtorch GEMM"))
        };
        let kind_a = kind_from_name(&p.dtype_a).ok_or_else(|| unsupported(&p.dtype_a))?;
        let kind_b = kind_from_name(&p.dtype_b).ok_or_else(|| unsupported(&p.dtype_b))?;
        if matches!(kind_a, Kind::Float8e4m3fn | Kind::Float8e5m2) {
            return Err(TorchGemmError::Unsupported("float8 GEMMs (_scaled_mm) need a GPU with FP8 tensor cores; not replayable on this device".into()));
        }
        let batched = p.batch > 1;
        let a = operand(kind_a, p, Side::A, device)?;
        let b = operand(kind_b, p, Side::B, device)?;
        let bias = if p.bias {
            let kind_out = kind_from_name(&p.dtype_out).unwrap_or(kind_a);
            Some(
                Tensor::f_randn([p.n as i64], (Kind::Float, device.torch()))?
                    .f_to_kind(kind_out)?,
            )
        } else {
            None
        };
        let mut target = TorchGemmTarget {
            a,
            b: b.shallow_clone(),
            b_pool: vec![b],
            next_b: 0,
            bias,
            alpha: p.alpha,
            beta: p.beta,
            batched,
            activation: p.activation.clone(),
            device: device.clone(),
        };
        // One call up front: a layout libtorch rejects is `failed`, with its message. Its time
        // bounds the weight's copies to the calls the measurement can make.
        let (_, one_call) = first_call(|| target.call()).map_err(TorchGemmError::Rejected)?;
        let copies = match copies {
            Some(budget) if !batched => {
                let b = &target.b;
                budget.copies(
                    b.numel() as u64 * b.kind().elt_size_in_bytes() as u64,
                    one_call,
                )
            }
            _ => 1,
        };
        for _ in 1..copies {
            // Same recorded layout, its own storage.
            target.b_pool.push(operand(kind_b, p, Side::B, device)?);
        }
        // The call up front used the first copy: the measurement starts with the next.
        target.next_b = 1 % target.b_pool.len();
        Ok(target)
    }

    /// Copies of the weight operand the calls go round.
    pub fn copies(&self) -> usize {
        self.b_pool.len()
    }

    /// The operands and the result of one call (`replay selftest`).
    pub fn operands_and_result(&mut self) -> Result<(Tensor, Tensor, Tensor), tch::TchError> {
        let _guard = tch::no_grad_guard();
        let out = self.call_with(&self.b)?;
        Ok((self.a.shallow_clone(), self.b.shallow_clone(), out))
    }

    /// One GEMM, as the launching op would call it.
    fn call(&mut self) -> Result<Tensor, tch::TchError> {
        let _guard = tch::no_grad_guard();
        let b = self.b_pool[self.next_b % self.b_pool.len()].shallow_clone();
        self.next_b = (self.next_b + 1) % self.b_pool.len();
        self.call_with(&b)
    }

    fn call_with(&self, b: &Tensor) -> Result<Tensor, tch::TchError> {
        match (&self.bias, self.batched) {
            (None, false) if self.alpha == 1.0 => self.a.f_mm(b),
            (None, true) if self.alpha == 1.0 => self.a.f_bmm(b),
            (None, false) => self.a.f_mm(b)?.f_mul_scalar(self.alpha),
            (None, true) => self.a.f_bmm(b)?.f_mul_scalar(self.alpha),
            (Some(bias), false) => match self.activation.as_deref() {
                Some(act) => bias.f_internal_addmm_activation(&self.a, b, act == "gelu"),
                None => bias.f_addmm(&self.a, b).and_then(|c| {
                    if self.alpha == 1.0 && self.beta == 1.0 {
                        Ok(c)
                    } else {
                        // addmm's beta/alpha are not exposed by tch's f_addmm: compute them explicitly.
                        bias.f_mul_scalar(self.beta)?
                            .f_add(&self.a.f_mm(b)?.f_mul_scalar(self.alpha)?)
                    }
                }),
            },
            (Some(bias), true) => bias.f_baddbmm(&self.a, b, self.beta, self.alpha),
        }
    }
}

/// Timed on the host, by the monotonic clock: on a GPU (which replay does not use it for) each
/// batch waits for the device before it ends, so the clock sees the whole work.
impl Target for TorchGemmTarget {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            let out = self
                .call()
                .map_err(|e| MeasureError::target(e.to_string()))?;
            let _ = std::hint::black_box(out);
        }
        crate::torch::work_target::synchronize(&self.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LM head of the H100 BERT trace (141 x 512 @ 512 x 30522, bfloat16, a 31 MB weight):
    /// two copies when the measurement can make only a call or two (`--max-time 0.01`: 21
    /// copies a round, 19 s of setup, before), as many as memory allows when time does not
    /// bound them.
    #[test]
    fn the_lm_heads_copies_are_bounded_by_the_calls_the_measurement_can_make() {
        let sigs = crate::signature::read_file(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/signatures/h100_bert_small_infer.json"
        )))
        .unwrap();
        let gemm = sigs
            .signatures
            .iter()
            .find_map(|s| s.gemm.clone().filter(|g| g.n == 30522))
            .expect("the bert trace has its LM head");
        let weight_bytes = 512 * 30522 * 2;
        let wanted = crate::replay::parameter_copies::weight_copies(weight_bytes);
        let tiny = CopyBudget {
            measurement: std::time::Duration::from_nanos(1),
            max_bytes: crate::replay::parameter_copies::MAX_COPY_BYTES,
        };
        let mut bounded = TorchGemmTarget::with_copies(&gemm, Device::host(), Some(tiny)).unwrap();
        assert_eq!(bounded.copies(), wanted.min(2));
        // It goes round them from the second (the call up front used the first).
        assert_eq!(bounded.next_b, 1 % bounded.copies());
        bounded.run(3).unwrap();
        // Memory bounds them too: room for three.
        let three = CopyBudget {
            max_bytes: 3 * weight_bytes,
            ..CopyBudget::UNTIMED
        };
        let capped = TorchGemmTarget::with_copies(&gemm, Device::host(), Some(three)).unwrap();
        assert_eq!(capped.copies(), wanted.min(3));
        // In a re-run step: one.
        let one = TorchGemmTarget::with_copies(&gemm, Device::host(), None).unwrap();
        assert_eq!(one.copies(), 1);
    }

    #[test]
    fn row_major_operand_layouts() {
        // A row-major [141, 512] activation: rows 512 apart.
        assert_eq!(operand_layout(141, 512, false, 512), ([141, 512], [512, 1]));
        // linear's weight^T: a [512, 512] view of a row-major weight, i.e. column-major, ld 512.
        assert_eq!(operand_layout(512, 512, true, 512), ([512, 512], [1, 512]));
    }
}
