//! `--input SPEC`: one input tensor of a model, described by its dtype, sizes and value range.
//!
//! `DTYPE[d0,d1,...]` with an optional `:LO..HI` for integer types: `float32[1,3,224,224]`,
//! `int64[1,128]:0..50257`. Floating-point inputs are drawn from N(0, 1), integers uniformly
//! from `[LO, HI)` (without a range, from `[0, vocab)` of the model's token embedding), booleans
//! as a random mask. The same grammar is parsed by `scripts/capture_trace.py`, so the profiled
//! and the timed runs feed the model alike; the spec with its range filled in is recorded in
//! `full_model_timing.json` and the comparison report.

use std::fmt;
use std::str::FromStr;

use replay_core::signature::dtype::Dtype;
use tch::{Kind, Tensor};

use crate::device::Device;
use crate::torch::dtype::kind_of;

/// Tokens in the input sequence (the default of `--seq-len`).
pub const DEFAULT_SEQ_LEN: i64 = 5;
/// Sequences per forward pass (the default of `--batch`).
pub const DEFAULT_BATCH: i64 = 1;

/// The dtypes an input may have, by the names PyTorch prints.
/// The dtypes `--input` accepts (their names and kinds are the one table's, `torch::dtype`).
const DTYPES: [Dtype; 10] = [
    Dtype::Float32,
    Dtype::Float64,
    Dtype::Float16,
    Dtype::BFloat16,
    Dtype::Int64,
    Dtype::Int32,
    Dtype::Int16,
    Dtype::Int8,
    Dtype::UInt8,
    Dtype::Bool,
];

/// What `--input` accepts, for error messages.
pub const INPUT_SPEC_HELP: &str = "DTYPE[d0,d1,...] with an optional :LO..HI for integers, e.g. \
     float32[1,3,224,224] or int64[1,128]:0..50257; DTYPE is one of float32, float64, float16, \
     bfloat16, int64, int32, int16, int8, uint8, bool";

/// One model input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    /// The dtype's name as written (`float32`).
    pub dtype: &'static str,
    pub sizes: Vec<i64>,
    /// `[low, high)` of an integer input; `None` until filled in from the model.
    pub range: Option<(i64, i64)>,
}

/// Why a spec is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad input spec '{text}': {why} (accepted: {INPUT_SPEC_HELP})")]
pub struct InputSpecError {
    pub text: String,
    pub why: String,
}

impl InputSpec {
    /// Token ids `[batch, seq_len]` in `[0, vocab)`: the input when no `--input` is given.
    pub fn token_ids(batch: i64, seq_len: i64, vocab: i64) -> InputSpec {
        InputSpec {
            dtype: "int64",
            sizes: vec![batch, seq_len],
            range: Some((0, vocab)),
        }
    }

    pub fn kind(&self) -> Kind {
        kind_of(self.element_type())
    }

    /// The dtype of the spec (parsing only admits names of [`DTYPES`]).
    fn element_type(&self) -> Dtype {
        Dtype::from_name(self.dtype).unwrap_or(Dtype::Float32)
    }

    fn is_integer(&self) -> bool {
        self.element_type().is_integral()
    }

    /// This spec with an integer input's missing range set to `[0, vocab)`.
    pub fn with_default_range(&self, vocab: i64) -> InputSpec {
        InputSpec {
            range: match self.range {
                None if self.is_integer() => Some((0, vocab)),
                range => range,
            },
            ..self.clone()
        }
    }

    /// A tensor of this spec on `device`, drawn from libtorch's global generator.
    pub fn make(&self, device: &Device) -> Result<Tensor, tch::TchError> {
        let kind = self.kind();
        let sizes = self.sizes.as_slice();
        let cpu = (Kind::Float, Device::host().torch());
        let tensor = if kind == Kind::Bool {
            Tensor::f_rand(sizes, cpu)?.f_lt(0.5)?
        } else if self.is_integer() {
            let (low, high) = self.range.unwrap_or((0, 2));
            Tensor::f_randint_low(low, high, sizes, (Kind::Int64, Device::host().torch()))?
                .f_to_kind(kind)?
        } else {
            Tensor::f_randn(sizes, cpu)?.f_to_kind(kind)?
        };
        tensor.f_to_device(device.torch())
    }
}

impl FromStr for InputSpec {
    type Err = InputSpecError;

    fn from_str(text: &str) -> Result<InputSpec, InputSpecError> {
        let fail = |why: &str| InputSpecError {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let (shape_part, range_part) = match text.split_once(':') {
            Some((shape, range)) => (shape, Some(range)),
            None => (text, None),
        };
        let (dtype_name, rest) = shape_part
            .split_once('[')
            .ok_or_else(|| fail("no [sizes] after the dtype"))?;
        let element = DTYPES
            .into_iter()
            .find(|d| d.name() == dtype_name.trim())
            .ok_or_else(|| fail(&format!("unknown dtype '{}'", dtype_name.trim())))?;
        let dtype = element.name();
        let inner = rest
            .trim_end()
            .strip_suffix(']')
            .ok_or_else(|| fail("the sizes do not end with ]"))?;
        let sizes = if inner.trim().is_empty() {
            Vec::new()
        } else {
            inner
                .split(',')
                .map(|s| match s.trim().parse::<i64>() {
                    Ok(n) if n >= 1 => Ok(n),
                    _ => Err(fail(&format!(
                        "size '{}' is not a positive integer",
                        s.trim()
                    ))),
                })
                .collect::<Result<Vec<i64>, _>>()?
        };
        let range = match range_part {
            None => None,
            Some(range) => {
                if !element.is_integral() {
                    return Err(fail("a range :LO..HI is for integer dtypes only"));
                }
                let (low, high) = range
                    .split_once("..")
                    .ok_or_else(|| fail("the range is not LO..HI"))?;
                let parse = |s: &str| {
                    s.trim()
                        .parse::<i64>()
                        .map_err(|_| fail(&format!("range bound '{}' is not an integer", s.trim())))
                };
                let (low, high) = (parse(low)?, parse(high)?);
                if high <= low {
                    return Err(fail("the range LO..HI is empty (HI must be above LO)"));
                }
                Some((low, high))
            }
        };
        Ok(InputSpec {
            dtype,
            sizes,
            range,
        })
    }
}

impl fmt::Display for InputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes: Vec<String> = self.sizes.iter().map(i64::to_string).collect();
        write!(f, "{}[{}]", self.dtype, sizes.join(","))?;
        if let Some((low, high)) = self.range {
            write!(f, ":{low}..{high}")?;
        }
        Ok(())
    }
}

/// Parses a `--input` value for clap, with the accepted forms in the message.
pub fn parse_input_spec(text: &str) -> Result<InputSpec, String> {
    text.parse::<InputSpec>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        let image: InputSpec = "float32[1,3,224,224]".parse().unwrap();
        assert_eq!(image.sizes, vec![1, 3, 224, 224]);
        assert_eq!((image.kind(), image.range), (Kind::Float, None));
        assert_eq!(image.to_string(), "float32[1,3,224,224]");
        let ids: InputSpec = "int64[1, 128]:0..50257".parse().unwrap();
        assert_eq!(ids.range, Some((0, 50257)));
        assert_eq!(ids.to_string(), "int64[1,128]:0..50257");
        assert_eq!(ids, InputSpec::token_ids(1, 128, 50257));
        let scalar: InputSpec = "float64[]".parse().unwrap();
        assert!(scalar.sizes.is_empty());
    }

    #[test]
    fn integer_inputs_take_the_vocabulary_when_no_range_is_given() {
        let ids: InputSpec = "int32[2,7]".parse().unwrap();
        assert_eq!(ids.with_default_range(1000).range, Some((0, 1000)));
        let image: InputSpec = "bfloat16[1,3,8,8]".parse().unwrap();
        assert_eq!(image.with_default_range(1000).range, None);
    }

    #[test]
    fn tensors_have_the_spec() {
        let ids = InputSpec::token_ids(2, 9, 50);
        let t = ids.make(Device::host()).unwrap();
        assert_eq!((t.size(), t.kind()), (vec![2, 9], Kind::Int64));
        assert!(t.min().int64_value(&[]) >= 0 && t.max().int64_value(&[]) < 50);
        let image: InputSpec = "float16[1,3,4,4]".parse().unwrap();
        let t = image.make(Device::host()).unwrap();
        assert_eq!((t.size(), t.kind()), (vec![1, 3, 4, 4], Kind::Half));
        let mask: InputSpec = "bool[64]".parse().unwrap();
        assert_eq!(mask.make(Device::host()).unwrap().kind(), Kind::Bool);
    }

    #[test]
    fn bad_specs_say_what_is_wrong_and_what_is_accepted() {
        for (text, why) in [
            ("float33[1,2]", "unknown dtype 'float33'"),
            ("float32", "no [sizes]"),
            ("float32[1,2", "do not end with ]"),
            ("int64[1,0]", "size '0'"),
            ("int64[1,x]", "size 'x'"),
            ("float32[1]:0..5", "integer dtypes only"),
            ("int64[4]:5", "not LO..HI"),
            ("int64[4]:5..5", "empty"),
            ("int64[4]:a..5", "bound 'a'"),
        ] {
            let err = text.parse::<InputSpec>().unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
            assert!(err.contains("accepted: DTYPE[d0,d1,...]"), "{err}");
        }
    }
}
