//! Classifying a trace inside a run (`replay isolated --trace`, `replay compare`): the trace's
//! signatures, with its Execution Trace attached when one is given (the same
//! [`link_file`] and [`attach`] as `replay classify --execution-trace`), written where the run keeps them.

use std::path::Path;

use replay_core::execution_trace::attach::{attach, link_file, LinkedEt};
use replay_core::signature::SignatureFile;
use replay_core::trace::Trace;

use crate::export;

use super::observer::{Observer, Stage};

/// Classifies `trace` (read from `trace_path`; generated kernels found in `inductor_cache`, by
/// default beside the trace) into the signature file `out`, linking the Execution Trace at
/// `et` first when one is given (the trace's ops that recorded no inputs take the ET's, then
/// the signatures its schemas and values), and tells `observer` how it linked. An ET that
/// cannot be read, or that does not belong to the trace, is refused (exit 2, naming the
/// files). The linked ET is returned for the stages that follow its data flow.
pub fn classify_into(
    trace: &mut Trace,
    trace_path: &Path,
    inductor_cache: Option<&Path>,
    et: Option<&Path>,
    out: &Path,
    observer: &mut dyn Observer,
) -> Result<(SignatureFile, Option<LinkedEt>), crate::Error> {
    observer.stage_started(Stage::Classify, &trace_path.display().to_string());
    let core = |e: replay_core::Error| crate::Error::from(e);
    let linked = match et {
        Some(et) => Some(link_file(trace, trace_path, et).map_err(|e| core(e.into()))?),
        None => None,
    };
    let mut file = replay_core::inductor::classify_with_cache(trace, trace_path, inductor_cache)
        .map_err(|e| core(e.into()))?;
    if let Some(linked) = &linked {
        let source = attach(&mut file, trace, linked);
        observer.info(&format!("{}\n", source.summary()));
    }
    export::write_atomic(out, &export::json::to_bytes(&file)).map_err(core)?;
    observer.stage_finished(Stage::Classify);
    Ok((file, linked))
}
