//! `compiled_model_timing.json`: the torch.compile'd model timed whole in the capture's
//! Python process (`scripts/compiled_timing.py`), in `full_model_timing.json`'s fields with
//! `model_format` `torch_compile`. Read here into a [`FullModelTiming`] whose statistics are
//! recomputed from the samples with replay's own definitions, so a compiled model's timing
//! and a TorchScript model's are summarised alike.

use std::path::Path;

use super::full_model::FullModelTiming;
use crate::error::{Error, Result};
use crate::measure::Stats;

/// The file's name, beside the trace of a compiled capture.
pub const FILE: &str = "compiled_model_timing.json";
/// The later half of the runs (`capture_trace.py --time-only`, after the isolated replay).
pub const AFTER_FILE: &str = "compiled_model_timing_after.json";
/// `model_format` of a torch.compile'd model's timing.
pub const FORMAT: &str = "torch_compile";

/// Reads the timing at `path`: a file of another format, or one whose samples do not match
/// its protocol, is refused naming the file.
pub fn read(path: &Path) -> Result<FullModelTiming> {
    let mut timing = parse(path)?;
    restat(&mut timing).map_err(|message| bad_input(path, message))?;
    Ok(timing)
}

/// [`read`] on a file's bytes; `path` names the file in errors.
pub fn read_bytes(bytes: &[u8], path: &Path) -> Result<FullModelTiming> {
    let mut timing = parse_bytes(bytes, path)?;
    restat(&mut timing).map_err(|message| bad_input(path, message))?;
    Ok(timing)
}

/// The timing of `before` (the capture's runs) and `after` (the runs timed after the isolated
/// replay) as one: the samples pooled in the order they were taken.
pub fn read_halves(before: &Path, after: &Path) -> Result<FullModelTiming> {
    let mut timing = parse(before)?;
    let later = parse(after)?;
    if (later.warmup, &later.compile_mode) != (timing.warmup, &timing.compile_mode) {
        return Err(bad_input(
            after,
            format!(
                "timed after {} warm-ups, mode {:?}; {} after {}, mode {:?}",
                later.warmup,
                later.compile_mode,
                before.display(),
                timing.warmup,
                timing.compile_mode
            ),
        ));
    }
    timing.samples_us.extend_from_slice(&later.samples_us);
    timing.runs += later.runs;
    timing.runs_after_isolated = Some(later.runs);
    restat(&mut timing).map_err(|message| bad_input(before, message))?;
    Ok(timing)
}

fn bad_input(path: &Path, message: String) -> Error {
    Error::BadInput {
        path: path.to_path_buf(),
        message,
    }
}

/// The file as written, its format and its sample count checked.
fn parse(path: &Path) -> Result<FullModelTiming> {
    let bytes = std::fs::read(path).map_err(|e| bad_input(path, format!("cannot read it: {e}")))?;
    parse_bytes(&bytes, path)
}

fn parse_bytes(bytes: &[u8], path: &Path) -> Result<FullModelTiming> {
    let bad = |message: String| bad_input(path, message);
    let timing: FullModelTiming = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("not a compiled model's timing: {e}")))?;
    if timing.model_format.as_deref() != Some(FORMAT) {
        return Err(bad(format!(
            "model_format is {:?}, not {FORMAT:?}: not a torch.compile'd model's timing",
            timing.model_format
        )));
    }
    if timing.samples_us.len() != timing.runs as usize {
        return Err(bad(format!(
            "{} samples for {} runs",
            timing.samples_us.len(),
            timing.runs
        )));
    }
    Ok(timing)
}

/// Recomputes the statistics from the samples, at least two positive times.
fn restat(timing: &mut FullModelTiming) -> std::result::Result<(), String> {
    let samples = &timing.samples_us;
    if samples.len() < 2 {
        return Err("fewer than 2 runs: no spread".into());
    }
    if let Some(bad) = samples.iter().find(|x| !x.is_finite() || **x <= 0.0) {
        return Err(format!("sample {bad} is not a positive time"));
    }
    let stats = Stats::from_samples(samples).ok_or("no samples")?;
    timing.mean_us = stats.mean;
    timing.median_us = stats.median;
    timing.min_us = stats.min;
    timing.max_us = stats.max;
    timing.std_us = stats.std;
    timing.p10_us = stats.p10;
    timing.p90_us = stats.p90;
    timing.rse_median = stats.rse_median;
    Ok(())
}

/// How the report names what was timed: `timed in the capture's Python process:
/// torch.compile (mode default)`; `None` for a timing replay made itself.
pub fn provenance(timing: &FullModelTiming) -> Option<String> {
    if timing.model_format.as_deref() != Some(FORMAT) {
        return None;
    }
    Some(format!(
        "timed in {}: torch.compile (mode {})",
        timing
            .timed_in
            .as_deref()
            .unwrap_or("the capture's Python process"),
        timing.compile_mode.as_deref().unwrap_or("default")
    ))
}

/// What the report says of the measured side when replay did not time it itself: where and
/// how it was timed, and that the isolated replay's drift control does not reach it.
pub fn measured_note(timing: &FullModelTiming) -> Option<String> {
    let timed = match timing.runs_after_isolated {
        Some(after) if after > 0 => format!(
            "{} timed runs before the isolated replay and {after} after it, in a second Python \
             process that compiled the model again from the kept Inductor cache, each half after \
             {} warm-ups, {}: not interleaved with the isolated rounds, so their drift control \
             does not apply; the two halves bracket them",
            timing.runs - after,
            timing.warmup,
            timing.timer
        ),
        _ => format!(
            "{} timed runs after {} warm-ups, {}, before the isolated replay: not interleaved \
             with its rounds, so their drift control does not apply",
            timing.runs, timing.warmup, timing.timer
        ),
    };
    Some(format!("{}; {timed}", provenance(timing)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(samples: &[f64], runs: u32, format: &str) -> serde_json::Value {
        serde_json::json!({
            "model": "zoo model bloom-tiny", "device": "cpu", "seq_len": 5, "batch": 1,
            "inputs": ["int64[1,5]:0..250880"], "warmup": 3, "runs": runs, "threads": 2,
            "timer": "monotonic clock (time.perf_counter_ns)", "mean_us": 0.0, "median_us": 0.0,
            "min_us": 0.0, "max_us": 0.0, "std_us": 0.0, "p10_us": 0.0, "p90_us": 0.0,
            "rse_median": null, "samples_us": samples, "model_format": format,
            "compile_mode": "default", "timed_in": "the capture's Python process"
        })
    }

    fn write(dir: &Path, value: &serde_json::Value) -> std::path::PathBuf {
        let path = dir.join(FILE);
        std::fs::write(&path, serde_json::to_vec(value).unwrap()).unwrap();
        path
    }

    #[test]
    fn statistics_are_recomputed_from_the_samples() {
        let dir = tempfile::tempdir().unwrap();
        let samples = [130.0, 100.0, 110.0, 120.0, 500.0];
        let mut t = read(&write(dir.path(), &doc(&samples, 5, FORMAT))).unwrap();
        let stats = Stats::from_samples(&samples).unwrap();
        assert_eq!(t.median_us, 120.0);
        assert_eq!((t.min_us, t.max_us), (100.0, 500.0));
        assert_eq!(
            (t.p10_us, t.p90_us, t.mean_us),
            (stats.p10, stats.p90, stats.mean)
        );
        assert_eq!(t.samples_us, samples);
        assert_eq!(
            provenance(&t).unwrap(),
            "timed in the capture's Python process: torch.compile (mode default)"
        );
        let note = measured_note(&t).unwrap();
        assert!(
            note.contains("5 timed runs after 3 warm-ups, monotonic clock")
                && note.contains("drift control does not apply"),
            "{note}"
        );
        t.model_format = None;
        assert_eq!((provenance(&t), measured_note(&t)), (None, None));
    }

    #[test]
    fn the_halves_before_and_after_the_isolated_replay_pool_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let before = write(dir.path(), &doc(&[100.0, 110.0, 120.0], 3, FORMAT));
        let after = dir.path().join(AFTER_FILE);
        let mut later = doc(&[130.0, 140.0], 2, FORMAT);
        std::fs::write(&after, serde_json::to_vec(&later).unwrap()).unwrap();
        let t = read_halves(&before, &after).unwrap();
        assert_eq!(t.samples_us, [100.0, 110.0, 120.0, 130.0, 140.0]);
        assert_eq!(
            (t.runs, t.runs_after_isolated, t.median_us),
            (5, Some(2), 120.0)
        );
        let note = measured_note(&t).unwrap();
        assert!(
            note.contains("3 timed runs before the isolated replay and 2 after it")
                && note.contains("each half after 3 warm-ups")
                && note.contains("drift control does not apply"),
            "{note}"
        );
        // One sample before and one after is a spread of two runs.
        let one = write(dir.path(), &doc(&[100.0], 1, FORMAT));
        later = doc(&[105.0], 1, FORMAT);
        std::fs::write(&after, serde_json::to_vec(&later).unwrap()).unwrap();
        assert_eq!(read_halves(&one, &after).unwrap().runs, 2);
        // Halves of another protocol are not pooled.
        later["warmup"] = 10.into();
        std::fs::write(&after, serde_json::to_vec(&later).unwrap()).unwrap();
        let e = read_halves(&one, &after).unwrap_err().to_string();
        assert!(
            e.contains(AFTER_FILE) && e.contains("timed after 10 warm-ups"),
            "{e}"
        );
    }

    #[test]
    fn files_that_do_not_hold_a_compiled_timing_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for (value, why) in [
            (doc(&[1.0, 2.0], 2, "aoti_package"), "not \"torch_compile\""),
            (doc(&[1.0, 2.0, 3.0], 2, FORMAT), "3 samples for 2 runs"),
            (doc(&[1.0], 1, FORMAT), "fewer than 2 runs"),
            (doc(&[1.0, -2.0], 2, FORMAT), "not a positive time"),
            (
                serde_json::json!({"model": 1}),
                "not a compiled model's timing",
            ),
        ] {
            let path = write(dir.path(), &value);
            let e = read(&path).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(FILE), "{e}");
        }
        let e = read(&dir.path().join("absent.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("absent.json: cannot read it"), "{e}");
    }
}
