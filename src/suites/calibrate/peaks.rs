//! Theoretical peaks: compute (GFLOPS per dtype) and memory bandwidth, from the flags when
//! given, otherwise from what the device says about itself, each with the formula used — or
//! `None` with the reason when it cannot be known. Efficiencies are only ever taken against
//! a peak that is known.
//!
//! CPU compute: cores × clock ([`super::clock`]) × FLOPs per cycle per core, the last from the ISA: vector width
//! × 2 (an FMA is two FLOPs) × FMA units. CPUID does not say how many FMA units a core has, so
//! it is taken from the vendor and family: AMD Zen 4 (family 0x19) executes 512-bit operations
//! on 256-bit units (32 fp32 FLOPs/cycle), Zen 5 (0x1A) has full 512-bit units (64); Intel
//! parts with AVX-512 are assumed to have two 512-bit FMA units (64; some Xeon Silver/Bronze
//! have one); AVX2 with FMA: two 256-bit units (32); AVX without FMA: 16; SSE: 8. bfloat16
//! doubles the fp32 rate where `avx512_bf16` exists (VDPBF16PS: two products per fp32 lane),
//! and otherwise runs at the fp32 rate (converted to fp32 to compute). The cores are the
//! logical processors this process may use (in a VM, the vCPUs: whether two of them share one
//! physical core is not visible).
//!
//! CPU memory bandwidth cannot be read from inside a VM (channels and DIMM speed are not
//! exposed), so it is unknown unless `--peak-bandwidth` gives it.
//!
//! CUDA: SMs × clock × FLOPs per cycle per SM by compute capability (fp32: 128 on sm_70/sm_80,
//! 256 from sm_86; dense bf16 tensor cores: 2048 on sm_80, 1024 on sm_86/sm_89, 4096 on sm_90),
//! bandwidth = 2 (double data rate) × memory clock × bus width.

use std::collections::BTreeMap;

use super::clock::CpuClock;
use super::profile::PeakSource;
use crate::device::{CpuInfo, CudaDeviceInfo};

/// A peak and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    pub value: Option<f64>,
    pub source: PeakSource,
}

impl Peak {
    pub fn flag(value: f64, what: &str) -> Peak {
        Peak {
            value: Some(value),
            source: PeakSource {
                kind: "flag".into(),
                how: format!("given with {what}"),
            },
        }
    }

    pub fn computed(value: f64, how: String) -> Peak {
        Peak {
            value: Some(value),
            source: PeakSource {
                kind: "computed".into(),
                how,
            },
        }
    }

    pub fn unknown(why: impl Into<String>) -> Peak {
        Peak {
            value: None,
            source: PeakSource {
                kind: "unknown".into(),
                how: why.into(),
            },
        }
    }
}

/// The peaks of one device: compute per dtype (`float32`, `bfloat16`, ...) and bandwidth.
#[derive(Debug, Clone, PartialEq)]
pub struct Peaks {
    pub gflops: BTreeMap<String, Peak>,
    pub bandwidth_gbps: Peak,
}

impl Peaks {
    /// The fp32 peak (the seed's `theoretical_peak_gflops`).
    pub fn fp32(&self) -> Peak {
        self.gflops
            .get("float32")
            .cloned()
            .unwrap_or_else(|| Peak::unknown("no float32 peak"))
    }

    /// `--peak-gflops` replaces every dtype's compute peak (the seed had one number), and
    /// `--peak-bandwidth` the bandwidth.
    pub fn with_flags(mut self, gflops: Option<f64>, bandwidth: Option<f64>) -> Peaks {
        if let Some(g) = gflops {
            for peak in self.gflops.values_mut() {
                *peak = Peak::flag(g, "--peak-gflops");
            }
            self.gflops
                .entry("float32".into())
                .or_insert_with(|| Peak::flag(g, "--peak-gflops"));
        }
        if let Some(b) = bandwidth {
            self.bandwidth_gbps = Peak::flag(b, "--peak-bandwidth");
        }
        self
    }
}

/// fp32 FLOPs per cycle per core, and the rule that gave it.
pub fn cpu_fp32_flops_per_cycle(cpu: &CpuInfo) -> Option<(f64, String)> {
    let amd = cpu.vendor == "AuthenticAMD";
    let intel = cpu.vendor == "GenuineIntel";
    if cpu.has_flag("avx512f") {
        return match (amd, intel, cpu.family) {
            (true, _, Some(f)) if f >= 0x1A => Some((64.0, "AVX-512 on Zen 5: 2 FMA units × 16 lanes × 2".into())),
            (true, _, Some(0x19)) => Some((32.0, "AVX-512 on Zen 4: 512-bit ops on 2 × 256-bit FMA units, 2 × 8 lanes × 2".into())),
            (_, true, _) => Some((64.0, "AVX-512 on Intel, assuming 2 FMA units × 16 lanes × 2 (1 unit on some Xeon Silver/Bronze)".into())),
            _ => Some((32.0, "AVX-512 on an unrecognised vendor/family, assuming 256-bit FMA units: 2 × 8 lanes × 2".into())),
        };
    }
    if cpu.has_flag("avx2") && cpu.has_flag("fma") {
        return Some((32.0, "AVX2 + FMA: 2 FMA units × 8 lanes × 2".into()));
    }
    if cpu.has_flag("avx") {
        return Some((16.0, "AVX without FMA: 8-lane multiply + 8-lane add".into()));
    }
    if cpu.has_flag("sse4_2") {
        return Some((8.0, "SSE: 4-lane multiply + 4-lane add".into()));
    }
    if cpu.has_flag("asimd") {
        return Some((
            16.0,
            "Arm NEON, assuming 2 × 128-bit FMA units: 2 × 4 lanes × 2".into(),
        ));
    }
    None
}

/// The CPU's peaks.
pub fn cpu_peaks(cpu: &CpuInfo, clock: &CpuClock) -> Peaks {
    let mut gflops = BTreeMap::new();
    let cores = cpu.logical_cores.max(1) as f64;
    let fp32 = match (cpu_fp32_flops_per_cycle(cpu), clock.mhz) {
        (Some((per_cycle, rule)), Some(mhz)) => {
            let value = cores * mhz / 1e3 * per_cycle;
            Peak::computed(
                value,
                format!(
                    "{cores} cores × {:.3} GHz ({}) × {per_cycle} FLOPs/cycle ({rule})",
                    mhz / 1e3,
                    clock.mhz_source
                ),
            )
        }
        (None, _) => Peak::unknown("no known vector ISA in /proc/cpuinfo's flags"),
        (_, None) => Peak::unknown("the clock is not in /proc/cpuinfo or cpufreq"),
    };
    let bf16 = match (&fp32.value, cpu.has_flag("avx512_bf16")) {
        (Some(v), true) => Peak::computed(
            2.0 * v,
            format!(
                "2 × the float32 peak: avx512_bf16 (VDPBF16PS, two products per fp32 lane); {}",
                fp32.source.how
            ),
        ),
        (Some(v), false) => Peak::computed(
            *v,
            format!(
                "the float32 peak: no avx512_bf16, bfloat16 is computed in fp32; {}",
                fp32.source.how
            ),
        ),
        (None, _) => fp32.clone(),
    };
    gflops.insert("float32".to_string(), fp32);
    gflops.insert("bfloat16".to_string(), bf16);
    Peaks {
        gflops,
        bandwidth_gbps: Peak::unknown(
            "a VM does not expose its memory channels and DIMM speed: give --peak-bandwidth",
        ),
    }
}

/// FLOPs per cycle per SM: (fp32 CUDA cores × 2, dense bf16 tensor cores).
fn sm_flops_per_cycle(cc: (i32, i32)) -> (Option<f64>, Option<f64>) {
    match cc {
        (7, _) => (Some(128.0), None),
        (8, 0) => (Some(128.0), Some(2048.0)),
        (8, 6) | (8, 7) | (8, 9) => (Some(256.0), Some(1024.0)),
        (9, 0) => (Some(256.0), Some(4096.0)),
        _ => (None, None),
    }
}

/// A GPU's peaks from its attributes.
pub fn cuda_peaks(info: &CudaDeviceInfo) -> Peaks {
    let (fp32_rate, bf16_rate) = sm_flops_per_cycle(info.compute_capability);
    let (major, minor) = info.compute_capability;
    let ghz = info.clock_khz as f64 / 1e6;
    let sms = info.multiprocessors as f64;
    let per_dtype = |rate: Option<f64>, what: &str| match rate {
        Some(r) if ghz > 0.0 && sms > 0.0 => Peak::computed(
            sms * ghz * r,
            format!("{sms} SMs × {ghz:.3} GHz × {r} {what} FLOPs/cycle/SM (sm_{major}{minor})"),
        ),
        _ => Peak::unknown(format!(
            "no {what} rate known for sm_{major}{minor} (or no clock): give --peak-gflops"
        )),
    };
    let mut gflops = BTreeMap::new();
    gflops.insert("float32".to_string(), per_dtype(fp32_rate, "fp32"));
    gflops.insert(
        "bfloat16".to_string(),
        per_dtype(bf16_rate, "dense bf16 tensor-core"),
    );
    gflops.insert(
        "float16".to_string(),
        per_dtype(bf16_rate, "dense fp16 tensor-core"),
    );
    let bandwidth_gbps = if info.memory_clock_khz > 0 && info.memory_bus_width_bits > 0 {
        let v = 2.0 * info.memory_clock_khz as f64 * 1e3 * info.memory_bus_width_bits as f64
            / 8.0
            / 1e9;
        Peak::computed(
            v,
            format!(
                "2 (double data rate) × {:.3} GHz memory clock × {} bits / 8",
                info.memory_clock_khz as f64 / 1e6,
                info.memory_bus_width_bits
            ),
        )
    } else {
        Peak::unknown("the device reports no memory clock or bus width")
    };
    Peaks {
        gflops,
        bandwidth_gbps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::calibrate::clock::ClockSources;

    /// The clock `/proc/cpuinfo` alone gives `cpu` (no cpufreq, no TSC, no measurement).
    fn nominal(cpu: &CpuInfo) -> CpuClock {
        CpuClock::from_sources(&ClockSources::from_cpuinfo(cpu))
    }

    /// The CPU `cpuinfo` describes, with these flags and cores.
    fn cpu(cpuinfo: &str, flags: &[&str], cores: usize) -> CpuInfo {
        CpuInfo {
            logical_cores: cores,
            physical_cores: cores,
            isa_flags: flags.iter().map(|s| s.to_string()).collect(),
            ..crate::device::cpu::parse_cpuinfo(cpuinfo)
        }
    }

    const ZEN5: &str =
        "vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\ncpu MHz\t\t: 2596.096\n";

    #[test]
    fn this_vms_zen5_peak_is_cores_clock_and_512_bit_fma() {
        let zen5 = cpu(ZEN5, &["avx2", "fma", "avx512f", "avx512_bf16"], 2);
        assert_eq!(
            (zen5.vendor.as_str(), zen5.family),
            ("AuthenticAMD", Some(26))
        );
        let peaks = cpu_peaks(&zen5, &nominal(&zen5));
        let fp32 = peaks.fp32().value.unwrap();
        assert!((fp32 - 2.0 * 2.596096 * 64.0).abs() < 1e-9, "{fp32}");
        assert_eq!(peaks.gflops["bfloat16"].value, Some(2.0 * fp32));
        assert!(peaks.fp32().source.how.contains("Zen 5"));
        assert_eq!(peaks.bandwidth_gbps.value, None);
        assert_eq!(peaks.bandwidth_gbps.source.kind, "unknown");
    }

    #[test]
    fn the_fma_width_follows_vendor_family_and_isa() {
        const ZEN4: &str = "vendor_id : AuthenticAMD\ncpu family : 25\ncpu MHz : 3000\n";
        const INTEL: &str = "vendor_id : GenuineIntel\ncpu family : 6\ncpu MHz : 2000\n";
        let intel_clock = CpuClock::from_sources(&ClockSources {
            cpufreq_max_mhz: Some(3500.0),
            ..ClockSources::from_cpuinfo(&cpu(INTEL, &[], 1))
        });
        assert_eq!(intel_clock.mhz, Some(3500.0));
        assert_eq!(nominal(&cpu(INTEL, &[], 1)).mhz, Some(2000.0));
        let rate = |cpuinfo: &str, flags: &[&str]| {
            cpu_fp32_flops_per_cycle(&cpu(cpuinfo, flags, 1)).map(|r| r.0)
        };
        assert_eq!(rate(ZEN4, &["avx512f"]), Some(32.0));
        assert_eq!(rate(INTEL, &["avx512f"]), Some(64.0));
        assert_eq!(rate(INTEL, &["avx2", "fma"]), Some(32.0));
        assert_eq!(rate(INTEL, &["avx"]), Some(16.0));
        assert_eq!(rate(INTEL, &[]), None);
        // No bf16 instructions: bf16 runs at the fp32 rate.
        let p = cpu_peaks(&cpu(INTEL, &["avx2", "fma"], 4), &intel_clock);
        assert_eq!(p.gflops["bfloat16"].value, p.fp32().value);
        assert_eq!(p.fp32().value, Some(4.0 * 3.5 * 32.0));
        let none = cpu_peaks(&cpu(INTEL, &[], 4), &intel_clock);
        assert_eq!(none.fp32().value, None);
    }

    #[test]
    fn flags_override_and_are_said_to() {
        let zen5 = cpu(ZEN5, &["avx512f"], 2);
        let p = cpu_peaks(&zen5, &nominal(&zen5)).with_flags(Some(1000.0), Some(50.0));
        assert_eq!(p.fp32().value, Some(1000.0));
        assert_eq!(p.fp32().source.kind, "flag");
        assert_eq!(p.bandwidth_gbps.value, Some(50.0));
    }

    #[test]
    fn an_h100_sxm_from_its_attributes() {
        let info = CudaDeviceInfo {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            total_memory_bytes: 80 << 30,
            l2_cache_bytes: 50 << 20,
            clock_khz: 1_980_000,
            memory_clock_khz: 2_619_000,
            memory_bus_width_bits: 5120,
        };
        let p = cuda_peaks(&info);
        let fp32 = p.fp32().value.unwrap();
        assert!((fp32 / 1e3 - 66.9).abs() < 0.1, "{fp32}"); // datasheet: 67 TFLOPS
        let bf16 = p.gflops["bfloat16"].value.unwrap();
        assert!((bf16 / 1e3 - 1070.5).abs() < 1.0, "{bf16}"); // 989 at the 1.83 GHz base
        let bw = p.bandwidth_gbps.value.unwrap();
        assert!((bw - 3352.3).abs() < 0.1, "{bw}"); // datasheet: 3.35 TB/s
        let unknown = cuda_peaks(&CudaDeviceInfo {
            compute_capability: (12, 0),
            ..info
        });
        assert_eq!(unknown.fp32().value, None);
        assert!(unknown.fp32().source.how.contains("sm_120"));
    }
}
