//! Parse + classify throughput and peak memory on a large trace.
//!
//! Takes the largest trace in `../shared/traces/kineto/` (by uncompressed size), replicates
//! its events (shifting timestamps and ids so that every copy links like the original)
//! until the JSON is at least 100 MB, writes it uncompressed, then measures `trace::load`
//! and `signature::classify` on it in a fresh child process, so that the child's peak
//! RSS (`VmHWM` in /proc/self/status) is that of loading and classifying alone. The parse
//! uses every core (the file is cut into one chunk per core); `cpu_s` is the main thread's
//! CPU time only. Then it times the `replay` executable as a user runs it (whole processes):
//! `classify` on the same file, `--version`, `classify --help`, and `predict` on the 1.4 MB
//! cudagraph trace. `scripts/bench_classify_vs_hta.sh` (`make bench-classify`) runs this and
//! HolisticTraceAnalysis on the same file, and writes both in one report.
//!
//! Needs `[[bench]] name = "classify_throughput" harness = false` in Cargo.toml.
//! Run: `cargo bench --bench classify_throughput`. Writes
//! `target/bench/classify_throughput.json` (or `$BENCH_OUT`).
//! Goals: >= 200 MB/s of JSON, peak memory <= 3x the JSON size.

use std::error::Error;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use flate2::read::MultiGzDecoder;
use serde_json::{json, Value};

use replay_core::{signature, trace};

const TARGET_BYTES: u64 = 100_000_000;
const RUNS: usize = 7;

/// Id-like args that must stay unique in every copy for links to be preserved.
const ID_ARGS: [&str; 4] = [
    "correlation",
    "External id",
    "external id",
    "Record function id",
];

fn shared_traces() -> PathBuf {
    workspace_root().join("../shared/traces/kineto")
}

fn gunzip(path: &Path) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut json = Vec::new();
    MultiGzDecoder::new(std::fs::File::open(path)?).read_to_end(&mut json)?;
    Ok(json)
}

/// Uncompressed size of a gzip file, from its trailer.
fn gzip_isize(path: &Path) -> Result<u64, Box<dyn Error>> {
    let bytes = std::fs::read(path)?;
    let tail: [u8; 4] = bytes
        .get(bytes.len().saturating_sub(4)..)
        .and_then(|t| t.try_into().ok())
        .ok_or("gzip file too short")?;
    Ok(u64::from(u32::from_le_bytes(tail)))
}

fn largest_trace() -> Result<PathBuf, Box<dyn Error>> {
    let mut best: Option<(u64, PathBuf)> = None;
    for entry in std::fs::read_dir(shared_traces())? {
        let path = entry?.path();
        if !path.to_string_lossy().ends_with(".json.gz") {
            continue;
        }
        let size = gzip_isize(&path)?;
        if best.as_ref().is_none_or(|(s, _)| size > *s) {
            best = Some((size, path));
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| "no traces found".into())
}

fn shift_number(value: &mut Value, by: i64) {
    if let Some(n) = value.as_i64() {
        *value = json!(n + by);
    } else if let Some(f) = value.as_f64() {
        *value = json!(f + by as f64);
    }
}

/// Writes `copies` back-to-back copies of the trace's events as one plain JSON trace.
fn replicate(source: &Path, out: &Path) -> Result<u64, Box<dyn Error>> {
    let original = gunzip(source)?;
    let mut document: Value = serde_json::from_slice(&original)?;
    // Re-serialising drops the original's whitespace: size copies by the compact form.
    let compact_len = serde_json::to_vec(&document)?.len() as u64;
    let copies = TARGET_BYTES.div_ceil(compact_len).max(1) as i64;
    let events = document
        .get_mut("traceEvents")
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
        .ok_or("no traceEvents")?;
    let times = events
        .iter()
        .filter_map(|e| e.get("ts").and_then(Value::as_f64));
    let (first, last) = times.fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let span = (last - first).ceil() as i64 + 1_000;
    let max_id = events
        .iter()
        .filter_map(|e| e.get("args"))
        .flat_map(|args| {
            ID_ARGS
                .iter()
                .filter_map(|k| args.get(*k).and_then(Value::as_i64))
        })
        .chain(
            events
                .iter()
                .filter_map(|e| e.get("id").and_then(Value::as_i64)),
        )
        .max()
        .unwrap_or(0)
        + 1;
    let mut replicated = Vec::with_capacity(events.len() * copies as usize);
    for copy in 0..copies {
        for event in &events {
            let mut event = event.clone();
            if copy > 0 {
                if let Some(ts) = event.get_mut("ts") {
                    shift_number(ts, copy * span);
                }
                if let Some(id) = event.get_mut("id") {
                    shift_number(id, copy * max_id);
                }
                if let Some(args) = event.get_mut("args").and_then(Value::as_object_mut) {
                    for key in ID_ARGS {
                        if let Some(id) = args.get_mut(key) {
                            shift_number(id, copy * max_id);
                        }
                    }
                }
            }
            replicated.push(event);
        }
    }
    document["traceEvents"] = Value::Array(replicated);
    let text = serde_json::to_vec(&document)?;
    std::fs::write(out, &text)?;
    Ok(text.len() as u64)
}

/// The repository root (this package is `crates/core`).
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The user's `replay` executable, built beside this benchmark (`target/release/deps/..`).
fn replay_executable() -> Result<PathBuf, Box<dyn Error>> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("benchmark executable has no target folder")?;
    let replay = dir.join("replay");
    if replay.is_file() {
        Ok(replay)
    } else {
        Err(format!("{} is not built (cargo build --release)", replay.display()).into())
    }
}

/// Wall seconds and peak resident memory of one run of a whole command, as a user runs it.
fn run_process(program: &Path, args: &[&std::ffi::OsStr]) -> Result<(f64, u64), Box<dyn Error>> {
    let start = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child and writes into the two locals above.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = start.elapsed().as_secs_f64();
    if waited != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{} {:?} failed (status {status})", program.display(), args).into());
    }
    // ru_maxrss is in KiB on Linux.
    Ok((seconds, usage.ru_maxrss as u64 * 1024))
}

/// The median and the spread (min, max) of `runs` runs of a command.
fn time_process(
    program: &Path,
    args: &[&std::ffi::OsStr],
    runs: usize,
) -> Result<Value, Box<dyn Error>> {
    let mut seconds = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let (s, rss) = run_process(program, args)?;
        seconds.push(s);
        peak = peak.max(rss);
    }
    seconds.sort_by(f64::total_cmp);
    Ok(json!({
        "runs": runs,
        "median_s": seconds[seconds.len() / 2],
        "min_s": seconds[0],
        "max_s": seconds[seconds.len() - 1],
        "peak_rss_bytes": peak,
    }))
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Nanoseconds this thread has spent running on a CPU (`/proc/thread-self/schedstat`).
/// Unlike wall time, it does not count time the thread waited for a core that other
/// processes held, which on a shared machine is most of the noise.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// The measurement itself, in a fresh process.
fn measure(path: &Path) -> Result<(), Box<dyn Error>> {
    let baseline = peak_rss_bytes();
    let cpu_start = thread_cpu_ns();
    let start = Instant::now();
    let trace = trace::load(path)?;
    let loaded = Instant::now();
    let file = signature::classify(&trace, path);
    let done = Instant::now();
    let cpu_end = thread_cpu_ns();
    let peak = peak_rss_bytes();
    let json_bytes = trace.source.json_bytes;
    let seconds = (done - start).as_secs_f64();
    let cpu_seconds = match (cpu_start, cpu_end) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
        _ => None,
    };
    let result = json!({
        "json_bytes": json_bytes,
        "events": trace.counts.total,
        "gpu_activities": file.summary.total.invocations,
        "signatures": file.signatures.len(),
        "load_s": (loaded - start).as_secs_f64(),
        "classify_s": (done - loaded).as_secs_f64(),
        "total_s": seconds,
        "mb_per_s": json_bytes as f64 / 1e6 / seconds,
        "cpu_s": cpu_seconds,
        "cpu_mb_per_s": cpu_seconds.map(|c| json_bytes as f64 / 1e6 / c),
        "peak_rss_bytes": peak,
        "baseline_rss_bytes": baseline,
        "peak_over_json": peak.map(|p| p as f64 / json_bytes as f64),
    });
    println!("{result}");
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--measure") {
        let path = args.get(at + 1).ok_or("--measure needs a path")?;
        return measure(Path::new(path));
    }
    let source = largest_trace()?;
    let target_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&target_dir)?;
    let stem = source
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json.gz"))
        .ok_or("trace name")?;
    let replicated = target_dir.join(format!("{stem}.replicated.json"));
    let json_bytes = match std::fs::metadata(&replicated) {
        Ok(meta) if meta.len() >= TARGET_BYTES => meta.len(),
        _ => {
            replicate(&source, &replicated)?;
            // Building the file took this process to a gigabyte, and a child's ru_maxrss
            // keeps the high-water mark of the process it was spawned from: measure from a
            // fresh process, which finds the file made.
            eprintln!("benchmark input written; measuring in a fresh process");
            let status = Command::new(std::env::current_exe()?)
                .args(std::env::args_os().skip(1))
                .status()?;
            return if status.success() {
                Ok(())
            } else {
                Err(format!("the measuring process failed ({status})").into())
            };
        }
    };
    eprintln!(
        "benchmark input: {} ({json_bytes} bytes)",
        replicated.display()
    );

    let exe = std::env::current_exe()?;
    let mut runs: Vec<Value> = Vec::new();
    for _ in 0..RUNS {
        let output = Command::new(&exe)
            .arg("--measure")
            .arg(&replicated)
            .output()?;
        if !output.status.success() {
            return Err(format!(
                "measurement failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        runs.push(serde_json::from_slice(&output.stdout)?);
    }
    let median_of = |key: &str| -> f64 {
        let mut values: Vec<f64> = runs.iter().filter_map(|r| r[key].as_f64()).collect();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let best_of = |key: &str| -> f64 {
        runs.iter()
            .filter_map(|r| r[key].as_f64())
            .fold(0.0, f64::max)
    };
    let peak = runs
        .iter()
        .filter_map(|r| r["peak_rss_bytes"].as_u64())
        .max();
    // The whole process, as a user runs it: start-up included.
    let replay = replay_executable()?;
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let out_json = target_dir.join("classify_end_to_end.signatures.json");
    let end_to_end = time_process(
        &replay,
        &[
            os("classify"),
            os("--trace"),
            replicated.as_os_str(),
            os("--out"),
            out_json.as_os_str(),
        ],
        RUNS,
    )?;
    let end_to_end_mb_per_s =
        json_bytes as f64 / 1e6 / end_to_end["median_s"].as_f64().unwrap_or(f64::NAN);
    let cudagraph = shared_traces().join("a100_train_cudagraph_rank0.json.gz");
    let startup = json!({
        "version": time_process(&replay, &[os("--version")], 21)?,
        "classify_help": time_process(&replay, &[os("classify"), os("--help")], 21)?,
        "predict_cudagraph_trace": time_process(&replay, &[os("predict"), os("--trace"), cudagraph.as_os_str()], 11)?,
    });
    let report = json!({
        "benchmark": "classify_throughput",
        "end_to_end": end_to_end,
        "end_to_end_mb_per_s": end_to_end_mb_per_s,
        "startup": startup,
        "goal_end_to_end_mb_per_s": 400.0,
        "goal_startup_s": 0.020,
        "goal_startup_rss_bytes": 20_000_000,
        "goal_predict_cudagraph_s": 0.050,
        "source_trace": source.display().to_string(),
        "input": replicated.display().to_string(),
        "json_bytes": json_bytes,
        "runs": runs,
        "median_mb_per_s": median_of("mb_per_s"),
        "best_mb_per_s": best_of("mb_per_s"),
        "median_cpu_mb_per_s": median_of("cpu_mb_per_s"),
        "max_peak_rss_bytes": peak,
        "peak_over_json": peak.map(|p| p as f64 / json_bytes as f64),
        "goal_mb_per_s": 200.0,
        "goal_peak_over_json": 3.0,
    });
    let out = std::env::var_os("BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir.join("classify_throughput.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    eprintln!("written to {}", out.display());
    Ok(())
}
