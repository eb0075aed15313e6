//! Each kernel path against an `f64` product over the same 4-bit weights, for row counts
//! 1 to 17 (the few-row kernel takes 1..=16) and 31, 32, 33, 48, 64, 70 (partial and whole
//! 32-row blocks of the `bf16` kernel), with the tolerance each path states. The `bf16`
//! kernel's own tests run with each way of running its products this CPU has (AMX tiles,
//! AVX-512 vectors); one the CPU lists the features of and that is not supported fails.

use super::*;

/// Pseudo-random Q4_0 blocks of an `n_out × n_in` matrix, scales of both signs and of
/// several magnitudes (0.1, −0.1, 1, about 0.001).
fn blocks(n_out: usize, n_in: usize, next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let mut blocks = Vec::new();
    for _ in 0..n_out * n_in / Q4_BLOCK {
        let d = [0x2e66u16, 0xae66, 0x3c00, 0x1400][(next() % 4) as usize];
        blocks.extend_from_slice(&d.to_le_bytes());
        blocks.extend((0..16).map(|_| next() as u8));
    }
    blocks
}

fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Whether `/proc/cpuinfo` lists every one of `features` (so that a path not being
/// supported there is a failure, not a skip).
fn cpuinfo_has(features: &[&str]) -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    features
        .iter()
        .all(|f| flags.split_whitespace().any(|w| w == *f))
}

/// What the AMX path needs, as `/proc/cpuinfo` names it.
const AMX_FLAGS: [&str; 4] = ["amx_tile", "amx_bf16", "avx512_bf16", "avx512f"];

/// What the AVX-512 path needs, as `/proc/cpuinfo` names it.
const AVX512_FLAGS: [&str; 4] = ["avx512_bf16", "avx512f", "avx512bw", "avx512vl"];

/// A kernel under test: its name, the relative tolerance it states (as a fraction of
/// `Σ|xᵢ·wᵢ| + |b|` of each output) and how to run it (`false`: it declined).
type Kernel = (
    &'static str,
    f64,
    fn(&[f32], usize, usize, &Matrix, &[f32], usize, &mut [f32]) -> bool,
);

/// `f32` products differ from the `f64` one only by rounding the sums: 1e-5 is far above
/// that for 384 terms.
const F32_TOLERANCE: f64 = 1e-5;

/// The AMX kernel rounds both factors to `bf16` (at most 2⁻⁸ relative each), then sums
/// in `f32`; as the rounding errors' signs vary, 2⁻⁸ of `Σ|xᵢ·wᵢ|` bounds the result.
const BF16_TOLERANCE: f64 = 1.0 / 256.0 + F32_TOLERANCE;

/// The ways of running the `bf16` kernel's products this machine has (its tests run
/// with each, and return early where there is none); fails when `/proc/cpuinfo` lists
/// what one needs and it is not supported.
fn bf16_products() -> Vec<amx::Products> {
    assert!(
        KernelPath::Amx.is_supported() || !cpuinfo_has(&AMX_FLAGS),
        "the CPU lists AMX but the AMX path is not supported"
    );
    assert!(
        KernelPath::Avx512.is_supported() || !cpuinfo_has(&AVX512_FLAGS),
        "the CPU lists AVX-512 BF16 but the AVX-512 path is not supported"
    );
    [amx::Products::Tiles, amx::Products::Vectors]
        .into_iter()
        .filter(|p| p.supported())
        .collect()
}

#[test]
fn each_path_matches_the_f64_product_for_1_to_70_rows() {
    // Fails when the CPU lists AMX or AVX-512 BF16 and that path is not supported.
    bf16_products();
    assert!(
        KernelPath::Avx2.is_supported(),
        "this test needs an x86-64 CPU with AVX2 and FMA"
    );
    let kernels: [(KernelPath, Kernel); 8] = [
        (
            KernelPath::Amx,
            (
                "amx tiles",
                BF16_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    amx::linear(
                        amx::Products::Tiles,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    )
                },
            ),
        ),
        (
            KernelPath::Avx512,
            (
                "avx512 vectors",
                BF16_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    amx::linear(
                        amx::Products::Vectors,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    )
                },
            ),
        ),
        (
            KernelPath::Avx2,
            (
                "avx2 4-bit",
                F32_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| avx2::linear(x, rows, n_in, w, b, n_out, y),
            ),
        ),
        (
            KernelPath::Portable,
            (
                "matrixmultiply",
                F32_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    linear_packed(x, rows, n_in, w, b, n_out, y);
                    true
                },
            ),
        ),
        // What the encoder calls on each path (few rows: the 4-bit kernel except on the
        // portable path).
        (
            KernelPath::Amx,
            (
                "amx path",
                BF16_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    linear(
                        KernelPath::Amx,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    );
                    true
                },
            ),
        ),
        (
            KernelPath::Avx512,
            (
                "avx512 path",
                BF16_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    linear(
                        KernelPath::Avx512,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    );
                    true
                },
            ),
        ),
        (
            KernelPath::Avx2,
            (
                "avx2 path",
                F32_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    linear(
                        KernelPath::Avx2,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    );
                    true
                },
            ),
        ),
        (
            KernelPath::Portable,
            (
                "portable path",
                F32_TOLERANCE,
                |x, rows, n_in, w, b, n_out, y| {
                    linear(
                        KernelPath::Portable,
                        x,
                        rows,
                        n_in,
                        w,
                        b,
                        n_out,
                        y,
                        Activation::None,
                    );
                    true
                },
            ),
        ),
    ];
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for (n_in, n_out) in [(96, 64), (384, 96)] {
        let q4 = blocks(n_out, n_in, &mut next);
        let mut weights = vec![0f32; n_out * n_in];
        dequantise_q4(&q4, &mut weights);
        let bias: Vec<f32> = (0..n_out).map(|i| i as f32 * 0.25 - 1.0).collect();
        let matrices: Vec<(KernelPath, Matrix)> = KernelPath::ALL
            .into_iter()
            .filter(|p| p.is_supported())
            .map(|p| (p, Matrix::from_q4(&q4, n_out, n_in, p)))
            .collect();
        let mut worst = vec![0f64; kernels.len()];
        for rows in (1..=17).chain([31, 32, 33, 48, 64, 70]) {
            let x: Vec<f32> = (0..rows * n_in)
                .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
                .collect();
            let mut want = vec![0f64; rows * n_out];
            let mut scale = vec![0f64; rows * n_out];
            for r in 0..rows {
                for o in 0..n_out {
                    let (mut sum, mut abs) = (f64::from(bias[o]), f64::from(bias[o]).abs());
                    for i in 0..n_in {
                        let t = f64::from(x[r * n_in + i]) * f64::from(weights[o * n_in + i]);
                        sum += t;
                        abs += t.abs();
                    }
                    want[r * n_out + o] = sum;
                    scale[r * n_out + o] = abs;
                }
            }
            for (k, (path, (name, tolerance, run))) in kernels.iter().enumerate() {
                let Some((_, w)) = matrices.iter().find(|(p, _)| p == path) else {
                    continue;
                };
                let mut y = vec![f32::NAN; rows * n_out];
                if !run(&x, rows, n_in, w, &bias, n_out, &mut y) {
                    // Only the 4-bit kernel declines, and only past its row limit.
                    assert!(
                        *name == "avx2 4-bit" && rows > FEW_ROWS,
                        "{name} declined {rows} rows"
                    );
                    continue;
                }
                for i in 0..rows * n_out {
                    let err = (f64::from(y[i]) - want[i]).abs() / scale[i];
                    worst[k] = worst[k].max(err);
                    assert!(
                        err <= *tolerance,
                        "{name}, {n_out}×{n_in}, {rows} rows, value {i}: {} vs {} ({err:e} of Σ|x·w|)",
                        y[i],
                        want[i]
                    );
                }
            }
        }
        for (k, (_, (name, _, _))) in kernels.iter().enumerate() {
            eprintln!(
                "{name} {n_out}×{n_in}: worst error {:e} of Σ|x·w|",
                worst[k]
            );
        }
    }
}

/// The `bf16` kernel's GELU, applied as it writes each block, equals GELU applied after.
#[test]
fn amx_gelu_epilogue_matches_gelu_after() {
    for path in [KernelPath::Amx, KernelPath::Avx512] {
        if path
            .products()
            .is_some_and(|p| bf16_products().contains(&p))
        {
            gelu_epilogue_matches_gelu_after(path);
        }
    }
}

fn gelu_epilogue_matches_gelu_after(path: KernelPath) {
    let mut next = xorshift(7);
    let (n_in, n_out, rows) = (64, 96, 40);
    let q4 = blocks(n_out, n_in, &mut next);
    let w = Matrix::from_q4(&q4, n_out, n_in, path);
    let bias = vec![0.5f32; n_out];
    let x: Vec<f32> = (0..rows * n_in)
        .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let mut fused = vec![0f32; rows * n_out];
    let mut after = vec![0f32; rows * n_out];
    linear(
        path,
        &x,
        rows,
        n_in,
        &w,
        &bias,
        n_out,
        &mut fused,
        Activation::Gelu,
    );
    linear(
        path,
        &x,
        rows,
        n_in,
        &w,
        &bias,
        n_out,
        &mut after,
        Activation::None,
    );
    vector::gelu(vector::Level::Baseline, &mut after);
    for (a, b) in fused.iter().zip(&after) {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn paths_parse_from_their_names() {
    for path in KernelPath::ALL {
        assert_eq!(
            KernelPath::ALL.iter().find(|p| p.name() == path.name()),
            Some(&path)
        );
        assert_eq!(path.to_string(), path.name());
    }
    assert!(KernelPath::Portable.is_supported());
    assert!(KernelPath::best().is_supported());
    assert_ne!(
        KernelPath::best(),
        KernelPath::Avx512,
        "chosen by name only"
    );
}

#[test]
fn bf16_rounds_to_nearest_even() {
    assert_eq!(amx::pack(&[1.0; 32 * 32], 32, 32)[0], 0x3f80);
    // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: ties go to the even 1.
    let w: Vec<f32> = [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, -2.5]
        .into_iter()
        .cycle()
        .take(32 * 32)
        .collect();
    let tiles = amx::pack(&w, 32, 32);
    // Tile row 0 holds, for output 0, inputs 0 and 1.
    assert_eq!(&tiles[..2], &[0x3f80, 0x3f82]);
    // Output 1 starts at input 32, which is 32 mod 3 = 2: -2.5.
    assert_eq!(tiles[2], 0xc020);
}

/// The vectorised key and value tiles of every head against the layout written element
/// by element.
#[test]
fn amx_key_value_tiles_match_their_layout() {
    if bf16_products().is_empty() {
        return;
    }
    let (hidden, heads, padded) = (384, 12, 96);
    let width = 3 * hidden;
    let slices = padded / 32;
    let mut next = xorshift(5);
    let qkv: Vec<u16> = (0..padded * width).map(|_| next() as u16).collect();
    for head in 0..heads {
        let mut keys = vec![0u16; padded * 32];
        let mut values = vec![0u16; padded * 32];
        // SAFETY: `is_supported` checked AVX-512F and AVX-512BW.
        unsafe { amx::key_value_tiles(&qkv, width, hidden, head, padded, &mut keys, &mut values) };
        for key in 0..padded {
            for d in 0..32 {
                let k = qkv[key * width + hidden + head * 32 + d];
                let v = qkv[key * width + 2 * hidden + head * 32 + d];
                assert_eq!(keys[key / 16 * 512 + d / 2 * 32 + key % 16 * 2 + d % 2], k);
                let at = (d / 16 * slices + key / 32) * 512 + key % 32 / 2 * 32;
                assert_eq!(
                    values[at + d % 16 * 2 + key % 2],
                    v,
                    "head {head} key {key} d {d}"
                );
            }
        }
    }
}

/// The soft-max numerators of an attention row against `exp` in `f64`: within the
/// `bf16` rounding (2⁻⁸ relative) plus the polynomial's 3e-6, zero past `len`, and the
/// returned `1 / Σ` to 1e-5 relative, for lengths that leave partial 16-lane blocks.
#[test]
fn amx_softmax_numerators_match_exp() {
    if bf16_products().is_empty() {
        return;
    }
    let mut next = xorshift(3);
    let scale = 1.0 / 32f32.sqrt();
    for (len, padded) in [(1, 32), (15, 32), (16, 32), (17, 32), (32, 32), (100, 128)] {
        let scores: Vec<f32> = (0..padded)
            .map(|j| {
                if j < len {
                    (next() % 40001) as f32 / 1000.0 - 20.0
                } else {
                    1e30
                }
            })
            .collect();
        let mut probs = vec![0xffffu16; padded];
        // SAFETY: `is_supported` checked AVX-512F and AVX-512 BF16.
        let inv = unsafe { amx::softmax_numerators(&scores, len, scale, &mut probs) };
        let top = scores[..len].iter().copied().fold(f32::MIN, f32::max);
        let want: Vec<f64> = scores[..len]
            .iter()
            .map(|&s| (f64::from(s - top) * f64::from(scale)).exp())
            .collect();
        for (j, p) in probs.iter().enumerate() {
            let got = f64::from(f32::from_bits(u32::from(*p) << 16));
            if j < len {
                assert!(
                    (got - want[j]).abs() <= want[j] * (2f64.powi(-8) + 3e-6),
                    "len {len}, column {j}: {got} vs {}",
                    want[j]
                );
            } else {
                assert_eq!(*p, 0, "len {len}, padding column {j}");
            }
        }
        let total: f64 = want.iter().sum();
        assert!(
            (f64::from(inv) * total - 1.0).abs() < 1e-5,
            "len {len}: 1/sum {inv} vs {}",
            1.0 / total
        );
    }
}

/// The soft-max's polynomial coefficients are `ln ᵏ2 / k!`.
#[test]
fn exp2_taylor_coefficients_are_ln2_powers_over_factorials() {
    for (i, c) in amx::EXP2_TAYLOR.iter().enumerate() {
        let k = 5 - i as i32;
        let factorial: f64 = (1..=k).map(f64::from).product();
        let want = std::f64::consts::LN_2.powi(k) / factorial;
        assert!(
            (f64::from(*c) - want).abs() <= want * 1e-7,
            "k = {k}: {c} vs {want}"
        );
    }
}

/// AMX attention against the `f32` attention (`matrixmultiply`), for lengths that leave
/// partial and whole 32-row blocks. Values are in [−1, 1], so every context value (a
/// weighted mean of values) is too: the stated tolerance is 1e-2 absolute, from the
/// `bf16` rounding of queries, keys, values and probabilities.
#[test]
fn amx_attention_matches_f32_attention() {
    for products in bf16_products() {
        attention_matches_f32_attention(products);
    }
}

fn attention_matches_f32_attention(products: amx::Products) {
    let (hidden, heads) = (384, 12);
    let scale = 1.0 / 32f32.sqrt();
    let mut next = xorshift(11);
    let mut worst = 0f32;
    for len in [1, 2, 17, 31, 32, 33, 100] {
        let qkv: Vec<f32> = (0..len * 3 * hidden)
            .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        let mut tiles = vec![f32::NAN; len * hidden];
        let mut plain = vec![f32::NAN; len * hidden];
        assert!(amx::attention(
            products, &qkv, len, hidden, heads, scale, &mut tiles
        ));
        attention_f32(
            vector::Level::Baseline,
            &qkv,
            len,
            hidden,
            heads,
            scale,
            &mut plain,
        );
        for (i, (a, b)) in tiles.iter().zip(&plain).enumerate() {
            worst = worst.max((a - b).abs());
            assert!((a - b).abs() <= 1e-2, "len {len}, value {i}: {a} vs {b}");
        }
    }
    eprintln!("{products:?} attention: worst difference {worst:e}");
}
