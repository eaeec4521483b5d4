//! The fused Sinkhorn-Knopp of stage 2 on the CPU: every (b, t) position's n×n matrix of
//! logits made doubly stochastic in one pass over memory, instead of torch's ~80 op calls
//! over the whole (B, T, n, n) tensor (each reading and writing all of it).
//!
//! The seed's arithmetic, in float32: subtract the matrix's max, exp, then `iters` times
//! {divide each column by its sum + 1e-8; divide each row by its sum + 1e-8}, then round to
//! the dtype. Sixteen matrices run side by side, one per SIMD lane (element e of matrix l at
//! `m[e][l]`), so every step is a vector operation whatever n is; the exp is the scan's
//! vectorisable float32 exp (about 2 ulp).

use rayon::prelude::*;

use super::{in_pool, Element, SINKHORN_EPS};
use crate::cpu::exp_approx::exp_approx;
use crate::kernels::KernelError;

/// Matrices per SIMD group: one AVX-512 register (two AVX, four SSE) of float32.
const LANES: usize = 16;
/// Matrices per parallel task (16 KiB of float32 logits at n = 4).
const TASK_MATRICES: usize = 256;
/// The largest n: the group keeps n² × LANES floats on the stack.
pub const MAX_STREAMS: usize = 16;

/// Makes each of the `logits.len() / n²` matrices doubly stochastic, into `out`.
pub fn sinkhorn<T: Element>(
    logits: &[T],
    out: &mut [T],
    n: usize,
    iters: usize,
    threads: usize,
) -> Result<(), KernelError> {
    let nn = n * n;
    if n == 0 || n > MAX_STREAMS || !logits.len().is_multiple_of(nn) || out.len() != logits.len() {
        return Err(KernelError::InvalidInput(format!(
            "sinkhorn: {} logits and {} outputs are not whole {n}×{n} matrices (n ≤ {MAX_STREAMS})",
            logits.len(),
            out.len()
        )));
    }
    let task = fastest_task::<T>();
    in_pool(threads, || {
        out.par_chunks_mut(TASK_MATRICES * nn)
            .zip(logits.par_chunks(TASK_MATRICES * nn))
            .for_each(|(out, logits)| task(logits, out, n, iters));
    });
    Ok(())
}

type Task<T> = fn(&[T], &mut [T], usize, usize);

/// The task compiled for the widest vectors this CPU has, chosen at run time (the binary
/// targets baseline x86-64).
fn fastest_task<T: Element>() -> Task<T> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return task_avx512::<T>;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return task_avx2::<T>;
        }
    }
    task_portable::<T>
}

#[cfg(target_arch = "x86_64")]
fn task_avx512<T: Element>(logits: &[T], out: &mut [T], n: usize, iters: usize) {
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn inner<T: Element>(logits: &[T], out: &mut [T], n: usize, iters: usize) {
        task_portable(logits, out, n, iters)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(logits, out, n, iters) }
}

#[cfg(target_arch = "x86_64")]
fn task_avx2<T: Element>(logits: &[T], out: &mut [T], n: usize, iters: usize) {
    #[target_feature(enable = "avx2,fma")]
    unsafe fn inner<T: Element>(logits: &[T], out: &mut [T], n: usize, iters: usize) {
        task_portable(logits, out, n, iters)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(logits, out, n, iters) }
}

/// One task's matrices, LANES at a time.
#[inline(always)]
fn task_portable<T: Element>(logits: &[T], out: &mut [T], n: usize, iters: usize) {
    let nn = n * n;
    let mut flat = vec![0.0f32; LANES * nn];
    let mut group = [[0.0f32; LANES]; MAX_STREAMS * MAX_STREAMS];
    for (src, dst) in logits.chunks(LANES * nn).zip(out.chunks_mut(LANES * nn)) {
        let count = src.len() / nn;
        T::to_f32_slice(src, &mut flat[..src.len()]);
        // Lanes past the last matrix hold zeros: harmless work, never written back.
        for (e, lanes) in group[..nn].iter_mut().enumerate() {
            for (l, v) in lanes.iter_mut().enumerate() {
                *v = if l < count { flat[l * nn + e] } else { 0.0 };
            }
        }
        sinkhorn_group(&mut group[..nn], n, iters);
        for (e, lanes) in group[..nn].iter().enumerate() {
            for (l, &v) in lanes.iter().enumerate().take(count) {
                flat[l * nn + e] = v;
            }
        }
        T::from_f32_slice(&flat[..src.len()], dst);
    }
}

/// LANES matrices at once: `m[i·n + j][l]` is element (i, j) of matrix l.
#[inline(always)]
fn sinkhorn_group(m: &mut [[f32; LANES]], n: usize, iters: usize) {
    let mut max = [f32::NEG_INFINITY; LANES];
    for e in m.iter() {
        for l in 0..LANES {
            max[l] = if e[l] > max[l] { e[l] } else { max[l] };
        }
    }
    for e in m.iter_mut() {
        for l in 0..LANES {
            e[l] = exp_approx(e[l] - max[l]);
        }
    }
    for _ in 0..iters {
        // Columns: sum over i of (i, j), then divide, as torch's x / (x.sum(-2) + eps).
        for j in 0..n {
            let mut sum = [0.0f32; LANES];
            for i in 0..n {
                let e = &m[i * n + j];
                for l in 0..LANES {
                    sum[l] += e[l];
                }
            }
            // One division per column, then n products: the reciprocal differs from a
            // division by at most an ulp, and divisions are the slowest vector op.
            let mut inv = [0.0f32; LANES];
            for l in 0..LANES {
                inv[l] = 1.0 / (sum[l] + SINKHORN_EPS);
            }
            for i in 0..n {
                let e = &mut m[i * n + j];
                for l in 0..LANES {
                    e[l] *= inv[l];
                }
            }
        }
        // Rows.
        for i in 0..n {
            let row = &mut m[i * n..(i + 1) * n];
            let mut sum = [0.0f32; LANES];
            for e in row.iter() {
                for l in 0..LANES {
                    sum[l] += e[l];
                }
            }
            let mut inv = [0.0f32; LANES];
            for l in 0..LANES {
                inv[l] = 1.0 / (sum[l] + SINKHORN_EPS);
            }
            for e in row.iter_mut() {
                for l in 0..LANES {
                    e[l] *= inv[l];
                }
            }
        }
    }
}

/// The same algorithm in float64, one matrix at a time, with libm's exp: the independent
/// reference the fused kernel and torch's composition are both checked against.
pub fn sinkhorn_reference(logits: &[f64], n: usize, iters: usize) -> Vec<f64> {
    let nn = n * n;
    let eps = SINKHORN_EPS as f64;
    let mut out = logits.to_vec();
    for m in out.chunks_mut(nn) {
        let max = m.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        m.iter_mut().for_each(|v| *v = (*v - max).exp());
        for _ in 0..iters {
            for j in 0..n {
                let s: f64 = (0..n).map(|i| m[i * n + j]).sum::<f64>() + eps;
                (0..n).for_each(|i| m[i * n + j] /= s);
            }
            for i in 0..n {
                let s: f64 = m[i * n..(i + 1) * n].iter().sum::<f64>() + eps;
                m[i * n..(i + 1) * n].iter_mut().for_each(|v| *v /= s);
            }
        }
    }
    out
}

/// The largest distance of any row or column sum from 1, over all matrices.
pub fn marginal_error(values: &[f64], n: usize) -> f64 {
    let mut worst = 0.0f64;
    for m in values.chunks(n * n) {
        for k in 0..n {
            let row: f64 = m[k * n..(k + 1) * n].iter().sum();
            let col: f64 = (0..n).map(|i| m[i * n + k]).sum();
            worst = worst.max((row - 1.0).abs()).max((col - 1.0).abs());
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    fn logits(count: usize, nn: usize) -> Vec<f32> {
        // Deterministic values spread over [-0.05, 0.05], like alpha·Linear of the seed.
        (0..count * nn)
            .map(|i| ((i * 7919 % 1000) as f32 / 1000.0 - 0.5) * 0.1)
            .collect()
    }

    #[test]
    fn float32_matches_the_float64_reference_and_is_doubly_stochastic() {
        for n in [1, 2, 3, 4, 5, 8] {
            // 1003 matrices: several tasks, and a last group of fewer than LANES.
            let x = logits(1003, n * n);
            let mut out = vec![0.0f32; x.len()];
            sinkhorn(&x, &mut out, n, 20, 2).unwrap();
            let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let want = sinkhorn_reference(&x64, n, 20);
            let worst = out
                .iter()
                .zip(&want)
                .map(|(&a, &b)| (a as f64 - b).abs())
                .fold(0.0, f64::max);
            assert!(worst < 1e-6, "n={n}: {worst}");
            let got: Vec<f64> = out.iter().map(|&v| v as f64).collect();
            assert!(marginal_error(&got, n) < 1e-3, "n={n}");
        }
    }

    #[test]
    fn large_logits_do_not_overflow_thanks_to_the_max() {
        // Without the max, exp(80 + …) overflows float32 (its largest is e^88.7).
        let x: Vec<f32> = (0..16).map(|i| 80.0 + i as f32 * 1.5).collect();
        let mut out = vec![0.0f32; 16];
        sinkhorn(&x, &mut out, 4, 20, 1).unwrap();
        assert!(out.iter().all(|v| v.is_finite()));
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let want = sinkhorn_reference(&x64, 4, 20);
        for (a, b) in out.iter().zip(&want) {
            assert!((*a as f64 - b).abs() < 1e-5, "{a} {b}");
        }
    }

    #[test]
    fn bfloat16_rounds_once_at_the_end() {
        let x = logits(64, 16);
        let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        let mut out = vec![bf16::ZERO; xb.len()];
        sinkhorn(&xb, &mut out, 4, 20, 2).unwrap();
        let x64: Vec<f64> = xb.iter().map(|v| v.to_f64()).collect();
        let want = sinkhorn_reference(&x64, 4, 20);
        for (a, b) in out.iter().zip(&want) {
            // One bfloat16 rounding of a value near 0.25: at most half an ulp (2^-10).
            assert!((a.to_f64() - b).abs() <= 2f64.powi(-10), "{a} {b}");
        }
    }

    #[test]
    fn shapes_that_are_not_whole_matrices_are_refused() {
        let mut out = vec![0.0f32; 15];
        assert!(sinkhorn(&[0.0f32; 15], &mut out, 4, 20, 1).is_err());
        let mut out = vec![0.0f32; 17 * 17];
        assert!(sinkhorn(&[0.0f32; 17 * 17], &mut out, 17, 20, 1).is_err());
    }
}
