//! Energy probes for real: a meter program written here (`cmd:`), the example C plugin built
//! here (`plugin:`), RAPL on a synthetic powercap tree, and NVML on a machine without a GPU.

mod common;

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;
use std::time::{Duration, Instant};

use replay::energy::{self, measure_energy, EnergyConfig, Method, ProbeSpec, Window};

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The project's Python (`make test` sets it up), else `python3`.
fn python() -> String {
    let venv = root().join(".venv/bin/python");
    if venv.exists() {
        venv.display().to_string()
    } else {
        "python3".to_string()
    }
}

/// A meter that integrates a constant power over real elapsed time and answers the protocol.
const CONSTANT_METER: &str = r#"
import json, sys, time
watts = float(sys.argv[1])
period = float(sys.argv[2]) if len(sys.argv) > 2 else None
start = time.monotonic()
while True:
    line = sys.stdin.readline()
    if not line or line.strip() == "quit":
        break
    if line.strip() == "read":
        now = time.monotonic()
        reply = {"joules": watts * (now - start), "timestamp": now, "name": "constant"}
        if period is not None:
            reply["update_period_s"] = period
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
"#;

fn write_meter(dir: &Path) -> PathBuf {
    let path = dir.join("constant_meter.py");
    fs::write(&path, CONSTANT_METER).expect("write the meter script");
    path
}

/// Seconds spent inside invocations, and invocations, as the test's own clock saw them.
type Tally = Rc<Cell<(f64, u64)>>;

/// A workload of known duration, `calls` invocations per run, timed by the test's own clock:
/// returns the closure and where it accumulates (seconds inside invocations, invocations).
fn sleeping_workload(calls: u64, each: Duration) -> (impl FnMut() -> Result<(), String>, Tally) {
    let tally = Rc::new(Cell::new((0.0, 0u64)));
    let t = Rc::clone(&tally);
    let run = move || {
        let start = Instant::now();
        for _ in 0..calls {
            std::thread::sleep(each);
        }
        let (s, n) = t.get();
        t.set((s + start.elapsed().as_secs_f64(), n + calls));
        Ok(())
    };
    (run, tally)
}

/// The error text of opening a probe that must fail.
fn open_error(spec: &str) -> String {
    match energy::open_str(spec) {
        Ok(_) => panic!("opening {spec:?} should fail"),
        Err(e) => e.to_string(),
    }
}

fn within(measured: f64, truth: f64, tolerance: f64) -> bool {
    (measured - truth).abs() <= tolerance * truth.abs()
}

#[test]
fn cmd_meter_energy_per_invocation_within_5_percent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let meter = write_meter(tmp.path());
    let watts = 37.5;
    let spec = format!("cmd:{} {} {watts}", python(), meter.display());
    let mut probe = energy::open_str(&spec)
        .expect("the meter starts")
        .expect("not none");
    assert_eq!(probe.method(), Method::Counter);
    assert!(probe.name().contains("constant"), "{}", probe.name());
    // No declared update period: the documented 10 ms default, so 1 s windows.
    assert_eq!(probe.resolution().update_period_s, 0.01);

    let calls = 5;
    let (run, tally) = sleeping_workload(calls, Duration::from_millis(2));
    let summary =
        measure_energy(&mut *probe, calls, &EnergyConfig::default(), run).expect("measure");
    let (seconds, invocations) = tally.get();
    let truth = watts * seconds / invocations as f64;
    let measured = summary.joules_per_invocation.median;
    let error = (measured - truth) / truth * 100.0;
    eprintln!(
        "cmd meter: {measured:.6} J/invocation measured, {truth:.6} J truth ({error:+.3} %), spread {:.6}..{:.6}, {} windows of {} invocations",
        summary.joules_per_invocation.min,
        summary.joules_per_invocation.max,
        summary.windows.len(),
        summary.windows[0].invocations
    );
    assert!(
        within(measured, truth, 0.05),
        "measured {measured} J vs truth {truth} J ({error:+.2} %)"
    );
    assert!(
        within(summary.joules_per_invocation.min, truth, 0.05)
            && within(summary.joules_per_invocation.max, truth, 0.05)
    );
    assert!(summary.windows.len() >= 3);
    for w in &summary.windows {
        assert!(
            w.update_periods >= 95.0,
            "window of {} update periods",
            w.update_periods
        );
        assert!(
            within(w.busy.average_watts, watts, 0.05),
            "{}",
            w.busy.average_watts
        );
    }
    assert!(summary.probe.contains("constant"));
}

#[test]
fn cmd_meter_idle_subtraction_removes_constant_power() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let meter = write_meter(tmp.path());
    // The meter declares a 2 ms update period: 0.2 s windows.
    let spec = format!("cmd:{} {} 20 0.002", python(), meter.display());
    let mut probe = energy::open_str(&spec)
        .expect("the meter starts")
        .expect("not none");
    assert_eq!(probe.resolution().update_period_s, 0.002);
    let (run, tally) = sleeping_workload(2, Duration::from_millis(1));
    let config = EnergyConfig {
        idle_subtract: true,
        ..EnergyConfig::default()
    };
    let summary = measure_energy(&mut *probe, 2, &config, run).expect("measure");
    let (seconds, invocations) = tally.get();
    let gross = 20.0 * seconds / invocations as f64;
    let idle = summary.idle_watts.expect("idle measured");
    assert!(within(idle.median, 20.0, 0.05), "idle {idle:?}");
    // All the power is idle power, so what is left is small against the gross energy.
    assert!(
        summary.joules_per_invocation.median.abs() < 0.05 * gross,
        "{:?} vs gross {gross}",
        summary.joules_per_invocation
    );
    assert!(summary.idle_subtracted);
}

#[test]
fn cmd_meter_errors_are_clear() {
    let e = open_error("cmd:/nonexistent/power-meter --port x");
    assert!(
        e.contains("/nonexistent/power-meter") && e.contains("not found"),
        "{e}"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let bad = tmp.path().join("bad_meter.py");
    fs::write(
        &bad,
        "import sys\nsys.stdin.readline()\nprint('watts: 42', flush=True)\nsys.stdin.readline()\n",
    )
    .expect("write");
    let e = open_error(&format!("cmd:{} {}", python(), bad.display()));
    assert!(e.contains("the line was: watts: 42"), "{e}");
}

/// Compiles the example plugin into `dir` with extra compiler flags.
fn build_plugin(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let out = dir.join(format!("lib{name}.so"));
    let source = root().join("examples/energy_plugin/constant_power.c");
    let status = Command::new("cc")
        .args([
            "-std=c99", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror",
        ])
        .arg(format!("-I{}", root().join("include").display()))
        .args(defines)
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => out,
        Ok(s) => panic!("cc failed on {} ({s})", source.display()),
        Err(e) => panic!("cannot run cc to build {}: {e}", source.display()),
    }
}

fn mapped(path: &Path) -> bool {
    let maps = fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    maps.contains(&*canonical.to_string_lossy())
}

#[test]
fn example_plugin_loads_measures_and_unloads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let lib = build_plugin(tmp.path(), "constant_power", &[]);
    {
        let mut probe = energy::open_str(&format!("plugin:{}", lib.display()))
            .expect("loads")
            .expect("not none");
        assert!(mapped(&lib), "the plugin is loaded");
        assert!(probe.name().contains("constant-power"), "{}", probe.name());
        assert_eq!(probe.method(), Method::Counter);
        assert_eq!(probe.resolution().update_period_s, 1e-6);

        let window = Window::open(&mut *probe).expect("open window");
        std::thread::sleep(Duration::from_millis(150));
        let reading = window.close().expect("close window");
        let truth = 42.0 * reading.seconds;
        eprintln!(
            "plugin: {:.6} J over {:.6} s, truth {truth:.6} J ({:+.4} %)",
            reading.joules,
            reading.seconds,
            (reading.joules - truth) / truth * 100.0
        );
        assert!(within(reading.joules, truth, 0.05), "{reading:?}");
        assert!(within(reading.average_watts, 42.0, 0.05), "{reading:?}");

        // Energy per invocation of a known-duration workload.
        let config = EnergyConfig {
            min_window_s: 0.1,
            ..EnergyConfig::default()
        };
        let (run, tally) = sleeping_workload(4, Duration::from_millis(1));
        let summary = measure_energy(&mut *probe, 4, &config, run).expect("measure");
        let (seconds, invocations) = tally.get();
        let truth = 42.0 * seconds / invocations as f64;
        let measured = summary.joules_per_invocation.median;
        eprintln!(
            "plugin: {measured:.6} J/invocation, truth {truth:.6} J ({:+.3} %)",
            (measured - truth) / truth * 100.0
        );
        assert!(within(measured, truth, 0.05), "{measured} vs {truth}");
    }
    assert!(
        !mapped(&lib),
        "the plugin is unloaded once the probe is dropped"
    );

    // The config reaches the plugin's open: 10 W.
    let mut probe = energy::open(&ProbeSpec::Plugin {
        path: lib.clone(),
        config: "10".into(),
    })
    .expect("loads");
    let window = Window::open(&mut *probe).expect("open window");
    std::thread::sleep(Duration::from_millis(50));
    let reading = window.close().expect("close window");
    assert!(within(reading.average_watts, 10.0, 0.05), "{reading:?}");
    drop(probe);

    // A config the plugin refuses: open returns NULL.
    let e = open_error(&format!("plugin:{} not-a-number", lib.display()));
    assert!(
        e.contains(&*lib.to_string_lossy()) && e.contains("replay_energy_probe_open returned NULL"),
        "{e}"
    );
}

#[test]
fn plugin_with_wrong_abi_version_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let lib = build_plugin(tmp.path(), "abi2", &["-DCONSTANT_POWER_ABI_VERSION=2"]);
    let e = open_error(&format!("plugin:{}", lib.display()));
    eprintln!("{e}");
    assert!(e.contains(&*lib.to_string_lossy()), "{e}");
    assert!(
        e.contains("implements ABI version 2") && e.contains("speaks version 1"),
        "{e}"
    );
    assert!(!mapped(&lib), "a rejected plugin is not left loaded");
}

#[test]
fn plugin_with_missing_symbol_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let lib = build_plugin(tmp.path(), "noread", &["-DCONSTANT_POWER_OMIT_READ"]);
    let e = open_error(&format!("plugin:{}", lib.display()));
    eprintln!("{e}");
    assert!(e.contains(&*lib.to_string_lossy()), "{e}");
    assert!(
        e.contains("does not export the required symbol `replay_energy_probe_read_joules`"),
        "{e}"
    );
}

#[test]
fn plugin_that_is_not_a_library_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let e = open_error(&format!(
        "plugin:{}",
        tmp.path().join("missing.so").display()
    ));
    assert!(e.contains("missing.so: no such file"), "{e}");
    let text = tmp.path().join("text.so");
    fs::write(&text, "not an ELF file").expect("write");
    let e = open_error(&format!("plugin:{}", text.display()));
    assert!(
        e.contains("text.so") && e.contains("cannot be loaded as a shared library"),
        "{e}"
    );
}

/// One powercap zone directory.
fn zone(dir: &Path, name: &str, energy_uj: u64, range_uj: u64) {
    fs::create_dir_all(dir).expect("mkdir");
    fs::write(dir.join("name"), format!("{name}\n")).expect("write name");
    fs::write(dir.join("energy_uj"), format!("{energy_uj}\n")).expect("write energy_uj");
    fs::write(dir.join("max_energy_range_uj"), format!("{range_uj}\n")).expect("write range");
    fs::write(dir.join("enabled"), "1\n").expect("write enabled");
}

fn set_energy(dir: &Path, energy_uj: u64) {
    fs::write(dir.join("energy_uj"), format!("{energy_uj}\n")).expect("write energy_uj");
}

#[test]
fn rapl_synthetic_tree_packages_dram_and_wrap_around() {
    // Laid out like /sys/class/powercap on a two-socket server: packages, their core and dram
    // subzones, a psys zone, the control-type directory, and an mmio zone that repeats package 0.
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = tmp.path();
    const RANGE: u64 = 262_143_328_850;
    fs::create_dir_all(r.join("intel-rapl")).expect("mkdir");
    fs::write(r.join("intel-rapl/enabled"), "1\n").expect("write");
    zone(
        &r.join("intel-rapl:0"),
        "package-0",
        RANGE - 1_000_000,
        RANGE,
    );
    zone(&r.join("intel-rapl:0:0"), "core", 5, RANGE);
    zone(&r.join("intel-rapl:0:1"), "dram", 2_000_000, 65_712_999_613);
    zone(&r.join("intel-rapl:1"), "package-1", 10_000_000, RANGE);
    zone(&r.join("intel-rapl:1:0"), "dram", 3_000_000, 65_712_999_613);
    zone(&r.join("intel-rapl:2"), "psys", 0, RANGE);
    zone(&r.join("intel-rapl-mmio:0"), "package-0", 0, RANGE);

    let spec = format!("rapl:{}", r.display());
    let mut probe = energy::open_str(&spec).expect("opens").expect("not none");
    let name = probe.name();
    assert!(
        name.starts_with("rapl (package-0, dram, package-1, dram) at "),
        "{name}"
    );
    assert_eq!(probe.method(), Method::Counter);
    assert_eq!(probe.resolution().update_period_s, 0.001);
    let start = probe.read_joules().expect("read");
    assert_eq!(start, 0.0);

    // Package 0 wraps: RANGE - 1 J -> 0.5 J is 1.5 J. The others add 2, 3 and 0.25 J; core and
    // psys are not counted.
    set_energy(&r.join("intel-rapl:0"), 500_000);
    set_energy(&r.join("intel-rapl:0:1"), 4_000_000);
    set_energy(&r.join("intel-rapl:1"), 13_000_000);
    set_energy(&r.join("intel-rapl:1:0"), 3_250_000);
    set_energy(&r.join("intel-rapl:0:0"), 999_999_999);
    set_energy(&r.join("intel-rapl:2"), 999_999_999);
    let after = probe.read_joules().expect("read");
    assert!((after - 6.75).abs() < 1e-9, "{after}");

    // Through a window too, with a second wrap of the DRAM counter.
    let window = Window::open(&mut *probe).expect("window");
    set_energy(&r.join("intel-rapl:0:1"), 1_000_000); // 65_712_999_613 - 4_000_000 + 1_000_000
    let reading = window.close().expect("close");
    assert!(
        (reading.joules - (65_712_999_613.0 - 3_000_000.0) * 1e-6).abs() < 1e-6,
        "{reading:?}"
    );
}

#[test]
fn rapl_amd_zones_and_missing_root() {
    let tmp = tempfile::tempdir().expect("tempdir");
    zone(&tmp.path().join("amd-rapl:0"), "package-0", 100, 1_000_000);
    let mut probe = energy::open(&ProbeSpec::Rapl {
        root: tmp.path().to_path_buf(),
    })
    .expect("opens");
    set_energy(&tmp.path().join("amd-rapl:0"), 1_100);
    assert!((probe.read_joules().expect("read") - 0.001).abs() < 1e-12);

    let missing = tmp.path().join("no-powercap");
    let e = open_error(&format!("rapl:{}", missing.display()));
    assert!(
        e.starts_with("RAPL unavailable under ") && e.contains("no-powercap"),
        "{e}"
    );
}

#[test]
fn nvml_unavailable_is_a_clear_error() {
    if common::has_nvidia_driver() {
        // With a driver, selftest check "NVML energy over GPU work" opens NVML and wants
        // its joules to rise over GPU work.
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    for spec in ["nvml", "nvml:1"] {
        match energy::open_str(spec) {
            Ok(_) => panic!("{spec} opened without an NVIDIA driver"),
            Err(e) => {
                let msg = e.to_string();
                eprintln!("{spec}: {msg}");
                assert!(msg.starts_with("NVML unavailable: "), "{msg}");
            }
        }
    }
}

#[test]
fn energy_specs_none_and_invalid() {
    assert!(energy::open_str("none").expect("none is fine").is_none());
    let e = open_error("wattmeter");
    assert!(e.contains("unknown probe 'wattmeter'"), "{e}");
    let e = energy::open(&ProbeSpec::None)
        .err()
        .expect("an error")
        .to_string();
    assert!(e.contains("no probe to open"), "{e}");
}
