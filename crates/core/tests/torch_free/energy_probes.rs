//! Energy probes for real: a meter program written here (`cmd:`), the example C plugin built
//! here (`plugin:`), RAPL on a synthetic powercap tree, and NVML on a machine without a GPU.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use replay_core::energy::{
    self, measure_energy, CommandProbe, EnergyConfig, EnergyError, EnergyProbe, EnergySummary,
    Method, ProbeResolution, ProbeSpec, Window, DEFAULT_READ_TIMEOUT,
};

/// The repository root.
fn root() -> PathBuf {
    common::repo_root()
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

/// A workload of `calls` invocations per run, each sleeping `each`: sleep never returns early,
/// so a window holding `n` invocations lasts at least `n × each`.
fn sleeping_workload(calls: u64, each: Duration) -> impl FnMut() -> Result<(), String> {
    move || {
        for _ in 0..calls {
            std::thread::sleep(each);
        }
        Ok(())
    }
}

/// The error text of opening a probe that must fail.
fn open_error(spec: &str) -> String {
    match energy::open_str(spec) {
        Ok(_) => panic!("opening {spec:?} should fail"),
        Err(e) => e.to_string(),
    }
}

/// One reading of a probe, between two instants of the test's own clock.
#[derive(Debug, Clone, Copy)]
struct Read {
    before: Instant,
    after: Instant,
    joules: f64,
}

/// Wraps a probe and records every reading, so that what replay makes of the readings can be
/// checked exactly against them.
struct Recorder {
    inner: Box<dyn EnergyProbe>,
    reads: Vec<Read>,
}

impl Recorder {
    fn new(inner: Box<dyn EnergyProbe>) -> Recorder {
        Recorder {
            inner,
            reads: Vec::new(),
        }
    }
}

impl EnergyProbe for Recorder {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn resolution(&self) -> ProbeResolution {
        self.inner.resolution()
    }
    fn method(&self) -> Method {
        self.inner.method()
    }
    fn read_joules(&mut self) -> Result<f64, EnergyError> {
        let before = Instant::now();
        let joules = self.inner.read_joules()?;
        let after = Instant::now();
        self.reads.push(Read {
            before,
            after,
            joules,
        });
        Ok(joules)
    }
}

/// Checks energy `joules` measured between readings `open` and `close` of a meter of a
/// constant `watts` that integrates over CLOCK_MONOTONIC (the test's meters and plugin, and
/// `Instant`, all read that clock). Exact by construction, so no tolerance for scheduling:
/// the joules are the difference of the two readings, and since the meter read its clock
/// inside each call, `joules / watts` is no shorter than from the end of the opening call to
/// the start of the closing one and no longer than from the start of the one to the end of
/// the other. Returns that shortest span, in seconds.
fn check_against_meter(joules: f64, open: &Read, close: &Read, watts: f64) -> f64 {
    assert_eq!(joules, close.joules - open.joules);
    let shortest = close.before.duration_since(open.after).as_secs_f64();
    let longest = close.after.duration_since(open.before).as_secs_f64();
    let meter_seconds = joules / watts;
    // 1 µs for the meter's floating-point arithmetic on seconds since boot.
    assert!(
        shortest - 1e-6 <= meter_seconds && meter_seconds <= longest + 1e-6,
        "{joules} J at {watts} W is {meter_seconds} s, outside [{shortest}, {longest}] s"
    );
    shortest
}

/// Checks every window of `summary` against the readings that opened and closed it
/// (`reads_per_window` readings each: 2, or 4 with an idle window), for a meter of `watts`
/// and a workload of `calls` invocations of at least `each` per run.
fn check_windows(
    summary: &EnergySummary,
    reads: &[Read],
    reads_per_window: usize,
    watts: f64,
    calls: u64,
    each: Duration,
) {
    assert_eq!(reads.len(), summary.windows.len() * reads_per_window);
    for (window, reads) in summary.windows.iter().zip(reads.chunks(reads_per_window)) {
        let busy = &window.busy;
        let shortest = check_against_meter(busy.joules, &reads[0], &reads[1], watts);
        // The window holds all its invocations, so its energy covers at least their sleeps.
        assert_eq!(window.invocations, summary.runs_per_window * calls);
        assert!(shortest >= window.invocations as f64 * each.as_secs_f64());
        assert_eq!(busy.average_watts, busy.joules / busy.seconds);
        if let Some(idle) = &window.idle {
            check_against_meter(idle.joules, &reads[2], &reads[3], watts);
            assert_eq!(idle.average_watts, idle.joules / idle.seconds);
            assert_eq!(
                window.net_joules,
                busy.joules - idle.average_watts * busy.seconds
            );
        } else {
            assert_eq!(window.net_joules, busy.joules);
        }
        assert_eq!(
            window.joules_per_invocation,
            window.net_joules / window.invocations as f64
        );
    }
    let mut per_invocation: Vec<f64> = summary
        .windows
        .iter()
        .map(|w| w.joules_per_invocation)
        .collect();
    per_invocation.sort_by(f64::total_cmp);
    assert_eq!(summary.windows.len(), 3);
    assert_eq!(summary.joules_per_invocation.median, per_invocation[1]);
    assert_eq!(summary.joules_per_invocation.min, per_invocation[0]);
    assert_eq!(summary.joules_per_invocation.max, per_invocation[2]);
}

#[test]
fn cmd_meter_energy_per_invocation_is_the_meters_energy_over_the_window() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let meter = write_meter(tmp.path());
    let watts = 37.5;
    let spec = format!("cmd:{} {} {watts}", python(), meter.display());
    let probe = energy::open_str(&spec)
        .expect("the meter starts")
        .expect("not none");
    assert_eq!(probe.method(), Method::Counter);
    assert!(probe.name().contains("constant"), "{}", probe.name());
    // No declared update period: the documented 10 ms default, so 1 s windows.
    assert_eq!(probe.resolution().update_period_s, 0.01);

    let mut probe = Recorder::new(probe);
    let (calls, each) = (5, Duration::from_millis(2));
    let summary = measure_energy(
        &mut probe,
        calls,
        &EnergyConfig::default(),
        sleeping_workload(calls, each),
    )
    .expect("measure");
    assert_eq!(summary.window_target_s, 1.0);
    check_windows(&summary, &probe.reads, 2, watts, calls, each);
    // Per invocation: at least the meter's power over one invocation's 2 ms of sleep.
    assert!(summary.joules_per_invocation.min >= watts * each.as_secs_f64());
    assert!(summary.probe.contains("constant"));
    assert_eq!(summary.method, Method::Counter);
    assert!(!summary.idle_subtracted && summary.idle_watts.is_none());
}

#[test]
fn cmd_meter_idle_subtraction_removes_idle_power_times_the_busy_time() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let meter = write_meter(tmp.path());
    // The meter declares a 2 ms update period: 0.2 s windows.
    let spec = format!("cmd:{} {} 20 0.002", python(), meter.display());
    let probe = energy::open_str(&spec)
        .expect("the meter starts")
        .expect("not none");
    assert_eq!(probe.resolution().update_period_s, 0.002);
    let mut probe = Recorder::new(probe);
    let config = EnergyConfig {
        idle_subtract: true,
        ..EnergyConfig::default()
    };
    let (calls, each) = (2, Duration::from_millis(1));
    let summary = measure_energy(&mut probe, calls, &config, sleeping_workload(calls, each))
        .expect("measure");
    // Every busy window is followed by an idle one: four readings per window, each idle
    // window's power taken off over its busy window's length.
    check_windows(&summary, &probe.reads, 4, 20.0, calls, each);
    assert!(summary.idle_subtracted);
    let mut idle: Vec<f64> = summary
        .windows
        .iter()
        .filter_map(|w| w.idle.as_ref().map(|i| i.average_watts))
        .collect();
    idle.sort_by(f64::total_cmp);
    assert_eq!(summary.idle_watts.map(|s| s.median), Some(idle[1]));
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

/// A meter that answers its first `AFTER` reads (1 J each, 0.1 ms update period), then
/// fails as its `MODE` says: `die` (exit 3 with a message), `stall` (never answer) or
/// `garbage` (a line that is not the protocol's).
const FAULTY_METER: &str = include_str!("faulty_meter.py");

/// Measures a quick workload with the faulty meter failing after `after` reads; returns the
/// error, the meter's command line and how long the measurement took.
fn faulty_meter_error(mode: &str, after: u32, timeout: Duration) -> (String, String, Duration) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let meter = tmp.path().join("faulty_meter.py");
    fs::write(&meter, FAULTY_METER).expect("write the meter");
    let args = vec![
        meter.display().to_string(),
        mode.to_string(),
        after.to_string(),
    ];
    let display = format!("{} {}", python(), args.join(" "));
    let mut probe =
        CommandProbe::spawn_with_timeout(&python(), &args, timeout).expect("the meter starts");
    let start = Instant::now();
    let result = measure_energy(&mut probe, 1, &EnergyConfig::default(), || {
        Ok::<(), String>(())
    });
    let took = start.elapsed();
    match result {
        Ok(summary) => panic!("{mode}: measured {summary:?}"),
        Err(e) => (e.to_string(), display, took),
    }
}

#[test]
fn cmd_meter_failing_mid_measurement_is_an_error_naming_it() {
    // Read 1 starts the probe, reads 2 and 3 are the first window; read 4, opening the
    // second window, fails.
    let (e, program, _) = faulty_meter_error("die", 3, DEFAULT_READ_TIMEOUT);
    assert!(
        e.starts_with(&format!(
            "energy meter program '{program}' exited before answering"
        )) && e.contains("exit status: 3")
            && e.contains("its stderr ends with: meter: lost the serial port"),
        "{e}"
    );
    let (e, program, _) = faulty_meter_error("garbage", 3, DEFAULT_READ_TIMEOUT);
    assert!(
        e.starts_with(&format!(
            "energy meter program '{program}' answered 'read' with a bad line"
        )) && e.ends_with("the line was: E42 overrange"),
        "{e}"
    );
    // A stalled meter times out: the measurement ends after the timeout, not never.
    let timeout = Duration::from_millis(500);
    let (e, program, took) = faulty_meter_error("stall", 3, timeout);
    assert_eq!(
        e,
        format!("energy meter program '{program}' did not answer 'read' within 0.5 s")
    );
    assert!(took >= timeout, "{took:?}");
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
        let probe = energy::open_str(&format!("plugin:{}", lib.display()))
            .expect("loads")
            .expect("not none");
        assert!(mapped(&lib), "the plugin is loaded");
        assert!(probe.name().contains("constant-power"), "{}", probe.name());
        assert_eq!(probe.method(), Method::Counter);
        assert_eq!(probe.resolution().update_period_s, 1e-6);
        let mut probe = Recorder::new(probe);

        let window = Window::open(&mut probe).expect("open window");
        std::thread::sleep(Duration::from_millis(150));
        let reading = window.close().expect("close window");
        let shortest = check_against_meter(reading.joules, &probe.reads[0], &probe.reads[1], 42.0);
        assert!(shortest >= 0.150, "the sleep is inside the window");
        assert_eq!(reading.average_watts, reading.joules / reading.seconds);

        // Energy per invocation of a known-duration workload.
        let config = EnergyConfig {
            min_window_s: 0.1,
            ..EnergyConfig::default()
        };
        probe.reads.clear();
        let (calls, each) = (4, Duration::from_millis(1));
        let summary = measure_energy(&mut probe, calls, &config, sleeping_workload(calls, each))
            .expect("measure");
        assert_eq!(summary.window_target_s, 0.1);
        check_windows(&summary, &probe.reads, 2, 42.0, calls, each);
    }
    assert!(
        !mapped(&lib),
        "the plugin is unloaded once the probe is dropped"
    );

    // The config reaches the plugin's open: 10 W.
    let probe = energy::open(&ProbeSpec::Plugin {
        path: lib.clone(),
        config: "10".into(),
    })
    .expect("loads");
    let mut probe = Recorder::new(probe);
    let window = Window::open(&mut probe).expect("open window");
    std::thread::sleep(Duration::from_millis(50));
    let reading = window.close().expect("close window");
    check_against_meter(reading.joules, &probe.reads[0], &probe.reads[1], 10.0);
    drop(probe);

    // A config the plugin refuses: open returns NULL.
    let e = open_error(&format!("plugin:{} not-a-number", lib.display()));
    assert!(
        e.contains(&*lib.to_string_lossy()) && e.contains("replay_energy_probe_open returned NULL"),
        "{e}"
    );
}

#[test]
fn plugin_read_failures_are_errors_naming_the_plugin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Each variant reads twice (the first window), then fails when the second opens.
    for (fault, expected) in [
        ("1", "replay_energy_probe_read_joules failed with code 7"),
        ("2", "reading is not a finite number (NaN)"),
        ("3", "cumulative energy went backwards from "),
    ] {
        let lib = build_plugin(
            tmp.path(),
            &format!("fault{fault}"),
            &[&format!("-DCONSTANT_POWER_FAULT={fault}")],
        );
        let mut probe = energy::open_str(&format!("plugin:{}", lib.display()))
            .expect("loads")
            .expect("not none");
        let config = EnergyConfig {
            min_window_s: 0.01,
            ..EnergyConfig::default()
        };
        let e = match measure_energy(&mut *probe, 1, &config, || Ok::<(), String>(())) {
            Ok(summary) => panic!("fault {fault}: measured {summary:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(&*lib.to_string_lossy()) && e.contains(expected),
            "fault {fault}: {e}"
        );
    }
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
