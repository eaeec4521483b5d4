//! Stage 1 fused on the CPU: RMSNorm over n·D and the Linear n·D → n² in one pass over
//! `x_streams`, instead of torch's RMSNorm writing a normalised copy of all of it (as large
//! as the input) for the Linear to read back.
//!
//! Why it is one pass: `Linear(RMSNorm(x))_k = r · Σ_j (W_kj · g_j) · x_j` with
//! `r = 1 / sqrt(mean(x²) + eps)` and g the norm's weight, so the weight is folded into W
//! once, and the sum of squares and the n² dot products are accumulated in the same sweep
//! over x. Four tokens share each load of a weight chunk; float32 throughout, one rounding
//! to the dtype at the end (torch rounds the normalised x and the Linear's output too).

use rayon::prelude::*;

use super::element::Element;
use super::parallel::in_pool;
use super::MhcError;

/// Tokens that share each load of the weight.
const TOKENS: usize = 4;
/// Columns of x converted to float32 at a time (4 KiB per token).
const CHUNK: usize = 1024;
const LANES: usize = 8;

/// The Linear with the norm's weight folded in, and the seed's `alpha · (…) + b_res`.
#[derive(Debug, Clone)]
pub struct FoldedLinear {
    /// (outputs, width), row-major: `W_kj · g_j`.
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
    pub alpha: f32,
    pub eps: f32,
    pub width: usize,
    pub outputs: usize,
}

impl FoldedLinear {
    /// `weight` (outputs × width) of the Linear, `norm_weight` (width) of the RMSNorm.
    pub fn new(
        weight: &[f32],
        norm_weight: &[f32],
        bias: &[f32],
        alpha: f32,
        eps: f32,
    ) -> Result<FoldedLinear, MhcError> {
        let width = norm_weight.len();
        let outputs = bias.len();
        if width == 0 || weight.len() != width * outputs {
            return Err(MhcError::InvalidInput(format!(
                "fused linear: weight of {} values is not {outputs} × {width}",
                weight.len()
            )));
        }
        let weight = weight
            .chunks(width)
            .flat_map(|row| row.iter().zip(norm_weight).map(|(w, g)| w * g))
            .collect();
        Ok(FoldedLinear {
            weight,
            bias: bias.to_vec(),
            alpha,
            eps,
            width,
            outputs,
        })
    }
}

/// `out[t] = alpha · Linear(RMSNorm(x[t])) + bias` for every token t of `x` (tokens × width).
pub fn rmsnorm_linear<T: Element>(
    x: &[T],
    linear: &FoldedLinear,
    out: &mut [T],
    threads: usize,
) -> Result<(), MhcError> {
    let (width, outputs) = (linear.width, linear.outputs);
    if !x.len().is_multiple_of(width) || out.len() != x.len() / width * outputs {
        return Err(MhcError::InvalidInput(format!(
            "fused linear: {} inputs and {} outputs are not tokens of {width} → {outputs}",
            x.len(),
            out.len()
        )));
    }
    let task = fastest_task::<T>();
    in_pool(threads, || {
        out.par_chunks_mut(TOKENS * outputs)
            .zip(x.par_chunks(TOKENS * width))
            .for_each(|(out, x)| task(x, linear, out));
    });
    Ok(())
}

type Task<T> = fn(&[T], &FoldedLinear, &mut [T]);

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
    task_portable::<T, false>
}

#[cfg(target_arch = "x86_64")]
fn task_avx512<T: Element>(x: &[T], linear: &FoldedLinear, out: &mut [T]) {
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn inner<T: Element>(x: &[T], linear: &FoldedLinear, out: &mut [T]) {
        task_portable::<T, true>(x, linear, out)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(x, linear, out) }
}

#[cfg(target_arch = "x86_64")]
fn task_avx2<T: Element>(x: &[T], linear: &FoldedLinear, out: &mut [T]) {
    #[target_feature(enable = "avx2,fma")]
    unsafe fn inner<T: Element>(x: &[T], linear: &FoldedLinear, out: &mut [T]) {
        task_portable::<T, true>(x, linear, out)
    }
    // SAFETY: only chosen by `fastest_task` after detecting the features.
    unsafe { inner(x, linear, out) }
}

/// Up to TOKENS tokens: one sweep over their columns, CHUNK at a time. `FMA`: the products
/// are accumulated with fused multiply-adds (one instruction instead of two; only where the
/// CPU has them, since `mul_add` without hardware FMA is a slow library call).
#[inline(always)]
fn task_portable<T: Element, const FMA: bool>(x: &[T], linear: &FoldedLinear, out: &mut [T]) {
    let (width, outputs) = (linear.width, linear.outputs);
    let tokens = x.len() / width;
    let mut xs = [[0.0f32; CHUNK]; TOKENS];
    let mut squares = [0.0f32; TOKENS];
    let mut acc = vec![[0.0f32; TOKENS]; outputs];
    let mut start = 0;
    while start < width {
        let len = CHUNK.min(width - start);
        for (t, xs) in xs.iter_mut().enumerate() {
            if t < tokens {
                let row = &x[t * width + start..t * width + start + len];
                T::to_f32_slice(row, &mut xs[..len]);
                squares[t] += dot(&xs[..len], &xs[..len]);
            } else {
                xs[..len].fill(0.0);
            }
        }
        for (k, acc) in acc.iter_mut().enumerate() {
            let w = &linear.weight[k * width + start..k * width + start + len];
            let d = dot4::<FMA>(w, &xs, len);
            for t in 0..TOKENS {
                acc[t] += d[t];
            }
        }
        start += len;
    }
    let mut row = vec![0.0f32; outputs];
    for t in 0..tokens {
        let r = 1.0 / (squares[t] / width as f32 + linear.eps).sqrt();
        for (k, v) in row.iter_mut().enumerate() {
            *v = linear.alpha * (r * acc[k][t]) + linear.bias[k];
        }
        T::from_f32_slice(&row, &mut out[t * outputs..(t + 1) * outputs]);
    }
}

/// Σ a·b in LANES independent accumulators (a single one would not vectorise).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let split = a.len() / LANES * LANES;
    for (a, b) in a[..split]
        .chunks_exact(LANES)
        .zip(b[..split].chunks_exact(LANES))
    {
        for l in 0..LANES {
            acc[l] += a[l] * b[l];
        }
    }
    let tail: f32 = a[split..].iter().zip(&b[split..]).map(|(a, b)| a * b).sum();
    acc.iter().sum::<f32>() + tail
}

/// One weight chunk against TOKENS tokens' chunks: each weight load feeds four products.
#[inline(always)]
fn dot4<const FMA: bool>(w: &[f32], xs: &[[f32; CHUNK]; TOKENS], len: usize) -> [f32; TOKENS] {
    let mut acc = [[0.0f32; LANES]; TOKENS];
    let split = len / LANES * LANES;
    let mut c = 0;
    while c < split {
        let w = &w[c..c + LANES];
        for t in 0..TOKENS {
            let x = &xs[t][c..c + LANES];
            for l in 0..LANES {
                acc[t][l] = if FMA {
                    w[l].mul_add(x[l], acc[t][l])
                } else {
                    acc[t][l] + w[l] * x[l]
                };
            }
        }
        c += LANES;
    }
    let mut sums = [0.0f32; TOKENS];
    for t in 0..TOKENS {
        sums[t] = acc[t].iter().sum::<f32>() + (split..len).map(|c| w[c] * xs[t][c]).sum::<f32>();
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unfused definition in float64.
    fn reference(x: &[f32], w: &[f32], g: &[f32], bias: &[f32], alpha: f64, eps: f64) -> Vec<f64> {
        let width = g.len();
        let mut out = Vec::new();
        for row in x.chunks(width) {
            let ms: f64 = row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / width as f64;
            let r = 1.0 / (ms + eps).sqrt();
            let y: Vec<f64> = row
                .iter()
                .zip(g)
                .map(|(&v, &g)| v as f64 * r * g as f64)
                .collect();
            for (k, b) in bias.iter().enumerate() {
                let dot: f64 = y
                    .iter()
                    .zip(&w[k * width..])
                    .map(|(y, &w)| y * w as f64)
                    .sum();
                out.push(alpha * dot + *b as f64);
            }
        }
        out
    }

    #[test]
    fn matches_the_unfused_definition_for_odd_sizes() {
        // width 2·1500 = 3000: two full chunks, a partial one, and a lane tail; 7 tokens: a
        // block of four and one of three.
        let (tokens, width, outputs) = (7, 3000, 4);
        let x: Vec<f32> = (0..tokens * width)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
            .collect();
        let w: Vec<f32> = (0..outputs * width)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 300.0)
            .collect();
        let g: Vec<f32> = (0..width).map(|i| 0.5 + (i % 3) as f32 * 0.25).collect();
        let bias = [0.1f32, -0.2, 0.0, 0.3];
        let linear = FoldedLinear::new(&w, &g, &bias, 0.01, 1e-5).unwrap();
        let mut out = vec![0.0f32; tokens * outputs];
        rmsnorm_linear(&x, &linear, &mut out, 2).unwrap();
        let want = reference(&x, &w, &g, &bias, 0.01, 1e-5);
        for (a, b) in out.iter().zip(&want) {
            assert!((*a as f64 - b).abs() < 1e-5 * b.abs().max(1.0), "{a} {b}");
        }
    }

    #[test]
    fn mismatched_sizes_are_refused() {
        assert!(FoldedLinear::new(&[0.0; 5], &[1.0; 3], &[0.0; 2], 1.0, 0.0).is_err());
        let linear = FoldedLinear::new(&[0.0; 6], &[1.0; 3], &[0.0; 2], 1.0, 0.0).unwrap();
        let mut out = vec![0.0f32; 3];
        assert!(rmsnorm_linear(&[0.0f32; 6], &linear, &mut out, 1).is_err());
    }
}
