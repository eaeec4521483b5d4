//! `rapl`: CPU package and DRAM energy from Linux powercap (RAPL).
//!
//! The kernel exposes each RAPL zone as a directory `intel-rapl:P` (a package) with subzones
//! `intel-rapl:P:S` (core, uncore, dram), each holding `name` (`package-0`, `core`, `uncore`,
//! `dram`, `psys`), `energy_uj` (a cumulative counter in microjoules) and
//! `max_energy_range_uj` (the value at which the counter wraps to 0). AMD processors appear
//! under the same `intel-rapl` driver on most kernels; the `amd-rapl:*` spelling is accepted too.
//! In `/sys/class/powercap` every zone is also linked at the top level; under a control-type
//! directory (`intel-rapl/intel-rapl:0/intel-rapl:0:2`) they nest. Both layouts are searched.
//!
//! The probe sums the `package-*` and `dram` domains (core and uncore are inside the package;
//! psys covers the whole platform and would double-count). A reading lower than the previous
//! one of the same domain is a wrap: the range is added. A counter can wrap at most once
//! between two reads without being noticed, which takes minutes at full power (the package
//! range is ~262 kJ), far longer than any measurement window.
//!
//! Since Linux 5.10, `energy_uj` is readable by root only; the error says so.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{EnergyError, EnergyProbe, Method, ProbeResolution};

/// RAPL counters refresh about every millisecond.
pub const RAPL_UPDATE_PERIOD_S: f64 = 0.001;

/// One counted domain.
#[derive(Debug, Clone)]
struct Domain {
    /// `package-0`, `dram`, ...
    name: String,
    /// The zone directory.
    dir: PathBuf,
    /// `max_energy_range_uj`.
    range_uj: u64,
    /// The last raw `energy_uj`.
    last_uj: u64,
    /// Microjoules accumulated since open, wraps unfolded.
    total_uj: u128,
}

/// Package and DRAM energy of every CPU socket.
#[derive(Debug)]
pub struct RaplProbe {
    root: PathBuf,
    domains: Vec<Domain>,
}

impl RaplProbe {
    /// Finds the package and DRAM zones under `root` and reads each counter once.
    pub fn open(root: &Path) -> Result<RaplProbe, EnergyError> {
        let unavailable = |reason: String| EnergyError::RaplUnavailable {
            root: root.to_path_buf(),
            reason,
        };
        if !root.is_dir() {
            return Err(unavailable(
                "no such directory (is this Linux with the powercap interface?)".into(),
            ));
        }
        let zones = discover_zones(root);
        if zones.is_empty() {
            return Err(unavailable(
                "no intel-rapl:* or amd-rapl:* zones (is the intel_rapl_msr or intel_rapl_common module loaded?)".into(),
            ));
        }
        let mut seen = Vec::new();
        let mut domains = Vec::new();
        for dir in zones.values() {
            let name_path = dir.join("name");
            let name = read_text(&name_path)?;
            seen.push(name.clone());
            if !(name.starts_with("package") || name == "dram") {
                continue;
            }
            let range_path = dir.join("max_energy_range_uj");
            let range_uj = parse_u64(&range_path, &read_text(&range_path)?)?;
            if range_uj == 0 {
                return Err(EnergyError::Rapl {
                    path: range_path,
                    message: "the range is 0".into(),
                });
            }
            let energy_path = dir.join("energy_uj");
            let last_uj = parse_u64(&energy_path, &read_text(&energy_path)?)?;
            domains.push(Domain {
                name,
                dir: dir.clone(),
                range_uj,
                last_uj,
                total_uj: 0,
            });
        }
        if domains.is_empty() {
            return Err(unavailable(format!(
                "no package or dram domain among the zones found ({})",
                seen.join(", ")
            )));
        }
        Ok(RaplProbe {
            root: root.to_path_buf(),
            domains,
        })
    }

    /// The names of the counted domains, in zone order (`package-0`, `dram`, ...).
    pub fn domains(&self) -> Vec<String> {
        self.domains.iter().map(|d| d.name.clone()).collect()
    }
}

impl EnergyProbe for RaplProbe {
    fn name(&self) -> String {
        format!(
            "rapl ({}) at {}",
            self.domains().join(", "),
            self.root.display()
        )
    }

    fn resolution(&self) -> ProbeResolution {
        // sysfs reports microjoules; the hardware's unit is coarser (typically 15.3 uJ).
        ProbeResolution {
            update_period_s: RAPL_UPDATE_PERIOD_S,
            joules: Some(1e-6),
        }
    }

    fn method(&self) -> Method {
        Method::Counter
    }

    fn read_joules(&mut self) -> Result<f64, EnergyError> {
        let mut total_uj: u128 = 0;
        for d in &mut self.domains {
            let path = d.dir.join("energy_uj");
            let now = parse_u64(&path, &read_text(&path)?)?;
            d.total_uj += unwrapped_delta(d.last_uj, now, d.range_uj) as u128;
            d.last_uj = now;
            total_uj += d.total_uj;
        }
        Ok(total_uj as f64 * 1e-6)
    }
}

/// Microjoules between two raw readings of a counter that wraps at `range_uj`: a reading
/// lower than the previous one means the counter passed the range once.
pub fn unwrapped_delta(previous_uj: u64, now_uj: u64, range_uj: u64) -> u64 {
    if now_uj >= previous_uj {
        now_uj - previous_uj
    } else {
        range_uj.saturating_sub(previous_uj).saturating_add(now_uj)
    }
}

/// Zone directories under `root`, by zone name (`intel-rapl:0`, `intel-rapl:0:2`, ...), so a
/// zone linked at the top level and nested under its parent is counted once. Only zone and
/// control-type directories are entered (sysfs has links back up the tree).
fn discover_zones(root: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut BTreeMap<String, PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            if is_zone_name(&name) {
                out.entry(name).or_insert_with(|| path.clone());
                if depth < 4 {
                    walk(&path, depth + 1, out);
                }
            } else if (name == "intel-rapl" || name == "amd-rapl") && depth < 4 {
                walk(&path, depth + 1, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, 0, &mut out);
    out
}

/// `intel-rapl:0`, `intel-rapl:0:2`, `amd-rapl:1`, ... (not `intel-rapl-mmio:*`, which repeats
/// the package counter through another interface).
fn is_zone_name(name: &str) -> bool {
    let rest = name
        .strip_prefix("intel-rapl:")
        .or_else(|| name.strip_prefix("amd-rapl:"));
    match rest {
        Some(rest) => {
            !rest.is_empty()
                && rest
                    .split(':')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
        None => false,
    }
}

fn read_text(path: &Path) -> Result<String, EnergyError> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(s.trim().to_string()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(EnergyError::Rapl {
            path: path.to_path_buf(),
            message: "permission denied (since Linux 5.10 energy_uj is readable by root only: run as root, or grant read access, e.g. `sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj`)".into(),
        }),
        Err(e) => Err(EnergyError::Rapl { path: path.to_path_buf(), message: e.to_string() }),
    }
}

fn parse_u64(path: &Path, text: &str) -> Result<u64, EnergyError> {
    text.parse::<u64>().map_err(|_| EnergyError::Rapl {
        path: path.to_path_buf(),
        message: format!("expected a whole number of microjoules, found '{text}'"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(dir: &Path, name: &str, energy: u64, range: u64) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("name"), format!("{name}\n")).unwrap();
        fs::write(dir.join("energy_uj"), format!("{energy}\n")).unwrap();
        fs::write(dir.join("max_energy_range_uj"), format!("{range}\n")).unwrap();
    }

    #[test]
    fn energy_rapl_zone_names() {
        assert!(is_zone_name("intel-rapl:0"));
        assert!(is_zone_name("intel-rapl:0:2"));
        assert!(is_zone_name("amd-rapl:1"));
        assert!(!is_zone_name("intel-rapl"));
        assert!(!is_zone_name("intel-rapl:"));
        assert!(!is_zone_name("intel-rapl:0:"));
        assert!(!is_zone_name("intel-rapl-mmio:0"));
        assert!(!is_zone_name("intel-rapl:x"));
    }

    #[test]
    fn energy_rapl_unwrapped_delta() {
        assert_eq!(unwrapped_delta(100, 150, 1000), 50);
        assert_eq!(unwrapped_delta(900, 100, 1000), 200);
        assert_eq!(unwrapped_delta(5, 5, 1000), 0);
    }

    #[test]
    fn energy_rapl_nested_layout_is_found_once() {
        let tmp = tempfile::tempdir().unwrap();
        let ctl = tmp.path().join("intel-rapl");
        zone(&ctl.join("intel-rapl:0"), "package-0", 1_000, 1_000_000);
        zone(
            &ctl.join("intel-rapl:0/intel-rapl:0:0"),
            "core",
            1_000,
            1_000_000,
        );
        zone(
            &ctl.join("intel-rapl:0/intel-rapl:0:1"),
            "dram",
            1_000,
            1_000_000,
        );
        // The same package also linked at the top level, as in /sys/class/powercap.
        std::os::unix::fs::symlink(ctl.join("intel-rapl:0"), tmp.path().join("intel-rapl:0"))
            .unwrap();
        let probe = RaplProbe::open(tmp.path()).unwrap();
        assert_eq!(probe.domains(), vec!["package-0", "dram"]);
    }

    #[test]
    fn energy_rapl_errors_are_clear() {
        let tmp = tempfile::tempdir().unwrap();
        let e = RaplProbe::open(&tmp.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("RAPL unavailable") && e.contains("no such directory"),
            "{e}"
        );
        let e = RaplProbe::open(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("no intel-rapl:* or amd-rapl:* zones"), "{e}");
        zone(&tmp.path().join("intel-rapl:1"), "psys", 0, 10);
        let e = RaplProbe::open(tmp.path()).unwrap_err().to_string();
        assert!(
            e.contains("no package or dram domain") && e.contains("psys"),
            "{e}"
        );
        zone(&tmp.path().join("intel-rapl:0"), "package-0", 0, 10);
        fs::write(tmp.path().join("intel-rapl:0/energy_uj"), "lots\n").unwrap();
        let e = RaplProbe::open(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("energy_uj") && e.contains("found 'lots'"), "{e}");
    }
}
