//! [`AotiPackage`]: an AOTInductor package (`replay export --format pt2 --aoti`, or
//! `torch._inductor.aoti_compile_and_package`) loaded with libtorch's `AOTIModelPackageLoader`
//! through the shim (`src/torch/shim/aoti_package.h`) and run on tch tensors, without Python.
//! The safe layer over the shim's raw calls: every failure of libtorch comes back as an error
//! value; a file that is not a package, or a package compiled for another device, is a usage
//! error naming the file.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use tch::Tensor;

use super::input_spec::InputSpec;
use super::pt2_archive::{self, ArchiveKind};
use super::whole_model::WholeModel;
use crate::device::{Device, DeviceSpec};
use crate::error::{Error, Result};
use crate::torch::sys::{self, RawAotiPackage};
use crate::torch::{c_string, shim_device_index, take_error, take_whole_string};

/// The model a package holds when it was compiled by `aoti_compile_and_package` (one model).
pub const DEFAULT_MODEL_NAME: &str = "model";
/// The metadata key of the device a package was compiled for (`cpu`, `cuda`), written by
/// AOTInductor itself.
pub const DEVICE_KEY: &str = "AOTI_DEVICE_KEY";
/// The metadata key of the input(s) a package was compiled for, as `--input` specs separated
/// by spaces (`scripts/export_pt2.py` writes it).
pub const INPUT_KEY: &str = "replay_input";

/// The `format` recorded in `full_model_timing.json` for a package.
pub const FORMAT: &str = "aoti_package";

/// A loaded AOTInductor package, ready to run.
pub struct AotiPackage {
    path: PathBuf,
    raw: NonNull<RawAotiPackage>,
    device: Device,
    metadata: BTreeMap<String, String>,
    /// The inputs it was compiled for (`replay_input`), when it says.
    compiled_for: Option<Vec<InputSpec>>,
}

impl std::fmt::Debug for AotiPackage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AotiPackage")
            .field("path", &self.path)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

/// A usage error naming `path` (exit 2).
fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::from(replay_core::Error::BadInput {
        path: path.to_path_buf(),
        message: message.into(),
    })
}

/// What to do with an ExportedProgram, in the words every refusal of one uses.
pub const COMPILE_FIRST: &str = "an ExportedProgram must be compiled before it can be timed: \
     `replay export --format pt2 --aoti` writes an AOTInductor package (or capture it with \
     `--compile`)";

/// Says which model of the package at `path` to load: the AOTInductor models it lists, or a
/// usage error for a `.pt2` that holds none (an ExportedProgram, another PT2 archive, a file
/// that is not a zip).
pub fn model_in(path: &Path) -> Result<String> {
    let kind = pt2_archive::inspect(path).map_err(|e| {
        bad(
            path,
            format!("not a PT2 archive (an AOTInductor package or an ExportedProgram): {e}"),
        )
    })?;
    match kind {
        ArchiveKind::AotiPackage { models } => {
            if models.contains(DEFAULT_MODEL_NAME) {
                return Ok(DEFAULT_MODEL_NAME.to_string());
            }
            let names: Vec<String> = models.into_iter().collect();
            match names.as_slice() {
                [only] => Ok(only.clone()),
                _ => Err(bad(
                    path,
                    format!(
                        "holds {} AOTInductor models ({}) and none named '{DEFAULT_MODEL_NAME}'; \
                         replay times a package of one model",
                        names.len(),
                        names.join(", ")
                    ),
                )),
            }
        }
        ArchiveKind::ExportedProgram => Err(bad(
            path,
            format!(
                "is a torch.export ExportedProgram, not an AOTInductor package: {COMPILE_FIRST}"
            ),
        )),
        ArchiveKind::OtherPt2 => Err(bad(
            path,
            "is a PT2 archive with neither an AOTInductor model (data/aotinductor/) nor an \
             ExportedProgram (models/)",
        )),
        ArchiveKind::NotPt2 => Err(bad(
            path,
            "is a zip archive but not a PT2 archive (no archive_format): neither an AOTInductor \
             package nor an ExportedProgram",
        )),
    }
}

/// The metadata of model `model` in the package at `path`, read without loading its code.
pub fn read_metadata(path: &Path, model: &str) -> Result<BTreeMap<String, String>> {
    let c_path = c_string(&path.display().to_string()).map_err(|e| bad(path, e.0))?;
    let c_model = c_string(model).map_err(|e| bad(path, e.0))?;
    let mut error = ptr::null_mut();
    // SAFETY: both strings outlive the call; the shim catches every C++ exception.
    let json =
        unsafe { sys::replay_aoti_package_metadata(c_path.as_ptr(), c_model.as_ptr(), &mut error) };
    if json.is_null() {
        return Err(bad(
            path,
            format!(
                "libtorch cannot read the package's metadata: {}",
                take_error(error)
            ),
        ));
    }
    // SAFETY: a non-null result is a string the shim allocated.
    let text = unsafe { take_whole_string(json) }.unwrap_or_default();
    serde_json::from_str(&text)
        .map_err(|e| Error::Model(format!("the shim's metadata of {}: {e}", path.display())))
}

/// The inputs recorded under [`INPUT_KEY`], or `None` when the package does not say.
fn compiled_for(
    path: &Path,
    metadata: &BTreeMap<String, String>,
) -> Result<Option<Vec<InputSpec>>> {
    let Some(text) = metadata.get(INPUT_KEY) else {
        return Ok(None);
    };
    text.split_whitespace()
        .map(|spec| {
            spec.parse::<InputSpec>()
                .map_err(|e| bad(path, format!("its metadata's {INPUT_KEY}: {e}")))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The device type a package's metadata names, as replay writes devices.
fn compiled_device(metadata: &BTreeMap<String, String>) -> Option<&str> {
    metadata.get(DEVICE_KEY).map(String::as_str)
}

/// Checks that the file at `path` is an AOTInductor package compiled for `device`'s kind (its
/// metadata says; no device is opened), and returns the model it holds and its metadata.
pub fn check_compiled_for(
    path: &Path,
    device: DeviceSpec,
) -> Result<(String, BTreeMap<String, String>)> {
    let model = model_in(path)?;
    let metadata = read_metadata(path, &model)?;
    let wanted = match device {
        DeviceSpec::Cpu => "cpu",
        DeviceSpec::Cuda(_) => "cuda",
    };
    match compiled_device(&metadata) {
        Some(compiled) if compiled == wanted => Ok((model, metadata)),
        Some(compiled) => Err(bad(
            path,
            format!(
                "is an AOTInductor package compiled for {compiled}, not for {wanted}: run \
                 it with --device {compiled}, or compile one for {wanted} where it will \
                 run (`replay export --format pt2 --aoti --device {wanted}`)"
            ),
        )),
        None => Err(bad(
            path,
            format!("its metadata does not say which device it was compiled for ({DEVICE_KEY})"),
        )),
    }
}

impl AotiPackage {
    /// Loads the package at `path` onto the opened `device`, after checking that it is an
    /// AOTInductor package compiled for that kind of device ([`check_compiled_for`]).
    pub fn load(path: &Path, device: &Device) -> Result<AotiPackage> {
        let (model, metadata) = check_compiled_for(path, device.spec())?;
        let compiled_for = compiled_for(path, &metadata)?;
        let index =
            shim_device_index(device).map_err(|_| bad(path, "CUDA device index out of range"))?;
        let c_path = c_string(&path.display().to_string()).map_err(|e| bad(path, e.0))?;
        let c_model = c_string(&model).map_err(|e| bad(path, e.0))?;
        let mut error = ptr::null_mut();
        // SAFETY: both strings outlive the call; the shim catches every C++ exception.
        let raw = unsafe {
            sys::replay_aoti_package_load(c_path.as_ptr(), c_model.as_ptr(), index, &mut error)
        };
        let raw = NonNull::new(raw).ok_or_else(|| {
            bad(
                path,
                format!("libtorch cannot load the package: {}", take_error(error)),
            )
        })?;
        Ok(AotiPackage {
            path: path.to_path_buf(),
            raw,
            device: device.clone(),
            metadata,
            compiled_for,
        })
    }

    /// Its metadata: Inductor's `aot_inductor.metadata` and the runtime's own keys.
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The inputs it was compiled for, when its metadata says ([`INPUT_KEY`]).
    pub fn compiled_for(&self) -> Option<&[InputSpec]> {
        self.compiled_for.as_deref()
    }

    /// One run on `inputs`; the outputs are returned when `keep` is set, else released inside
    /// the call.
    fn run_raw(&self, inputs: &[Tensor], keep: bool) -> Result<Vec<Tensor>> {
        let ptrs: Vec<*mut c_void> = inputs.iter().map(|t| t.as_ptr() as *mut c_void).collect();
        let mut error = ptr::null_mut();
        // SAFETY: `raw` is a live package (freed only in Drop); the input pointers are tch
        // tensors borrowed for the call, which the shim only reads.
        let count = unsafe {
            sys::replay_aoti_package_run(
                self.raw.as_ptr(),
                ptrs.as_ptr(),
                ptrs.len(),
                i32::from(keep),
                &mut error,
            )
        };
        if count < 0 {
            return Err(Error::Model(take_error(error).0));
        }
        if !keep {
            return Ok(Vec::new());
        }
        (0..count as usize)
            .map(|i| {
                // SAFETY: the shim returns a new tensor the caller owns, or null.
                let t = unsafe { sys::replay_aoti_package_output(self.raw.as_ptr(), i) };
                if t.is_null() {
                    Err(Error::Model(format!("output {i} of {count} is missing")))
                } else {
                    // SAFETY: `t` is a `new at::Tensor`, owned from here on.
                    Ok(unsafe { Tensor::from_ptr(t as *mut _) })
                }
            })
            .collect()
    }

    /// One run on `inputs`, returning its outputs.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.run_raw(inputs, true)
    }

    /// A usage error when `inputs` are not the inputs the package was compiled for (its code
    /// has their shapes built in, and nothing checks them at run time).
    fn check_compiled_for(&self, inputs: &[InputSpec]) -> Result<()> {
        let Some(compiled) = &self.compiled_for else {
            return Ok(());
        };
        let same = compiled.len() == inputs.len()
            && compiled
                .iter()
                .zip(inputs)
                .all(|(c, i)| c.dtype == i.dtype && c.sizes == i.sizes);
        if same {
            return Ok(());
        }
        let show = |specs: &[InputSpec]| {
            specs
                .iter()
                .map(InputSpec::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        Err(bad(
            &self.path,
            format!(
                "is compiled for the input {}, not {}: a package runs only on the shapes it was \
                 compiled for (export it again with the --seq-len you want)",
                show(compiled),
                show(inputs)
            ),
        ))
    }
}

impl Drop for AotiPackage {
    fn drop(&mut self) {
        // SAFETY: `raw` came from replay_aoti_package_load and is freed exactly once.
        unsafe { sys::replay_aoti_package_free(self.raw.as_ptr()) }
    }
}

impl WholeModel for AotiPackage {
    fn path(&self) -> &Path {
        &self.path
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    /// The inputs the package was compiled for; `--input` specs must be those (their ranges
    /// may differ); `batch` × `seq_len` token ids must be those unless they are replay's
    /// defaults, which a package's own shape replaces.
    fn resolve_inputs(
        &self,
        specs: &[InputSpec],
        batch: i64,
        seq_len: i64,
    ) -> Result<Vec<InputSpec>> {
        if !specs.is_empty() {
            self.check_compiled_for(specs)?;
            let completed = specs
                .iter()
                .enumerate()
                .map(|(i, spec)| match (&spec.range, self.compiled_for()) {
                    (None, Some(compiled)) => InputSpec {
                        range: compiled[i].range,
                        ..spec.clone()
                    },
                    _ => spec.clone(),
                })
                .collect();
            return Ok(completed);
        }
        let Some(compiled) = self.compiled_for() else {
            return Err(bad(
                &self.path,
                format!(
                    "its metadata does not say what input it was compiled for ({INPUT_KEY}; \
                     packages written by `replay export --format pt2 --aoti` do): give its \
                     inputs with --input"
                ),
            ));
        };
        let defaults = (
            super::input_spec::DEFAULT_BATCH,
            super::input_spec::DEFAULT_SEQ_LEN,
        );
        if let [only] = compiled {
            let token_ids = only.dtype == "int64" && only.sizes.len() == 2;
            if token_ids && (batch, seq_len) != defaults && only.sizes != [batch, seq_len] {
                self.check_compiled_for(&[InputSpec {
                    dtype: "int64",
                    sizes: vec![batch, seq_len],
                    range: None,
                }])?;
            }
        }
        Ok(compiled.to_vec())
    }

    fn forward_dropped(&self, inputs: &[Tensor]) -> Result<()> {
        self.run_raw(inputs, false).map(drop)
    }

    fn check_runs_on(&self, specs: &[InputSpec], inputs: &[Tensor]) -> Result<()> {
        self.check_compiled_for(specs)?;
        self.run_raw(inputs, false).map(drop).map_err(|e| {
            let specs: Vec<String> = specs.iter().map(InputSpec::to_string).collect();
            bad(
                &self.path,
                format!("loads, but does not run on input {}: {e}", specs.join(" ")),
            )
        })
    }
}
