//! `--energy` and its options, shared by `isolated`, `full` and `compare`.

use clap::Args;

use replay::pipeline::options::{DEFAULT_ENERGY_MIN_PERIODS, DEFAULT_ENERGY_PROBE};
use replay::pipeline::EnergyOptions;

#[derive(Debug, Args, Clone)]
pub struct EnergyArgs {
    /// Measure energy too: none, nvml[:N], rapl[:ROOT], "cmd:PROGRAM [ARGS]" or
    /// "plugin:PATH.so [CONFIG]" (see docs/concepts/energy.md for the meter protocol and the plugin ABI)
    #[arg(long, default_value = DEFAULT_ENERGY_PROBE, value_name = "PROBE")]
    pub energy: String,

    /// Subtract idle power, measured in an equal empty window after each busy one
    #[arg(long)]
    pub energy_idle_subtract: bool,

    /// Each energy window covers at least this many update periods of the probe
    #[arg(long, default_value_t = DEFAULT_ENERGY_MIN_PERIODS, value_name = "N")]
    pub energy_min_periods: f64,
}

impl From<EnergyArgs> for EnergyOptions {
    fn from(args: EnergyArgs) -> Self {
        EnergyOptions {
            probe: args.energy,
            idle_subtract: args.energy_idle_subtract,
            min_periods: args.energy_min_periods,
        }
    }
}
