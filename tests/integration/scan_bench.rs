//! The scan benchmark's runner through the backend interface, with backends made for the
//! test (one that runs out of memory, one that is wrong), and its inputs against PyTorch's
//! own seeded draws. libtorch's generator is global: the tests here take turns with every test
//! of this binary that draws (`common::torch_generator_turn`).

use std::time::Duration;

use crate::common;
use crate::float_tolerance::draws_agree;
use replay::measure::{segment, Placement, Timer};

use replay::suites::scan::bench::inputs::{SeededInputs, SEED};
use replay::suites::scan::bench::{self, case_timing, BenchSettings, ScanBenchSuite, ScanGrid};
use replay::suites::scan::{
    reference, MemoryPeak, Phase, PreparedScan, ScanBackend, ScanDims, ScanError, ScanOutput,
    ScanProblem, Semiring,
};

#[test]
fn the_inputs_are_the_seeds_torch_randn_draws_one_case_after_another() {
    let _turn = common::torch_generator_turn();
    let dims = |t| ScanDims {
        batch: 2,
        positions: t,
        durations: 3,
        labels: 2,
    };
    let mut inputs = SeededInputs::new(SEED);
    let a = inputs.next_edge(dims(5)).unwrap();
    let b = inputs.next_edge(dims(4)).unwrap();
    assert_eq!(a.len(), 2 * 4 * 3 * 2 * 2);
    assert_eq!(b.len(), 2 * 3 * 3 * 2 * 2);
    // PyTorch: `torch.manual_seed(42); a = torch.randn(2, 4, 3, 2, 2);
    // b = torch.randn(2, 3, 3, 2, 2)`; the second draw continues the generator.
    // Within two draws' rounding: libtorch's default kernels round Box–Muller differently.
    let close = |x: &[f32], y: [f64; 4]| x.iter().zip(y).all(|(&x, y)| draws_agree(x, y));
    let a_torch = [1.926_915_288, 1.487_284_064, 0.900_717_199, -2.105_520_964];
    let b_torch = [-2.509_544_373, 0.488_001_049, 0.784_586_847, 0.028_647_186];
    assert!(close(&a[..4], a_torch), "{:?}", &a[..4]);
    assert!(close(&b[..4], b_torch), "{:?}", &b[..4]);
    let mut again = SeededInputs::new(SEED);
    assert_eq!(again.next_edge(dims(5)).unwrap(), a);
}

/// A backend that answers with the float64 reference (shifted when `wrong`), runs out of
/// memory from `oom_from_t` positions on, and reports a fixed memory peak.
struct TestBackend {
    oom_from_t: usize,
    wrong: bool,
}

struct PreparedTest<'p> {
    problem: ScanProblem<'p>,
    semiring: Semiring,
    wrong: bool,
    peak: MemoryPeak,
}

impl ScanBackend for TestBackend {
    fn name(&self) -> &'static str {
        "test"
    }
    fn prepare<'p>(
        &self,
        problem: &ScanProblem<'p>,
        semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
        if problem.dims.positions >= self.oom_from_t {
            return Err(ScanError::OutOfMemory(format!(
                "{} positions do not fit",
                problem.dims.positions
            )));
        }
        Ok(Box::new(PreparedTest {
            problem: problem.clone(),
            semiring,
            wrong: self.wrong,
            peak: MemoryPeak::default(),
        }))
    }
}

impl PreparedScan for PreparedTest<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }
    fn run_calls(
        &mut self,
        phase: Phase,
        calls: u64,
        timer: &mut dyn Timer,
    ) -> Result<(), ScanError> {
        segment(timer, || {
            for _ in 0..calls {
                std::hint::black_box(self.run_once(phase)?);
            }
            Ok::<(), ScanError>(())
        })?;
        self.peak = MemoryPeak {
            allocated: 3 << 30,
            reserved: 4 << 30,
        };
        Ok(())
    }
    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
        let shift = if self.wrong { 0.5 } else { 0.0 };
        let values = reference::forward(&self.problem, self.semiring)
            .into_iter()
            .map(|v| (v + shift) as f32)
            .collect();
        let grad = (phase != Phase::Forward).then(|| {
            reference::log_marginals(&self.problem)
                .into_iter()
                .map(|g| g as f32)
                .collect()
        });
        Ok(ScanOutput { values, grad })
    }
    fn reset_peak_memory(&mut self) {
        self.peak = MemoryPeak::default();
    }
    fn peak_memory(&self) -> MemoryPeak {
        self.peak
    }
}

fn run_grid(
    backends: Vec<(&str, TestBackend)>,
    ts: Vec<usize>,
    ks: Vec<usize>,
) -> Vec<Vec<String>> {
    let _turn = common::torch_generator_turn();
    let dir = tempfile::tempdir().unwrap();
    let grid = ScanGrid {
        ts,
        ks,
        cs: vec![2],
        batch: 2,
        backends: backends.iter().map(|(n, _)| n.to_string()).collect(),
        semirings: vec![Semiring::Log],
        phases: vec![Phase::Both],
        sampling: None,
    };
    let opened: Vec<Box<dyn ScanBackend>> = backends
        .into_iter()
        .map(|(_, b)| Box::new(b) as Box<dyn ScanBackend>)
        .collect();
    let settings = BenchSettings {
        max_memory_gb: 40.0,
        check_limit: 1 << 20,
    };
    let suite = ScanBenchSuite::new(grid, opened, settings, SeededInputs::new(SEED)).unwrap();
    let mut outputs = bench::ScanOutputs::create(dir.path()).unwrap();
    let config = case_timing(3, Duration::from_millis(5)).config();
    bench::run(&suite, &config, &mut outputs, |_| {}).unwrap();
    csv::Reader::from_path(dir.path().join("benchmark_full.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn an_oom_skips_the_larger_configurations_and_peaks_are_the_backends_in_gib() {
    let rows = run_grid(
        vec![(
            "test",
            TestBackend {
                oom_from_t: 16,
                wrong: false,
            },
        )],
        vec![8, 16, 32],
        vec![3, 4],
    );
    // Columns: T,K,C,B,KC,backend,semiring,phase,median,low,high,per_position,
    // peak_allocated_gb,peak_reserved_gb,status,error_msg,...
    let got: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[14].as_str(), r[15].as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("8", "3", "success", ""),
            ("8", "4", "success", ""),
            ("16", "3", "oom", "out of memory: 16 positions do not fit"),
            ("16", "4", "not_tested", "adjacent OOM at T=16,K=3,C=2"),
            ("32", "3", "not_tested", "adjacent OOM at T=16,K=3,C=2"),
            ("32", "4", "not_tested", "adjacent OOM at T=16,K=3,C=2"),
        ]
    );
    assert_eq!((rows[0][12].as_str(), rows[0][13].as_str()), ("3.0", "4.0"));
    // No time and no peak on the rows that were not measured.
    assert!(rows[2][8..14].iter().all(String::is_empty), "{:?}", rows[2]);
}

#[test]
fn a_wrong_result_is_an_error_row_never_a_time_and_the_run_goes_on() {
    let rows = run_grid(
        vec![
            (
                "wrong",
                TestBackend {
                    oom_from_t: usize::MAX,
                    wrong: true,
                },
            ),
            (
                "right",
                TestBackend {
                    oom_from_t: usize::MAX,
                    wrong: false,
                },
            ),
        ],
        vec![6],
        vec![3],
    );
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0][5].as_str(), rows[0][14].as_str()),
        ("wrong", "error")
    );
    assert!(
        rows[0][15].starts_with("wrong result: sequence 0: Log value"),
        "{:?}",
        rows[0]
    );
    assert!(rows[0][8].is_empty());
    assert_eq!(
        (rows[1][5].as_str(), rows[1][14].as_str()),
        ("right", "success")
    );
    let median: f64 = rows[1][8].parse().unwrap();
    assert!(median > 0.0);
}
