//! `replay selftest`: one replay per tier on a device, checked against libtorch on the CPU.

use clap::Args;

use crate::device::{Device, DeviceSpec};
use crate::replay::selftest;

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Device to test: cuda[:N] (the GPU paths) or cpu (the host paths)
    #[arg(long, default_value = "cuda", value_parser = super::parse_device)]
    pub device: DeviceSpec,

    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SelftestArgs) -> anyhow::Result<()> {
    let device = Device::open(args.device)?;
    let checks = selftest::run(&device);
    let failed = checks.iter().filter(|c| !c.passed).count();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "device": device.describe(), "checks": checks })
            )?
        );
    } else {
        println!("selftest on {}", device.describe());
        for c in &checks {
            let tier = if c.tier == 0 {
                "-".to_string()
            } else {
                c.tier.to_string()
            };
            println!(
                "  tier {tier}  {:<4}  {:<45} {}",
                if c.passed { "pass" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        println!("{} passed, {} failed", checks.len() - failed, failed);
    }
    if failed > 0 {
        anyhow::bail!("{failed} selftest check(s) failed on {}", device.describe());
    }
    Ok(())
}
