//! The fusion patterns of `replay calibrate` (`--fusion-patterns`): how much faster a fused
//! composition of libtorch ops runs than the same ops one after another, on linear layers,
//! convolutions and attention, with the seed's sizes, trials, FLOP and byte counts.
//!
//! One file per family ([`linear`], [`conv`], [`attention`]) and [`pattern`] for what they
//! share (counts, timing both sides, the profile).

pub mod attention;
pub mod conv;
pub mod linear;
pub mod pattern;

use std::fmt;

use super::profile::FusionProfile;
use super::CalibrateError;
use crate::device::Device;

/// A family of fusion patterns, as `--fusion-patterns` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FusionFamily {
    Linear,
    Conv,
    Attention,
}

impl FusionFamily {
    /// Every family, in the seed's order.
    pub const ALL: [FusionFamily; 3] = [
        FusionFamily::Linear,
        FusionFamily::Conv,
        FusionFamily::Attention,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FusionFamily::Linear => "linear",
            FusionFamily::Conv => "conv",
            FusionFamily::Attention => "attention",
        }
    }

    /// A comma-separated list of `linear`, `conv`, `attention` and `all`, in any order and
    /// case, repeats allowed: the families it names, once each, in the seed's order.
    pub fn parse_list(list: &str) -> Result<Vec<FusionFamily>, CalibrateError> {
        let mut chosen = Vec::new();
        for name in list.split(',').map(str::trim) {
            let lower = name.to_ascii_lowercase();
            match lower.as_str() {
                "all" => chosen.extend(FusionFamily::ALL),
                other => match FusionFamily::ALL.into_iter().find(|f| f.name() == other) {
                    Some(family) => chosen.push(family),
                    None => {
                        return Err(CalibrateError::Usage(format!(
                            "unknown fusion pattern family {name:?} in --fusion-patterns \
                             {list:?}: the accepted names are linear, conv, attention and all"
                        )))
                    }
                },
            }
        }
        chosen.sort();
        chosen.dedup();
        Ok(chosen)
    }
}

impl fmt::Display for FusionFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every pattern of `families` at every size (the seed kept only the last size of each
/// pattern; all are kept here), each named `{pattern} {size}` (`Linear_Bias 512x1024x1024`,
/// `Conv2d_BN 4x128x128x28 k3`, `QK_Softmax 4x256x64`), with its profile or why it failed.
/// One failed pattern never ends the others.
pub fn measure_fusion(
    device: &Device,
    families: &[FusionFamily],
    quick: bool,
) -> Vec<(String, Result<FusionProfile, CalibrateError>)> {
    let mut results = Vec::new();
    for family in FusionFamily::ALL
        .into_iter()
        .filter(|f| families.contains(f))
    {
        match family {
            FusionFamily::Linear => {
                let trials = linear::trials(quick);
                for size @ (m, k, n) in linear::sizes(quick) {
                    for act in linear::PATTERNS {
                        results.push((
                            format!("{} {m}x{k}x{n}", act.pattern()),
                            linear::measure(device, act, size, trials),
                        ));
                    }
                }
            }
            FusionFamily::Conv => {
                let trials = conv::trials(quick);
                for size in conv::sizes(quick) {
                    for pattern in conv::PATTERNS {
                        let conv::ConvSize {
                            batch,
                            c_in,
                            c_out,
                            hw,
                            kernel,
                        } = size;
                        results.push((
                            format!(
                                "{} {batch}x{c_in}x{c_out}x{hw} k{kernel}",
                                pattern.pattern()
                            ),
                            conv::measure(device, pattern, size, trials),
                        ));
                    }
                }
            }
            FusionFamily::Attention => {
                let trials = attention::trials(quick);
                for size @ (b, s, d) in attention::sizes(quick) {
                    for pattern in attention::PATTERNS {
                        results.push((
                            format!("{} {b}x{s}x{d}", pattern.pattern()),
                            attention::measure(device, pattern, size, trials),
                        ));
                    }
                }
            }
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_lists_parse_in_the_seed_order_once_each() {
        use FusionFamily::*;
        assert_eq!(
            FusionFamily::parse_list("all").unwrap(),
            [Linear, Conv, Attention]
        );
        assert_eq!(
            FusionFamily::parse_list("attention, LINEAR,linear").unwrap(),
            [Linear, Attention]
        );
        assert_eq!(FusionFamily::parse_list("conv,all").unwrap().len(), 3);
        for bad in ["lstm", "", "linear,", "conv;attention"] {
            let err = FusionFamily::parse_list(bad).unwrap_err();
            assert!(err.is_usage_error(), "{bad:?}");
            assert!(
                err.to_string().contains("linear, conv, attention and all"),
                "{err}"
            );
        }
    }

    #[test]
    fn no_family_measures_nothing() {
        assert!(measure_fusion(Device::host(), &[], true).is_empty());
    }

    /// Every pattern at every size has a name of its own, in the seed's order.
    #[test]
    fn quick_and_full_sizes_follow_the_seed() {
        assert_eq!(linear::sizes(true).len(), 2);
        assert_eq!(linear::sizes(false)[2], (1024, 2048, 2048));
        assert_eq!(
            conv::sizes(false)[2],
            conv::ConvSize::new(8, 256, 256, 14, 3)
        );
        assert_eq!(attention::sizes(false)[2], (8, 512, 64));
        assert_eq!(
            (linear::trials(true).trials, linear::trials(false).trials),
            (50, 100)
        );
        assert_eq!(
            (conv::trials(true).trials, conv::trials(false).trials),
            (30, 50)
        );
        assert_eq!(attention::trials(true).warmup, 10);
    }
}
