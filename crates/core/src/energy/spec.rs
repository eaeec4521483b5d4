//! `--energy` values: which probe to open, parsed into a [`ProbeSpec`].
//!
//! | value | probe |
//! |---|---|
//! | `none` (default) | no energy measurement |
//! | `nvml` / `nvml:N` | the total-energy counter of GPU `N` (default 0) through NVML |
//! | `rapl` / `rapl:ROOT` | Linux powercap RAPL zones under `ROOT` (default `/sys/class/powercap`) |
//! | `cmd:PROGRAM [ARGS...]` | an external meter program (split on whitespace, started directly, never through a shell) |
//! | `plugin:PATH.so [CONFIG]` | a shared library implementing `include/replay_energy_probe.h`; the text after the path, if any, is passed to its `open` |

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::EnergyError;

/// The default powercap root of `rapl`.
pub const DEFAULT_POWERCAP_ROOT: &str = "/sys/class/powercap";

/// A parsed `--energy` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProbeSpec {
    /// No energy measurement.
    #[default]
    None,
    /// NVML on the GPU with this index.
    Nvml { device: u32 },
    /// RAPL under this powercap root.
    Rapl { root: PathBuf },
    /// A meter program and its arguments.
    Command { program: String, args: Vec<String> },
    /// A plugin library and the configuration string passed to its `open`.
    Plugin { path: PathBuf, config: String },
}

impl ProbeSpec {
    /// Parses an `--energy` value; see the module docs for the forms.
    pub fn parse(value: &str) -> Result<ProbeSpec, EnergyError> {
        let spec = value.trim();
        let invalid = |reason: &str| EnergyError::InvalidSpec {
            spec: value.to_string(),
            reason: reason.to_string(),
        };
        if spec.is_empty() {
            return Err(invalid("the value is empty"));
        }
        let (kind, rest) = match spec.split_once(':') {
            Some((kind, rest)) => (kind, Some(rest)),
            None => (spec, None),
        };
        match (kind.to_ascii_lowercase().as_str(), rest) {
            ("none", None) => Ok(ProbeSpec::None),
            ("none", Some(_)) => Err(invalid("'none' takes no argument")),
            ("nvml", None) => Ok(ProbeSpec::Nvml { device: 0 }),
            ("nvml", Some(index)) => match index.trim().parse::<u32>() {
                Ok(device) => Ok(ProbeSpec::Nvml { device }),
                Err(_) => Err(invalid(&format!(
                    "nvml:N needs a GPU index (0, 1, ...), got '{index}'"
                ))),
            },
            ("rapl", None) => Ok(ProbeSpec::Rapl {
                root: PathBuf::from(DEFAULT_POWERCAP_ROOT),
            }),
            ("rapl", Some(root)) => {
                if root.trim().is_empty() {
                    Err(invalid("rapl:ROOT needs a directory after the colon (or plain 'rapl' for /sys/class/powercap)"))
                } else {
                    Ok(ProbeSpec::Rapl {
                        root: PathBuf::from(root.trim()),
                    })
                }
            }
            ("cmd", Some(command)) => {
                let mut words = command.split_whitespace().map(str::to_string);
                match words.next() {
                    Some(program) => Ok(ProbeSpec::Command {
                        program,
                        args: words.collect(),
                    }),
                    None => Err(invalid(
                        "cmd: needs a program, as in cmd:/usr/local/bin/meter --port /dev/ttyUSB0",
                    )),
                }
            }
            ("plugin", Some(rest)) => {
                let rest = rest.trim();
                let (path, config) = match rest.split_once(char::is_whitespace) {
                    Some((path, config)) => (path, config.trim()),
                    None => (rest, ""),
                };
                if path.is_empty() {
                    Err(invalid(
                        "plugin: needs the path of a shared library, as in plugin:./libmy_probe.so",
                    ))
                } else {
                    Ok(ProbeSpec::Plugin {
                        path: PathBuf::from(path),
                        config: config.to_string(),
                    })
                }
            }
            ("cmd", None) | ("plugin", None) => {
                Err(invalid(&format!("'{kind}' needs ':' and an argument")))
            }
            _ => Err(invalid(&format!("unknown probe '{kind}'"))),
        }
    }

    /// True for `none`.
    pub fn is_none(&self) -> bool {
        matches!(self, ProbeSpec::None)
    }
}

impl FromStr for ProbeSpec {
    type Err = EnergyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProbeSpec::parse(s)
    }
}

/// The canonical `--energy` text of a spec (parsing it gives the same spec back).
impl fmt::Display for ProbeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeSpec::None => f.write_str("none"),
            ProbeSpec::Nvml { device } => write!(f, "nvml:{device}"),
            ProbeSpec::Rapl { root } => write!(f, "rapl:{}", root.display()),
            ProbeSpec::Command { program, args } => {
                write!(f, "cmd:{program}")?;
                args.iter().try_for_each(|a| write!(f, " {a}"))
            }
            ProbeSpec::Plugin { path, config } => {
                write!(f, "plugin:{}", path.display())?;
                if config.is_empty() {
                    Ok(())
                } else {
                    write!(f, " {config}")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> ProbeSpec {
        ProbeSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        match ProbeSpec::parse(s) {
            Ok(spec) => panic!("{s} parsed as {spec:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn energy_spec_good_values() {
        assert_eq!(ok("none"), ProbeSpec::None);
        assert_eq!(ProbeSpec::default(), ProbeSpec::None);
        assert_eq!(ok(" NVML "), ProbeSpec::Nvml { device: 0 });
        assert_eq!(ok("nvml:3"), ProbeSpec::Nvml { device: 3 });
        assert_eq!(
            ok("rapl"),
            ProbeSpec::Rapl {
                root: PathBuf::from("/sys/class/powercap")
            }
        );
        assert_eq!(
            ok("rapl:/tmp/fake sys"),
            ProbeSpec::Rapl {
                root: PathBuf::from("/tmp/fake sys")
            }
        );
        assert_eq!(
            ok("cmd:meter"),
            ProbeSpec::Command {
                program: "meter".into(),
                args: vec![]
            }
        );
        assert_eq!(
            ok("cmd:/usr/bin/python3  meter.py --watts 42"),
            ProbeSpec::Command {
                program: "/usr/bin/python3".into(),
                args: vec!["meter.py".into(), "--watts".into(), "42".into()],
            }
        );
        // Shell syntax is not interpreted: it reaches the program as plain words.
        assert_eq!(
            ok("cmd:meter ; rm -rf x"),
            ProbeSpec::Command {
                program: "meter".into(),
                args: vec![";".into(), "rm".into(), "-rf".into(), "x".into()]
            }
        );
        assert_eq!(
            ok("plugin:./libp.so"),
            ProbeSpec::Plugin {
                path: PathBuf::from("./libp.so"),
                config: String::new()
            }
        );
        assert_eq!(
            ok("plugin:/opt/p.so watts=42 x"),
            ProbeSpec::Plugin {
                path: PathBuf::from("/opt/p.so"),
                config: "watts=42 x".into()
            }
        );
        assert!(ok("none").is_none());
        assert!(!ok("nvml").is_none());
    }

    #[test]
    fn energy_spec_round_trips_through_display() {
        for s in [
            "none",
            "nvml:1",
            "rapl:/sys/class/powercap",
            "cmd:meter -v 1",
            "plugin:/p.so 42",
            "plugin:/p.so",
        ] {
            assert_eq!(ok(s).to_string(), s);
            assert_eq!(ok(&ok(s).to_string()), ok(s));
        }
        assert_eq!(
            "nvml:2".parse::<ProbeSpec>().unwrap(),
            ProbeSpec::Nvml { device: 2 }
        );
    }

    #[test]
    fn energy_spec_bad_values() {
        assert!(err("").contains("empty"));
        assert!(err("   ").contains("empty"));
        let e = err("joulescope");
        assert!(
            e.contains("unknown probe 'joulescope'") && e.contains("expected none, nvml[:N]"),
            "{e}"
        );
        assert!(err("nvml:x").contains("needs a GPU index"));
        assert!(err("nvml:-1").contains("needs a GPU index"));
        assert!(err("nvml:").contains("needs a GPU index"));
        assert!(err("rapl:").contains("needs a directory"));
        assert!(err("cmd:").contains("needs a program"));
        assert!(err("cmd:   ").contains("needs a program"));
        assert!(err("cmd").contains("needs ':'"));
        assert!(err("plugin:").contains("needs the path"));
        assert!(err("plugin").contains("needs ':'"));
        assert!(err("none:1").contains("takes no argument"));
    }
}
