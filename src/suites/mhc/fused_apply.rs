//! Stage 3 fused on the CPU: `out[b,t] = H[b,t] (n×n) · x[b,t] (n×D)` as one streaming pass
//! over x, instead of a batched GEMM of B·T tiny n×n by n×D products. Each token's n rows
//! are read once, a chunk of columns at a time, and its n output rows written once; the n×n
//! weights stay in registers. Float32 inside, one rounding to the dtype.

use rayon::prelude::*;

use super::element::Element;
use super::parallel::in_pool;
use super::MhcError;
use crate::kernels::mhc_sinkhorn::MAX_STREAMS;

/// Columns per chunk (n rows of them in float32: 32 KiB at n = 4... and 8 in flight).
const CHUNK: usize = 512;
/// Tokens per parallel task.
const TASK_TOKENS: usize = 16;

/// `out = mix @ x` per token: `mix` (tokens, n, n), `x` and `out` (tokens, n, dim).
pub fn apply<T: Element>(
    mix: &[T],
    x: &[T],
    out: &mut [T],
    n: usize,
    dim: usize,
    threads: usize,
) -> Result<(), MhcError> {
    let (nn, nd) = (n * n, n * dim);
    if n == 0
        || n > MAX_STREAMS
        || dim == 0
        || !x.len().is_multiple_of(nd)
        || out.len() != x.len()
        || mix.len() != x.len() / nd * nn
    {
        return Err(MhcError::InvalidInput(format!(
            "fused apply: {} mixing values, {} inputs and {} outputs are not tokens of {n}×{n} and {n}×{dim}",
            mix.len(),
            x.len(),
            out.len()
        )));
    }
    let task = fastest_task::<T>();
    in_pool(threads, || {
        out.par_chunks_mut(TASK_TOKENS * nd)
            .zip(x.par_chunks(TASK_TOKENS * nd))
            .zip(mix.par_chunks(TASK_TOKENS * nn))
            .for_each(|((out, x), mix)| task(mix, x, out, n, dim));
    });
    Ok(())
}

type Task<T> = fn(&[T], &[T], &mut [T], usize, usize);

fn fastest_task<T: Element>() -> Task<T> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return task_avx512::<T>;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return task_avx2::<T>;
        }
    }
    task_portable::<T>
}

#[cfg(target_arch = "x86_64")]
fn task_avx512<T: Element>(mix: &[T], x: &[T], out: &mut [T], n: usize, dim: usize) {
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn inner<T: Element>(mix: &[T], x: &[T], out: &mut [T], n: usize, dim: usize) {
        task_portable(mix, x, out, n, dim)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(mix, x, out, n, dim) }
}

#[cfg(target_arch = "x86_64")]
fn task_avx2<T: Element>(mix: &[T], x: &[T], out: &mut [T], n: usize, dim: usize) {
    #[target_feature(enable = "avx2,fma")]
    unsafe fn inner<T: Element>(mix: &[T], x: &[T], out: &mut [T], n: usize, dim: usize) {
        task_portable(mix, x, out, n, dim)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(mix, x, out, n, dim) }
}

#[inline(always)]
fn task_portable<T: Element>(mix: &[T], x: &[T], out: &mut [T], n: usize, dim: usize) {
    let (nn, nd) = (n * n, n * dim);
    let mut h = [0.0f32; MAX_STREAMS * MAX_STREAMS];
    let mut xs = vec![0.0f32; n * CHUNK];
    let mut os = vec![0.0f32; CHUNK];
    for ((mix, x), out) in mix.chunks(nn).zip(x.chunks(nd)).zip(out.chunks_mut(nd)) {
        T::to_f32_slice(mix, &mut h[..nn]);
        let mut start = 0;
        while start < dim {
            let len = CHUNK.min(dim - start);
            for j in 0..n {
                T::to_f32_slice(
                    &x[j * dim + start..j * dim + start + len],
                    &mut xs[j * CHUNK..j * CHUNK + len],
                );
            }
            for i in 0..n {
                let o = &mut os[..len];
                o.fill(0.0);
                for j in 0..n {
                    let w = h[i * n + j];
                    for (o, &v) in o.iter_mut().zip(&xs[j * CHUNK..j * CHUNK + len]) {
                        *o += w * v;
                    }
                }
                T::from_f32_slice(o, &mut out[i * dim + start..i * dim + start + len]);
            }
            start += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_gets_its_own_matrix_times_its_rows() {
        // 37 tokens (tasks of 16 and a partial one), n = 3, dim = 1100 (two chunks and a bit).
        let (tokens, n, dim) = (37, 3, 1100);
        let x: Vec<f32> = (0..tokens * n * dim)
            .map(|i| ((i * 31 % 97) as f32 - 48.0) / 16.0)
            .collect();
        let mix: Vec<f32> = (0..tokens * n * n)
            .map(|i| ((i * 7 % 11) as f32) / 10.0)
            .collect();
        let mut out = vec![0.0f32; x.len()];
        apply(&mix, &x, &mut out, n, dim, 2).unwrap();
        for t in [0, 15, 16, 36] {
            for i in 0..n {
                for c in [0, 511, 512, 1099] {
                    let want: f64 = (0..n)
                        .map(|j| {
                            mix[t * n * n + i * n + j] as f64 * x[t * n * dim + j * dim + c] as f64
                        })
                        .sum();
                    let got = out[t * n * dim + i * dim + c] as f64;
                    assert!(
                        (got - want).abs() < 1e-5 * want.abs().max(1.0),
                        "t={t} i={i} c={c}"
                    );
                }
            }
        }
    }

    #[test]
    fn mismatched_sizes_are_refused() {
        let mut out = vec![0.0f32; 8];
        assert!(apply(&[0.0f32; 3], &[0.0f32; 8], &mut out, 2, 4, 1).is_err());
    }
}
