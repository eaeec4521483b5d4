//! The H100 traces against AMD TraceLens's reports (`*.reference/`), an independent
//! tool: the unique GEMMs (op, B, M, N, K, dtypes, count), their summed kernel times,
//! and the kernel times per (op, kernel) must agree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use replay_core::signature::{
    self, BlasOp, GemmKernelRole, LayoutSource, SignatureFile, Tier, WorkKind,
};
use replay_core::trace;

fn shared_traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kineto")
}

/// A minimal RFC 4180 reader: quoted fields may hold commas, newlines and `""`.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    let header = rows.remove(0);
    rows.into_iter()
        .map(|values| header.iter().cloned().zip(values).collect())
        .collect()
}

fn classify(name: &str) -> SignatureFile {
    let path = shared_traces().join(format!("{name}.json.gz"));
    let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
    signature::classify(&trace, &path)
}

fn reference(name: &str, csv: &str) -> Vec<BTreeMap<String, String>> {
    read_csv(&shared_traces().join(format!("{name}.reference/{csv}")))
}

fn number(row: &BTreeMap<String, String>, column: &str) -> f64 {
    row.get(column)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("column {column:?} in {row:?}"))
}

/// TraceLens computes each kernel's duration as end - start of float64 timestamps near
/// 1.4e12 us, where consecutive floats are 2^-12 us (0.24 ns) apart: 98.718 us comes out
/// as 98.718017578125. Each summed kernel may be off by that spacing, no more.
fn assert_close(ours: f64, theirs: f64, kernels: u64, what: &str) {
    let spacing = 2f64.powi(-12);
    assert!(
        (ours - theirs).abs() <= spacing * kernels.max(1) as f64,
        "{what}: ours {ours} vs TraceLens {theirs} over {kernels} kernels"
    );
}

/// TraceLens's `('c10::BFloat16', 'c10::BFloat16')` as our canonical dtype names.
fn tracelens_dtypes(text: &str) -> Vec<String> {
    text.trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(|t| t.trim().trim_matches('\''))
        .filter(|t| !t.is_empty())
        .map(signature::dtype::canonical_dtype)
        .collect()
}

/// (op, B, M, N, K, dtype_a, dtype_b) -> (op invocations, summed kernel us).
type GemmTable = BTreeMap<(String, u64, u64, u64, u64, String, String), (u64, f64)>;

fn our_gemms(file: &SignatureFile) -> GemmTable {
    let mut table = GemmTable::new();
    for s in file.signatures.iter().filter(|s| s.tier == Tier::Gemm) {
        let gemm = s
            .gemm
            .as_ref()
            .unwrap_or_else(|| panic!("GEMM parameters for {}", s.name));
        let op = s.op.as_ref().map(|op| op.name.clone()).unwrap_or_default();
        let entry = table
            .entry((
                op,
                gemm.batch,
                gemm.m,
                gemm.n,
                gemm.k,
                gemm.dtype_a.clone(),
                gemm.dtype_b.clone(),
            ))
            .or_default();
        // TraceLens counts op invocations; each invocation runs one main kernel.
        if gemm.role == GemmKernelRole::Main {
            entry.0 += s.count;
        }
        entry.1 += s.trace_total_us;
    }
    table
}

fn tracelens_gemms(name: &str) -> GemmTable {
    let mut table = GemmTable::new();
    for row in reference(name, "GEMM.csv") {
        let dtypes = tracelens_dtypes(&row["param: dtype_A_B"]);
        let key = (
            row["name"].clone(),
            number(&row, "param: B") as u64,
            number(&row, "param: M") as u64,
            number(&row, "param: N") as u64,
            number(&row, "param: K") as u64,
            dtypes[0].clone(),
            dtypes[1].clone(),
        );
        let entry = table.entry(key).or_default();
        entry.0 += number(&row, "name_count") as u64;
        entry.1 += number(&row, "Kernel Time (µs)_sum");
    }
    table
}

fn check_gemms_against_tracelens(name: &str) {
    let file = classify(name);
    let ours = our_gemms(&file);
    let theirs = tracelens_gemms(name);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{name}: unique GEMMs (op, B, M, N, K, dtypes)"
    );
    for (key, (count, total_us)) in &theirs {
        let (our_count, our_total) = ours[key];
        assert_eq!(our_count, *count, "{name}: count of {key:?}");
        assert_close(
            our_total,
            *total_us,
            *count,
            &format!("{name}: kernel time of {key:?}"),
        );
    }
}

fn check_kernel_times_against_tracelens(name: &str) {
    let file = classify(name);
    // TraceLens's kernel summary covers kernels only (no memcpy/memset).
    let kernels: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.kind == WorkKind::Kernel)
        .collect();
    let mut ours: BTreeMap<(String, String), (u64, f64)> = BTreeMap::new();
    for s in &kernels {
        let op = s.op.as_ref().map(|op| op.name.clone()).unwrap_or_default();
        let entry = ours.entry((op, s.name.clone())).or_default();
        entry.0 += s.count;
        entry.1 += s.trace_total_us;
    }
    let mut theirs: BTreeMap<(String, String), (u64, f64)> = BTreeMap::new();
    for row in reference(name, "kernel_summary.csv") {
        let entry = theirs
            .entry((row["Parent cpu_op"].clone(), row["Kernel name"].clone()))
            .or_default();
        entry.0 += number(&row, "Kernel duration (µs)_count") as u64;
        entry.1 += number(&row, "Kernel duration (µs)_sum");
    }
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{name}: (op, kernel) pairs"
    );
    for (key, (count, total)) in &theirs {
        assert_eq!(ours[key].0, *count, "{name}: count of {key:?}");
        assert_close(
            ours[key].1,
            *total,
            *count,
            &format!("{name}: time of {key:?}"),
        );
    }
    let our_total: f64 = kernels.iter().map(|s| s.trace_total_us).sum();
    let their_total: f64 = theirs.values().map(|(_, t)| t).sum();
    let their_count: u64 = theirs.values().map(|(c, _)| c).sum();
    assert_close(
        our_total,
        their_total,
        their_count,
        &format!("{name}: total kernel time"),
    );
}

/// TraceLens's busy time is every GPU activity, copies included.
fn check_gpu_busy_time_against_tracelens(name: &str) {
    let file = classify(name);
    let busy_ms = reference(name, "gpu_timeline.csv")
        .into_iter()
        .find(|row| row["type"] == "busy_time")
        .map(|row| number(&row, "time ms"))
        .unwrap_or_else(|| panic!("{name}: busy_time row"));
    // The timeline's busy time is a union of intervals, also in float64 timestamps.
    assert_close(
        file.summary.total.total_us,
        busy_ms * 1000.0,
        file.summary.total.invocations,
        &format!("{name}: GPU busy time"),
    );
}

#[test]
fn bert_gemms_match_tracelens() {
    check_gemms_against_tracelens("h100_bert_small_infer");
}

#[test]
fn vit_gemms_match_tracelens() {
    check_gemms_against_tracelens("h100_vit_infer");
}

#[test]
fn bert_kernel_times_match_tracelens() {
    check_kernel_times_against_tracelens("h100_bert_small_infer");
}

#[test]
fn vit_kernel_times_match_tracelens() {
    check_kernel_times_against_tracelens("h100_vit_infer");
}

#[test]
fn gpu_busy_time_matches_tracelens() {
    check_gpu_busy_time_against_tracelens("h100_bert_small_infer");
    check_gpu_busy_time_against_tracelens("h100_vit_infer");
}

/// cuBLAS/CUTLASS kernel names spell the column-major transposes (`..._tn_...` means
/// transa = T, transb = N; Tensile's `Cijk_Alik_Bljk` likewise). Wherever the trace
/// recorded strides, the call implied by the launching op's strides must agree with the
/// kernel that the BLAS library actually chose.
#[test]
fn implied_cublas_transposes_agree_with_kernel_names() {
    let mut checked = 0;
    for name in [
        "h100_bert_small_infer",
        "h100_vit_infer",
        "mi250_rocm_train",
    ] {
        let file = classify(name);
        for s in &file.signatures {
            let Some(gemm) = s.gemm.as_ref().filter(|g| {
                g.role == GemmKernelRole::Main && g.layout_source == LayoutSource::Strides
            }) else {
                continue;
            };
            let Some((transa, transb)) = transposes_in_kernel_name(&s.name) else {
                continue;
            };
            assert_eq!(
                (gemm.cublas.transa, gemm.cublas.transb),
                (transa, transb),
                "{name}: {} for {:?}",
                s.name,
                s.inputs
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked, 10,
        "GEMM kernels with strides and a layout in their name"
    );
}

fn transposes_in_kernel_name(name: &str) -> Option<(BlasOp, BlasOp)> {
    signature::kernel_kind::blas_transposes_in_kernel_name(name)
}
