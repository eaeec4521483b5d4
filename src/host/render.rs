//! The lines `replay calibrate` prints about a host section: each cost per call in
//! microseconds (medians; `-` where not measured, as the CUDA-only costs on the CPU), the
//! cheapest and dearest op that launches nothing, and what the figures belong to.

use std::fmt::Write as _;

use replay_core::results::host_profile::HostProfile;

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"))
}

/// The host section as the summary prints it.
pub fn render_host(host: &HostProfile) -> String {
    let mut s = String::new();
    let m = &host.machine;
    let driver = if m.driver.is_empty() {
        String::new()
    } else {
        format!(", driver {}", m.driver)
    };
    let _ = writeln!(
        s,
        "\nhost, without the profiler ({} on {}, torch {}{driver})     median µs",
        m.device, m.cpu, m.torch
    );
    let recorded = |op: &String| host.ops_events.get(op) != Some(&0.0);
    let ops = |pick: fn(f64, f64) -> bool| {
        host.ops_us
            .iter()
            .filter(|(op, _)| recorded(op))
            .reduce(|a, b| if pick(*b.1, *a.1) { b } else { a })
            .map(|(name, v)| format!("{name} {v:.3}"))
            .unwrap_or_else(|| "-".into())
    };
    // The ops the median is of: those the profiler records (all, where that is unknown).
    let counted = host.ops_us.keys().filter(|op| recorded(op)).count();
    let rows = [
        (
            "dispatch per op (launches nothing)",
            host.dispatch_us_per_op,
            format!(
                "median of {} ops: {} .. {}",
                counted,
                ops(|b, a| b < a),
                ops(|b, a| b > a)
            ),
        ),
        (
            "interpreter per op (TorchScript)",
            host.interpreter_us_per_op,
            String::new(),
        ),
        ("kernel launch", host.launch_us, String::new()),
        (
            "launching op (aten::fill_)",
            host.launch_op_us,
            String::new(),
        ),
        ("synchronisation", host.sync_us, String::new()),
        (
            "4-byte copy to pinned memory",
            host.copy_pinned_us,
            String::new(),
        ),
        (
            "4-byte copy to pageable memory",
            host.copy_pageable_us,
            String::new(),
        ),
        (
            "profiler per CPU op event",
            host.profiler_us_per_cpu_event,
            "capture's settings".to_string(),
        ),
        (
            "profiler per CUDA runtime event",
            host.profiler_us_per_runtime_event,
            String::new(),
        ),
        (
            "profiler per session",
            host.profiler_us_per_session,
            String::new(),
        ),
    ];
    for (what, value, detail) in rows {
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!("  ({detail})")
        };
        let _ = writeln!(s, "  {what:<34} {:>9}{detail}", us(value));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmeasured_costs_print_as_a_dash_and_the_op_range_is_named() {
        let mut host = HostProfile {
            dispatch_us_per_op: Some(0.5),
            ..HostProfile::default()
        };
        host.machine.device = "cpu".into();
        host.ops_us.insert("aten::view".into(), 0.25);
        host.ops_us.insert("aten::to".into(), 0.75);
        let text = render_host(&host);
        assert!(
            text.contains("median of 2 ops: aten::view 0.250 .. aten::to 0.750"),
            "{text}"
        );
        let launch = text.lines().find(|l| l.contains("kernel launch")).unwrap();
        assert!(launch.ends_with(" -"), "{text}");
    }
}
