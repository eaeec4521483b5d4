//! `--energy` and its options, shared by `isolated`, `full` and `compare`.

use clap::Args;

use crate::energy::{self, EnergyConfig, EnergyProbe, ProbeSpec};

#[derive(Debug, Args, Clone)]
pub struct EnergyArgs {
    /// Measure energy too: none, nvml[:N], rapl[:ROOT], "cmd:PROGRAM [ARGS]" or
    /// "plugin:PATH.so [CONFIG]" (see the README for the meter protocol and the plugin ABI)
    #[arg(long, default_value = "none", value_name = "PROBE")]
    pub energy: String,

    /// Subtract idle power, measured in an equal empty window after each busy one
    #[arg(long)]
    pub energy_idle_subtract: bool,

    /// Each energy window covers at least this many update periods of the probe
    #[arg(long, default_value_t = 100.0, value_name = "N")]
    pub energy_min_periods: f64,
}

impl Default for EnergyArgs {
    fn default() -> Self {
        EnergyArgs {
            energy: "none".into(),
            energy_idle_subtract: false,
            energy_min_periods: 100.0,
        }
    }
}

impl EnergyArgs {
    /// The opened probe, or `None` for `--energy none`.
    pub fn open(&self) -> anyhow::Result<Option<Box<dyn EnergyProbe>>> {
        let spec: ProbeSpec = self.energy.parse().map_err(crate::Error::from)?;
        if spec.is_none() {
            return Ok(None);
        }
        Ok(Some(energy::open(&spec).map_err(crate::Error::from)?))
    }

    pub fn config(&self) -> EnergyConfig {
        EnergyConfig {
            min_update_periods: self.energy_min_periods,
            idle_subtract: self.energy_idle_subtract,
            ..EnergyConfig::default()
        }
    }
}
