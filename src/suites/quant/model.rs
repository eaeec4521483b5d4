//! The seed's model types (`torchao.testing.model_architectures`): a Linear, LayerNorm →
//! Linear → activation, and a transformer block; each built from the same high-precision
//! weights under any recipe (every Linear of the model quantized, as `quantize_` does).

use std::fmt;
use std::str::FromStr;

use tch::{Kind, Tensor};

use super::error::QuantError;
use super::quantized_linear::QuantizedLinear;
use super::recipe::Recipe;
use crate::device::Device;

/// The activation after `ln_linear_<act>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    Sigmoid,
    Relu,
    LeakyRelu,
    Relu6,
    Gelu,
    Silu,
    Hardswish,
}

const ACTIVATIONS: [(&str, Activation); 7] = [
    ("sigmoid", Activation::Sigmoid),
    ("relu", Activation::Relu),
    ("leakyrelu", Activation::LeakyRelu),
    ("relu6", Activation::Relu6),
    ("gelu", Activation::Gelu),
    ("silu", Activation::Silu),
    ("hardswish", Activation::Hardswish),
];

impl Activation {
    fn apply(self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        match self {
            Activation::Sigmoid => x.f_sigmoid(),
            Activation::Relu => x.f_relu(),
            Activation::LeakyRelu => x.f_leaky_relu(),
            Activation::Relu6 => x.f_relu6(),
            Activation::Gelu => x.f_gelu("none"),
            Activation::Silu => x.f_silu(),
            Activation::Hardswish => x.f_hardswish(),
        }
    }

    fn name(self) -> &'static str {
        ACTIVATIONS
            .iter()
            .find(|(_, a)| *a == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// Which model a row runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelType {
    /// Linear(k, n, bias=False) on an (m, k) input.
    Linear,
    /// LayerNorm(k, no affine) → Linear(k, n, bias=False) → activation, on (m, k).
    LnLinear(Activation),
    /// Hidden size k, 8 heads, MLP ratio 4, on an (m, 16, k) input: RMSNorm, attention
    /// (written out, as the seed's block does), residual, RMSNorm, GELU MLP, residual.
    TransformerBlock,
}

/// Heads of the transformer block.
pub const HEADS: i64 = 8;
/// Sequence length of the transformer block's input.
pub const BLOCK_SEQ_LEN: i64 = 16;
/// MLP width over the hidden size.
pub const MLP_RATIO: i64 = 4;

impl FromStr for ModelType {
    type Err = String;
    fn from_str(text: &str) -> Result<ModelType, String> {
        match text.trim() {
            "linear" => return Ok(ModelType::Linear),
            "transformer_block" => return Ok(ModelType::TransformerBlock),
            _ => {}
        }
        if let Some(act) = text.trim().strip_prefix("ln_linear_") {
            if let Some((_, a)) = ACTIVATIONS.iter().find(|(n, _)| *n == act) {
                return Ok(ModelType::LnLinear(*a));
            }
        }
        Err(format!(
            "unknown model_type \"{text}\" (accepted: linear, transformer_block, ln_linear_<act> \
             with act one of {})",
            ACTIVATIONS.map(|(n, _)| n).join(", ")
        ))
    }
}

impl fmt::Display for ModelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelType::Linear => f.write_str("linear"),
            ModelType::LnLinear(a) => write!(f, "ln_linear_{}", a.name()),
            ModelType::TransformerBlock => f.write_str("transformer_block"),
        }
    }
}

/// The high-precision weights of a model, shared by its baseline and its quantized copies.
#[derive(Debug)]
pub struct ModelWeights {
    pub model_type: ModelType,
    /// (out, in) weights: one for linear models; qkv, proj, fc1, fc2 for the block.
    pub linears: Vec<Tensor>,
}

impl ModelWeights {
    /// nn.Linear's initialisation, U(-1/sqrt(in), 1/sqrt(in)), drawn from libtorch's
    /// generator (seed it first for repeatable runs).
    pub fn random(
        model_type: ModelType,
        k: i64,
        n: i64,
        dtype: Kind,
        device: &Device,
    ) -> Result<ModelWeights, QuantError> {
        let shapes: Vec<(i64, i64)> = match model_type {
            ModelType::Linear | ModelType::LnLinear(_) => vec![(n, k)],
            ModelType::TransformerBlock => {
                if k % HEADS != 0 {
                    return Err(QuantError::Unsupported(format!(
                        "transformer_block: hidden size k = {k} is not a multiple of {HEADS} heads"
                    )));
                }
                vec![(3 * k, k), (k, k), (MLP_RATIO * k, k), (k, MLP_RATIO * k)]
            }
        };
        let linears = shapes
            .into_iter()
            .map(|(out, inp)| {
                let bound = 1.0 / (inp as f64).sqrt();
                Tensor::f_rand([out, inp], (Kind::Float, device.torch()))?
                    .f_mul_scalar(2.0 * bound)?
                    .f_sub_scalar(bound)?
                    .f_to_kind(dtype)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ModelWeights {
            model_type,
            linears,
        })
    }

    /// The model's input for a row of shape (m, k, n).
    pub fn random_input(
        model_type: ModelType,
        m: i64,
        k: i64,
        dtype: Kind,
        device: &Device,
    ) -> Result<Tensor, QuantError> {
        let size = match model_type {
            ModelType::TransformerBlock => vec![m, BLOCK_SEQ_LEN, k],
            _ => vec![m, k],
        };
        Ok(Tensor::f_randn(size, (dtype, device.torch()))?)
    }
}

/// A model under one recipe.
#[derive(Debug)]
pub struct Model {
    model_type: ModelType,
    linears: Vec<QuantizedLinear>,
}

impl Model {
    pub fn new(weights: &ModelWeights, recipe: Recipe) -> Result<Model, QuantError> {
        let linears = weights
            .linears
            .iter()
            .map(|w| QuantizedLinear::new(recipe, w))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Model {
            model_type: weights.model_type,
            linears,
        })
    }

    pub fn linears(&self) -> &[QuantizedLinear] {
        &self.linears
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        let layer = |i: usize| &self.linears[i];
        match self.model_type {
            ModelType::Linear => layer(0).forward(x),
            ModelType::LnLinear(act) => {
                let k = *x.size().last().unwrap_or(&0);
                let normed = x.f_layer_norm::<Tensor>([k], None, None, 1e-5, false)?;
                act.apply(&layer(0).forward(&normed)?)
            }
            ModelType::TransformerBlock => self.block(x),
        }
    }

    fn block(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        let size = x.size();
        let (b, s, hidden) = (size[0], size[1], size[2]);
        let head_dim = hidden / HEADS;
        let heads = |t: &Tensor| t.f_reshape([b, s, HEADS, head_dim])?.f_transpose(1, 2);
        let normed = x.f_rms_norm::<Tensor>([hidden], None, 1e-6)?;
        let qkv = self.linears[0].forward(&normed)?.f_split(hidden, -1)?;
        let (q, k, v) = (heads(&qkv[0])?, heads(&qkv[1])?, heads(&qkv[2])?);
        let scores = q
            .f_matmul(&k.f_transpose(-2, -1)?)?
            .f_mul_scalar(1.0 / (head_dim as f64).sqrt())?
            .f_softmax(-1, None::<Kind>)?;
        let attended = scores
            .f_matmul(&v)?
            .f_transpose(1, 2)?
            .f_reshape([b, s, hidden])?;
        let x = x.f_add(&self.linears[1].forward(&attended)?)?;
        let normed = x.f_rms_norm::<Tensor>([hidden], None, 1e-6)?;
        let mlp = self.linears[3].forward(&self.linears[2].forward(&normed)?.f_gelu("none")?)?;
        x.f_add(&mlp)
    }
}
