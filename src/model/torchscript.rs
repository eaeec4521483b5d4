//! Loading a TorchScript model with libtorch and making the input it expects.

use std::path::Path;

use tch::{CModule, Device, Kind, Tensor};

use super::input_spec::InputSpec;
use crate::error::{Error, Result};

/// A loaded TorchScript model and what its input looks like.
pub struct TorchScriptModel {
    pub module: CModule,
    /// Rows of the token embedding: input ids are drawn from `[0, vocab)`.
    pub vocab: i64,
    pub device: Device,
    /// The file it was loaded from, for messages.
    pub path: std::path::PathBuf,
}

/// Names a token embedding's weight ends with: BLOOM and BERT (`word_embeddings`), GPT-2
/// (`wte`), T5 (`shared`), most others (`embed_tokens`).
const TOKEN_EMBEDDINGS: [&str; 4] = [
    "word_embeddings.weight",
    "wte.weight",
    "shared.weight",
    "embed_tokens.weight",
];

/// Vocabulary when the model has no recognisable embedding (ids stay valid for any model
/// with at least this many rows).
const FALLBACK_VOCAB: i64 = 1000;

impl TorchScriptModel {
    pub fn load(path: &Path, device: Device) -> Result<TorchScriptModel> {
        let bad = |message: String| Error::BadInput {
            path: path.to_path_buf(),
            message,
        };
        if !path.is_file() {
            return Err(bad(
                "no such model file (export one with `replay export`)".into()
            ));
        }
        let mut module = CModule::load_on_device(path, device).map_err(|e| {
            bad(format!(
                "not a TorchScript model libtorch can load: {}",
                first_line(&e.to_string())
            ))
        })?;
        module.set_eval();
        let vocab = module
            .named_parameters()
            .ok()
            .and_then(|params| {
                params
                    .iter()
                    .find(|(name, t)| {
                        TOKEN_EMBEDDINGS.iter().any(|e| name.ends_with(e)) && t.dim() == 2
                    })
                    .map(|(_, t)| t.size()[0])
            })
            .unwrap_or(FALLBACK_VOCAB);
        Ok(TorchScriptModel {
            module,
            vocab,
            device,
            path: path.to_path_buf(),
        })
    }

    /// Fixed random token ids `[batch, seq_len]` in `[0, vocab)`, seeded like
    /// `scripts/capture_trace.py` so the timed and the profiled runs see the same input.
    pub fn input_ids(&self, batch: i64, seq_len: i64, seed: i64) -> Tensor {
        tch::manual_seed(seed);
        Tensor::randint(self.vocab, [batch, seq_len], (Kind::Int64, Device::Cpu))
            .to_device(self.device)
    }

    /// The inputs a run feeds: `specs` (`--input`) with integer ranges filled in from the
    /// vocabulary, or token ids `[batch, seq_len]` when there are none.
    pub fn resolve_inputs(&self, specs: &[InputSpec], batch: i64, seq_len: i64) -> Vec<InputSpec> {
        if specs.is_empty() {
            vec![InputSpec::token_ids(batch, seq_len, self.vocab)]
        } else {
            specs
                .iter()
                .map(|s| s.with_default_range(self.vocab))
                .collect()
        }
    }

    /// Fixed random tensors of `specs` on the model's device, seeded as `input_ids` is.
    pub fn make_inputs(&self, specs: &[InputSpec], seed: i64) -> Result<Vec<Tensor>> {
        tch::manual_seed(seed);
        specs
            .iter()
            .map(|spec| {
                spec.make(self.device).map_err(|e| {
                    Error::Model(format!("input {spec}: {}", first_line(&e.to_string())))
                })
            })
            .collect()
    }

    /// One forward pass on `inputs` made from `specs`; a model that does not run on them is a
    /// usage error naming the model file, the inputs and libtorch's reason.
    pub fn check_runs_on(&self, specs: &[InputSpec], inputs: &[Tensor]) -> Result<()> {
        let _guard = tch::no_grad_guard();
        self.module.forward_ts(inputs).map(drop).map_err(|e| {
            let text = e.to_string();
            let reason = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or(&text)
                .trim();
            let specs: Vec<String> = specs.iter().map(InputSpec::to_string).collect();
            Error::BadInput {
                path: self.path.clone(),
                message: format!(
                    "does not run on input {} (give the inputs it takes with --input): {reason}",
                    specs.join(", ")
                ),
            }
        })
    }

    /// One forward pass.
    pub fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_all(std::slice::from_ref(input))
    }

    /// One forward pass of a model with any number of inputs.
    pub fn forward_all(&self, inputs: &[Tensor]) -> Result<Tensor> {
        self.module
            .forward_ts(inputs)
            .map_err(|e| Error::Model(first_line(&e.to_string())))
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
        .trim()
        .to_string()
}
