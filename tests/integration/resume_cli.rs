//! Runs that survive (issue 34): a grid command killed with SIGKILL at a random row and
//! resumed with `--resume` ends with the rows an uninterrupted run writes (the rows so far
//! kept byte for byte, a half-written last one redone; `bench mhc` redoes the configuration
//! cut short); SIGTERM stops at a row boundary; a
//! full disk (a small tmpfs) and a read-only folder end the run with a clear error and the
//! results so far whole; `--resume` refuses another run's folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use super::common::{bloom_tiny_et_pair, quick_isolated, replay};

/// The built `replay`, as a process we can kill.
fn spawn(args: &[&str], out: &Path) -> Child {
    let bin = assert_cmd::cargo::cargo_bin("replay");
    StdCommand::new(bin)
        .args(args)
        .arg("--output-dir")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("replay starts")
}

/// Lines in `path` now (0 when it is not there yet).
fn lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// Waits (at most 60 s) until `path` has at least `n` lines or the process ended.
fn wait_for_lines(child: &mut Child, path: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(path) < n && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A row index drawn from the clock: each run of the test kills at another row.
fn random_below(n: usize) -> usize {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize;
    nanos % n.max(1)
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(rc, 0, "kill({}, {signal})", child.id());
}

fn bloom_tiny_signatures(dir: &Path) -> PathBuf {
    let sigs = dir.join("bloom_tiny.json");
    replay()
        .args(["classify", "--trace"])
        .arg(bloom_tiny_et_pair().0)
        .arg("--out")
        .arg(&sigs)
        .assert()
        .success();
    sigs
}

const ISOLATED: [&str; 9] = [
    "isolated",
    "--device",
    "cpu",
    "--max-time",
    "0.01",
    "--rounds",
    "2",
    "--quiet",
    "--kernels",
];

/// What must not change between an uninterrupted and a resumed run of `isolated`: every
/// result's id, status, method, reason and unit (the times are measurements).
fn isolated_rows(dir: &Path) -> (bool, Vec<[serde_json::Value; 5]>) {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("isolated.json")).unwrap()).unwrap();
    let rows = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ["id", "status", "method", "reason", "replayed_as"].map(|k| r[k].clone()))
        .collect();
    (json["complete"] == true, rows)
}

#[test]
fn isolated_killed_at_a_random_row_and_resumed_gives_the_uninterrupted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = bloom_tiny_signatures(dir.path());
    let sigs_arg = sigs.to_str().unwrap();
    let args: Vec<&str> = ISOLATED.iter().copied().chain([sigs_arg]).collect();
    let whole = dir.path().join("whole");
    replay()
        .args(&args)
        .arg("--output-dir")
        .arg(&whole)
        .assert()
        .success();
    let (complete, expected) = isolated_rows(&whole);
    assert!(complete);
    // 43 signatures in 2 rounds: 86 journal lines; kill after 1..80 of them.
    let total = lines(&whole.join("isolated.journal.jsonl"));
    assert!(total > 40, "{total} journal lines");
    let kill_at = 1 + random_below(total - 6);
    let killed = dir.path().join("killed");
    let journal = killed.join("isolated.journal.jsonl");
    let mut child = spawn(&args, &killed);
    wait_for_lines(&mut child, &journal, kill_at);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let before = std::fs::read(&journal).unwrap();
    assert!(
        lines(&journal) < total,
        "killed after {} of {total} lines",
        lines(&journal)
    );
    // As if the kill had come in the middle of a line.
    let mut torn = before.clone();
    torn.extend_from_slice(b"{\"round\":1,\"unit\":\"cut");
    std::fs::write(&journal, &torn).unwrap();
    replay()
        .args(&args)
        .arg("--output-dir")
        .arg(&killed)
        .arg("--resume")
        .assert()
        .success()
        .stderr(predicates::str::contains("already in"));
    let after = std::fs::read(&journal).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "journal kept byte for byte"
    );
    assert_eq!(lines(&journal), total);
    let (complete, rows) = isolated_rows(&killed);
    assert!(complete, "killed at line {kill_at}");
    assert_eq!(rows, expected, "killed at line {kill_at}");
}

const SCAN: [&str; 20] = [
    "bench",
    "scan",
    "--T",
    "8,16",
    "--K",
    "3,4",
    "--C",
    "1,2",
    "--B",
    "2",
    "--backends",
    "CPU",
    "--phases",
    "forward,Both",
    "--semirings",
    "log,MAX",
    "--repeats",
    "3",
    "--max-time-per-case",
    "0.02",
];

/// The columns of `benchmark_full.csv` that do not depend on timing, row by row.
fn scan_rows(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("benchmark_full.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let keep: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.starts_with("time_") && !h.starts_with("peak_"))
        .map(|(i, _)| i)
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            keep.iter().map(|&i| &r[i]).collect::<Vec<_>>().join(",")
        })
        .collect()
}

#[test]
fn bench_scan_killed_at_a_random_row_and_resumed_gives_the_uninterrupted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(&whole)
        .assert()
        .success();
    let expected = scan_rows(&whole);
    assert_eq!(expected.len(), 32);
    let kill_at = 2 + random_below(28);
    let killed = dir.path().join("killed");
    let csv = killed.join("benchmark_full.csv");
    let mut child = spawn(&SCAN, &killed);
    wait_for_lines(&mut child, &csv, kill_at);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let before = std::fs::read(&csv).unwrap();
    let mut torn = before.clone();
    torn.extend_from_slice(b"16,4,2,2,8,cpu,Log,for");
    std::fs::write(&csv, &torn).unwrap();
    replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(&killed)
        .arg("--resume")
        .assert()
        .success()
        .stdout(predicates::str::contains("  success         32\n"));
    let after = std::fs::read(&csv).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "rows kept byte for byte"
    );
    assert_eq!(scan_rows(&killed), expected, "killed at row {kill_at}");
    // The rewritten files hold every row too.
    let heat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(killed.join("heatmap_data.json")).unwrap()).unwrap();
    let cells: usize = heat
        .as_object()
        .unwrap()
        .values()
        .map(|v| v["cells"].as_array().unwrap().len())
        .sum();
    assert_eq!(cells, 32);
}

#[test]
fn sigterm_stops_at_a_row_boundary_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scan");
    let csv = out.join("benchmark_full.csv");
    let mut child = spawn(&SCAN, &out);
    wait_for_lines(&mut child, &csv, 4);
    signal(&child, libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(0) {
        // The grid ended before the signal was looked at: nothing to resume.
        assert_eq!(lines(&csv), 33);
        return;
    }
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.ends_with('\n'), "a whole last row: {text}");
    let rows = lines(&csv) - 1;
    // The signal came after the third row; the run ends before the next case it would start.
    assert!((3..32).contains(&rows), "{rows} rows");
    replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(&out)
        .arg("--resume")
        .assert()
        .success();
    assert_eq!(lines(&csv), 33);
}

/// `calibrate` on the one suite runner: SIGTERM between measurements ends the run with the
/// profile and its journal whole and the message counting measurements; `--resume` takes the
/// journaled items back (their lines kept byte for byte) and measures the rest into the same
/// profile keys an uninterrupted run writes.
#[test]
fn calibrate_stopped_by_sigterm_resumes_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cpu.json");
    let journal = dir.path().join("cpu.json.journal.jsonl");
    let args = [
        "calibrate",
        "--device",
        "cpu",
        "--quick",
        "--operations",
        "memory,host",
        "--threads",
        "1",
        "-q",
    ];
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("replay"))
        .args(args)
        .arg("--out")
        .arg(&profile)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("replay starts");
    wait_for_lines(&mut child, &journal, 1);
    signal(&child, libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(0) {
        // The three measurements ended before the signal was looked at.
        assert_eq!(lines(&journal), 3);
        return;
    }
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    let done = lines(&journal);
    assert!((1..3).contains(&done), "{done} journal lines");
    assert!(
        stderr.contains(&format!(
            "stopped by SIGTERM after {done} of 3 measurements"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("--resume"), "{stderr}");
    let before = std::fs::read(&journal).unwrap();
    let stopped: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&profile).unwrap()).expect("a whole profile");
    assert_eq!(
        stopped["operation_profiles"].as_object().unwrap().len(),
        3 * done,
        "each memory size is three keys (libtorch's copy, replay's copy and triad)"
    );
    replay()
        .args(args)
        .arg("--out")
        .arg(&profile)
        .arg("--resume")
        .assert()
        .success();
    let after = std::fs::read(&journal).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "journal kept byte for byte"
    );
    assert_eq!(lines(&journal), 3);
    let resumed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&profile).unwrap()).unwrap();
    assert_eq!(resumed["operation_profiles"].as_object().unwrap().len(), 6);
    assert!(resumed["host"]["dispatch_us_per_op"].as_f64().unwrap() > 0.0);
    // The items taken back keep their measured figures to the last bit.
    for (key, value) in stopped["operation_profiles"].as_object().unwrap() {
        assert_eq!(&resumed["operation_profiles"][key], value, "{key}");
    }
}

/// `replay bench mhc --sweep-bs` at a tiny size: six configurations of twelve rows.
const MHC: [&str; 11] = [
    "bench",
    "mhc",
    "--sweep-bs",
    "--seq",
    "16",
    "--dim",
    "64",
    "--warmup",
    "0",
    "--iters",
    "1",
];

/// The cells of `benchmark_results.csv` that are not measured (Device .. Case, Impl, Status).
fn mhc_rows(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("benchmark_results.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let keep: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            !h.starts_with("Time") && !["Size(MB)", "BW(GB/s)", "Samples", "Note"].contains(h)
        })
        .map(|(i, _)| i)
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            keep.iter().map(|&i| &r[i]).collect::<Vec<_>>().join(",")
        })
        .collect()
}

#[test]
fn bench_mhc_cut_at_a_random_row_and_resumed_redoes_the_configuration_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mhc");
    let csv = out.join("benchmark_results.csv");
    let run = |resume: bool| {
        let mut cmd = replay();
        cmd.args(MHC)
            .arg("--gpu-profile")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h100_sxm_datasheet.json"))
            .arg("--output-dir")
            .arg(&out);
        if resume {
            cmd.arg("--resume");
        }
        let output = cmd.output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    run(false);
    let expected = mhc_rows(&out);
    assert_eq!(expected.len(), 72);
    // As a run killed after `cut` whole rows and half of the next leaves the file.
    let cut = 1 + random_below(70);
    let text = std::fs::read_to_string(&csv).unwrap();
    let kept: String = text.split_inclusive('\n').take(1 + cut).collect();
    std::fs::write(&csv, format!("{kept}cpu,4,16,64,4,bfl")).unwrap();
    let stdout = run(true);
    let whole = cut / 12;
    if whole > 0 {
        assert!(
            stdout.contains(&format!("resuming: {whole} of 6 configurations already in")),
            "cut after row {cut}: {stdout}"
        );
    }
    // Only the configurations not yet whole ran again.
    assert_eq!(
        stdout.matches("Benchmarking on ").count(),
        6 - whole,
        "cut after row {cut}: {stdout}"
    );
    let after = std::fs::read_to_string(&csv).unwrap();
    let whole_rows: String = text.split_inclusive('\n').take(1 + 12 * whole).collect();
    assert!(
        after.starts_with(&whole_rows),
        "whole configurations kept byte for byte"
    );
    assert_eq!(mhc_rows(&out), expected, "cut after row {cut}");
    // The offload answer is the whole sweep's: every batch size, resumed or run again.
    let answer = std::fs::read_to_string(out.join("offload_answer.md")).unwrap();
    for batch in [1, 2, 4, 8, 16, 32] {
        assert!(answer.contains(&format!("\n| {batch} | ")), "{answer}");
    }
}

#[test]
fn resume_refuses_a_folder_of_another_run_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scan");
    let small = [
        "bench", "scan", "--T", "8", "--K", "3", "--C", "1", "--B", "2",
    ];
    let fast = [
        "--backends",
        "CPU",
        "--phases",
        "forward",
        "--semirings",
        "log",
        "--repeats",
        "2",
        "--max-time-per-case",
        "0.01",
        "-q",
    ];
    replay()
        .args(small)
        .args(fast)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    let empty = dir.path().join("empty");
    for (args, problem) in [
        (
            vec![
                "bench", "scan", "--T", "8,16", "--K", "3", "--C", "1", "--B", "2",
            ],
            "work list",
        ),
        (small.to_vec(), "other settings"),
    ] {
        replay()
            .args(&args)
            .args([
                "--backends",
                "CPU",
                "--phases",
                "forward",
                "--semirings",
                "log",
            ])
            .args(["--repeats", "3", "--max-time-per-case", "0.01", "-q"])
            .arg("--output-dir")
            .arg(&out)
            .arg("--resume")
            .assert()
            .code(2)
            .stderr(predicates::str::contains(problem));
    }
    let sigs = bloom_tiny_signatures(dir.path());
    replay()
        .args(["isolated", "--device", "cpu", "--kernels"])
        .arg(&sigs)
        .arg("--output-dir")
        .arg(&out)
        .arg("--resume")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("of `bench scan`, not `isolated`"));
    replay()
        .args(small)
        .args(fast)
        .arg("--output-dir")
        .arg(&empty)
        .arg("--resume")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("holds no run to resume"));
}

/// A tmpfs of `size` mounted on `dir` (unmounted on drop), or `None` with the reason when
/// this machine refuses the mount (not root, no CAP_SYS_ADMIN).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, options: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let status = StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Some(Tmpfs(dir.to_path_buf())),
            _ => {
                eprintln!(
                    "SKIPPED: mount -t tmpfs -o {options} was refused here (needs root): the full-disk and read-only cases did not run"
                );
                None
            }
        }
    }

    fn read_only(&self) {
        let ok = StdCommand::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_ends_the_run_with_a_clear_error_and_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    // bench scan: 32 rows of ~200 bytes and two files rewritten after each (atomically, through
    // a temporary file) do not fit in five 4 kB pages.
    let Some(disk) = Tmpfs::mount(&dir.path().join("small"), "size=20k") else {
        return;
    };
    let out = disk.0.join("scan");
    let assert = replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_ne!(assert.get_output().status.code(), Some(0));
    let text = std::fs::read_to_string(out.join("benchmark_full.csv")).unwrap();
    assert!(text.ends_with('\n'), "no half-written row: {text}");
    let rows = scan_rows(&out);
    assert!(!rows.is_empty() && rows.len() < 32, "{} rows", rows.len());
    drop(disk);

    // isolated: its JSON and journal stay whole when the disk fills.
    let sigs = bloom_tiny_signatures(dir.path());
    let Some(disk) = Tmpfs::mount(&dir.path().join("small2"), "size=40k") else {
        return;
    };
    let out = disk.0.join("isolated");
    quick_isolated(&sigs, &out, &[])
        .code(2)
        .stderr(predicates::str::contains("No space left on device"));
    let (complete, rows) = isolated_rows(&out);
    assert!(!complete && !rows.is_empty());
    let journal = std::fs::read(out.join("isolated.journal.jsonl")).unwrap();
    assert!(journal.ends_with(b"\n"));
}

#[test]
fn a_read_only_folder_ends_the_run_with_a_clear_error_and_keeps_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("ro"), "size=1m") else {
        return;
    };
    let out = disk.0.join("scan");
    replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    let before = std::fs::read(out.join("benchmark_full.csv")).unwrap();
    disk.read_only();
    for extra in [None, Some("--resume")] {
        replay()
            .args(SCAN)
            .arg("--output-dir")
            .arg(&out)
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("Read-only file system"))
            .stderr(predicates::str::contains(out.to_str().unwrap()));
    }
    assert_eq!(
        std::fs::read(out.join("benchmark_full.csv")).unwrap(),
        before
    );
    replay()
        .args(SCAN)
        .arg("--output-dir")
        .arg(disk.0.join("fresh"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("fresh"));
}
