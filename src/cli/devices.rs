//! `replay devices`: what replay can run on here.

use std::fmt::Write as _;

use clap::Args;
use serde::Serialize;

use replay::device::cuda::{self, format_cuda_version, CudaInventory};
use replay::device::{CpuInfo, Device};
use replay::kernels;

use super::args::OptionalDeviceArgs;

#[derive(Debug, Args)]
#[command(mut_arg("device", |a| a
    .help("Only this device, and fail (exit 2) if it cannot be opened: cpu, cuda or cuda:N")))]
pub struct DevicesArgs {
    #[command(flatten)]
    pub device: OptionalDeviceArgs,

    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    cpu: CpuInfo,
    libtorch: LibtorchInfo,
    cuda: Result<CudaInventory, String>,
    embedded_kernels: EmbeddedKernels,
}

#[derive(Debug, Serialize)]
struct LibtorchInfo {
    threads: i32,
    cuda_available: bool,
    cuda_devices: i64,
}

#[derive(Debug, Serialize)]
struct EmbeddedKernels {
    available: bool,
    reason: Option<&'static str>,
    modules: Vec<String>,
    architectures: Vec<String>,
}

pub fn run(args: DevicesArgs) -> anyhow::Result<()> {
    if let Some(spec) = args.device.device {
        // Opening is the check: it fails with the reason when the device is not there.
        let device = Device::open(spec)?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({ "device": device.describe() }))?
            );
        } else {
            println!("{}", device.describe());
        }
        return Ok(());
    }

    let report = Report {
        cpu: CpuInfo::detect(),
        libtorch: LibtorchInfo {
            threads: tch::get_num_threads(),
            cuda_available: tch::Cuda::is_available(),
            cuda_devices: tch::Cuda::device_count(),
        },
        cuda: cuda::inventory().map_err(|e| match e {
            replay::Error::CudaUnavailable(reason) => reason,
            other => other.to_string(),
        }),
        embedded_kernels: embedded_kernels(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_text(&report));
    }
    Ok(())
}

fn embedded_kernels() -> EmbeddedKernels {
    let mut architectures: Vec<String> =
        kernels::SASS_ARCHS.iter().map(|s| s.to_string()).collect();
    architectures.push(kernels::PTX_ARCH.to_string());
    EmbeddedKernels {
        available: kernels::UNAVAILABLE_REASON.is_none(),
        reason: kernels::UNAVAILABLE_REASON,
        modules: kernels::MODULES
            .iter()
            .map(|m| m.name.to_string())
            .collect(),
        architectures,
    }
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn render_text(report: &Report) -> String {
    let mut out = String::new();
    let cpu = &report.cpu;
    let _ = writeln!(out, "cpu        {}", cpu.model);
    let _ = writeln!(
        out,
        "  cores    {} logical, {} physical",
        cpu.logical_cores, cpu.physical_cores
    );
    let isa = if cpu.isa_flags.is_empty() {
        "(none of note)".to_string()
    } else {
        cpu.isa_flags.join(" ")
    };
    let _ = writeln!(out, "  isa      {isa}");
    if !cpu.caches.is_empty() {
        let caches: Vec<String> = cpu
            .caches
            .iter()
            .map(|c| {
                let suffix = match c.kind.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                format!("L{}{suffix} {}", c.level, human_bytes(c.size_bytes))
            })
            .collect();
        let _ = writeln!(out, "  caches   {}", caches.join(", "));
    }
    let lt = &report.libtorch;
    let _ = writeln!(
        out,
        "libtorch   {} intra-op threads, CUDA {}",
        lt.threads,
        if lt.cuda_available {
            format!("available ({} devices)", lt.cuda_devices)
        } else {
            "not available".to_string()
        }
    );
    match &report.cuda {
        Err(reason) => {
            let _ = writeln!(out, "cuda       no CUDA device: {reason}");
        }
        Ok(inv) => {
            let runtime = inv
                .runtime_version
                .map(format_cuda_version)
                .unwrap_or_else(|| "not found".to_string());
            let _ = writeln!(
                out,
                "cuda       driver {}, runtime {runtime}",
                format_cuda_version(inv.driver_version)
            );
            if inv.devices.is_empty() {
                let _ = writeln!(out, "  no CUDA device: the driver reports none");
            }
            for d in &inv.devices {
                let (major, minor) = d.compute_capability;
                let _ = writeln!(
                    out,
                    "  cuda:{}   {}  sm_{major}{minor}  {} SMs  {}  L2 {}",
                    d.index,
                    d.name,
                    d.multiprocessors,
                    human_bytes(d.total_memory_bytes as u64),
                    human_bytes(d.l2_cache_bytes.max(0) as u64)
                );
            }
        }
    }
    let k = &report.embedded_kernels;
    match k.reason {
        Some(reason) => {
            let _ = writeln!(out, "kernels    none embedded: {reason}");
        }
        None => {
            let _ = writeln!(
                out,
                "kernels    {} ({})",
                k.modules.join(", "),
                k.architectures.join(" ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn bytes_are_human() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(32 * 1024), "32 KiB");
        assert_eq!(human_bytes(80 * (1 << 30)), "80 GiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
