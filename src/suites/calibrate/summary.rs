//! What `replay calibrate` prints when it ends: the peaks and how they were found, the
//! matmul and memory tables, the fusion verdicts, the host's costs, the failures.

use super::profile::Profile;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.1} %", 100.0 * x))
}

/// The printed summary: peaks and how they were found, the matmul and memory tables, the
/// fusion verdicts, failures.
pub fn render_summary(p: &Profile) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "calibration of {} ({})",
        p.metadata.hardware_name, p.metadata.device
    );
    let _ = writeln!(
        s,
        "  peak compute  {} GFLOPS fp32  [{}: {}]",
        opt(p.theoretical_peak_gflops, 1),
        p.theoretical_peak_source.kind,
        p.theoretical_peak_source.how
    );
    let _ = writeln!(
        s,
        "  peak memory   {} GB/s  [{}: {}]",
        opt(p.theoretical_bandwidth_gbps, 1),
        p.theoretical_bandwidth_source.kind,
        p.theoretical_bandwidth_source.how
    );
    // By dtype, then size (the keys sort N=512 after N=4096).
    let mut matmuls: Vec<_> = p
        .operation_profiles
        .values()
        .filter(|o| o.operation_type == "matmul")
        .collect();
    matmuls.sort_by_key(|o| {
        let dtype = o
            .extra_params
            .get("dtype")
            .and_then(|d| d.as_str())
            .unwrap_or("");
        (
            dtype.to_string(),
            o.input_shape.first().copied().unwrap_or(0),
        )
    });
    if !matmuls.is_empty() {
        let _ = writeln!(
            s,
            "\nmatmul                     median ms (q1..q3)        GFLOPS  efficiency"
        );
        for o in matmuls {
            let dtype = o
                .extra_params
                .get("dtype")
                .and_then(|d| d.as_str())
                .unwrap_or("?");
            let _ = writeln!(
                s,
                "  {:<8} N={:<6}      {:>9.3} ({:.3}..{:.3})  {:>9.1}  {:>9}",
                dtype,
                o.input_shape.first().copied().unwrap_or(0),
                o.latency.median_latency_ms,
                o.latency.q1_latency_ms,
                o.latency.q3_latency_ms,
                o.measured_gflops,
                percent(o.efficiency)
            );
        }
        let _ = writeln!(
            s,
            "  fp32 best / avg / worst: {} / {} / {} GFLOPS ({} / {} / {} of peak)",
            opt(p.best_measured_gflops, 1),
            opt(p.avg_measured_gflops, 1),
            opt(p.worst_measured_gflops, 1),
            percent(p.best_efficiency),
            percent(p.avg_efficiency),
            percent(p.worst_efficiency)
        );
    }
    // By method and kernel, then size.
    let mut memory: Vec<_> = p
        .operation_profiles
        .iter()
        .filter(|(_, o)| o.memory_bound)
        .collect();
    memory.sort_by_key(|(key, o)| {
        let size = o
            .extra_params
            .get("size_mb")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        (
            key.rsplit_once('=')
                .map_or(key.as_str(), |(head, _)| head)
                .to_string(),
            size,
        )
    });
    if !memory.is_empty() {
        let _ = writeln!(
            s,
            "\nmemory                                      median ms      GB/s  efficiency"
        );
        for (key, o) in memory {
            let _ = writeln!(
                s,
                "  {:<40} {:>9.3} {:>9.1}  {:>9}",
                key,
                o.latency.median_latency_ms,
                o.achieved_bandwidth_gbps,
                percent(o.efficiency)
            );
        }
        let _ = writeln!(
            s,
            "  measured bandwidth: {} GB/s ({} of peak)",
            opt(p.measured_bandwidth_gbps, 1),
            percent(p.bandwidth_efficiency)
        );
    }
    if !p.fusion_profiles.is_empty() {
        let _ = writeln!(s, "\nfusion                 shape                 unfused ms  fused ms  speedup  memory   verdict");
        for sizes in p.fusion_profiles.values() {
            for f in sizes {
                let shape = f
                    .input_shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("x");
                let _ = writeln!(
                    s,
                    "  {:<20} {:<20} {:>10.3} {:>9.3} {:>7.2}x {:>6.1} %  {}",
                    f.fusion_pattern,
                    shape,
                    f.unfused_latency_ms,
                    f.fused_latency_ms,
                    f.speedup_factor,
                    100.0 * f.memory_reduction,
                    f.verdict
                );
            }
        }
    }
    if let Some(host) = &p.host {
        s.push_str(&crate::host::render::render_host(host));
    }
    if !p.failures.is_empty() {
        let _ = writeln!(s, "\nfailed ({}):", p.failures.len());
        for (key, why) in &p.failures {
            let _ = writeln!(s, "  {key}: {why}");
        }
    }
    s
}
