//! Loading a TorchScript model with libtorch and making the input it expects.

use std::path::{Path, PathBuf};

use tch::{CModule, Device, Kind, Tensor};

use crate::error::{Error, Result};

/// A loaded TorchScript model and what its input looks like.
pub struct TorchScriptModel {
    /// The file it was loaded from, for messages.
    pub path: PathBuf,
    pub module: CModule,
    /// Rows of the token embedding: input ids are drawn from `[0, vocab)`.
    pub vocab: i64,
    pub device: Device,
}

/// Vocabulary when the model has no recognisable embedding (ids stay valid for any model
/// with at least this many rows).
const FALLBACK_VOCAB: i64 = 1000;

/// Refuses a model path that is missing, a folder or an empty file, in words libtorch would not
/// find ("not a ZIP archive"); used before loading, and by `compare` before it captures.
pub fn check_model_file(path: &Path) -> Result<()> {
    let problem = match std::fs::metadata(path) {
        Err(_) => "no such model file",
        Ok(meta) if meta.is_dir() => "is a folder, not a model file",
        Ok(meta) if meta.len() == 0 => "is empty (0 bytes), not a TorchScript model",
        Ok(_) => return Ok(()),
    };
    Err(Error::BadInput {
        path: path.to_path_buf(),
        message: format!("{problem} (export one with `replay export`)"),
    })
}

impl TorchScriptModel {
    pub fn load(path: &Path, device: Device) -> Result<TorchScriptModel> {
        let bad = |message: String| Error::BadInput {
            path: path.to_path_buf(),
            message,
        };
        check_model_file(path)?;
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
            path: path.to_path_buf(),
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

    /// The usage error for a model whose first forward pass on token ids `[batch, seq_len]`
    /// failed: it loaded, so it is TorchScript, but not a model replay can feed (a forward that
    /// wants other inputs, a sequence longer than its positions). Only the first pass means
    /// this: a later failure is the machine's (out of memory, say), not the file's.
    pub fn does_not_run_on_token_ids(&self, batch: i64, seq_len: i64, error: Error) -> Error {
        Error::BadInput {
            path: self.path.clone(),
            message: format!(
                "loads, but does not run on token ids [{batch}, {seq_len}]: {}",
                match error {
                    Error::Model(message) => message,
                    other => other.to_string(),
                }
            ),
        }
    }

    /// One forward pass.
    pub fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.module
            .forward_ts(&[input])
            .map_err(|e| Error::Model(cause_line(&e.to_string())))
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
        .trim()
        .to_string()
}

/// The line of a libtorch error that says what went wrong. An error raised inside the
/// TorchScript interpreter starts with "The following operation failed in the TorchScript
/// interpreter.", then the serialized code's traceback, and ends with the cause
/// (`RuntimeError: mat1 and mat2 shapes cannot be multiplied ...`): that last line is the one.
fn cause_line(text: &str) -> String {
    let first = first_line(text);
    if !first.contains("failed in the TorchScript interpreter") {
        return first;
    }
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or(first.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::cause_line;

    #[test]
    fn the_cause_of_an_interpreter_error_is_its_last_line() {
        let interpreter = "Internal torch error: The following operation failed in the TorchScript interpreter.\n\
             Traceback of TorchScript, serialized code (most recent call last):\n\
             \x20 File \"code/__torch__.py\", line 8, in forward\n\
             \x20   return torch.mm(x, x)\n\
             RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x5 and 1x5)\n\n";
        assert_eq!(
            cause_line(interpreter),
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x5 and 1x5)"
        );
        let plain = "Internal torch error: forward() is missing value for argument 'y'.\nmore";
        assert_eq!(
            cause_line(plain),
            "Internal torch error: forward() is missing value for argument 'y'."
        );
    }
}
