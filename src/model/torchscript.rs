//! Loading a TorchScript model with libtorch and making the input it expects.

use std::path::Path;

use tch::{CModule, Device, Kind, Tensor};

use crate::error::{Error, Result};

/// A loaded TorchScript model and what its input looks like.
pub struct TorchScriptModel {
    pub module: CModule,
    /// Rows of the token embedding: input ids are drawn from `[0, vocab)`.
    pub vocab: i64,
    pub device: Device,
}

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
                    .find(|(name, t)| name.ends_with("word_embeddings.weight") && t.dim() == 2)
                    .map(|(_, t)| t.size()[0])
            })
            .unwrap_or(FALLBACK_VOCAB);
        Ok(TorchScriptModel {
            module,
            vocab,
            device,
        })
    }

    /// Fixed random token ids `[batch, seq_len]` in `[0, vocab)`, seeded like
    /// `scripts/capture_trace.py` so the timed and the profiled runs see the same input.
    pub fn input_ids(&self, batch: i64, seq_len: i64, seed: i64) -> Tensor {
        tch::manual_seed(seed);
        Tensor::randint(self.vocab, [batch, seq_len], (Kind::Int64, Device::Cpu))
            .to_device(self.device)
    }

    /// One forward pass.
    pub fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.module
            .forward_ts(&[input])
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
