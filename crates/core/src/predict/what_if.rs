//! What-if questions to the timeline: "what if the GEMMs were twice as fast", "what if
//! launches cost nothing (CUDA Graphs)", "what would this trace take with the kernel times
//! measured on another device".
//!
//! An expression changes durations in a step's [`Skeleton`]; the timeline is then simulated
//! as usual, so a faster kernel only shortens the step as far as the host, the stream order
//! and the syncs let it. Expressions ([`WhatIf::from_str`], listed in [`ACCEPTED`]):
//! - `tier1*F`, `tier2*F`, `tier3*F`: every invocation of the tier's signatures takes F
//!   times its duration (on a CPU-only trace the invocations are the top-level ops);
//! - `kernel:REGEX*F`: the signatures whose kernel name (copy or memset name; the op's name
//!   on a CPU-only trace) REGEX finds, anywhere in the name;
//! - `op:REGEX*F`: the signatures launched inside an op whose name REGEX finds (the
//!   launching op or any op around it);
//! - `host*F`: the host's own time: framework time between calls, launch calls, and the
//!   time a wait costs beyond waiting (not the top-level ops of a CPU-only trace, which
//!   are the work);
//! - `launch*F`, `launch=US`: each launch call takes F times its time, or US µs; `launch=0`
//!   is the effect of CUDA Graphs (no host cost per launch; the GPU's own launch latency and
//!   the gaps between kernels stay);
//! - `durations=FILE`: every signature of an `isolated.json` that replayed takes its replayed
//!   time per invocation (matched by signature id, as `replay predict --isolated`); the
//!   others keep theirs.
//!
//! Expressions apply in order, each on the timeline the ones before it made. Nothing else
//! changes: the host gaps keep the profiler's cost, so `*1` is the original timeline.

use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::str::FromStr;

use regex::Regex;
use serde::Serialize;

use super::catalog::SignatureCatalog;
use super::durations::us_to_ns;
use super::replayed::replayed_durations;
use super::skeleton::{HostItem, Skeleton};
use super::timeline::Timeline;
use super::{error_percent, Durations, Prediction};
use crate::results::isolated::IsolatedResults;
use crate::signature::schema::Tier;
use crate::trace::Nanos;

/// Every accepted form, for help texts and error messages.
pub const ACCEPTED: &str = "tier1*F, tier2*F, tier3*F, kernel:REGEX*F, op:REGEX*F, host*F, \
launch*F, launch=US, durations=FILE (F a factor >= 0, US microseconds >= 0, FILE an \
isolated.json)";

/// Which signatures a factor applies to.
#[derive(Debug, Clone)]
pub enum Selection {
    Tier(Tier),
    /// By kernel (copy, memset, host op) name.
    Kernel(Regex),
    /// By the launching op or any op around it.
    Op(Regex),
}

/// What an expression changes.
#[derive(Debug, Clone)]
pub enum Change {
    /// The selected signatures' invocations take `factor` times their duration.
    Work { selection: Selection, factor: f64 },
    /// Framework time, launch calls and waits' own cost take `factor` times theirs.
    Host { factor: f64 },
    /// Launch calls take `factor` times their time.
    LaunchFactor { factor: f64 },
    /// Launch calls take `us` each.
    LaunchCost { us: f64 },
    /// Replayed durations per signature from an `isolated.json`.
    Durations { path: PathBuf },
    /// Every unit of work re-timed from the source profile's device to the target's
    /// (`replay predict --profile`, [`super::hardware`]).
    Hardware(Box<super::hardware::HardwareScaling>),
}

/// One what-if expression, as typed and as understood.
#[derive(Debug, Clone)]
pub struct WhatIf {
    pub expression: String,
    pub change: Change,
}

/// An expression that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("what-if `{expression}`: {reason}; accepted: {ACCEPTED}")]
pub struct WhatIfSyntaxError {
    pub expression: String,
    pub reason: String,
}

impl fmt::Display for WhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expression)
    }
}

/// A finite, non-negative number.
fn non_negative(text: &str, what: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("{what} `{text}` is not a number >= 0")),
    }
}

fn regex(pattern: &str) -> Result<Regex, String> {
    if pattern.is_empty() {
        return Err("empty regular expression".into());
    }
    Regex::new(pattern).map_err(|e| format!("bad regular expression `{pattern}`: {e}"))
}

fn parse_change(text: &str) -> Result<Change, String> {
    if let Some(path) = text.strip_prefix("durations=") {
        if path.is_empty() {
            return Err("durations= needs an isolated.json".into());
        }
        return Ok(Change::Durations {
            path: PathBuf::from(path),
        });
    }
    if let Some(us) = text.strip_prefix("launch=") {
        return Ok(Change::LaunchCost {
            us: non_negative(us, "launch cost")?,
        });
    }
    // The factor follows the last `*`: a regular expression may hold `*` of its own.
    let Some((target, factor)) = text.rsplit_once('*') else {
        return Err("no `*F` factor and not `launch=US` or `durations=FILE`".into());
    };
    let factor = non_negative(factor, "factor")?;
    let work = |selection| Change::Work { selection, factor };
    Ok(match target {
        "tier1" => work(Selection::Tier(Tier::Copy)),
        "tier2" => work(Selection::Tier(Tier::Gemm)),
        "tier3" => work(Selection::Tier(Tier::Op)),
        "host" => Change::Host { factor },
        "launch" => Change::LaunchFactor { factor },
        _ => {
            if let Some(pattern) = target.strip_prefix("kernel:") {
                work(Selection::Kernel(regex(pattern)?))
            } else if let Some(pattern) = target.strip_prefix("op:") {
                work(Selection::Op(regex(pattern)?))
            } else {
                return Err(format!("unknown target `{target}`"));
            }
        }
    })
}

impl FromStr for WhatIf {
    type Err = WhatIfSyntaxError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let expression = text.trim();
        parse_change(expression)
            .map(|change| WhatIf {
                expression: expression.to_owned(),
                change,
            })
            .map_err(|reason| WhatIfSyntaxError {
                expression: text.to_owned(),
                reason,
            })
    }
}

/// `ns` times `factor`, in whole nanoseconds.
fn scaled(ns: Nanos, factor: f64) -> Nanos {
    if factor == 1.0 {
        return ns;
    }
    let product = (ns as f64 * factor).round();
    // A product past ±292 years cannot be simulated; the parser keeps factors finite.
    if product.is_finite() && product.abs() < 9.2e18 {
        product as Nanos
    } else {
        ns
    }
}

impl Selection {
    fn selects(&self, id: &str, catalog: &SignatureCatalog) -> bool {
        let Some(info) = catalog.get(id) else {
            return false;
        };
        match self {
            Selection::Tier(tier) => info.tier == *tier,
            Selection::Kernel(regex) => regex.is_match(&info.name),
            Selection::Op(regex) => info.ops.iter().any(|op| regex.is_match(op)),
        }
    }
}

impl WhatIf {
    /// Applies the change to every step of `skeleton`; returns how many durations (of
    /// activities, host ops, launch calls, gaps and waits) it set. `catalog` names the
    /// skeleton's signatures. `durations=FILE` reads its file here: a missing or malformed
    /// one, or one that shares no replayed signature with the trace, is the user's to fix.
    pub fn apply(&self, skeleton: &mut Skeleton, catalog: &SignatureCatalog) -> crate::Result<u64> {
        let mut changed = 0u64;
        match &self.change {
            Change::Work { selection, factor } => {
                let selected: Vec<bool> = skeleton
                    .signature_ids
                    .iter()
                    .map(|id| selection.selects(id, catalog))
                    .collect();
                set_work(
                    skeleton,
                    |signature, ns| {
                        let chosen = selected.get(signature as usize).copied().unwrap_or(false);
                        chosen.then(|| scaled(ns, *factor))
                    },
                    &mut changed,
                );
            }
            Change::Host { factor } => {
                for item in host_items(skeleton) {
                    let ns = match item {
                        HostItem::Gap { ns, .. } => ns,
                        HostItem::Launch { dispatch_ns, .. } => dispatch_ns,
                        HostItem::Wait { residual_ns, .. } => residual_ns,
                        HostItem::HostOp { .. } => continue,
                    };
                    *ns = scaled(*ns, *factor);
                    changed += 1;
                }
            }
            Change::LaunchFactor { factor } => {
                for item in host_items(skeleton) {
                    if let HostItem::Launch { dispatch_ns, .. } = item {
                        *dispatch_ns = scaled(*dispatch_ns, *factor);
                        changed += 1;
                    }
                }
            }
            Change::LaunchCost { us } => {
                let cost = us_to_ns(*us).unwrap_or(0);
                for item in host_items(skeleton) {
                    if let HostItem::Launch { dispatch_ns, .. } = item {
                        *dispatch_ns = cost;
                        changed += 1;
                    }
                }
            }
            Change::Hardware(scaling) => {
                let factors: Vec<Option<f64>> = skeleton
                    .signature_ids
                    .iter()
                    .map(|id| {
                        catalog
                            .get(id)
                            .and_then(|info| scaling.factor(info))
                            .map(|f| f.0)
                    })
                    .collect();
                set_work(
                    skeleton,
                    |signature, ns| {
                        let factor = factors.get(signature as usize).copied().flatten()?;
                        Some(scaled(ns, factor))
                    },
                    &mut changed,
                );
            }
            Change::Durations { path } => {
                let results = IsolatedResults::read(path)?;
                let durations = replayed_durations(&results);
                let by_index: Vec<Option<Nanos>> = skeleton
                    .signature_ids
                    .iter()
                    .map(|id| durations.get(id).and_then(|d| us_to_ns(d.device_us)))
                    .collect();
                if by_index.iter().all(Option::is_none) {
                    return Err(crate::Error::BadInput {
                        path: path.clone(),
                        message: format!(
                            "none of its {} replayed signatures occurs in the trace (was it made \
                             from this trace's signature file?)",
                            durations.len()
                        ),
                    });
                }
                set_work(
                    skeleton,
                    |signature, _| by_index.get(signature as usize).copied().flatten(),
                    &mut changed,
                );
            }
        }
        Ok(changed)
    }
}

/// One answered what-if: the timeline after this expression and every one before it.
#[derive(Debug, Clone)]
pub struct WhatIfTimeline {
    /// The expressions applied, in order (the last one is this what-if's own).
    pub applied: Vec<String>,
    pub timeline: Timeline,
    /// Durations the last expression set (0 when it selected nothing).
    pub changed: u64,
}

/// A what-if's answer as `replay predict` prints it: the new step time beside the original.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfOutcome {
    /// This what-if's own expression.
    pub expression: String,
    /// Every expression applied, in order (the ones before this and this one).
    pub applied: Vec<String>,
    /// Durations this expression set (0: it selected nothing, the timeline is unchanged).
    pub changed_durations: u64,
    /// Mean predicted step time with the changes, and the original's (the trace's own
    /// durations through the same model).
    pub predicted_us: f64,
    pub original_us: f64,
    /// (predicted - original) / original × 100.
    pub change_percent: f64,
    /// Against the trace's measured step, like the original's error.
    pub error_percent: f64,
    pub kernel_sum_us: f64,
    pub gpu_busy_fraction: f64,
}

impl WhatIfOutcome {
    /// The numbers of `answer`, beside the `original` prediction.
    pub fn new(answer: &WhatIfTimeline, original: &Prediction) -> WhatIfOutcome {
        let prediction = answer.timeline.prediction();
        WhatIfOutcome {
            expression: answer.applied.last().cloned().unwrap_or_default(),
            applied: answer.applied.clone(),
            changed_durations: answer.changed,
            predicted_us: prediction.predicted_us,
            original_us: original.predicted_us,
            change_percent: error_percent(prediction.predicted_us, original.predicted_us),
            error_percent: prediction.error_percent,
            kernel_sum_us: prediction.kernel_sum_us,
            gpu_busy_fraction: prediction.gpu_busy_fraction,
        }
    }

    /// The lines `replay predict` prints under its summary; nothing without what-ifs.
    pub fn summary(outcomes: &[WhatIfOutcome], original: &Prediction) -> String {
        let mut text = String::new();
        if outcomes.is_empty() {
            return text;
        }
        let _ = writeln!(
            text,
            "what-if (the timeline re-run with changed durations; each applies on top of the ones above)"
        );
        let width = outcomes
            .iter()
            .map(|o| o.expression.chars().count())
            .chain(std::iter::once("original".len()))
            .max()
            .unwrap_or(0)
            .max(34);
        let _ = writeln!(
            text,
            "  {:<width$} {:>12.1} us",
            "original", original.predicted_us
        );
        for outcome in outcomes {
            let _ = write!(
                text,
                "  {:<width$} {:>12.1} us   {:+7.1} %",
                outcome.expression, outcome.predicted_us, outcome.change_percent
            );
            if outcome.changed_durations == 0 {
                let _ = write!(text, "   (selected nothing)");
            }
            let _ = writeln!(text);
        }
        text
    }
}

/// `what_ifs` applied in order to `original`: one timeline per expression, each with the
/// expressions before it applied too.
pub fn run_what_ifs(
    original: &Timeline,
    what_ifs: &[WhatIf],
    catalog: &SignatureCatalog,
) -> crate::Result<Vec<WhatIfTimeline>> {
    let mut skeleton = original.skeleton.clone();
    let mut applied = Vec::new();
    let mut answers = Vec::new();
    for what_if in what_ifs {
        let changed = what_if.apply(&mut skeleton, catalog)?;
        applied.push(what_if.expression.clone());
        answers.push(WhatIfTimeline {
            applied: applied.clone(),
            timeline: Timeline::simulate(
                format!("what-if {}", what_if.expression),
                skeleton.clone(),
                &Durations::trace_own(),
            ),
            changed,
        });
    }
    Ok(answers)
}

/// Every host item of every step, to change in place.
fn host_items(skeleton: &mut Skeleton) -> impl Iterator<Item = &mut HostItem> {
    skeleton
        .steps
        .iter_mut()
        .flat_map(|step| step.threads.iter_mut())
        .flat_map(|thread| thread.items.iter_mut())
}

/// Sets the duration of every unit of work (GPU activity, or top-level op of a CPU-only
/// trace) for which `new(signature, current)` says one.
fn set_work(skeleton: &mut Skeleton, new: impl Fn(u32, Nanos) -> Option<Nanos>, changed: &mut u64) {
    for step in &mut skeleton.steps {
        for activity in &mut step.activities {
            if let Some(ns) = activity.signature.and_then(|s| new(s, activity.trace_ns)) {
                activity.trace_ns = ns;
                *changed += 1;
            }
        }
        for item in step.threads.iter_mut().flat_map(|t| t.items.iter_mut()) {
            if let HostItem::HostOp {
                signature: Some(signature),
                ns,
            } = item
            {
                if let Some(replaced) = new(*signature, *ns) {
                    *ns = replaced;
                    *changed += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<WhatIf, WhatIfSyntaxError> {
        text.parse()
    }

    #[test]
    fn every_form_parses() {
        let factor = |text: &str| match parse(text).map(|w| w.change) {
            Ok(Change::Work { factor, .. }) => factor,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(factor("tier2*0.5"), 0.5);
        assert_eq!(factor("tier1*2"), 2.0);
        assert_eq!(factor("tier3*0"), 0.0);
        assert_eq!(factor("kernel:gemm*0.5"), 0.5);
        // The factor follows the last `*`; the pattern keeps its own.
        match parse("kernel:sm90.*gemm**3").map(|w| w.change) {
            Ok(Change::Work {
                selection: Selection::Kernel(regex),
                factor,
            }) => {
                assert_eq!(regex.as_str(), "sm90.*gemm*");
                assert_eq!(factor, 3.0);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse("op:aten::(addmm|mm)*0.5").map(|w| w.change),
            Ok(Change::Work {
                selection: Selection::Op(_),
                ..
            })
        ));
        assert!(matches!(
            parse("host*0.8").map(|w| w.change),
            Ok(Change::Host { factor }) if factor == 0.8
        ));
        assert!(matches!(
            parse("launch*0.5").map(|w| w.change),
            Ok(Change::LaunchFactor { factor }) if factor == 0.5
        ));
        assert!(matches!(
            parse("launch=0").map(|w| w.change),
            Ok(Change::LaunchCost { us }) if us == 0.0
        ));
        match parse("durations=/tmp/a b/isolated.json").map(|w| w.change) {
            Ok(Change::Durations { path }) => {
                assert_eq!(path, PathBuf::from("/tmp/a b/isolated.json"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse(" tier2*0.5 ").unwrap().to_string(), "tier2*0.5");
    }

    #[test]
    fn malformed_expressions_say_what_is_accepted() {
        for (text, reason) in [
            ("tier2", "no `*F` factor"),
            ("tier4*0.5", "unknown target `tier4`"),
            ("tier2*-1", "factor `-1` is not a number >= 0"),
            ("tier2*fast", "factor `fast` is not a number >= 0"),
            ("tier2*inf", "is not a number >= 0"),
            ("kernel:*2", "empty regular expression"),
            ("kernel:(gemm*2", "bad regular expression `(gemm`"),
            ("launch=-3", "launch cost `-3` is not a number >= 0"),
            ("durations=", "durations= needs an isolated.json"),
            ("", "no `*F` factor"),
        ] {
            let error = parse(text).expect_err(text);
            let message = error.to_string();
            assert!(message.contains(reason), "{text}: {message}");
            assert!(
                message.contains("accepted: tier1*F, tier2*F, tier3*F, kernel:REGEX*F"),
                "{message}"
            );
        }
    }

    #[test]
    fn factors_scale_whole_nanoseconds() {
        assert_eq!(scaled(1001, 0.5), 501);
        assert_eq!(scaled(1000, 0.0), 0);
        assert_eq!(scaled(7, 1.0), 7);
        assert_eq!(scaled(i64::MAX, 1.0), i64::MAX);
    }
}
