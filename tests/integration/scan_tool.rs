//! `replay scan` through the real binary on .npy files written here: the values and the
//! gradient against the float64 reference, the timing block, and every bad input ending with
//! exit status 2 and a message that names the file.

use crate::common;

use std::path::{Path, PathBuf};

use common::replay;
use npyz::WriterBuilder;
use replay::suites::scan::{reference, ScanDims, ScanProblem, Semiring};

/// A small seeded edge tensor (splitmix64, values in [-2, 2)).
fn edge_values(dims: ScanDims, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..dims.edge_len())
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0) as f32
        })
        .collect()
}

fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], values: &[T]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(file)
        .begin_nd()
        .unwrap();
    writer.extend(values.iter().copied()).unwrap();
    writer.finish().unwrap();
}

fn shape_of(dims: ScanDims) -> [u64; 5] {
    [
        dims.batch as u64,
        dims.positions as u64 - 1,
        dims.durations as u64,
        dims.labels as u64,
        dims.labels as u64,
    ]
}

const DIMS: ScanDims = ScanDims {
    batch: 3,
    positions: 12,
    durations: 4,
    labels: 3,
};

struct Inputs {
    dir: tempfile::TempDir,
    edge: Vec<f32>,
}

impl Inputs {
    fn new() -> Inputs {
        let dir = tempfile::tempdir().unwrap();
        let edge = edge_values(DIMS, 15);
        write_npy(&dir.path().join("edge.npy"), &shape_of(DIMS), &edge);
        write_npy(&dir.path().join("lengths.npy"), &[3], &[12i64, 7, 1]);
        Inputs { dir, edge }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn run_ok(args: &[&str]) -> serde_json::Value {
    let out = replay().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "replay {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("replay scan prints JSON")
}

fn values_of(report: &serde_json::Value) -> Vec<f64> {
    report["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn values_of_every_semiring_match_the_float64_reference() {
    let inputs = Inputs::new();
    let edge = inputs.path("edge.npy");
    let lengths = inputs.path("lengths.npy");
    let problem = ScanProblem::new(DIMS, &inputs.edge, Some(&[12, 7, 1])).unwrap();
    for (name, semiring) in [
        ("log", Semiring::Log),
        ("max", Semiring::Max),
        ("entropy", Semiring::Entropy),
    ] {
        let report = run_ok(&[
            "scan",
            "--edge",
            edge.to_str().unwrap(),
            "--lengths",
            lengths.to_str().unwrap(),
            "--semiring",
            name,
        ]);
        assert_eq!(report["semiring"], semiring.name());
        assert_eq!(report["backend"], "cpu");
        assert_eq!(report["dims"]["T"], 12);
        assert_eq!(report["lengths"], serde_json::json!([12, 7, 1]));
        let expected = reference::forward(&problem, semiring);
        for (got, want) in values_of(&report).iter().zip(&expected) {
            assert!(
                (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{name}: {got} vs reference {want}"
            );
        }
    }
}

#[test]
fn the_gradient_file_holds_the_edge_marginals() {
    let inputs = Inputs::new();
    let grad_path = inputs.path("grad.npy");
    run_ok(&[
        "scan",
        "--edge",
        inputs.path("edge.npy").to_str().unwrap(),
        "--lengths",
        inputs.path("lengths.npy").to_str().unwrap(),
        "--grad",
        grad_path.to_str().unwrap(),
    ]);
    let npy = npyz::NpyFile::new(std::fs::File::open(&grad_path).unwrap()).unwrap();
    assert_eq!(npy.shape(), &shape_of(DIMS)[..]);
    let grad: Vec<f32> = npy.into_vec().unwrap();
    let problem = ScanProblem::new(DIMS, &inputs.edge, Some(&[12, 7, 1])).unwrap();
    let expected = reference::log_marginals(&problem);
    let worst = grad
        .iter()
        .zip(&expected)
        .map(|(g, e)| (f64::from(*g) - e).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-3, "largest marginal difference {worst}");
    // Marginals of a sequence of length 1 are all zero: it has no segment.
    let stride = DIMS.sequence_stride();
    assert!(grad[2 * stride..].iter().all(|&g| g == 0.0));
}

#[test]
fn time_adds_the_measurement_with_the_seed_quartiles() {
    let inputs = Inputs::new();
    let report = run_ok(&[
        "scan",
        "--edge",
        inputs.path("edge.npy").to_str().unwrap(),
        "--time",
        "--time-budget",
        "0.2",
        "--phase",
        "backward",
    ]);
    let timing = &report["timing"];
    assert_eq!(timing["phase"], "backward");
    let (q1, median, q3) = (
        timing["q1_ms"].as_f64().unwrap(),
        timing["median_ms"].as_f64().unwrap(),
        timing["q3_ms"].as_f64().unwrap(),
    );
    assert!(median > 0.0 && q1 <= median && median <= q3, "{timing}");
    assert!(timing["samples"].as_u64().unwrap() >= 1);
}

/// `replay ARGS` must exit 2 with `file` and `problem` in the message, and no panic.
fn assert_rejected(args: &[&str], file: &Path, problem: &str) {
    let out = replay().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "replay {args:?}: {stderr}");
    assert!(
        stderr.contains(&*file.to_string_lossy()),
        "message does not name {}: {stderr}",
        file.display()
    );
    assert!(
        stderr.contains(problem),
        "message does not say '{problem}': {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_inputs_exit_2_and_name_the_file() {
    let inputs = Inputs::new();
    let p = |name: &str| inputs.path(name);
    let edge = p("edge.npy");
    let edge_arg = edge.to_str().unwrap();

    let missing = p("missing.npy");
    assert_rejected(
        &["scan", "--edge", missing.to_str().unwrap()],
        &missing,
        "cannot open",
    );

    std::fs::write(p("notes.npy"), b"these are notes\n").unwrap();
    assert_rejected(
        &["scan", "--edge", p("notes.npy").to_str().unwrap()],
        &p("notes.npy"),
        "not a readable .npy file",
    );

    write_npy(&p("rank4.npy"), &[2, 3, 4, 4], &vec![0f32; 96]);
    assert_rejected(
        &["scan", "--edge", p("rank4.npy").to_str().unwrap()],
        &p("rank4.npy"),
        "is not [B, T-1, K, C, C]",
    );

    write_npy(
        &p("ints.npy"),
        &shape_of(DIMS),
        &vec![1i32; DIMS.edge_len()],
    );
    assert_rejected(
        &["scan", "--edge", p("ints.npy").to_str().unwrap()],
        &p("ints.npy"),
        "is not float32",
    );

    let mut with_nan = inputs.edge.clone();
    with_nan[5] = f32::NAN;
    write_npy(&p("nan.npy"), &shape_of(DIMS), &with_nan);
    assert_rejected(
        &["scan", "--edge", p("nan.npy").to_str().unwrap()],
        &p("nan.npy"),
        "not finite",
    );

    write_npy(&p("long.npy"), &[3], &[12i64, 13, 1]);
    assert_rejected(
        &[
            "scan",
            "--edge",
            edge_arg,
            "--lengths",
            p("long.npy").to_str().unwrap(),
        ],
        &p("long.npy"),
        "length 13 of sequence 1 is outside 1..=12",
    );

    write_npy(&p("two.npy"), &[2], &[12i64, 3]);
    assert_rejected(
        &[
            "scan",
            "--edge",
            edge_arg,
            "--lengths",
            p("two.npy").to_str().unwrap(),
        ],
        &p("two.npy"),
        "is not [B] = [3]",
    );

    // A gradient with the forward phase: the user's flags contradict each other.
    let out = replay()
        .args(["scan", "--edge", edge_arg, "--phase", "forward", "--grad"])
        .arg(p("g.npy"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grad needs the backward"));
    assert!(!p("g.npy").exists());

    let out = replay()
        .args(["scan", "--edge", edge_arg, "--backend", "abacus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("abacus"));
}
