//! How coverage reads: what replay could not see of the step (uninstrumented compiled code),
//! its share as [`percent_text`] writes it.

use super::comparison::Coverage;
use crate::percent::percent_text;
use crate::signature::schema::SignatureFile;

/// `; replay could not see 21.4% of the step: 75.9 ms of uninstrumented compiled code`, for
/// a trace whose compiled regions hold time no recorded op covers; empty otherwise.
pub fn unseen_text(coverage: &Coverage) -> String {
    let text = unseen(
        coverage.uninstrumented_compiled_us,
        coverage.unseen_share_of_step,
    );
    match (coverage.wrapper_us, coverage.accounted_share_of_step) {
        (Some(us), Some(accounted)) => format!(
            "{text}; its wrapper measured without the profiler, {} a pass (added to the \
             sum): {} of the step measured",
            crate::plot::time_text(us),
            percent_text(accounted)
        ),
        _ => text,
    }
}

/// [`unseen_text`] from a signature file's compiled code.
pub fn unseen_in_file(file: &SignatureFile) -> String {
    let compiled = file.compiled_code.as_ref();
    let text = unseen(
        compiled.map(|c| c.uninstrumented_us),
        compiled.map(|c| c.uninstrumented_share()),
    );
    match compiled.and_then(|c| c.wrapper.as_ref()) {
        Some(w) => match w.counted_us() {
            Some(us) => format!(
                "{text}; its wrapper measured by the capture without the profiler: {} a pass",
                crate::plot::time_text(us)
            ),
            None => format!(
                "{text}; its wrapper's measurement is not counted: {}",
                w.why_not_usable.as_deref().unwrap_or("not usable")
            ),
        },
        None => text,
    }
}

fn unseen(uninstrumented_us: Option<f64>, share: Option<f64>) -> String {
    match (uninstrumented_us, share) {
        (Some(us), Some(share)) if us > 0.0 => format!(
            "; replay could not see {} of the step: {} of uninstrumented compiled code \
             (inside torch.compile regions, no recorded op)",
            percent_text(share),
            crate::plot::time_text(us)
        ),
        (Some(_), Some(_)) => {
            "; every part of the compiled regions was recorded (0.0% of the step unseen)".to_owned()
        }
        _ => String::new(),
    }
}
