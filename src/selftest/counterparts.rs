//! The selftest checks that stand in, on a GPU, for the tests that return early there.
//!
//! A handful of tests check what happens without an NVIDIA driver (`replay devices` says why
//! there is no CUDA device, NVML is unavailable, libtorch has no CUDA stream, ...) and return
//! early on a machine with one, where they would check nothing. Each such early return names,
//! in a comment `selftest check "NAME"`, the check of `replay selftest --device cuda` that
//! exercises the same path where the driver is there; a unit test below reads the sources and
//! fails when a skip names no check, or a check that no longer exists.
//!
//! The checks run only on CUDA (they are not listed on `--device cpu`, where they have nothing
//! to run on); what they decide from their measurements is plain logic, unit-tested here.

use std::time::{Duration, Instant};

use tch::{Kind, Tensor};

use crate::device::cuda::{CudaDevice, CudaInventory};
use crate::device::{Device, DeviceSpec};
use crate::energy::{EnergyReading, ProbeSpec, Window};
use crate::torch::work_target::synchronize_gpu;

/// `replay devices` on a GPU: the device is listed with attributes a real GPU has.
pub const CUDA_DEVICE_ATTRIBUTES: &str = "CUDA device attributes";
/// `--device cuda:N` past the last device: refused with a usage error that gives the count.
pub const CUDA_DEVICE_PAST_THE_LAST: &str = "cuda:N past the last device refused";
/// libtorch's current CUDA stream: found, and CUDA events on it bracket libtorch's work.
pub const TORCH_STREAM_EVENTS: &str = "CUDA events on libtorch's stream";
/// `--energy nvml`: NVML opens and its joules increase over GPU work.
pub const NVML_ENERGY: &str = "NVML energy over GPU work";
/// The CUDA timer's blocking kernel: a short kernel times lower behind it than without it.
pub const BLOCKING_KERNEL: &str = "blocking kernel hides the launch cost";

type CudaCheck = fn(&CudaDevice) -> Result<String, String>;

/// Every counterpart check, in the order the selftest runs them: tier, name, check.
pub const CHECKS: [(u8, &str, CudaCheck); 5] = [
    (0, CUDA_DEVICE_ATTRIBUTES, device_attributes),
    (0, CUDA_DEVICE_PAST_THE_LAST, device_past_the_last),
    (3, TORCH_STREAM_EVENTS, torch_stream_events),
    (
        3,
        BLOCKING_KERNEL,
        super::blocking::short_kernel_with_and_without,
    ),
    (0, NVML_ENERGY, nvml_energy),
];

fn device_attributes(dev: &CudaDevice) -> Result<String, String> {
    let inventory = crate::device::cuda::inventory().map_err(|e| e.to_string())?;
    judge_device_attributes(&inventory, dev.spec())
}

/// What `replay devices` lists for the opened GPU `gpu` (`cuda:N`), held against what any
/// CUDA GPU has: a name,
/// a compute capability, SMs, memory, an L2 cache and clocks, and the driver and runtime
/// versions. A wrong attribute enum or a unit slip (bytes as KiB) lands outside these.
pub fn judge_device_attributes(
    inventory: &CudaInventory,
    gpu: DeviceSpec,
) -> Result<String, String> {
    let d = inventory
        .devices
        .iter()
        .find(|d| DeviceSpec::Cuda(d.index) == gpu)
        .ok_or_else(|| {
            format!(
                "{gpu} is open but not among the {} device(s) listed",
                inventory.devices.len()
            )
        })?;
    let mut problems = Vec::new();
    if !(10_000..100_000).contains(&inventory.driver_version) {
        problems.push(format!(
            "driver version {} is not a CUDA version",
            inventory.driver_version
        ));
    }
    match inventory.runtime_version {
        Some(v) if (10_000..100_000).contains(&v) => {}
        Some(v) => problems.push(format!("runtime version {v} is not a CUDA version")),
        None => problems.push("no CUDA runtime found (libcudart from the torch wheels)".into()),
    }
    if d.name.trim().is_empty() {
        problems.push("no device name".into());
    }
    let (major, minor) = d.compute_capability;
    if !(3..=20).contains(&major) || !(0..=9).contains(&minor) {
        problems.push(format!("compute capability {major}.{minor}"));
    }
    if !(1..=10_000).contains(&d.multiprocessors) {
        problems.push(format!("{} SMs", d.multiprocessors));
    }
    if d.total_memory_bytes < 256 << 20 {
        problems.push(format!("{} bytes of memory", d.total_memory_bytes));
    }
    if !(64 << 10..=1 << 30).contains(&d.l2_cache_bytes) {
        problems.push(format!("L2 of {} bytes", d.l2_cache_bytes));
    }
    if d.clock_khz <= 0 || d.memory_bus_width_bits <= 0 {
        problems.push(format!(
            "clock {} kHz, memory bus {} bits",
            d.clock_khz, d.memory_bus_width_bits
        ));
    }
    let what = format!(
        "{gpu} {} sm_{major}{minor}, {} SMs, {} MiB, L2 {} KiB; driver {}, runtime {}",
        d.name,
        d.multiprocessors,
        d.total_memory_bytes >> 20,
        d.l2_cache_bytes >> 10,
        crate::device::cuda::format_cuda_version(inventory.driver_version),
        inventory
            .runtime_version
            .map_or("none".into(), crate::device::cuda::format_cuda_version)
    );
    if problems.is_empty() {
        Ok(what)
    } else {
        Err(format!("{what}: not sane: {}", problems.join("; ")))
    }
}

fn device_past_the_last(_dev: &CudaDevice) -> Result<String, String> {
    let count = crate::device::cuda::inventory()
        .map_err(|e| e.to_string())?
        .devices
        .len();
    judge_refusal(
        count,
        Device::open(DeviceSpec::Cuda(count)).map(|d| d.describe()),
    )
}

/// Opening `cuda:count` on a machine with `count` devices must fail as `--device` values that
/// the user can fix do: a usage error (exit 2) that says how many devices there are.
pub fn judge_refusal(count: usize, opened: crate::Result<String>) -> Result<String, String> {
    match opened {
        Ok(device) => Err(format!(
            "cuda:{count} opened ({device}) though the driver lists {count} device(s)"
        )),
        Err(e) if !e.is_usage_error() => Err(format!(
            "cuda:{count} failed, but not as a usage error (exit 2): {e}"
        )),
        Err(e)
            if !e
                .to_string()
                .contains(&format!("has {count} CUDA device(s)")) =>
        {
            Err(format!(
                "cuda:{count} refused without saying there are {count} device(s): {e}"
            ))
        }
        Err(e) => Ok(format!("cuda:{count}: {e}")),
    }
}

/// Side of the square matrices multiplied while CUDA events or an energy probe watch.
const WORK_SIDE: i64 = 2048;
/// Matrix products between the events: ~140 GFLOP, milliseconds on any GPU replay targets.
const WORK_PRODUCTS: usize = 8;

fn torch_stream_events(dev: &CudaDevice) -> Result<String, String> {
    use crate::measure::DeviceStream;
    use crate::torch::work_target::libtorch_stream;
    // Events are made in the current context, which must be the device's (libtorch's too).
    dev.context
        .bind_to_thread()
        .map_err(|e| format!("cuCtxSetCurrent: {e}"))?;
    // The timer the measurement core times libtorch's work with on this GPU.
    let mut events = libtorch_stream(dev)
        .and_then(|stream| stream.timer())
        .map_err(|e| e.to_string())?;
    let _guard = tch::no_grad_guard();
    tch::manual_seed(11);
    let a = Tensor::randn(
        [WORK_SIDE, WORK_SIDE],
        (Kind::Float, Device::host().torch()),
    );
    let want = a.to_kind(Kind::Double).mm(&a.to_kind(Kind::Double));
    let on_gpu = a.to_device(dev.torch());
    let _ = on_gpu.mm(&on_gpu); // cuBLAS handle and workspace, outside the timed bracket
    synchronize_gpu(dev).map_err(|e| e.to_string())?;

    let mut timed = |work: &dyn Fn() -> Option<Tensor>| -> Result<(Duration, Duration, Option<Tensor>), String> {
        let host = Instant::now();
        events.start().map_err(|e| e.to_string())?;
        let out = work();
        events.stop().map_err(|e| e.to_string())?;
        let device = events.take_batch().device;
        Ok((device, host.elapsed(), out))
    };
    let (empty, _, _) = timed(&|| None)?;
    let (device, host, out) = timed(&|| {
        let mut out = on_gpu.mm(&on_gpu);
        for _ in 1..WORK_PRODUCTS {
            out = on_gpu.mm(&on_gpu);
        }
        Some(out)
    })?;
    let got = out
        .ok_or("the matrix product returned nothing")?
        .to_device(Device::host().torch());
    let error = super::tensor_error::max_relative_error(&got, &want)?;
    judge_stream_timing(device, empty, host, error)
}

/// CUDA events on libtorch's current stream around its matrix products: the time between them
/// is the work's (far above an empty bracket, which is what events on a stream libtorch does
/// not use would measure), never more than the host waited for it, and the product is
/// libtorch's on the CPU (TF32 off, as in PyTorch).
pub fn judge_stream_timing(
    work: Duration,
    empty: Duration,
    host: Duration,
    max_relative_error: f64,
) -> Result<String, String> {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let what = format!(
        "{WORK_PRODUCTS} products {WORK_SIDE}^3 fp32: {:.1} us by events (empty bracket {:.1} us, \
         host {:.1} us), max relative error {max_relative_error:.1e} against the CPU",
        us(work),
        us(empty),
        us(host)
    );
    let mut problems = Vec::new();
    if work <= empty * 10 {
        problems.push("the events do not bracket the work (not libtorch's stream?)");
    }
    // The device's and the host's clocks differ a little; 10 us covers it.
    if work > host + Duration::from_micros(10) {
        problems.push("the events measured more than the host waited");
    }
    if max_relative_error.is_nan() || max_relative_error > 1e-4 {
        problems.push("the product differs from the CPU's");
    }
    if problems.is_empty() {
        Ok(what)
    } else {
        Err(format!("{what}: {}", problems.join("; ")))
    }
}

/// Windows of GPU work for the NVML check: at least this long, and at least this many of the
/// probe's update periods.
const NVML_MIN_BUSY: Duration = Duration::from_millis(500);
const NVML_MIN_PERIODS: f64 = 10.0;

fn nvml_energy(dev: &CudaDevice) -> Result<String, String> {
    // `--energy nvml:N` with the GPU's NVML number (`CudaDevice::nvml_index`); the check is
    // of NVML itself either way.
    let mut probe = crate::energy::open(&ProbeSpec::Nvml {
        device: dev.nvml_index(),
    })
    .map_err(|e| e.to_string())?;
    let periods = NVML_MIN_PERIODS * probe.resolution().update_period_s;
    // (from_secs_f64 panics on NaN; a probe's period is the probe's to report.)
    let periods = if periods.is_finite() {
        periods.clamp(0.0, 10.0)
    } else {
        0.0
    };
    let busy = NVML_MIN_BUSY.max(Duration::from_secs_f64(periods));
    let _guard = tch::no_grad_guard();
    let x = Tensor::randn([WORK_SIDE, WORK_SIDE], (Kind::Float, dev.torch()));
    let window = Window::open(probe.as_mut()).map_err(|e| e.to_string())?;
    let start = Instant::now();
    while start.elapsed() < busy {
        let _ = x.mm(&x);
        synchronize_gpu(dev).map_err(|e| e.to_string())?;
    }
    let reading = window.close().map_err(|e| e.to_string())?;
    judge_energy(&reading, busy)
}

/// An NVML window over `busy` of GPU work: it lasted that long, its joules went up (the
/// counter moved, or the sampled power was integrated) and the average power is one a GPU
/// draws: above 1 W (a counter that never moved gives 0) and below 2 kW (a unit slip, mJ read
/// as J, gives thousands of times too much).
pub fn judge_energy(reading: &EnergyReading, busy: Duration) -> Result<String, String> {
    let what = format!(
        "{}: {:.3} J over {:.3} s of GPU work, {:.1} W on average ({})",
        reading.probe, reading.joules, reading.seconds, reading.average_watts, reading.method
    );
    let mut problems = Vec::new();
    if reading.seconds < busy.as_secs_f64() {
        problems.push("the window is shorter than the work");
    }
    if !(reading.joules.is_finite() && reading.joules > 0.0) {
        problems.push("the joules did not increase");
    }
    if !(1.0..2000.0).contains(&reading.average_watts) {
        problems.push("no GPU draws that power");
    }
    if problems.is_empty() {
        Ok(what)
    } else {
        Err(format!("{what}: {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::cuda::CudaDeviceInfo;
    use crate::energy::Method;

    fn h100() -> CudaInventory {
        CudaInventory {
            driver_version: 13000,
            runtime_version: Some(13000),
            devices: vec![CudaDeviceInfo {
                index: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_capability: (9, 0),
                multiprocessors: 132,
                total_memory_bytes: 85_520_809_984,
                l2_cache_bytes: 52_428_800,
                clock_khz: 1_980_000,
                memory_clock_khz: 2_619_000,
                memory_bus_width_bits: 5120,
            }],
        }
    }

    #[test]
    fn a_real_gpus_attributes_pass_and_each_broken_one_is_named() {
        let detail = judge_device_attributes(&h100(), DeviceSpec::Cuda(0)).unwrap();
        assert!(
            detail.contains("sm_90, 132 SMs, 81559 MiB, L2 51200 KiB; driver 13.0"),
            "{detail}"
        );
        type Break = fn(&mut CudaInventory);
        let cases: [(&str, Break); 7] = [
            ("driver version 13", |i| i.driver_version = 13),
            ("no CUDA runtime", |i| i.runtime_version = None),
            ("compute capability 0.0", |i| {
                i.devices[0].compute_capability = (0, 0)
            }),
            ("0 SMs", |i| i.devices[0].multiprocessors = 0),
            ("bytes of memory", |i| {
                i.devices[0].total_memory_bytes = 85_520_809_984 >> 10
            }),
            ("L2 of 0 bytes", |i| i.devices[0].l2_cache_bytes = 0),
            ("no device name", |i| i.devices[0].name = " ".into()),
        ];
        for (expected, breaks) in cases {
            let mut inventory = h100();
            breaks(&mut inventory);
            let err = judge_device_attributes(&inventory, DeviceSpec::Cuda(0)).unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let err = judge_device_attributes(&h100(), DeviceSpec::Cuda(1)).unwrap_err();
        assert!(err.contains("cuda:1 is open but not among the 1"), "{err}");
    }

    #[test]
    fn past_the_last_device_must_be_a_usage_error_with_the_count() {
        let refused =
            crate::Error::CudaUnavailable(crate::device::cuda::missing_device_reason(2, 2));
        let detail = judge_refusal(2, Err(refused)).unwrap();
        assert!(detail.contains("cuda:0..cuda:1"), "{detail}");

        let opened = judge_refusal(2, Ok("cuda:2 (NVIDIA H100)".into())).unwrap_err();
        assert!(opened.contains("opened"), "{opened}");
        let not_usage = judge_refusal(
            2,
            Err(crate::Error::Cuda {
                call: "cuCtxCreate",
                message: "out of memory".into(),
            }),
        )
        .unwrap_err();
        assert!(not_usage.contains("not as a usage error"), "{not_usage}");
        let no_count = judge_refusal(
            2,
            Err(crate::Error::CudaUnavailable(
                crate::device::cuda::missing_device_reason(2, 3),
            )),
        )
        .unwrap_err();
        assert!(no_count.contains("without saying"), "{no_count}");
    }

    #[test]
    fn events_must_bracket_the_work_within_the_hosts_wait_and_match_the_cpu() {
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        assert!(judge_stream_timing(ms(3), us(4), ms(4), 2e-7).is_ok());
        for (work, empty, host, error, expected) in [
            (us(20), us(4), ms(4), 2e-7, "do not bracket the work"),
            (ms(5), us(4), ms(4), 2e-7, "more than the host waited"),
            (ms(3), us(4), ms(4), 3e-2, "differs from the CPU"),
            (ms(3), us(4), ms(4), f64::NAN, "differs from the CPU"),
        ] {
            let err = judge_stream_timing(work, empty, host, error).unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }

    #[test]
    fn an_nvml_window_must_last_rise_and_draw_a_gpus_power() {
        let reading = |joules: f64, seconds: f64| EnergyReading {
            joules,
            seconds,
            average_watts: joules / seconds,
            method: Method::Counter,
            probe: "nvml GPU 0 (NVIDIA H100 80GB HBM3)".into(),
        };
        let busy = Duration::from_millis(500);
        let detail = judge_energy(&reading(150.0, 0.52), busy).unwrap();
        assert!(detail.contains("288.5 W"), "{detail}");
        for (r, expected) in [
            (reading(0.0, 0.52), "did not increase"),
            (reading(150.0, 0.3), "shorter than the work"),
            (reading(150_000.0, 0.52), "no GPU draws that power"),
            (reading(0.1, 0.52), "no GPU draws that power"),
        ] {
            let err = judge_energy(&r, busy).unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }

    /// Every test that returns early where an NVIDIA driver is present names, in a comment
    /// `selftest check "NAME"`, a check that `replay selftest --device cuda` runs (one of
    /// [`CHECKS`], or the model stage's output check, which runs with `--model`).
    #[test]
    fn every_test_skipped_on_a_gpu_names_a_selftest_check_that_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut known: Vec<&str> = CHECKS.iter().map(|(_, name, _)| *name).collect();
        known.push(super::super::MODEL_OUTPUT_CHECK);
        let mut sites = Vec::new();
        let mut problems = Vec::new();
        // Both packages of the workspace: this one and the torch-free core.
        for file in ["src", "tests", "crates/core/src", "crates/core/tests"]
            .into_iter()
            .flat_map(|dir| rust_files(&root.join(dir)))
        {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if !is_gpu_skip(line) {
                    continue;
                }
                let Some(ret) = (i + 1..lines.len().min(i + 6))
                    .find(|&j| lines[j].trim_start().starts_with("return"))
                else {
                    continue;
                };
                let site = format!("{}:{}", file.strip_prefix(root).unwrap().display(), i + 1);
                let named = lines[i..=ret]
                    .iter()
                    .filter_map(|l| l.split_once("selftest check \"").map(|(_, r)| r))
                    .filter_map(|r| r.split_once('"').map(|(name, _)| name))
                    .next();
                match named {
                    Some(name) if known.contains(&name) => sites.push(site),
                    Some(name) => problems.push(format!("{site} names unknown check {name:?}")),
                    None => problems.push(format!("{site} names no selftest check")),
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}\nknown: {known:?}");
        // The seven skips there were when the counterparts were written: the scan finds them.
        assert!(sites.len() >= 7, "{sites:#?}");
    }

    /// An `if` on the presence of a driver or of CUDA in libtorch.
    fn is_gpu_skip(line: &str) -> bool {
        let code = line.trim_start();
        code.starts_with("if ")
            && [
                "has_nvidia_driver()",
                "Cuda::is_available()",
                "/proc/driver/nvidia",
            ]
            .iter()
            .any(|marker| code.contains(marker))
    }

    fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return files;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(rust_files(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files
    }
}
