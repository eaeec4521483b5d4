//! The short table `replay classify` prints: per tier, unique signatures, invocations,
//! time and share of the total; for a job's file, its ranks.

use std::fmt::Write as _;

use super::schema::{SignatureFile, Tier, Unit};

impl SignatureFile {
    /// A plain-text table of the summary, one row per tier plus unattributed and total.
    pub fn summary_table(&self) -> String {
        let summary = &self.summary;
        let time_header = match summary.unit {
            Unit::Kernel => "GPU time (us)",
            Unit::HostOp => "host time (us)",
        };
        let share = |total_us: f64| {
            if summary.total.total_us > 0.0 {
                100.0 * total_us / summary.total.total_us
            } else {
                0.0
            }
        };
        let mut table = String::new();
        let _ = writeln!(
            table,
            "{:<4} {:<14} {:>8} {:>12} {:>16} {:>7}",
            "tier", "what", "unique", "invocations", time_header, "share"
        );
        for tier in &summary.tiers {
            let what = match (tier.tier, summary.unit) {
                (Tier::Copy, _) => "memcpy/memset",
                (Tier::Gemm, _) => "GEMM",
                (Tier::Op, Unit::Kernel) => "other kernels",
                (Tier::Op, Unit::HostOp) => "top-level ops",
                (Tier::Generated, Unit::Kernel) => "Triton kernels",
                (Tier::Generated, Unit::HostOp) => "Inductor C++",
            };
            let _ = writeln!(
                table,
                "{:<4} {:<14} {:>8} {:>12} {:>16.3} {:>6.1}%",
                tier.tier.number(),
                what,
                tier.unique,
                tier.invocations,
                tier.total_us,
                share(tier.total_us)
            );
        }
        if summary.unit == Unit::Kernel {
            let _ = writeln!(
                table,
                "{:<4} {:<14} {:>8} {:>12} {:>16.3} {:>6.1}%",
                "-",
                "unattributed",
                self.unattributed.len(),
                summary.unattributed.invocations,
                summary.unattributed.total_us,
                share(summary.unattributed.total_us)
            );
        }
        let unique: u64 = summary.tiers.iter().map(|t| t.unique).sum();
        let _ = writeln!(
            table,
            "{:<4} {:<14} {:>8} {:>12} {:>16.3} {:>6.1}%",
            "",
            "total",
            unique,
            summary.total.invocations,
            summary.total.total_us,
            if summary.total.total_us > 0.0 {
                100.0
            } else {
                0.0
            }
        );
        if let Some(overhead) = &self.host_overhead {
            let _ = writeln!(
                table,
                "framework overhead between top-level ops: {:.3} us",
                overhead.overhead_us
            );
            if overhead.uninstrumented_compiled_us > 0.0 {
                let _ = writeln!(
                    table,
                    "uninstrumented compiled code between top-level ops: {:.3} us (inside \
                     torch.compile regions: no recorded op covers it)",
                    overhead.uninstrumented_compiled_us
                );
            }
        }
        if let Some(compiled) = &self.compiled_code {
            let _ = writeln!(
                table,
                "compiled regions: {} span(s), {:.3} us in the profiled steps; uninstrumented \
                 compiled code {:.3} us ({:.1}% of the steps' {:.3} us, which replay cannot see)",
                compiled.regions,
                compiled.region_us,
                compiled.uninstrumented_us,
                100.0 * compiled.uninstrumented_share(),
                compiled.steps_us
            );
        }
        table
    }

    /// The ranks of a job's file, one line each (the first and last eight of a long list).
    pub fn ranks_table(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "ranks: {}", self.ranks.len());
        let shown: Vec<usize> = if self.ranks.len() <= 16 {
            (0..self.ranks.len()).collect()
        } else {
            (0..8)
                .chain(self.ranks.len() - 8..self.ranks.len())
                .collect()
        };
        for (n, &index) in shown.iter().enumerate() {
            if n > 0 && index != shown[n - 1] + 1 {
                let _ = writeln!(text, "  ...");
            }
            let rank = &self.ranks[index];
            let _ = writeln!(
                text,
                "  rank {:<5} {:>12} invocations {:>16.3} us  {}",
                rank.rank, rank.total.invocations, rank.total.total_us, rank.source.path
            );
        }
        text
    }
}
