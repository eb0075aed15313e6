//! The few-row kernel over Q4_0 weights (AVX2 and FMA): each weight row's blocks are
//! read once, expanded 8 weights at a time in registers, and dotted with up to 8 input
//! rows held in L1 cache by 8-lane fused multiply-adds. Memory traffic is the 4-bit
//! matrix (12 MB for the whole encoder), which is what bounds a query's forward pass:
//! an 8-token query takes 6 ms instead of 22.5 ms through `matrixmultiply`, which packs
//! all 85 MB of `f32` weights on every call. The arithmetic is `f32` throughout, so the
//! result equals the `f32` product up to the order of the additions.

use super::Matrix;
use crate::embed::builtin::weights::Q4_BLOCK;

/// Computes [`super::linear`] when the CPU supports the kernel (x86-64 with AVX2 and
/// FMA, detected at run time) and `n_in` is a multiple of [`Q4_BLOCK`]; returns `false`,
/// having written nothing, otherwise.
pub(super) fn linear(
    x: &[f32],
    rows: usize,
    n_in: usize,
    w: &Matrix,
    b: &[f32],
    n_out: usize,
    y: &mut [f32],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if n_in.is_multiple_of(Q4_BLOCK) && supported() {
            let mut start = 0;
            while start < rows {
                let g = (rows - start).min(8);
                let xs = &x[start * n_in..(start + g) * n_in];
                let ys = &mut y[start * n_out..(start + g) * n_out];
                // SAFETY: AVX2 and FMA were detected above; the slices hold `g` rows.
                unsafe {
                    match g {
                        8 => x86::rows::<8>(xs, n_in, w, b, n_out, ys),
                        7 => x86::rows::<7>(xs, n_in, w, b, n_out, ys),
                        6 => x86::rows::<6>(xs, n_in, w, b, n_out, ys),
                        5 => x86::rows::<5>(xs, n_in, w, b, n_out, ys),
                        4 => x86::rows::<4>(xs, n_in, w, b, n_out, ys),
                        3 => x86::rows::<3>(xs, n_in, w, b, n_out, ys),
                        2 => x86::rows::<2>(xs, n_in, w, b, n_out, ys),
                        _ => x86::rows::<1>(xs, n_in, w, b, n_out, ys),
                    }
                }
                start += g;
            }
            return true;
        }
    }
    let _ = (x, rows, n_in, w, b, n_out, y);
    false
}

/// Whether [`linear`] runs on this CPU (x86-64 with AVX2 and FMA, detected at run time
/// and cached by `std`).
pub(super) fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Matrix, Q4_BLOCK};

    /// `G` rows of `x` (`[G][n_in]`) times `wᵀ` plus `b` into `y` (`[G][n_out]`).
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA. (Shapes are asserted.)
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows<const G: usize>(
        x: &[f32],
        n_in: usize,
        w: &Matrix,
        b: &[f32],
        n_out: usize,
        y: &mut [f32],
    ) {
        let per_row = n_in / Q4_BLOCK;
        assert!(
            n_in.is_multiple_of(Q4_BLOCK)
                && x.len() >= G * n_in
                && w.scales.len() >= n_out * per_row
                && w.nibbles.len() >= n_out * per_row * 16
                && b.len() >= n_out
                && y.len() >= G * n_out
        );
        let xp = x.as_ptr();
        let low = _mm_set1_epi8(0x0f);
        let eight = _mm256_set1_epi32(8);
        for o in 0..n_out {
            let mut acc = [_mm256_setzero_ps(); G];
            for blk in 0..per_row {
                let i = o * per_row + blk;
                let d = _mm256_set1_ps(w.scales[i]);
                // SAFETY: block `i` is inside `nibbles` and `k + 8 <= n_in` for each
                // part, so the loads stay inside the asserted lengths.
                unsafe {
                    let q = _mm_loadu_si128(w.nibbles.as_ptr().add(i * 16).cast());
                    let lo = _mm_and_si128(q, low);
                    let hi = _mm_and_si128(_mm_srli_epi16(q, 4), low);
                    // Weights 0..16 are the low nibbles, 16..32 the high ones.
                    let parts = [lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)];
                    for (p, part) in parts.into_iter().enumerate() {
                        let ints = _mm256_sub_epi32(_mm256_cvtepu8_epi32(part), eight);
                        let wv = _mm256_mul_ps(_mm256_cvtepi32_ps(ints), d);
                        let k = blk * Q4_BLOCK + p * 8;
                        for (j, a) in acc.iter_mut().enumerate() {
                            *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xp.add(j * n_in + k)), *a);
                        }
                    }
                }
            }
            for (j, a) in acc.iter().enumerate() {
                y[j * n_out + o] = hsum(*a) + b[o];
            }
        }
    }

    /// The sum of the 8 lanes.
    #[target_feature(enable = "avx2,fma")]
    fn hsum(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_movehdup_ps(s));
        _mm_cvtss_f32(s)
    }
}
