//! What the host CPU is: model, cores, the vector/matrix ISA extensions that decide which
//! kernels libtorch picks, and the cache sizes `--cold` needs to flush the last-level cache.

use std::fs;
use std::path::Path;

use serde::Serialize;

/// ISA extensions worth reporting: they change which CPU kernels oneDNN/MKL/libtorch run.
const REPORTED_FLAGS: &[&str] = &[
    "sse4_2",
    "avx",
    "fma",
    "avx2",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
    "asimd",
    "sve",
    "sve2",
];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuInfo {
    pub model: String,
    /// Logical processors the OS offers this process.
    pub logical_cores: usize,
    /// Distinct (physical id, core id) pairs; equals `logical_cores` when SMT is off or unknown.
    pub physical_cores: usize,
    pub isa_flags: Vec<String>,
    pub caches: Vec<CacheLevel>,
    /// `vendor_id` (`AuthenticAMD`, `GenuineIntel`; empty on Arm): with `family`, what a
    /// peak needs to know the vector units' width.
    #[serde(skip)]
    pub vendor: String,
    /// `cpu family`.
    #[serde(skip)]
    pub family: Option<u32>,
    /// `cpu MHz`: the nominal clock (inside a VM the only one the kernel is told).
    #[serde(skip)]
    pub nominal_mhz: Option<f64>,
    /// The `constant_tsc` flag: the TSC ticks at one fixed rate (the base clock), whatever
    /// the cores' clock, so its rate is a clock to check a measured one against.
    #[serde(skip)]
    pub constant_tsc: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CacheLevel {
    pub level: u32,
    pub kind: String,
    pub size_bytes: u64,
}

impl CpuInfo {
    /// Reads `/proc/cpuinfo` and `/sys/devices/system/cpu/cpu0/cache`; anything unreadable is
    /// reported as unknown rather than failing, since this is descriptive only.
    pub fn detect() -> CpuInfo {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut info = parse_cpuinfo(&cpuinfo);
        if let Ok(n) = std::thread::available_parallelism() {
            info.logical_cores = n.get();
            info.physical_cores = info.physical_cores.clamp(1, n.get());
        }
        info.caches = read_caches(Path::new("/sys/devices/system/cpu/cpu0/cache"));
        info
    }

    /// Size of the last-level cache, the buffer `--cold` streams twice over on CPU.
    pub fn last_level_cache_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.isa_flags.iter().any(|f| f == flag)
    }
}

/// Parses the text of `/proc/cpuinfo` (x86 and Arm layouts).
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut model = None;
    let mut flags: Vec<String> = Vec::new();
    let mut logical = 0usize;
    let mut cores = std::collections::BTreeSet::new();
    let mut physical_id = String::new();
    let (mut vendor, mut family, mut mhz) = (None, None, None);
    let mut constant_tsc = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => logical += 1,
            "model name" | "Model" | "cpu model" if model.is_none() => {
                model = Some(value.to_string())
            }
            "physical id" => physical_id = value.to_string(),
            "vendor_id" if vendor.is_none() => vendor = Some(value.to_string()),
            "cpu family" if family.is_none() => family = value.parse().ok(),
            "cpu MHz" if mhz.is_none() => mhz = value.parse().ok(),
            "core id" => {
                cores.insert((physical_id.clone(), value.to_string()));
            }
            "flags" | "Features" if flags.is_empty() => {
                let present: Vec<&str> = value.split_whitespace().collect();
                constant_tsc = present.contains(&"constant_tsc");
                flags = REPORTED_FLAGS
                    .iter()
                    .filter(|f| present.contains(f))
                    .map(|f| f.to_string())
                    .collect();
            }
            _ => {}
        }
    }
    let logical = logical.max(1);
    CpuInfo {
        model: model.unwrap_or_else(|| "unknown CPU".to_string()),
        logical_cores: logical,
        physical_cores: if cores.is_empty() {
            logical
        } else {
            cores.len()
        },
        isa_flags: flags,
        caches: Vec::new(),
        vendor: vendor.unwrap_or_default(),
        family,
        nominal_mhz: mhz,
        constant_tsc,
    }
}

/// Reads the `indexN/{level,type,size}` entries of a sysfs cache folder.
pub fn read_caches(dir: &Path) -> Vec<CacheLevel> {
    let mut caches = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return caches;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let read = |name: &str| {
            fs::read_to_string(path.join(name))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let (Ok(level), Some(size_bytes)) = (level.parse(), parse_cache_size(&size)) else {
            continue;
        };
        caches.push(CacheLevel {
            level,
            kind,
            size_bytes,
        });
    }
    caches.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    caches
}

/// sysfs writes sizes as `32K`, `1024K`, `32768K` or `2M`.
fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => Some(n << 10),
        "M" => Some(n << 20),
        "G" => Some(n << 30),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_THREADS_ONE_CORE: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile amx_bf16 amx_int8\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile amx_bf16 amx_int8\n";

    #[test]
    fn parses_x86_cpuinfo() {
        let info = parse_cpuinfo(TWO_THREADS_ONE_CORE);
        assert_eq!(info.model, "Intel(R) Xeon(R) Platinum 8480+");
        assert_eq!(info.logical_cores, 2);
        assert_eq!(info.physical_cores, 1);
        assert!(info.has_flag("amx_bf16"));
        assert!(info.has_flag("avx2"));
        assert!(
            !info.has_flag("fpu"),
            "only the flags that matter for kernels are kept"
        );
        assert!(!info.constant_tsc);
        let with_tsc =
            TWO_THREADS_ONE_CORE.replace("flags\t\t: fpu", "flags\t\t: fpu constant_tsc");
        assert!(parse_cpuinfo(&with_tsc).constant_tsc);
        assert!(!parse_cpuinfo(&with_tsc).has_flag("constant_tsc"));
    }

    #[test]
    fn parses_arm_cpuinfo() {
        let text = "processor\t: 0\nFeatures\t: fp asimd evtstrm sve sve2\n\nprocessor\t: 1\nFeatures\t: fp asimd\n";
        let info = parse_cpuinfo(text);
        assert_eq!(info.logical_cores, 2);
        assert_eq!(info.isa_flags, vec!["asimd", "sve", "sve2"]);
        assert_eq!(info.model, "unknown CPU");
    }

    #[test]
    fn reads_a_sysfs_cache_tree() {
        let dir = tempfile::tempdir().unwrap();
        for (i, (level, kind, size)) in [
            (1, "Data", "48K"),
            (1, "Instruction", "32K"),
            (2, "Unified", "2048K"),
            (3, "Unified", "105M"),
        ]
        .iter()
        .enumerate()
        {
            let d = dir.path().join(format!("index{i}"));
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("level"), format!("{level}\n")).unwrap();
            fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        let caches = read_caches(dir.path());
        assert_eq!(caches.len(), 4);
        let info = CpuInfo {
            caches,
            ..parse_cpuinfo("")
        };
        assert_eq!(info.last_level_cache_bytes(), Some(105 << 20));
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("32K"), Some(32 * 1024));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("lots"), None);
    }
}
