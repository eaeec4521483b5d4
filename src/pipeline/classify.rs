//! Classifying a trace inside a run (`replay isolated --trace`, `replay compare`): the trace's
//! signatures, with its Execution Trace attached when one is given (the same
//! [`attach_file`] as `replay classify --execution-trace`), written where the run keeps them.

use std::path::Path;

use replay_core::execution_trace::attach::attach_file;
use replay_core::signature::SignatureFile;
use replay_core::trace::Trace;

use crate::export;

use super::observer::{Observer, Stage};

/// Classifies `trace` (read from `trace_path`; generated kernels found in `inductor_cache`, by
/// default beside the trace) into the signature file `out`, attaching the Execution Trace at
/// `et` when one is given, and tells `observer` how it linked. An ET that cannot be read, or
/// that does not belong to the trace, is refused (exit 2, naming the files).
pub fn classify_into(
    trace: &Trace,
    trace_path: &Path,
    inductor_cache: Option<&Path>,
    et: Option<&Path>,
    out: &Path,
    observer: &mut dyn Observer,
) -> Result<SignatureFile, crate::Error> {
    observer.stage_started(Stage::Classify, &trace_path.display().to_string());
    let core = |e: replay_core::Error| crate::Error::from(e);
    let mut file = replay_core::inductor::classify_with_cache(trace, trace_path, inductor_cache)
        .map_err(|e| core(e.into()))?;
    if let Some(et) = et {
        let source = attach_file(&mut file, trace, trace_path, et).map_err(|e| core(e.into()))?;
        observer.info(&format!("{}\n", source.summary()));
    }
    export::write_atomic(out, &export::json::to_bytes(&file)).map_err(core)?;
    observer.stage_finished(Stage::Classify);
    Ok(file)
}
