//! The batch kernel on Intel AMX tiles (Sapphire Rapids and later): `bf16` products
//! accumulated in `f32`.
//!
//! At load time every weight matrix is expanded from its Q4_0 blocks and rounded to
//! `bf16` (round to nearest even; 8 significant bits, so each 4-bit weight `q · d` keeps
//! `q` exactly and `d` to 2⁻⁸ relative), laid out as AMX `B` tiles: for each panel of 16
//! output rows and each 32-wide slice of the input, one 1 KiB tile whose row `r` holds,
//! for each of the 16 outputs, the pair of weights `2r` and `2r + 1` (the "VNNI" pair
//! layout `TDPBF16PS` reads). Per call the activations are rounded to `bf16` (AVX-512
//! `VCVTNEPS2BF16`) into rows padded with zeros to a multiple of 32, then each block of
//! 32 rows × 32 outputs is four `f32` accumulator tiles fed by `TDPBF16PS` over the
//! whole input width (16 × 16 × 32 multiply-adds per instruction), stored once, and the
//! bias added while the valid rows are copied out.
//!
//! The same kernel runs its block products on AVX-512 BF16 vectors instead of tiles
//! ([`Products::Vectors`], `avx512.rs`) on CPUs without AMX: everything else here is
//! AVX-512 and unchanged.
//!
//! Error: each product has both factors rounded to `bf16` (relative error at most 2⁻⁸
//! each) and sums are `f32`, so a dot product over `n` inputs differs from the `f32`
//! one by at most about `2⁻⁷ · Σ|xᵢ·wᵢ|`, in practice far less as the rounding errors'
//! signs vary; the unit test bounds it by `2⁻⁸ · Σ|xᵢ·wᵢ|`.

use std::arch::asm;
use std::arch::x86_64::*;
use std::cell::RefCell;
use std::sync::OnceLock;

use super::vector::gelu_one;
use super::{Activation, Matrix};

/// Rows and columns of a block one call of the tile loop computes (2 × 2 tiles of 16).
const BLOCK: usize = 32;

thread_local! {
    /// The `bf16` input rows of [`linear`] and [`feed_forward`], kept between calls (no
    /// page faults or zeroing per call).
    static SCRATCH: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// Linux's `arch_prctl` request for permission to use an extended state component.
const ARCH_REQ_XCOMP_PERM: libc::c_ulong = 0x1023;

/// The AMX tile data state component (XTILEDATA).
const XFEATURE_XTILEDATA: libc::c_ulong = 18;

/// Whether this CPU and OS run the kernel: `std` detects AVX-512F, AVX-512BW (for the
/// key and value layouts) and AVX-512 BF16 (for the conversion to `bf16`), CPUID leaf 7
/// reports AMX-TILE and AMX-BF16 (`std`'s `is_x86_feature_detected!` names for AMX are
/// unstable in Rust 1.95), and Linux grants this process the tile data state
/// (`arch_prctl(ARCH_REQ_XCOMP_PERM)`, which fails when the kernel or hypervisor does
/// not support it). Asked once per process.
pub(super) fn supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        if !(is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma"))
        {
            return false;
        }
        if __cpuid(0).eax < 7 {
            return false;
        }
        let edx = __cpuid_count(7, 0).edx;
        let amx_bf16 = edx & (1 << 22) != 0;
        let amx_tile = edx & (1 << 24) != 0;
        // SAFETY: `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)` only asks the kernel
        // to enable a register state for this process; it reads and writes no memory.
        amx_bf16
            && amx_tile
            && unsafe {
                libc::syscall(
                    libc::SYS_arch_prctl,
                    ARCH_REQ_XCOMP_PERM,
                    XFEATURE_XTILEDATA,
                ) == 0
            }
    })
}

/// How the `bf16` block products of [`linear`], [`feed_forward`] and [`attention`] run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Products {
    /// On AMX tiles (`TDPBF16PS`).
    Tiles,
    /// On AVX-512 BF16 vectors (`VDPBF16PS`, `avx512.rs`).
    Vectors,
}

impl Products {
    /// Whether this CPU (and OS) runs the kernel with these products.
    pub(super) fn supported(self) -> bool {
        match self {
            Products::Tiles => supported(),
            Products::Vectors => super::avx512::supported(),
        }
    }

    /// Configures the tiles (tiles only).
    ///
    /// # Safety
    /// [`Products::supported`]; [`Products::end`] follows before the thread runs other
    /// code that could use tiles.
    unsafe fn begin(self) {
        if self == Products::Tiles {
            let config = TileConfig::all_full();
            // SAFETY: the configuration is a valid palette-1 layout of 64 bytes, and the
            // caller checked that the CPU and OS run tiles.
            unsafe {
                asm!("ldtilecfg [{}]", in(reg) config.0.as_ptr(), options(nostack, readonly))
            };
        }
    }

    /// Releases the tile state [`Products::begin`] configured (tiles only).
    ///
    /// # Safety
    /// As [`Products::begin`].
    unsafe fn end(self) {
        if self == Products::Tiles {
            // SAFETY: releases the state `begin` configured.
            unsafe { asm!("tilerelease", options(nostack, nomem)) };
        }
    }

    /// One block product (see [`block`]), on tiles or vectors.
    ///
    /// # Safety
    /// As [`block`] (for tiles, between [`Products::begin`] and [`Products::end`]); for
    /// vectors, the CPU supports AVX-512F and AVX-512 BF16.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block(
        self,
        a: *const u16,
        stride_a: usize,
        b0: *const u16,
        b1: *const u16,
        steps: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: the caller's guarantees are each function's.
        unsafe {
            match self {
                Products::Tiles => block(a, stride_a, b0, b1, steps, c, ldc),
                Products::Vectors => super::avx512::block(a, stride_a, b0, b1, steps, c, ldc),
            }
        }
    }
}

/// Rounds `v` to the nearest `bf16` (ties to even), as `VCVTNEPS2BF16` does for finite
/// values.
fn bf16(v: f32) -> u16 {
    let bits = v.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// The weights `w` (`[n_out][n_in]`, `f32`) as `bf16` B tiles, in the layout the module
/// documentation describes: tile `(p, s)` (outputs `16p..16p+16`, inputs `32s..32s+32`)
/// starts at element `(p · n_in / 32 + s) · 512`. Both dimensions are multiples of 32.
pub(super) fn pack(w: &[f32], n_out: usize, n_in: usize) -> Vec<u16> {
    assert!(n_out.is_multiple_of(BLOCK) && n_in.is_multiple_of(BLOCK) && w.len() == n_out * n_in);
    let slices = n_in / 32;
    let mut tiles = vec![0u16; n_out * n_in];
    for p in 0..n_out / 16 {
        for s in 0..slices {
            let tile = &mut tiles[(p * slices + s) * 512..][..512];
            for r in 0..16 {
                for c in 0..16 {
                    for q in 0..2 {
                        tile[r * 32 + c * 2 + q] =
                            bf16(w[(p * 16 + c) * n_in + s * 32 + 2 * r + q]);
                    }
                }
            }
        }
    }
    tiles
}

/// Computes [`super::linear`] with the tiles of `w` and `products` when the CPU supports
/// them and both dimensions are multiples of 32 (any row count); returns `false`, having
/// written nothing, otherwise.
#[allow(clippy::too_many_arguments)]
pub(super) fn linear(
    products: Products,
    x: &[f32],
    rows: usize,
    n_in: usize,
    w: &Matrix,
    b: &[f32],
    n_out: usize,
    y: &mut [f32],
    activation: Activation,
) -> bool {
    if !(n_in.is_multiple_of(BLOCK)
        && n_out.is_multiple_of(BLOCK)
        && w.tiles.len() == n_out * n_in
        && products.supported())
    {
        return false;
    }
    assert!(x.len() >= rows * n_in && b.len() >= n_out && y.len() >= rows * n_out);
    let padded = rows.next_multiple_of(BLOCK);
    SCRATCH.with_borrow_mut(|a| {
        grow(a, padded * n_in);
        a[rows * n_in..padded * n_in].fill(0);
        // SAFETY: `supported` detected AVX-512F and AVX-512 BF16; the shapes are asserted.
        unsafe { to_bf16(&x[..rows * n_in], &mut a[..rows * n_in]) };
        // SAFETY: `products.supported()` detected its instructions and the AVX-512
        // features (and for tiles obtained the tile state); the shapes are asserted
        // inside.
        unsafe {
            tile_product(
                products,
                a,
                padded,
                n_in,
                &w.tiles,
                n_out,
                b,
                rows,
                Out::F32(y, activation),
            )
        };
    });
    true
}

/// The feed-forward block with its residual, `x += W_out · gelu(W_in · x + b_in) + b_out`,
/// with the middle activations (`[rows][ff]`) kept in `bf16` only: the first product's
/// GELU writes them rounded, straight into the second product's input (what [`linear`]
/// would round them to anyway). Same conditions and return value as [`linear`].
#[allow(clippy::too_many_arguments)]
pub(super) fn feed_forward(
    products: Products,
    x: &mut [f32],
    rows: usize,
    hidden: usize,
    ff: usize,
    w_in: &Matrix,
    b_in: &[f32],
    w_out: &Matrix,
    b_out: &[f32],
) -> bool {
    if !(hidden.is_multiple_of(BLOCK)
        && ff.is_multiple_of(BLOCK)
        && w_in.tiles.len() == ff * hidden
        && w_out.tiles.len() == hidden * ff
        && products.supported())
    {
        return false;
    }
    assert!(x.len() >= rows * hidden && b_in.len() >= ff && b_out.len() >= hidden);
    let padded = rows.next_multiple_of(BLOCK);
    thread_local! {
        static MIDDLE: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|a| {
        MIDDLE.with_borrow_mut(|mid| {
            grow(a, padded * hidden);
            grow(mid, padded * ff);
            a[rows * hidden..padded * hidden].fill(0);
            mid[rows * ff..padded * ff].fill(0);
            // SAFETY: `supported` detected AVX-512F and AVX-512 BF16; shapes asserted.
            unsafe { to_bf16(&x[..rows * hidden], &mut a[..rows * hidden]) };
            // SAFETY: `products.supported()` detected its instructions and the AVX-512
            // features (and for tiles obtained the tile state); the shapes are asserted
            // inside.
            unsafe {
                tile_product(
                    products,
                    a,
                    padded,
                    hidden,
                    &w_in.tiles,
                    ff,
                    b_in,
                    rows,
                    Out::GeluBf16(mid),
                );
                tile_product(
                    products,
                    mid,
                    padded,
                    ff,
                    &w_out.tiles,
                    hidden,
                    b_out,
                    rows,
                    Out::F32(x, Activation::Residual),
                );
            }
        })
    });
    true
}

/// Where [`tile_product`] writes its rows, and how.
enum Out<'a> {
    /// `f32` rows of the product's width, with the activation applied.
    F32(&'a mut [f32], Activation),
    /// GELU of the result, rounded to `bf16`, rows of the product's width.
    GeluBf16(&'a mut [u16]),
}

/// `out[i] = bf16(x[i])`, 16 values at a time (`x.len()` is a multiple of 32).
///
/// # Safety
/// The CPU supports AVX-512F and AVX-512 BF16.
#[target_feature(enable = "avx512f,avx512bf16,avx512vl")]
unsafe fn to_bf16(x: &[f32], out: &mut [u16]) {
    assert!(out.len() == x.len() && x.len().is_multiple_of(16));
    for (src, dst) in x.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
        // SAFETY: each chunk is 16 `f32` (64 bytes) in and 16 `u16` (32 bytes) out.
        unsafe {
            let v = _mm512_loadu_ps(src.as_ptr());
            let h: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(v));
            _mm256_storeu_si256(dst.as_mut_ptr().cast(), h);
        }
    }
}

/// One row of attention's soft-max: `probs[j] = bf16(exp(scale · (scores[j] − max)))`
/// for `j < len` (`max` over those), zero for `len <= j < probs.len()`; returns
/// `1 / Σ exp(…)` (the sum of the values before rounding). The exponential is
/// `2ⁿ · 2ᶠ` with `n` the nearest integer and `2ᶠ` (`|f| <= 1/2`) its Taylor polynomial of
/// degree 5 (relative error under 3e-6, far below the `bf16` rounding of up to 2⁻⁸
/// that follows), 16 values at a time with `VSCALEFPS` for the `2ⁿ`.
///
/// # Safety
/// The CPU supports AVX-512F and AVX-512 BF16.
#[target_feature(enable = "avx512f,avx512bf16,avx512vl")]
pub(super) unsafe fn softmax_numerators(
    scores: &[f32],
    len: usize,
    scale: f32,
    probs: &mut [u16],
) -> f32 {
    let padded = scores.len();
    assert!(
        len > 0
            && len <= padded
            && padded.is_multiple_of(16)
            && probs.len() == padded
            && scale > 0.0
    );
    let mask = |j: usize| -> __mmask16 {
        if j + 16 <= len {
            0xffff
        } else if j < len {
            (1u16 << (len - j)) - 1
        } else {
            0
        }
    };
    // SAFETY (every block below): 16 `f32` at `j < padded` of `scores` and 16 `u16` at
    // `j` of `probs`, inside the asserted lengths.
    let mut top = _mm512_set1_ps(f32::NEG_INFINITY);
    for j in (0..len).step_by(16) {
        let v = unsafe { _mm512_mask_loadu_ps(top, mask(j), scores.as_ptr().add(j)) };
        top = _mm512_max_ps(top, v);
    }
    let k = scale * std::f32::consts::LOG2_E;
    let k_v = _mm512_set1_ps(k);
    let shift = _mm512_set1_ps(-_mm512_reduce_max_ps(top) * k);
    let c = EXP2_TAYLOR.map(|v| _mm512_set1_ps(v));
    let one = _mm512_set1_ps(1.0);
    let mut sum = _mm512_setzero_ps();
    for j in (0..padded).step_by(16) {
        let m = mask(j);
        let e = if m == 0 {
            _mm512_setzero_ps()
        } else {
            let s = unsafe { _mm512_loadu_ps(scores.as_ptr().add(j)) };
            let t = _mm512_fmadd_ps(s, k_v, shift);
            let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(t);
            let f = _mm512_sub_ps(t, n);
            let mut p = c[0];
            for ck in &c[1..] {
                p = _mm512_fmadd_ps(p, f, *ck);
            }
            p = _mm512_fmadd_ps(p, f, one);
            _mm512_maskz_scalef_ps(m, p, n)
        };
        sum = _mm512_add_ps(sum, e);
        let h: __m256i = unsafe { std::mem::transmute(_mm512_cvtneps_pbh(e)) };
        unsafe { _mm256_storeu_si256(probs.as_mut_ptr().add(j).cast(), h) };
    }
    1.0 / _mm512_reduce_add_ps(sum)
}

/// The coefficients of `2ᶠ = Σ (f · ln 2)ᵏ / k!` for `k` = 5 down to 1 (the constant term
/// is 1), as [`softmax_numerators`] evaluates them by Horner's rule.
pub(super) const EXP2_TAYLOR: [f32; 5] = [
    1.333_355_8e-3, // ln⁵2 / 120
    9.618_129e-3,   // ln⁴2 / 24
    5.550_411e-2,   // ln³2 / 6
    0.240_226_5,    // ln²2 / 2
    std::f32::consts::LN_2,
];

/// `dst = src · factor` for 32 values (the division of a soft-max applied to a row of
/// attention's context).
#[target_feature(enable = "avx512f")]
fn scale_32(src: &[f32], factor: f32, dst: &mut [f32]) {
    assert!(src.len() == 32 && dst.len() == 32);
    let f = _mm512_set1_ps(factor);
    for half in 0..2 {
        // SAFETY: 16 `f32` at `16 · half` of `src` and `dst`, each 32 long.
        unsafe {
            let v = _mm512_mul_ps(_mm512_loadu_ps(src.as_ptr().add(16 * half)), f);
            _mm512_storeu_ps(dst.as_mut_ptr().add(16 * half), v);
        }
    }
}

/// The tile configuration: palette 1, tiles 0 to 7 each 16 rows of 64 bytes.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

impl TileConfig {
    fn all_full() -> TileConfig {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&64u16.to_le_bytes());
            c[48 + t] = 16;
        }
        TileConfig(c)
    }
}

/// `c = A · B` for one block of 32 × 32 `f32`: `A` is 32 rows of `bf16` starting at `a`
/// (`stride_a` bytes apart), `B` two panels of B tiles starting at `b0` and `b1` (16
/// outputs each, 1 KiB per 32-wide slice); the sum runs over `steps` slices, advancing
/// 64 bytes along the rows of `A` and 1 KiB along each panel. The four result tiles are
/// stored at `c` in rows `ldc` bytes apart (rows 0..16 then 16..32, columns 0..16 then
/// 16..32).
///
/// # Safety
/// The CPU supports AMX-TILE and AMX-BF16, the process has the tile data state, and the
/// tiles are configured as [`TileConfig::all_full`]. The 32 rows of `steps · 64` bytes at
/// `a`, the `steps` KiB at `b0` and at `b1`, and the 32 rows of 128 bytes at `c` are
/// valid for reading (writing, for `c`).
#[inline(always)]
unsafe fn block(
    a: *const u16,
    stride_a: usize,
    b0: *const u16,
    b1: *const u16,
    steps: usize,
    c: *mut f32,
    ldc: usize,
) {
    // SAFETY: the caller guarantees the ranges read and written (see above).
    unsafe {
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            // Each load is placed just before the first product that needs it: tile
            // registers are not renamed, so a load waits for the products still reading
            // the register (measured here: 15.5 ns per product instead of 18.2 with the
            // four loads first; 5 ns with no loads at all).
            "2:",
            "tileloadd tmm4, [{a0} + {sa}*1]",
            "tileloadd tmm6, [{b0} + {sb}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tileloadd tmm7, [{b1} + {sb}*1]",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tileloadd tmm5, [{a1} + {sa}*1]",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            "add {a0}, 64",
            "add {a1}, 64",
            "add {b0}, 1024",
            "add {b1}, 1024",
            "dec {steps}",
            "jnz 2b",
            "tilestored [{c0} + {sc}*1], tmm0",
            "tilestored [{c0} + {sc}*1 + 64], tmm1",
            "tilestored [{c1} + {sc}*1], tmm2",
            "tilestored [{c1} + {sc}*1 + 64], tmm3",
            a0 = inout(reg) a => _,
            a1 = inout(reg) a.byte_add(16 * stride_a) => _,
            b0 = inout(reg) b0 => _,
            b1 = inout(reg) b1 => _,
            steps = inout(reg) steps => _,
            sa = in(reg) stride_a,
            sb = in(reg) 64usize,
            c0 = in(reg) c,
            c1 = in(reg) c.byte_add(16 * ldc),
            sc = in(reg) ldc,
            options(nostack),
        );
    }
}

/// `out[..rows] = a · wᵀ + b` (as [`Out`] says) over `bf16` rows `a` (`[padded][k]`) and
/// the B tiles of `w`. For each block of 32 rows (kept in L1 cache) every pair of weight panels
/// (32 outputs, read in order from L2 cache) passes. (Keeping the weight panels in L1
/// and streaming the rows instead was measured slower: 6.1 ms instead of 4.4 ms of CPU
/// for 2048 rows × 384 inputs × 1152 outputs.)
///
/// # Safety
/// [`Products::supported`] for `products`: the CPU supports AVX-512F and AVX-512 BF16,
/// and for tiles AMX-TILE and AMX-BF16 with the tile data state granted. (Shapes are
/// asserted.)
#[target_feature(enable = "avx512f,avx512bf16,avx512vl")]
#[allow(clippy::too_many_arguments)]
unsafe fn tile_product(
    products: Products,
    a: &[u16],
    padded: usize,
    k: usize,
    tiles: &[u16],
    n_out: usize,
    b: &[f32],
    rows: usize,
    mut out: Out<'_>,
) {
    let out_len = match &out {
        Out::F32(y, _) => y.len(),
        Out::GeluBf16(y) => y.len(),
    };
    assert!(
        a.len() >= padded * k
            && tiles.len() == n_out * k
            && padded.is_multiple_of(BLOCK)
            && rows <= padded
            && k.is_multiple_of(BLOCK)
            && n_out.is_multiple_of(BLOCK)
            && out_len >= rows * n_out
            && b.len() >= n_out
    );
    let mut c = [0f32; BLOCK * BLOCK];
    // SAFETY: the caller checked `products`; `end` follows below.
    unsafe { products.begin() };
    for m in (0..padded).step_by(BLOCK) {
        for n in (0..n_out).step_by(BLOCK) {
            // SAFETY: rows `m..m + 32` of `a` (each `k` values), the tile panels of
            // outputs `n..n + 16` and `n + 16..n + 32` (each `k · 16` values, starting at
            // element `n · k`) and the 32 × 32 `f32` of `c` are inside the asserted
            // lengths; tiles were configured above.
            unsafe {
                products.block(
                    a.as_ptr().add(m * k),
                    k * 2,
                    tiles.as_ptr().add(n * k),
                    tiles.as_ptr().add((n + 16) * k),
                    k / 32,
                    c.as_mut_ptr(),
                    BLOCK * 4,
                );
            }
            let bias = &b[n..n + BLOCK];
            for (r, row) in c
                .chunks_exact(BLOCK)
                .enumerate()
                .take(rows.saturating_sub(m))
            {
                let at = (m + r) * n_out + n;
                match &mut out {
                    Out::F32(y, Activation::Gelu) => {
                        let pairs = y[at..at + BLOCK].iter_mut().zip(row).zip(bias);
                        pairs.for_each(|((d, v), b)| *d = gelu_one(v + b));
                    }
                    Out::F32(y, activation) => {
                        let residual = matches!(activation, Activation::Residual);
                        let dst = &mut y[at..at + BLOCK];
                        // Written with intrinsics: the compiler left this loop scalar
                        // (7 % of a forward pass by `perf`).
                        for half in 0..2 {
                            // SAFETY: 16 `f32` at `16 · half` of `row`, `bias` and `dst`,
                            // each 32 long.
                            unsafe {
                                let v = _mm512_add_ps(
                                    _mm512_loadu_ps(row.as_ptr().add(16 * half)),
                                    _mm512_loadu_ps(bias.as_ptr().add(16 * half)),
                                );
                                let d = dst.as_mut_ptr().add(16 * half);
                                let v = if residual {
                                    _mm512_add_ps(v, _mm512_loadu_ps(d))
                                } else {
                                    v
                                };
                                _mm512_storeu_ps(d, v);
                            }
                        }
                    }
                    Out::GeluBf16(y) => {
                        let mut g = [0f32; BLOCK];
                        for ((d, v), b) in g.iter_mut().zip(row).zip(bias) {
                            *d = gelu_one(v + b);
                        }
                        // SAFETY: 32 `f32` in `g`, 32 `u16` (64 bytes) at `y[at..]`, inside
                        // the asserted length.
                        unsafe {
                            let lo = _mm512_loadu_ps(g.as_ptr());
                            let hi = _mm512_loadu_ps(g.as_ptr().add(16));
                            let h: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                            _mm512_storeu_si512(y[at..at + BLOCK].as_mut_ptr().cast(), h);
                        }
                    }
                }
            }
        }
    }
    // SAFETY: ends what `begin` configured above.
    unsafe { products.end() };
}

/// Buffers of [`attention`], kept per thread between calls.
#[derive(Default)]
struct AttentionScratch {
    /// The sequence's queries, keys and values in `bf16`, `[padded][3 · hidden]`.
    qkv: Vec<u16>,
    /// One head's keys as B tiles (one 32-wide slice per panel of 16 keys).
    keys: Vec<u16>,
    /// One head's values as B tiles (2 panels of 16 dimensions, a slice per 32 keys).
    values: Vec<u16>,
    /// Scores `[padded][padded]`, `f32`.
    scores: Vec<f32>,
    /// The soft-max numerators `[padded][padded]`, `bf16` ([`softmax_numerators`]).
    probs: Vec<u16>,
    /// `1 / Σ` of each row's numerators, `[padded]`.
    inverse_sums: Vec<f32>,
}

/// Multi-head self-attention of one sequence of `len` tokens with `products`, when the
/// CPU supports them and each head is 32 wide; returns `false`, having written nothing,
/// otherwise. `qkv` is `[len][3 · hidden]` (queries, keys, values side by side); the
/// per-head contexts go side by side into `out` (`[len][hidden]`).
///
/// The scores `Q·Kᵀ` and the contexts `P·V` are `bf16` products summed in `f32` (queries,
/// keys, values and the soft-max numerators rounded to `bf16`); the soft-max of `scale`
/// times the scores is `f32` ([`softmax_numerators`]), its division applied to each
/// context row as it is copied out (the same rounding error relative to each value, as
/// `bf16` keeps 8 significant bits at any scale).
pub(super) fn attention(
    products: Products,
    qkv: &[f32],
    len: usize,
    hidden: usize,
    heads: usize,
    scale: f32,
    out: &mut [f32],
) -> bool {
    if heads == 0 || hidden / heads != 32 || !hidden.is_multiple_of(heads) || !products.supported()
    {
        return false;
    }
    let width = 3 * hidden;
    assert!(len > 0 && qkv.len() >= len * width && out.len() >= len * hidden);
    let padded = len.next_multiple_of(BLOCK);
    let slices = padded / 32;
    thread_local! {
        static SCRATCH: RefCell<AttentionScratch> = RefCell::new(AttentionScratch::default());
    }
    SCRATCH.with_borrow_mut(|t| {
        grow(&mut t.qkv, padded * width);
        grow(&mut t.keys, padded * 32);
        grow(&mut t.values, padded * 32);
        grow(&mut t.scores, padded * padded);
        grow(&mut t.probs, padded * padded);
        grow(&mut t.inverse_sums, padded);
        // SAFETY: `supported` detected AVX-512F and AVX-512 BF16; `width` is a multiple
        // of 96, so of 16.
        unsafe { to_bf16(&qkv[..len * width], &mut t.qkv[..len * width]) };
        t.qkv[len * width..padded * width].fill(0);
        t.probs[len * padded..padded * padded].fill(0);
        let mut c = [0f32; BLOCK * BLOCK];
        // SAFETY: `products.supported()` was checked above; `end` follows below.
        unsafe { products.begin() };
        for head in 0..heads {
            // SAFETY: `supported` detected AVX-512F and AVX-512BW; the shapes are asserted
            // inside.
            unsafe {
                key_value_tiles(
                    &t.qkv,
                    width,
                    hidden,
                    head,
                    padded,
                    &mut t.keys,
                    &mut t.values,
                )
            };
            for m in (0..padded).step_by(BLOCK) {
                for n in (0..padded).step_by(BLOCK) {
                    // SAFETY: rows `m..m + 32` of the padded `bf16` qkv, columns of this
                    // head's queries (32 values, 64 bytes); key tiles `n / 16` and
                    // `n / 16 + 1`; scores rows `m..m + 32`, columns `n..n + 32`: all
                    // inside the buffers grown above. Tiles were configured above.
                    unsafe {
                        products.block(
                            t.qkv.as_ptr().add(m * width + head * 32),
                            width * 2,
                            t.keys.as_ptr().add(n * 32),
                            t.keys.as_ptr().add((n + 16) * 32),
                            1,
                            t.scores.as_mut_ptr().add(m * padded + n),
                            padded * 4,
                        );
                    }
                }
            }
            for i in 0..len {
                // SAFETY: `supported` detected AVX-512F and AVX-512 BF16; `padded` is a
                // multiple of 32 and `0 < len <= padded`.
                t.inverse_sums[i] = unsafe {
                    softmax_numerators(
                        &t.scores[i * padded..][..padded],
                        len,
                        scale,
                        &mut t.probs[i * padded..][..padded],
                    )
                };
            }
            for m in (0..padded).step_by(BLOCK) {
                // SAFETY: rows `m..m + 32` of the probabilities (`padded` values each),
                // the two value panels (`slices` KiB each) and `c` (32 × 32 `f32`) are
                // inside the buffers; tiles were configured above.
                unsafe {
                    products.block(
                        t.probs.as_ptr().add(m * padded),
                        padded * 2,
                        t.values.as_ptr(),
                        t.values.as_ptr().add(slices * 512),
                        slices,
                        c.as_mut_ptr(),
                        BLOCK * 4,
                    );
                }
                for (r, ctx) in c
                    .chunks_exact(BLOCK)
                    .enumerate()
                    .take(len.saturating_sub(m))
                {
                    let dst = &mut out[(m + r) * hidden + head * 32..][..32];
                    // SAFETY: `supported` detected AVX-512F.
                    unsafe { scale_32(ctx, t.inverse_sums[m + r], dst) };
                }
            }
        }
        // SAFETY: ends what `begin` configured above.
        unsafe { products.end() };
    });
    true
}

/// One head's keys and values of `padded` tokens as B tiles, read from the `bf16` rows
/// of `qkv` (`[padded][width]`; the head's keys at column `hidden + 32 · head`, its
/// values at `2 · hidden + 32 · head`).
///
/// - Keys: tile `key / 16` (16 keys × 32 dimensions), row `r` holding dimensions `2r` and
///   `2r + 1` of each of the 16 keys: viewed as 32-bit pairs, the transpose of the 16
///   keys' rows ([`transpose_16x16`]).
/// - Values: panel `d / 16` (16 dimensions), slice `key / 32`, row `key % 32 / 2`, pair
///   element `key % 2`, column `d % 16`: each row interleaves two consecutive keys.
///
/// # Safety
/// The CPU supports AVX-512F and AVX-512BW. (Shapes are asserted.)
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn key_value_tiles(
    qkv: &[u16],
    width: usize,
    hidden: usize,
    head: usize,
    padded: usize,
    keys: &mut [u16],
    values: &mut [u16],
) {
    let (k_at, v_at) = (hidden + 32 * head, 2 * hidden + 32 * head);
    assert!(
        padded.is_multiple_of(32)
            && v_at + 32 <= width
            && qkv.len() >= padded * width
            && keys.len() >= padded * 32
            && values.len() >= padded * 32
    );
    let slices = padded / 32;
    for p in 0..padded / 16 {
        // SAFETY: rows `16p..16p + 16` of `qkv`, 32 values from `k_at` (inside `width`),
        // and tile `p` of `keys` (512 values) are inside the asserted lengths.
        unsafe {
            let rows: [__m512i; 16] = std::array::from_fn(|c| {
                _mm512_loadu_si512(qkv.as_ptr().add((16 * p + c) * width + k_at).cast())
            });
            for (r, v) in transpose_16x16(rows).into_iter().enumerate() {
                _mm512_storeu_si512(keys.as_mut_ptr().add(p * 512 + r * 32).cast(), v);
            }
        }
    }
    let low: [u16; 32] = std::array::from_fn(|i| (i / 2 + 32 * (i % 2)) as u16);
    let high: [u16; 32] = std::array::from_fn(|i| (16 + i / 2 + 32 * (i % 2)) as u16);
    // SAFETY: two arrays of 32 `u16` (64 bytes each).
    let (low, high) = unsafe {
        (
            _mm512_loadu_si512(low.as_ptr().cast()),
            _mm512_loadu_si512(high.as_ptr().cast()),
        )
    };
    for key in (0..padded).step_by(2) {
        let at = key / 32 * 512 + key % 32 / 2 * 32;
        // SAFETY: rows `key` and `key + 1 < padded` of `qkv`, 32 values from `v_at`, and
        // 32 values at `at` and `slices · 512 + at` of `values` (`< padded · 32`) are
        // inside the asserted lengths.
        unsafe {
            let even = _mm512_loadu_si512(qkv.as_ptr().add(key * width + v_at).cast());
            let odd = _mm512_loadu_si512(qkv.as_ptr().add((key + 1) * width + v_at).cast());
            let dst = values.as_mut_ptr();
            _mm512_storeu_si512(
                dst.add(at).cast(),
                _mm512_permutex2var_epi16(even, low, odd),
            );
            _mm512_storeu_si512(
                dst.add(slices * 512 + at).cast(),
                _mm512_permutex2var_epi16(even, high, odd),
            );
        }
    }
}

/// The transpose of 16 rows of 16 32-bit elements: row `i` of the result holds element
/// `i` of every row. Three rounds of shuffles: pairs of rows within 128-bit lanes, then
/// 4 × 4 blocks within lanes, then the lanes themselves.
#[target_feature(enable = "avx512f")]
fn transpose_16x16(r: [__m512i; 16]) -> [__m512i; 16] {
    // a[2i], a[2i + 1]: rows 2i and 2i + 1 interleaved, the first and second half of
    // each lane.
    let mut a = r;
    for i in 0..8 {
        a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // b[4j + c], lane l: element 4l + c of rows 4j..4j + 4.
    let mut b = a;
    for j in 0..4 {
        b[4 * j] = _mm512_unpacklo_epi64(a[4 * j], a[4 * j + 2]);
        b[4 * j + 1] = _mm512_unpackhi_epi64(a[4 * j], a[4 * j + 2]);
        b[4 * j + 2] = _mm512_unpacklo_epi64(a[4 * j + 1], a[4 * j + 3]);
        b[4 * j + 3] = _mm512_unpackhi_epi64(a[4 * j + 1], a[4 * j + 3]);
    }
    // Result row 4l + c: lane l of b[c], b[4 + c], b[8 + c], b[12 + c].
    let mut out = b;
    for c in 0..4 {
        let e0 = _mm512_shuffle_i32x4::<0x44>(b[c], b[4 + c]);
        let e1 = _mm512_shuffle_i32x4::<0xEE>(b[c], b[4 + c]);
        let e2 = _mm512_shuffle_i32x4::<0x44>(b[8 + c], b[12 + c]);
        let e3 = _mm512_shuffle_i32x4::<0xEE>(b[8 + c], b[12 + c]);
        out[c] = _mm512_shuffle_i32x4::<0x88>(e0, e2);
        out[4 + c] = _mm512_shuffle_i32x4::<0xDD>(e0, e2);
        out[8 + c] = _mm512_shuffle_i32x4::<0x88>(e1, e3);
        out[12 + c] = _mm512_shuffle_i32x4::<0xDD>(e1, e3);
    }
    out
}

/// Makes `v` at least `n` long (new elements zero; old ones are overwritten by the caller).
fn grow<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}
