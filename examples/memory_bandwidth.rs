//! `replay calibrate`'s memory measurement on its own, printed as JSON: the libtorch copy and
//! replay's own copy and triad per size (`scripts/bench_bandwidth_vs_likwid.sh` runs it beside
//! likwid-bench until `replay calibrate --operations memory` takes its place).
//!
//!   cargo run --release --example memory_bandwidth -- --sizes 128,256
//!   ... -- --sizes 256 --trials 20 --threads 1 --isa portable --device cpu
//!
//! Flags: --sizes MB,MB (default 128,256: the seed's quick sizes), --trials N (default 5),
//! --warmup N (3), --threads N (every logical core), --isa avx512|avx|sse|portable (the widest
//! streaming store the CPU has), --no-pin (leave replay's threads unpinned), --device
//! cpu|cuda:N (cpu), --peak-bandwidth GB/s.

use std::process::ExitCode;

use replay::device::{Device, DeviceSpec};
use replay::kernels::stream_bandwidth::cpu::{CpuKernelConfig, StoreIsa};
use replay::suites::calibrate::memory::measure_memory_with;
use replay::suites::calibrate::timing::Trials;
use serde_json::json;

struct Args {
    sizes: Vec<u64>,
    trials: Trials,
    threads: Option<usize>,
    isa: StoreIsa,
    pin: bool,
    device: DeviceSpec,
    peak: Option<f64>,
}

fn parse<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    value
        .parse()
        .map_err(|_| format!("{flag}: cannot use {value:?}"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sizes: vec![128, 256],
        trials: Trials {
            warmup: 3,
            trials: 5,
        },
        threads: None,
        isa: StoreIsa::detect(),
        pin: true,
        device: DeviceSpec::Cpu,
        peak: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--sizes" => {
                let list: String = parse(&flag, it.next())?;
                args.sizes = list
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|_| format!("--sizes: {s:?}")))
                    .collect::<Result<_, _>>()?;
            }
            "--trials" => args.trials.trials = parse(&flag, it.next())?,
            "--warmup" => args.trials.warmup = parse(&flag, it.next())?,
            "--threads" => args.threads = Some(parse(&flag, it.next())?),
            "--isa" => {
                let name: String = parse(&flag, it.next())?;
                args.isa = StoreIsa::parse(&name).ok_or_else(|| format!("--isa: {name:?}"))?;
            }
            "--no-pin" => args.pin = false,
            "--device" => args.device = parse(&flag, it.next())?,
            "--peak-bandwidth" => args.peak = Some(parse(&flag, it.next())?),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.trials.trials == 0 || args.threads == Some(0) {
        return Err("--trials and --threads must be at least 1".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    replay::measure::host_allocator::fix_thresholds();
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("memory_bandwidth: {e}");
            return ExitCode::from(2);
        }
    };
    let device = match Device::open(args.device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("memory_bandwidth: {e}");
            return ExitCode::from(if e.is_usage_error() { 2 } else { 1 });
        }
    };
    let threads = args.threads.unwrap_or(match &device {
        Device::Cpu(info) => info.logical_cores.max(1),
        Device::Cuda(_) => 1,
    });
    let results = measure_memory_with(
        &device,
        &args.sizes,
        args.trials,
        args.peak,
        CpuKernelConfig {
            threads,
            isa: args.isa,
            pin: args.pin,
        },
    );
    let mut failed = false;
    let profiles: serde_json::Map<String, serde_json::Value> = results
        .into_iter()
        .map(|(key, result)| {
            let value = match result {
                Ok(p) => {
                    serde_json::to_value(p).unwrap_or_else(|e| json!({"error": e.to_string()}))
                }
                Err(e) => {
                    failed = true;
                    json!({ "error": e.to_string() })
                }
            };
            (key, value)
        })
        .collect();
    let report = json!({
        "device": device.describe(),
        "libtorch_threads": tch::get_num_threads(),
        "warmup": args.trials.warmup,
        "trials": args.trials.trials,
        "operation_profiles": profiles,
    });
    match serde_json::to_string_pretty(&report) {
        Ok(text) => println!("{text}"),
        Err(e) => {
            eprintln!("memory_bandwidth: {e}");
            return ExitCode::from(1);
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
