//! Figures of one comparison that disagree by far more than the profiler, a kernel's context or
//! run-to-run noise explain: the machine was disturbed while one of them was measured (another
//! process, a preemption, a frequency drop). Said in the report, naming the figure to distrust,
//! rather than left for the reader to find (a busy machine once gave bloom-tiny's captured step
//! as 115468 µs against 485 µs measured in the same minute, 238×).

use super::comparison::ComparisonReport;

/// Two measurements of the same step more than this many times apart.
pub const STEP_RATIO: f64 = 10.0;
/// The real model's p90 over its p10 beyond this.
pub const SPREAD_RATIO: f64 = 3.0;
/// The slowest fifth of the real model's runs (in run order) over the fastest beyond this: the
/// machine changed speed mid-run (H200 hosts of 2026-11-28: 6 of 8 configurations, up to 1.7x).
pub const SPEED_CHANGE_RATIO: f64 = 1.2;

/// What disagrees, and which figure to distrust; empty when nothing does.
pub fn disturbances(r: &ComparisonReport) -> Vec<String> {
    let measured = r.full_model_inference_us;
    let mut said = Vec::new();
    if measured.is_nan() || measured <= 0.0 {
        return said;
    }
    if let Some(check) = &r.trace_self_check {
        let profiled = check.measured_us;
        if profiled > 0.0 {
            let ratio = (profiled / measured).max(measured / profiled);
            if ratio > STEP_RATIO {
                let distrust = if profiled > measured {
                    "the trace (its capture was disturbed): the timeline and the trace times that \
                     unreplayed signatures enter with"
                } else {
                    "the full-model timing"
                };
                said.push(format!(
                    "the machine was disturbed: the profiled step took {profiled:.1} us against \
                     {measured:.1} us for the real model ({ratio:.0}x apart, beyond any \
                     profiler's cost); distrust {distrust}"
                ));
            }
        }
    }
    let f = &r.full_model;
    if f.p10_us > 0.0 && f.p90_us / f.p10_us > SPREAD_RATIO {
        said.push(format!(
            "the machine was disturbed while the real model was timed: its runs spread from \
             p10 {:.1} to p90 {:.1} us ({:.1}x); distrust the measured time and every error \
             against it",
            f.p10_us,
            f.p90_us,
            f.p90_us / f.p10_us
        ));
    }
    said.extend(speed_change(&f.samples_us));
    let sum = r.predicted_from_kernels_us;
    if sum / measured > STEP_RATIO {
        said.push(format!(
            "the machine was disturbed: the kernels replayed alone sum to {sum:.1} us, {:.0}x \
             the whole model's {measured:.1} us; distrust the isolated times",
            sum / measured
        ));
    }
    said
}

/// Whether the runs `samples_us` (in the order they ran) changed speed mid-run: the slowest
/// fifth's median more than [`SPEED_CHANGE_RATIO`] times the fastest's, said with the fifths;
/// `None` when they did not or there are fewer than 10 runs. `compare`'s report and `replay
/// full` say it in the same words.
pub fn speed_change(samples_us: &[f64]) -> Option<String> {
    let fifths = crate::measure::stats::fifth_medians(samples_us);
    let (fast, slow) = fifths.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    if !(fast > 0.0 && slow / fast > SPEED_CHANGE_RATIO) {
        return None;
    }
    let listed: Vec<String> = fifths.iter().map(|v| format!("{v:.1}")).collect();
    Some(format!(
        "the machine changed speed while the real model was timed: the medians of its runs' \
         fifths, in the order they ran, are {} us ({:.2}x apart); the measured median depends \
         on when the change came: read an error inside {fast:.1}-{slow:.1} us as the machine's",
        listed.join(", "),
        slow / fast
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The H200 run of bloom-560m: its profiled step 3x the real model's (the profiler's own
    /// cost on a host-bound model), runs spread 1.7x: nothing to say.
    fn h200_bloom() -> ComparisonReport {
        h200("bloom-560m-float32-seq5")
    }

    fn h200(config: &str) -> ComparisonReport {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../../../shared/gpu-truth/h200-2026-11-28/{config}/comparison_report.json"
        ));
        let text = std::fs::read_to_string(&path).expect("the shared GPU truth");
        serde_json::from_str(&text).expect("a comparison report")
    }

    #[test]
    fn a_profilers_cost_and_ordinary_noise_say_nothing() {
        // gpt2-small seq 128 on the H200: its profiled step 2.6x the real model's, its fifths
        // within 5 % of each other.
        let r = h200("gpt2-small-seq128");
        let check = r.trace_self_check.as_ref().unwrap();
        assert!(check.measured_us / r.full_model_inference_us > 2.5);
        assert_eq!(disturbances(&r), Vec::<String>::new());
    }

    #[test]
    fn a_speed_change_mid_run_is_said_with_its_fifths() {
        // bloom-560m's truth on the H200: two fifths near 10.2 ms, then three near 6.4 ms.
        let said = disturbances(&h200_bloom());
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("the machine changed speed while the real model was timed")
                && said[0].contains("(1.60x apart)")
                && said[0].contains("inside 6367.4-10196.2 us"),
            "{said:?}"
        );
        // A run whose fifths stay within 20 % says nothing; one of under 10 runs has none.
        let mut r = h200_bloom();
        r.full_model.samples_us = (0..100).map(|i| 100.0 + (i % 7) as f64).collect();
        assert_eq!(disturbances(&r), Vec::<String>::new());
        r.full_model.samples_us = vec![100.0, 300.0, 100.0, 300.0];
        assert_eq!(disturbances(&r), Vec::<String>::new());
    }

    #[test]
    fn each_disagreement_names_the_figure_to_distrust() {
        let mut r = h200_bloom();
        // The captured step 238x the measured one (a busy machine during capture).
        let profiled = r.trace_self_check.as_ref().unwrap().measured_us;
        r.full_model_inference_us = profiled / 238.0;
        let said = disturbances(&r);
        assert!(
            said.iter()
                .any(|s| s.contains("238x apart") && s.contains("distrust the trace")),
            "{said:?}"
        );
        // The kernels replayed alone far above the whole model: the isolated times.
        assert!(
            said.iter()
                .any(|s| s.contains("distrust the isolated times")),
            "{said:?}"
        );
        // The real model timed while disturbed.
        let mut r = h200("gpt2-small-seq128");
        r.full_model.p90_us = 4.0 * r.full_model.p10_us;
        let said = disturbances(&r);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("(4.0x); distrust the measured time"),
            "{said:?}"
        );
        // The real model far slower than its own profiled step: the full-model timing.
        let mut r = h200_bloom();
        r.full_model_inference_us = 20.0 * profiled;
        let said = disturbances(&r);
        assert!(
            said.iter()
                .any(|s| s.contains("distrust the full-model timing")),
            "{said:?}"
        );
    }
}
