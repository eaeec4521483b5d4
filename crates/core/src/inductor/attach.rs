//! Finding a trace's `kernels.json` and naming, on each tier-4 signature, where its
//! generated kernel's code is.

use std::path::{Path, PathBuf};

use super::kernels::{INDUCTOR_DIR, KERNELS_FILE};
use super::read::{read_kernels, InductorKernels, KernelsFileError};
use crate::signature::generated::NO_CACHE_REASON;
use crate::signature::schema::{GeneratedKind, SignatureFile, Tier};
use crate::trace::Trace;

/// Classifies a loaded trace (see [`crate::signature::classify`]) and names its generated
/// kernels' code from the kept Inductor cache: `--inductor-cache DIR`, else `inductor/`
/// beside the trace when there is one.
pub fn classify_with_cache(
    trace: &Trace,
    trace_path: &Path,
    inductor_cache: Option<&Path>,
) -> Result<SignatureFile, KernelsFileError> {
    let mut file = crate::signature::classify(trace, trace_path);
    attach_cache(&mut file, trace_path, inductor_cache)?;
    Ok(file)
}

/// Names the generated kernels' code of a signature file classified from `trace_path`
/// (in memory or streamed) from the kept Inductor cache, as [`classify_with_cache`] does.
pub fn attach_cache(
    file: &mut SignatureFile,
    trace_path: &Path,
    inductor_cache: Option<&Path>,
) -> Result<(), KernelsFileError> {
    if let Some(kernels) = kernels_for_trace(trace_path, inductor_cache)? {
        fill_sources(file, &kernels)?;
        if let Some(compiled) = file.compiled_code.as_mut() {
            compiled.wrapper = kernels.file.wrapper.clone();
        }
    }
    Ok(())
}

/// The `kernels.json` for a trace: in `--inductor-cache DIR` when given (`DIR/kernels.json`,
/// or `DIR/inductor/kernels.json` for the output folder of a capture), else in the
/// `inductor/` folder beside the trace when there is one. A given folder without one is an
/// error; no folder beside the trace is not.
pub fn locate(trace: &Path, cache: Option<&Path>) -> Result<Option<PathBuf>, KernelsFileError> {
    if let Some(dir) = cache {
        if dir.is_file() {
            return Ok(Some(dir.to_path_buf()));
        }
        return [
            dir.join(KERNELS_FILE),
            dir.join(INDUCTOR_DIR).join(KERNELS_FILE),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .map(Some)
        .ok_or_else(|| {
            KernelsFileError::new(
                dir,
                format!(
                    "no {KERNELS_FILE} here (nor in {INDUCTOR_DIR}/): give the inductor/ folder \
                     `replay capture --compile` kept beside its trace"
                ),
            )
        });
    }
    // Standard input (`--trace -`) is beside nothing.
    if trace.as_os_str() == crate::trace::STDIN_PATH {
        return Ok(None);
    }
    let beside = trace
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(INDUCTOR_DIR)
        .join(KERNELS_FILE);
    Ok(beside.is_file().then_some(beside))
}

/// Reads the `kernels.json` for `trace` (see [`locate`]), if any.
pub fn kernels_for_trace(
    trace: &Path,
    cache: Option<&Path>,
) -> Result<Option<InductorKernels>, KernelsFileError> {
    locate(trace, cache)?
        .map(|path| read_kernels(&path))
        .transpose()
}

/// Gives every tier-4 signature of `file` its kernel's code (`generated.source`) from
/// `kernels`; the signature is then replayable unless something else rules it out. Every
/// tier-4 signature must be found there, as the same kind of kernel: a cache that does not
/// hold the trace's kernels is the wrong one. Returns how many signatures were filled.
pub fn fill_sources(
    file: &mut SignatureFile,
    kernels: &InductorKernels,
) -> Result<usize, KernelsFileError> {
    let mut missing: Vec<String> = Vec::new();
    let mut filled = 0;
    let generated = file.signatures.iter().filter(|s| s.tier == Tier::Generated);
    let total = generated.count();
    for sig in file
        .signatures
        .iter_mut()
        .filter(|s| s.tier == Tier::Generated)
    {
        let Some(params) = sig.generated.as_mut() else {
            continue;
        };
        let Some(kernel) = kernels.by_trace_name(&sig.name) else {
            missing.push(sig.name.clone());
            continue;
        };
        if kernel.kind != params.kind {
            return Err(KernelsFileError::new(
                &kernels.path,
                format!(
                    "kernel {:?} is {:?} here but {:?} in the trace",
                    sig.name, kernel.kind, params.kind
                ),
            ));
        }
        params.source = Some(kernels.resolve(&kernel.source).display().to_string());
        let mut reasons: Vec<String> = sig
            .reason
            .as_deref()
            .unwrap_or("")
            .split("; ")
            .filter(|r| !r.is_empty() && *r != NO_CACHE_REASON)
            .map(str::to_owned)
            .collect();
        if kernel.kind == GeneratedKind::Triton {
            if let Err(why) = kernels.triton_launch(&kernel.trace_name) {
                reasons.push(format!("Triton kernel not launchable: {why}"));
            }
        }
        sig.replayable = reasons.is_empty();
        sig.reason = (!reasons.is_empty()).then(|| reasons.join("; "));
        filled += 1;
    }
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
        return Err(KernelsFileError::new(
            &kernels.path,
            format!(
                "does not hold the trace's generated kernel(s) {}{} ({} of {total} missing): \
                 the cache of another run?",
                shown.join(", "),
                if missing.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                },
                missing.len()
            ),
        ));
    }
    Ok(filled)
}
