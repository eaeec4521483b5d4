//! Loading a TorchScript model with libtorch and making the input it expects.

use std::path::{Path, PathBuf};

use tch::{CModule, Kind, Tensor};

use super::input_spec::InputSpec;
use super::whole_model::WholeModel;
use crate::device::Device;
use crate::error::{Error, Result};

/// A loaded TorchScript model and what its input looks like.
pub struct TorchScriptModel {
    /// The file it was loaded from, for messages.
    pub path: PathBuf,
    pub module: CModule,
    /// Rows of the token embedding: input ids are drawn from `[0, vocab)`.
    pub vocab: i64,
    /// The opened device it was loaded onto.
    pub device: Device,
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

/// Refuses a model path that is missing, a folder or an empty file, in words libtorch would not
/// find ("not a ZIP archive"); used before loading, and by `compare` before it captures.
pub fn check_model_file(path: &Path) -> Result<()> {
    let problem = match std::fs::metadata(path) {
        Err(_) => "no such model file",
        Ok(meta) if meta.is_dir() => "is a folder, not a model file",
        Ok(meta) if meta.len() == 0 => "is empty (0 bytes), not a TorchScript model",
        Ok(_) => return check_archive(path),
    };
    Err(Error::from(replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message: format!("{problem} (export one with `replay export`)"),
    }))
}

/// A zip archive's first bytes: a local file header, or the end record of an empty archive.
const ZIP_MAGICS: [&[u8; 4]; 2] = [b"PK\x03\x04", b"PK\x05\x06"];

/// Refuses a non-empty file that is not a zip archive, which no TorchScript model is: found
/// here in microseconds rather than by a loader (libtorch, or Python importing torch for
/// `capture`, seconds) that would say less. Missing, unreadable and empty files pass; the
/// loader names those.
pub fn check_archive(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4);
    let read = std::fs::File::open(path).and_then(|f| f.take(4).read_to_end(&mut head));
    if read.is_err() || head.is_empty() || ZIP_MAGICS.iter().any(|m| head == m.as_slice()) {
        return Ok(());
    }
    Err(Error::from(replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message: format!(
            "cannot load it: not a TorchScript model (those are zip archives; this file starts \
             with {:?}); export one with `replay export`",
            String::from_utf8_lossy(&head)
        ),
    }))
}

impl TorchScriptModel {
    pub fn load(path: &Path, device: &Device) -> Result<TorchScriptModel> {
        let bad = |message: String| {
            Error::from(replay_core::Error::BadInput {
                path: path.to_path_buf(),
                message,
            })
        };
        check_model_file(path)?;
        let mut module = CModule::load_on_device(path, device.torch()).map_err(|e| {
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
            path: path.to_path_buf(),
            module,
            vocab,
            device: device.clone(),
        })
    }

    /// Fixed random token ids `[batch, seq_len]` in `[0, vocab)`, seeded like
    /// `scripts/capture_trace.py` so the timed and the profiled runs see the same input.
    pub fn input_ids(&self, batch: i64, seq_len: i64, seed: i64) -> Tensor {
        tch::manual_seed(seed);
        Tensor::randint(
            self.vocab,
            [batch, seq_len],
            (Kind::Int64, Device::host().torch()),
        )
        .to_device(self.device.torch())
    }

    /// The usage error for a model whose first forward pass on token ids `[batch, seq_len]`
    /// failed: it loaded, so it is TorchScript, but not a model replay can feed (a forward that
    /// wants other inputs, a sequence longer than its positions). Only the first pass means
    /// this: a later failure is the machine's (out of memory, say), not the file's.
    pub fn does_not_run_on_token_ids(&self, batch: i64, seq_len: i64, error: Error) -> Error {
        Error::from(replay_core::Error::BadInput {
            path: self.path.clone(),
            message: format!(
                "loads, but does not run on token ids [{batch}, {seq_len}]: {}",
                match error {
                    Error::Model(message) => message,
                    other => other.to_string(),
                }
            ),
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
            .map_err(|e| Error::Model(cause_line(&e.to_string())))
    }
}

impl WholeModel for TorchScriptModel {
    fn path(&self) -> &Path {
        &self.path
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn format(&self) -> Option<&'static str> {
        None
    }

    /// `specs` (`--input`) with integer ranges filled in from the vocabulary, or token ids
    /// `[batch, seq_len]` when there are none.
    fn resolve_inputs(
        &self,
        specs: &[InputSpec],
        batch: i64,
        seq_len: i64,
    ) -> Result<Vec<InputSpec>> {
        Ok(if specs.is_empty() {
            vec![InputSpec::token_ids(batch, seq_len, self.vocab)]
        } else {
            specs
                .iter()
                .map(|s| s.with_default_range(self.vocab))
                .collect()
        })
    }

    fn forward_dropped(&self, inputs: &[Tensor]) -> Result<()> {
        self.forward_all(inputs).map(drop)
    }

    fn check_runs_on(&self, specs: &[InputSpec], inputs: &[Tensor]) -> Result<()> {
        let _guard = tch::no_grad_guard();
        self.module.forward_ts(inputs).map(drop).map_err(|e| {
            let reason = cause_line(&e.to_string());
            // Token ids are what replay feeds unless told otherwise: say so in those words.
            let inputs = match specs {
                [only] if only.dtype == "int64" && only.sizes.len() == 2 => {
                    format!("token ids {:?}", only.sizes)
                }
                _ => {
                    let specs: Vec<String> = specs.iter().map(InputSpec::to_string).collect();
                    format!("input {}", specs.join(", "))
                }
            };
            Error::from(replay_core::Error::BadInput {
                path: self.path.clone(),
                message: format!(
                    "loads, but does not run on {inputs}: {reason} (give the inputs it takes with --input)"
                ),
            })
        })
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
