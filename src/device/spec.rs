//! `--device` values: `cpu`, `cuda` (device 0) or `cuda:N`.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// Which device a command runs on, as the user named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    Cpu,
    Cuda(usize),
}

impl FromStr for DeviceSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: &str| Error::InvalidDevice {
            spec: text.to_string(),
            reason: reason.to_string(),
        };
        let lower = text.trim().to_ascii_lowercase();
        match lower.as_str() {
            "cpu" => Ok(DeviceSpec::Cpu),
            "cuda" | "gpu" => Ok(DeviceSpec::Cuda(0)),
            "" => Err(invalid("empty")),
            _ => match lower.split_once(':') {
                Some(("cuda" | "gpu", index)) => {
                    index.parse::<usize>().map(DeviceSpec::Cuda).map_err(|_| {
                        invalid("the part after 'cuda:' must be a device index such as 0 or 1")
                    })
                }
                Some(("cpu", _)) => Err(invalid("cpu takes no index")),
                _ => Err(invalid("unknown device kind")),
            },
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Cpu => write!(f, "cpu"),
            DeviceSpec::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl DeviceSpec {
    /// The name as PyTorch users write it: `cpu`, `cuda` for device 0, `cuda:N` otherwise
    /// (the seeds' configs and CSV columns spell it so).
    pub fn short_name(&self) -> String {
        match self {
            DeviceSpec::Cuda(0) => "cuda".into(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_pytorchs() {
        assert_eq!(DeviceSpec::Cpu.short_name(), "cpu");
        assert_eq!(DeviceSpec::Cuda(0).short_name(), "cuda");
        assert_eq!(DeviceSpec::Cuda(2).short_name(), "cuda:2");
    }

    #[test]
    fn parses_the_accepted_forms() {
        assert_eq!("cpu".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cpu);
        assert_eq!("CPU".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cpu);
        assert_eq!("cuda".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(0));
        assert_eq!("cuda:0".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(0));
        assert_eq!("cuda:1".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(1));
        assert_eq!(
            " cuda:12 ".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Cuda(12)
        );
    }

    #[test]
    fn rejects_bad_values_with_a_message() {
        for bad in [
            "", "cuda:", "cuda:-1", "cuda:x", "cuda:1:2", "cpu:0", "tpu", "rocm:0",
        ] {
            let err = bad.parse::<DeviceSpec>().unwrap_err();
            let text = err.to_string();
            assert!(text.contains("invalid device"), "{bad}: {text}");
            assert!(
                text.contains("expected cpu, cuda or cuda:N"),
                "{bad}: {text}"
            );
            assert!(err.is_usage_error());
        }
    }

    #[test]
    fn displays_round_trip() {
        for spec in [DeviceSpec::Cpu, DeviceSpec::Cuda(0), DeviceSpec::Cuda(3)] {
            assert_eq!(spec.to_string().parse::<DeviceSpec>().unwrap(), spec);
        }
    }
}
