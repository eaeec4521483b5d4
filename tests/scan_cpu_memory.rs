//! The `cpu` backend's measured peak memory (the counting global allocator): the streaming
//! forward holds O(K·C) per thread whatever T, the backward keeps `T·C` rows and writes a
//! `T·K·C²` gradient. One test in its own binary, because the count is process-wide and
//! concurrent tests would add to it.

#[path = "integration/scan_support.rs"]
mod scan_support;

use replay::kernels::semiring_scan::cpu::CpuScan;
use replay::measure::Untimed;
use replay::suites::scan::cpu_backend::{input_bytes, CpuBackend};
use replay::suites::scan::{Phase, ScanBackend, Semiring};
use scan_support::Case;

fn peak(case: &Case, semiring: Semiring, phase: Phase, threads: usize) -> u64 {
    let p = case.problem();
    let backend = CpuBackend::new(CpuScan::with_threads(threads));
    let mut prepared = backend.prepare(&p, semiring).unwrap();
    // The first call of a process builds the kernel's worker pool, which it keeps: measure
    // a call after that, as the benchmark does (its reference check runs first).
    prepared.run_calls(phase, 1, &mut Untimed).unwrap();
    prepared.reset_peak_memory();
    prepared.run_calls(phase, 1, &mut Untimed).unwrap();
    // The peak counts the potentials the kernel reads in place, as the seed's
    // max_memory_allocated does (issue 29); what this test bounds is the rest, the kernel's
    // own allocations.
    let inputs = input_bytes(&p);
    let peak = prepared.peak_memory().allocated;
    assert!(
        peak >= inputs,
        "the peak {peak} B counts the {inputs} B read"
    );
    peak - inputs
}

#[test]
fn forward_memory_is_flat_in_t_and_the_backward_grows() {
    let (batch, k, c, threads) = (4, 8, 6, 2);
    let short = Case::random(1, batch, 256, k, c, &[]);
    let long = Case::random(2, batch, 4096, k, c, &[]);
    for semiring in Semiring::ALL {
        let (f_short, f_long) = (
            peak(&short, semiring, Phase::Forward, threads),
            peak(&long, semiring, Phase::Forward, threads),
        );
        // Per thread: the ring (2 halves for Entropy), the gather buffers and the next row,
        // a few K·C floats; plus the B values and the threads' bookkeeping. 64 KiB is far
        // below the 4096·C·4 = 96 KiB that one sequence's full beta table alone would take.
        let bound = 64 << 10;
        assert!(
            f_short > 0 && f_long > 0,
            "{semiring}: the forward allocates its workspace ({f_short}, {f_long})"
        );
        assert!(
            f_long <= bound && f_short <= bound,
            "{semiring} forward: peak {f_short} B at T=256, {f_long} B at T=4096"
        );
        assert!(
            f_long.abs_diff(f_short) <= 4 << 10,
            "{semiring} forward: peak {f_short} B at T=256 but {f_long} B at T=4096"
        );

        let (b_short, b_long) = (
            peak(&short, semiring, Phase::Both, threads),
            peak(&long, semiring, Phase::Both, threads),
        );
        // At least the gradient (B·(T−1)·K·C² floats) and the saved rows (B·T·C).
        let need = |t: u64| 4 * batch as u64 * ((t - 1) * (k * c * c) as u64 + t * c as u64);
        assert!(
            b_short >= need(256) && b_long >= need(4096),
            "{semiring} both: peak {b_short} B at T=256, {b_long} B at T=4096"
        );
        assert!(
            b_long > 12 * b_short,
            "{semiring} both: the peak grows with T ({b_short} → {b_long} B for 16× T)"
        );
        let b_alone = peak(&long, semiring, Phase::Backward, threads);
        assert!(
            b_alone >= need(4096) - 4 * (batch * 4096 * c) as u64,
            "{semiring} backward alone: peak {b_alone} B holds at least the gradient"
        );
    }
}
