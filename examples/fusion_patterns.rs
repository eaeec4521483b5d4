//! Measures `replay calibrate`'s fusion patterns on the CPU and prints them as JSON (stdout)
//! and a table (stderr), until the `calibrate` command runs them itself.
//!
//! `cargo run --release --example fusion_patterns -- [linear,conv,attention|all] [--full]`
//! (default: all families, quick sizes).

use std::process::ExitCode;

use replay::suites::calibrate::fusion::{measure_fusion, FusionFamily};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    let list = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("all", String::as_str);
    let families = match FusionFamily::parse_list(list) {
        Ok(families) => families,
        Err(e) => {
            eprintln!("fusion_patterns: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "libtorch threads: {}; {} sizes",
        tch::get_num_threads(),
        if full { "full" } else { "quick" }
    );
    let results = measure_fusion(tch::Device::Cpu, &families, !full);

    eprintln!(
        "{:<40} {:>11} {:>10} {:>8}  verdict",
        "pattern and size", "unfused ms", "fused ms", "speedup"
    );
    let mut json = Vec::new();
    let mut failed = false;
    for (name, result) in results {
        match result {
            Ok(p) => {
                eprintln!(
                    "{name:<40} {:>11.3} {:>10.3} {:>7.2}×  {}",
                    p.unfused_latency_ms, p.fused_latency_ms, p.speedup_factor, p.verdict
                );
                json.push(serde_json::json!({ "name": name, "profile": p }));
            }
            Err(e) => {
                failed = true;
                eprintln!("{name:<40} failed: {e}");
                json.push(serde_json::json!({ "name": name, "error": e.to_string() }));
            }
        }
    }
    match serde_json::to_string_pretty(&json) {
        Ok(text) => println!("{text}"),
        Err(e) => {
            eprintln!("fusion_patterns: {e}");
            return ExitCode::FAILURE;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
