//! The seed's semirings as tensor operations (torch-struct's `LogSemiring`, `MaxSemiring`,
//! `EntropySemiring`): every value carries a leading semiring axis of size `ssize` (1 for Log
//! and Max; 2 for Entropy, whose pairs are (log Z, H)), and ⊕ reduces one axis. The operations
//! are the seed's, one libtorch op for one of its ops, so that the baseline launches the same
//! kernels.

use tch::{Kind, TchError, Tensor};

use super::super::Semiring;

/// The seed's semiring zero in log space.
const LOG_ZERO: f32 = -1e5;

/// One semiring's tensor operations.
#[derive(Debug, Clone, Copy)]
pub struct SemiringTensors(pub Semiring);

impl SemiringTensors {
    /// The size of the leading semiring axis.
    pub fn size(self) -> i64 {
        match self.0 {
            Semiring::Log | Semiring::Max => 1,
            Semiring::Entropy => 2,
        }
    }

    /// The semiring zero, one number per entry of the semiring axis.
    pub fn zero(self) -> &'static [f32] {
        match self.0 {
            Semiring::Log | Semiring::Max => &[LOG_ZERO],
            Semiring::Entropy => &[LOG_ZERO, 0.0],
        }
    }

    /// The semiring one (torch-struct writes Log's and Max's as −0.0).
    pub fn one(self) -> &'static [f32] {
        match self.0 {
            Semiring::Log | Semiring::Max => &[-0.0],
            Semiring::Entropy => &[0.0, 0.0],
        }
    }

    /// Log-potentials `[...]` as semiring values `[ssize, ...]`: a view for Log and Max; for
    /// Entropy a new tensor with the potentials as log-weights and 0 as entropies. The seed
    /// makes that tensor with `torch.zeros(...)` on the CPU and moves it with `.type_as(xs)`,
    /// so on a GPU its Entropy scan copies `2 × edge` bytes from the host on every call; the
    /// baseline keeps that cost.
    pub fn convert(self, potentials: &Tensor) -> Result<Tensor, TchError> {
        match self.0 {
            Semiring::Log | Semiring::Max => potentials.f_unsqueeze(0),
            Semiring::Entropy => {
                let mut shape = vec![2];
                shape.extend(potentials.size());
                let values =
                    Tensor::f_zeros(shape, (Kind::Float, crate::device::Device::host().torch()))?
                        .f_to_kind(potentials.kind())?
                        .f_to(potentials.device())?;
                values.f_select(0, 0)?.f_copy_(potentials)?;
                let _ = values.f_select(0, 1)?.f_fill_(0.0)?;
                Ok(values)
            }
        }
    }

    /// `c` with every entry set to `value` along the semiring axis, as the seed's
    /// `Semiring.fill(c, True, value)` does it: the value is moved to `c`'s device and
    /// selected with `torch.where`.
    pub fn fill(self, c: &Tensor, value: &[f32]) -> Result<Tensor, TchError> {
        let device = c.device();
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, c.dim().saturating_sub(1)));
        let value = Tensor::f_from_slice(value)?
            .f_to_kind(c.kind())?
            .f_to(device)?
            .f_view_(shape)?;
        let mask = Tensor::f_from_slice(&[true])?
            .f_to(device)?
            .f_view_([0i64; 0])?;
        value.f_where_self(&mask, c)
    }

    /// ⊕ over axis `dim` of values `[ssize, ...]` (`dim` counts the semiring axis, as the
    /// seed's `sum(xs, dim)` does; negative counts from the end).
    pub fn sum(self, xs: &Tensor, dim: i64) -> Result<Tensor, TchError> {
        match self.0 {
            Semiring::Log => xs.f_logsumexp([dim], false),
            Semiring::Max => Ok(xs.f_max_dim(dim, false)?.0),
            Semiring::Entropy => {
                // The mixture's log-weight, and the entropy of choosing an item plus the
                // expected entropy of the item.
                let d = if dim > 0 { dim - 1 } else { dim };
                let log_weight = xs.f_select(0, 0)?;
                let entropy = xs.f_select(0, 1)?;
                let part = log_weight.f_logsumexp([d], false)?;
                let log_share = log_weight.f_sub(&part.f_unsqueeze(d)?)?;
                let share = log_share.f_exp()?;
                let mixed = entropy
                    .f_mul(&share)?
                    .f_sub(&log_share.f_mul(&share)?)?
                    .f_sum_dim_intlist(&[d][..], false, None::<Kind>)?;
                Tensor::f_stack(&[part, mixed], 0)
            }
        }
    }

    /// The scan's value per sequence from `v = ⊕_c final_beta`, `[ssize, B]`: log Z, the
    /// Viterbi score, or the entropy H (the seed's `unconvert`).
    pub fn unconvert(self, v: &Tensor) -> Result<Tensor, TchError> {
        match self.0 {
            Semiring::Log | Semiring::Max => v.f_select(0, 0),
            Semiring::Entropy => v.f_select(0, 1),
        }
    }
}
