//! The benchmark's inputs are PyTorch's own seeded draws. Alone in its test binary: libtorch's
//! generator is global, and other tests drawing from it at the same time would interleave.

use replay::suites::scan::bench::inputs::{SeededInputs, SEED};
use replay::suites::scan::ScanDims;

#[test]
fn the_inputs_are_the_seeds_torch_randn_draws_one_case_after_another() {
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
    let close = |x: &[f32], y: [f64; 4]| x.iter().zip(y).all(|(&x, y)| (x as f64 - y).abs() < 1e-6);
    assert!(
        close(
            &a[..4],
            [1.926_915_288, 1.487_284_064, 0.900_717_199, -2.105_520_964]
        ),
        "{:?}",
        &a[..4]
    );
    assert!(
        close(
            &b[..4],
            [-2.509_544_373, 0.488_001_049, 0.784_586_847, 0.028_647_186]
        ),
        "{:?}",
        &b[..4]
    );
    // Seeding again starts the same sequence.
    let mut again = SeededInputs::new(SEED);
    assert_eq!(again.next_edge(dims(5)).unwrap(), a);
}
