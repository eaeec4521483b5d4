//! Reading `kernels.json` and checking it: its format and version, the keys each kind of
//! kernel needs, and that every path it names is a file inside its folder.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

pub use super::error::KernelsFileError;
use super::kernels::{KernelArg, KernelsFile, KERNELS_FORMAT, KERNELS_VERSION};
use super::triton_cache::{self, TritonLaunch};
use crate::signature::schema::GeneratedKind;

/// A read and checked `kernels.json`, with the folder its paths are relative to.
#[derive(Debug, Clone, PartialEq)]
pub struct InductorKernels {
    /// The `kernels.json` itself.
    pub path: PathBuf,
    /// The folder holding it.
    pub dir: PathBuf,
    pub file: KernelsFile,
    /// Each Triton kernel's launch data by trace name, or why it has none
    /// ([`triton_cache::resolve`]).
    pub triton: HashMap<String, Result<TritonLaunch, String>>,
}

impl InductorKernels {
    /// A path of the file, resolved against its folder.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// The kernel the profiler recorded as `trace_name`.
    pub fn by_trace_name(&self, trace_name: &str) -> Option<&super::kernels::RecordedKernel> {
        self.file
            .kernels
            .iter()
            .find(|k| k.trace_name == trace_name)
    }

    /// The launch data of the Triton kernel the profiler recorded as `trace_name`, or why
    /// there is none.
    pub fn triton_launch(&self, trace_name: &str) -> Result<&TritonLaunch, String> {
        match self.triton.get(trace_name) {
            Some(Ok(launch)) => Ok(launch),
            Some(Err(why)) => Err(why.clone()),
            None => Err(format!(
                "{trace_name} is not a Triton kernel of {}",
                self.path.display()
            )),
        }
    }
}

/// Reads `path` (a `kernels.json`) and checks it.
pub fn read_kernels(path: &Path) -> Result<InductorKernels, KernelsFileError> {
    let bad = |problem: String| KernelsFileError::new(path, problem);
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("not JSON (a replay-inductor-kernels file): {e}")))?;
    // Format and version first, so that another file or version is reported as such rather
    // than as whichever key it lacks.
    match value.get("format").and_then(|f| f.as_str()) {
        Some(KERNELS_FORMAT) => {}
        Some(other) => {
            return Err(bad(format!(
                "format {other:?}, not {KERNELS_FORMAT:?} (written by `replay capture --compile`)"
            )))
        }
        None => {
            return Err(bad(format!(
                "no \"format\": not a {KERNELS_FORMAT} file (written by `replay capture --compile`)"
            )))
        }
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(KERNELS_VERSION) => {}
        Some(v) => {
            return Err(bad(format!(
                "version {v}; this replay reads version {KERNELS_VERSION} (capture again)"
            )))
        }
        None => return Err(bad("no \"version\" number".to_owned())),
    }
    let file: KernelsFile = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    check(&file, &dir).map_err(bad)?;
    let mut triton = HashMap::new();
    for kernel in file
        .kernels
        .iter()
        .filter(|k| k.kind == GeneratedKind::Triton)
    {
        triton.insert(
            kernel.trace_name.clone(),
            triton_cache::resolve(&dir, kernel)?,
        );
    }
    Ok(InductorKernels {
        path: path.to_path_buf(),
        dir,
        file,
        triton,
    })
}

/// What the kernels must hold beyond their types.
fn check(file: &KernelsFile, dir: &Path) -> Result<(), String> {
    let dir = dir.canonicalize().map_err(|e| format!("its folder: {e}"))?;
    let mut trace_names = HashSet::new();
    for kernel in &file.kernels {
        let at = format!("kernel {:?}", kernel.name);
        if !trace_names.insert(kernel.trace_name.as_str()) {
            return Err(format!(
                "{at}: trace_name {:?} is given twice",
                kernel.trace_name
            ));
        }
        let required: Vec<(&str, bool)> = match kernel.kind {
            GeneratedKind::InductorCpp => vec![
                ("kernel_source", kernel.kernel_source.is_some()),
                ("library", kernel.library.is_some()),
                ("symbol", kernel.symbol.is_some()),
            ],
            // Its launch data may come from the kept Triton cache instead (triton_cache).
            GeneratedKind::Triton => vec![],
        };
        if let Some((key, _)) = required.iter().find(|(_, present)| !present) {
            return Err(format!(
                "{at}: missing `{key}`, which a {:?} kernel needs",
                kernel.kind
            ));
        }
        for (c, call) in kernel.calls.iter().enumerate() {
            for (a, arg) in call.args.iter().enumerate() {
                if let KernelArg::Tensor(t) = arg {
                    if t.sizes.len() != t.strides.len() {
                        return Err(format!(
                            "{at}: calls[{c}].args[{a}]: {} sizes but {} strides",
                            t.sizes.len(),
                            t.strides.len()
                        ));
                    }
                }
            }
        }
        for (key, path) in kernel.paths() {
            inside(&dir, path).map_err(|why| format!("{at}: {key} {path:?} {why}"))?;
        }
    }
    Ok(())
}

/// Whether `relative` names an existing file inside `dir` (canonical): a relative path
/// without `..`, which, links resolved, stays inside.
fn inside(dir: &Path, relative: &str) -> Result<(), String> {
    let path = Path::new(relative);
    if relative.is_empty() {
        return Err("is empty".to_owned());
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err("is outside the folder of kernels.json (paths are relative to it)".to_owned());
    }
    let resolved = dir
        .join(path)
        .canonicalize()
        .map_err(|e| format!("cannot be opened: {e}"))?;
    if !resolved.starts_with(dir) {
        return Err("leads outside the folder of kernels.json".to_owned());
    }
    if !resolved.is_file() {
        return Err("is not a file".to_owned());
    }
    Ok(())
}
