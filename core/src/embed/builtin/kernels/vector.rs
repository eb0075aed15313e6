//! The encoder's element-wise steps (GELU, the attention soft-max, layer normalisation,
//! residual additions), written as plain loops over 16-lane arrays with a branch-free
//! exponential so that the compiler vectorises them, and compiled three times: for
//! AVX-512, for AVX2 with FMA, and for the baseline (SSE2 on x86-64), the variant chosen
//! by [`Level`] at run time.
//!
//! The exponential is `2ⁿ · p(r)` with `n = round(x · log₂e)`, `r = x − n · ln 2` and `p`
//! the degree-6 Taylor polynomial of `eʳ` on `|r| ≤ ln 2 / 2` (relative error below
//! 2 · 10⁻⁷ before `f32` rounding); inputs are clamped to `[−87, 88]`. The error function
//! is Abramowitz and Stegun's 7.1.26 (absolute error below 1.5 · 10⁻⁷ in exact
//! arithmetic), as before this module.

/// Which compilation of the element-wise loops runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// AVX-512F (with AVX2 and FMA).
    Avx512,
    /// AVX2 and FMA.
    Avx2,
    /// The target's baseline (SSE2 on x86-64).
    Baseline,
}

impl Level {
    /// Whether this CPU runs `self` (detected at run time, cached by `std`).
    pub(crate) fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
            match self {
                Level::Avx512 => avx2 && is_x86_feature_detected!("avx512f"),
                Level::Avx2 => avx2,
                Level::Baseline => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Level::Baseline
        }
    }
}

/// Defines `pub(crate) fn $name(level: Level, args…)` running `$body` compiled for the
/// given level (which the caller checked with [`Level::supported`]).
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        pub(crate) fn $name(level: Level, $($arg: $ty),*) {
            #[inline(always)]
            fn inner($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx2,fma")]
            fn avx512($($arg: $ty),*) {
                inner($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2($($arg: $ty),*) {
                inner($($arg),*)
            }
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: the caller checked `Level::Avx512.supported()`; the function
                // only compiles safe code for those features.
                Level::Avx512 => unsafe { avx512($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as above, for AVX2 and FMA.
                Level::Avx2 => unsafe { avx2($($arg),*) },
                _ => inner($($arg),*),
            }
        }
    };
}

const LANES: usize = 16;

/// `eˣ` as the module documentation describes.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2²³: adding it rounds to an integer, kept in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * LOG2_E + ROUND;
    let n = shifted - ROUND;
    let n_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((n_int + 127) << 23) as u32)
}

/// The error function (Abramowitz and Stegun, formula 7.1.26, in `f32`).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let r = 1.0 - poly * exp(-z * z);
    r.copysign(x)
}

/// The sum of `x`, in 16 lanes.
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

/// The sum of `(x − mean)²`, in 16 lanes.
#[inline(always)]
fn squares(x: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += (v - mean) * (v - mean);
        }
    }
    acc.iter().sum::<f32>() + rest.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>()
}

/// The largest value of `x` (non-empty, no NaN), in 16 lanes.
#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a = if *v > *a { *v } else { *a };
        }
    }
    acc.iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// The exact (erf-based) GELU of BERT of one value, for loops that vectorise it.
#[inline(always)]
pub(crate) fn gelu_one(v: f32) -> f32 {
    0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2))
}

multiversion! {
    /// The exact (erf-based) GELU of BERT, in place.
    fn gelu(x: &mut [f32]) {
        for v in x.iter_mut() {
            *v = gelu_one(*v);
        }
    }
}

multiversion! {
    /// The soft-max of each `width`-long row of `x`, in place (each row's maximum is
    /// subtracted first).
    fn softmax_rows(x: &mut [f32], width: usize) {
        for row in x.chunks_exact_mut(width) {
            let m = max(row);
            for v in row.iter_mut() {
                *v = exp(*v - m);
            }
            let inv = 1.0 / sum(row);
            for v in row.iter_mut() {
                *v *= inv;
            }
        }
    }
}

multiversion! {
    /// Layer normalisation of each `width`-long row of `x`, in place: `(v − mean) /
    /// √(variance + eps) · w + b`.
    fn layer_norm(x: &mut [f32], width: usize, w: &[f32], b: &[f32], eps: f32) {
        for row in x.chunks_exact_mut(width) {
            let mean = sum(row) / width as f32;
            let var = squares(row, mean) / width as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, g), c) in row.iter_mut().zip(w).zip(b) {
                *v = (*v - mean) * inv * g + c;
            }
        }
    }
}

multiversion! {
    /// `x += y`, element by element.
    fn add_assign(x: &mut [f32], y: &[f32]) {
        for (a, b) in x.iter_mut().zip(y) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVELS: [Level; 3] = [Level::Avx512, Level::Avx2, Level::Baseline];

    #[test]
    fn exp_is_within_three_ulp_of_std() {
        for i in -8700..=8800 {
            let x = i as f32 / 100.0;
            let (got, want) = (exp(x), x.exp());
            assert!(
                (got - want).abs() <= 3.0 * f32::EPSILON * want,
                "exp({x}) = {got}, std says {want}"
            );
        }
    }

    #[test]
    fn erf_matches_reference_values() {
        // Values from the standard table (Abramowitz & Stegun, table 7.1).
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (-1.0, -0.842_700_8),
        ] {
            assert!(
                (erf(x) - want).abs() < 5e-7,
                "erf({x}) = {} want {want}",
                erf(x)
            );
        }
    }

    /// Every compilation gives the same values as the plain formulas (in `f64`) to a
    /// stated tolerance, on lengths that leave remainders.
    #[test]
    fn each_level_matches_plain_formulas() {
        let xs: Vec<f32> = (0..397)
            .map(|i| ((i * 37) % 211) as f32 / 21.0 - 5.0)
            .collect();
        for level in LEVELS.into_iter().filter(|l| l.supported()) {
            let mut g = xs.clone();
            gelu(level, &mut g);
            for (x, v) in xs.iter().zip(&g) {
                let x = f64::from(*x);
                let want = 0.5 * x * (1.0 + libm_erf(x / std::f64::consts::SQRT_2));
                assert!(
                    (f64::from(*v) - want).abs() < 2e-6,
                    "{level:?} gelu({x}) = {v}"
                );
            }
            let width = 397;
            let mut s = xs.clone();
            softmax_rows(level, &mut s, width);
            let m = xs.iter().copied().fold(f32::MIN, f32::max);
            let total: f64 = xs.iter().map(|x| f64::from(x - m).exp()).sum();
            for (x, v) in xs.iter().zip(&s) {
                let want = f64::from(x - m).exp() / total;
                assert!(
                    (f64::from(*v) - want).abs() < 1e-6 * want.max(1e-3),
                    "{level:?}"
                );
            }
            let w: Vec<f32> = (0..width).map(|i| 1.0 + i as f32 / 1000.0).collect();
            let b: Vec<f32> = (0..width).map(|i| i as f32 / 500.0).collect();
            let mut n = xs.clone();
            layer_norm(level, &mut n, width, &w, &b, 1e-12);
            let mean = xs.iter().map(|&v| f64::from(v)).sum::<f64>() / width as f64;
            let var = xs
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / width as f64;
            for (i, (x, v)) in xs.iter().zip(&n).enumerate() {
                let want = (f64::from(*x) - mean) / var.sqrt() * f64::from(w[i]) + f64::from(b[i]);
                assert!(
                    (f64::from(*v) - want).abs() < 1e-5,
                    "{level:?} layer norm {i}"
                );
            }
            let mut a = xs.clone();
            add_assign(level, &mut a, &xs);
            assert!(a.iter().zip(&xs).all(|(a, x)| *a == 2.0 * x));
        }
    }

    /// `erf` in `f64` by its Taylor series (converges for the |x| ≤ 4 used here).
    fn libm_erf(x: f64) -> f64 {
        let mut term = x;
        let mut total = x;
        for n in 1..200 {
            term *= -x * x / f64::from(n);
            total += term / f64::from(2 * n + 1);
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }
}
