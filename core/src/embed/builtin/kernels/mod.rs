//! The encoder's matrix products `y = x · wᵀ + b`, one path per instruction set, chosen
//! at run time ([`KernelPath`]), with the weight forms each path reads ([`Matrix`]).
//!
//! - [`KernelPath::Amx`] (x86-64 with AMX-TILE, AMX-BF16, AVX-512F and AVX-512 BF16, the
//!   tile state granted by Linux): products over more than [`FEW_ROWS`] rows on AMX tiles
//!   in `bf16` with `f32` sums (`amx.rs`); at most [`FEW_ROWS`] rows (a query) in the
//!   AVX2 kernel over the 4-bit blocks (`avx2.rs`); element-wise steps compiled for
//!   AVX-512. Weights kept: `bf16` tiles (42 MB) and 4-bit blocks (13 MB).
//! - [`KernelPath::Avx512`] (x86-64 with AVX-512F, BW, VL and AVX-512 BF16, no AMX: AMD
//!   Zen 4 and later): the AMX path's kernel with its block products on AVX-512 BF16
//!   vectors (`VDPBF16PS`, `avx512.rs`) instead of tiles; the same weights kept.
//! - [`KernelPath::Avx2`] (x86-64 with AVX2 and FMA): the AVX2 kernel for at most
//!   [`FEW_ROWS`] rows, `matrixmultiply` over `f32` weights for more; element-wise steps
//!   compiled for AVX2. Weights kept: `f32` (85 MB) and 4-bit blocks.
//! - [`KernelPath::Portable`] (any CPU): `matrixmultiply` for every product (it has its
//!   own run-time dispatch) and baseline element-wise steps.
//!
//! [`KernelPath::from_env`] picks the first supported of these but `avx512` (which is
//! chosen by name only: [`KernelPath::AUTO`] says why), or the one named by the
//! environment variable [`KERNEL_ENV`].

use std::fmt;

mod amx;
mod avx2;
mod avx512;
pub(super) mod vector;

use super::weights::{Q4_BLOCK, Q4_BLOCK_BYTES, dequantise_q4, f16_to_f32};
use vector::Level;

/// The environment variable that forces a kernel path: `amx`, `avx512`, `avx2`,
/// `portable`, or `auto` (the default: the first supported of [`KernelPath::AUTO`]).
pub const KERNEL_ENV: &str = "FOLIO_EMBED_KERNEL";

/// At most this many rows (tokens) take the AVX2 kernel over the 4-bit blocks when the
/// path has it; a query is 6 to 12 tokens.
pub(super) const FEW_ROWS: usize = 16;

/// A set of kernels for the encoder's matrix products; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelPath {
    /// AMX tiles in `bf16` for batches, the 4-bit AVX2 kernel for queries.
    Amx,
    /// AVX-512 BF16 vectors in `bf16` for batches (the AMX path's kernel without tiles),
    /// the 4-bit AVX2 kernel for queries.
    Avx512,
    /// The 4-bit AVX2 kernel for queries, `matrixmultiply` in `f32` for batches.
    Avx2,
    /// `matrixmultiply` in `f32` for everything.
    Portable,
}

impl KernelPath {
    /// Every path, fastest first.
    pub const ALL: [KernelPath; 4] = [
        KernelPath::Amx,
        KernelPath::Avx512,
        KernelPath::Avx2,
        KernelPath::Portable,
    ];

    /// The name [`KERNEL_ENV`] takes: `amx`, `avx512`, `avx2` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Amx => "amx",
            KernelPath::Avx512 => "avx512",
            KernelPath::Avx2 => "avx2",
            KernelPath::Portable => "portable",
        }
    }

    /// Whether this CPU (and OS) runs the path, detected at run time.
    pub fn is_supported(self) -> bool {
        match self {
            KernelPath::Amx => amx::supported() && Level::Avx512.supported(),
            KernelPath::Avx512 => avx512::supported() && Level::Avx512.supported(),
            KernelPath::Avx2 => avx2::supported() && Level::Avx2.supported(),
            KernelPath::Portable => true,
        }
    }

    /// The paths [`KernelPath::best`] chooses from, fastest first: every path but
    /// [`KernelPath::Avx512`], which is chosen only by name. Measured on an Intel Xeon with
    /// AMX (docs/benchmarks.md), it embeds at 0.83 times the `avx2` path's rate: there
    /// one `VDPBF16PS` does as many multiply-adds per cycle as the two `f32` FMAs
    /// `matrixmultiply` issues. It is meant for CPUs whose `VDPBF16PS` outruns their
    /// `f32` FMAs (AMD Zen 4 executes a 512-bit FMA as two halves), not measured here.
    pub const AUTO: [KernelPath; 3] = [KernelPath::Amx, KernelPath::Avx2, KernelPath::Portable];

    /// The first supported path of [`KernelPath::AUTO`].
    pub fn best() -> KernelPath {
        KernelPath::AUTO
            .into_iter()
            .find(|p| p.is_supported())
            .unwrap_or(KernelPath::Portable)
    }

    /// The path [`KERNEL_ENV`] names (any of [`KernelPath::ALL`]), or [`KernelPath::best`]
    /// when it is unset, empty or `auto`.
    ///
    /// Errors: a name that is not a path, or a path this CPU does not run (the message
    /// says which).
    pub fn from_env() -> Result<KernelPath, String> {
        let value = std::env::var(KERNEL_ENV).unwrap_or_default();
        match value.trim() {
            "" | "auto" => Ok(KernelPath::best()),
            name => {
                let path = KernelPath::ALL
                    .into_iter()
                    .find(|p| p.name() == name)
                    .ok_or_else(|| {
                        format!(
                            "{KERNEL_ENV}={name} is not a kernel path (amx, avx512, avx2, portable or auto)"
                        )
                    })?;
                if path.is_supported() {
                    Ok(path)
                } else {
                    Err(format!(
                        "{KERNEL_ENV}={name}: this CPU does not support that kernel path"
                    ))
                }
            }
        }
    }

    /// How the path runs its `bf16` block products for batches, if it has them.
    fn products(self) -> Option<amx::Products> {
        match self {
            KernelPath::Amx => Some(amx::Products::Tiles),
            KernelPath::Avx512 => Some(amx::Products::Vectors),
            KernelPath::Avx2 | KernelPath::Portable => None,
        }
    }

    /// Which compilation of the element-wise steps the path runs.
    pub(super) fn level(self) -> Level {
        match self {
            KernelPath::Amx | KernelPath::Avx512 => Level::Avx512,
            KernelPath::Avx2 => Level::Avx2,
            KernelPath::Portable => Level::Baseline,
        }
    }
}

impl fmt::Display for KernelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A weight matrix `[out][in]` in the forms its path reads: the Q4_0 blocks split into
/// nibbles and scales (the few-row kernel), and either `f32` values (`matrixmultiply`)
/// or `bf16` B tiles (the AMX and AVX-512 paths). All forms hold the same weights, `(nibble − 8) · d`, the `bf16`
/// tiles rounded to 8 significant bits.
pub(super) struct Matrix {
    /// 16 bytes of nibbles per 32-weight block, blocks in row order (the Q4_0 block
    /// without its scale).
    pub(super) nibbles: Vec<u8>,
    /// Each block's scale `d`, as `f32`.
    pub(super) scales: Vec<f32>,
    /// The weights as `f32`, row-major; empty on the AMX and AVX-512 paths.
    pub(super) dense: Vec<f32>,
    /// The weights as `bf16` B tiles (`amx::pack`); empty except on the AMX and AVX-512
    /// paths.
    pub(super) tiles: Vec<u16>,
}

impl Matrix {
    /// The `rows × cols` matrix whose Q4_0 blocks are `blocks`, prepared for `path`.
    pub(super) fn from_q4(blocks: &[u8], rows: usize, cols: usize, path: KernelPath) -> Matrix {
        let mut dense = vec![0f32; rows * cols];
        dequantise_q4(blocks, &mut dense);
        let mut nibbles = Vec::with_capacity(rows * cols / 2);
        let mut scales = Vec::with_capacity(rows * cols / Q4_BLOCK);
        for block in blocks.chunks_exact(Q4_BLOCK_BYTES) {
            scales.push(f16_to_f32(u16::from_le_bytes([block[0], block[1]])));
            nibbles.extend_from_slice(&block[2..]);
        }
        let mut tiles = Vec::new();
        if path.products().is_some() && rows.is_multiple_of(32) && cols.is_multiple_of(32) {
            tiles = amx::pack(&dense, rows, cols);
            dense = Vec::new();
        }
        Matrix {
            nibbles,
            scales,
            dense,
            tiles,
        }
    }
}

/// What [`linear`] applies to each output after adding the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Activation {
    /// Nothing.
    None,
    /// BERT's exact GELU ([`vector::gelu`]).
    Gelu,
    /// No activation, and the result is added to `y` instead of replacing it (a
    /// residual connection).
    Residual,
}

/// `y[rows × n_out] = activation(x[rows × n_in] · wᵀ + b)`, with `w` row-major
/// `[n_out][n_in]`, by `path`'s kernels (the module documentation says which for how
/// many rows). The AMX kernel applies the activation while it writes each block out;
/// the others over `y` afterwards.
#[allow(clippy::too_many_arguments)]
pub(super) fn linear(
    path: KernelPath,
    x: &[f32],
    rows: usize,
    n_in: usize,
    w: &Matrix,
    b: &[f32],
    n_out: usize,
    y: &mut [f32],
    activation: Activation,
) {
    // Each kernel checks the shapes it relies on and declines what it cannot do.
    if let Some(products) = bf16_products(path, rows)
        && amx::linear(products, x, rows, n_in, w, b, n_out, y, activation)
    {
        return;
    }
    let few = rows <= FEW_ROWS && path != KernelPath::Portable;
    let product = |y: &mut [f32]| {
        if !(few && avx2::linear(x, rows, n_in, w, b, n_out, y)) {
            linear_packed(x, rows, n_in, w, b, n_out, y);
        }
    };
    match activation {
        Activation::None => product(y),
        Activation::Gelu => {
            product(y);
            vector::gelu(path.level(), &mut y[..rows * n_out]);
        }
        Activation::Residual => {
            let mut result = vec![0f32; rows * n_out];
            product(&mut result);
            vector::add_assign(path.level(), &mut y[..rows * n_out], &result);
        }
    }
}

/// The feed-forward block with its residual connection over `rows` tokens of `x`
/// (`[rows][hidden]`): `x += W_out · gelu(W_in · x + b_in) + b_out`. The middle
/// activations (`[rows][ff]`) go through `mid`, which is grown as needed, except on AMX
/// tiles, which keep them in `bf16` in a buffer of their own ([`amx::feed_forward`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn feed_forward(
    path: KernelPath,
    x: &mut [f32],
    rows: usize,
    hidden: usize,
    ff: usize,
    (w_in, b_in): (&Matrix, &[f32]),
    (w_out, b_out): (&Matrix, &[f32]),
    mid: &mut Vec<f32>,
) {
    if let Some(products) = bf16_products(path, rows)
        && amx::feed_forward(products, x, rows, hidden, ff, w_in, b_in, w_out, b_out)
    {
        return;
    }
    if mid.len() < rows * ff {
        mid.resize(rows * ff, 0.0);
    }
    linear(path, x, rows, hidden, w_in, b_in, ff, mid, Activation::Gelu);
    linear(
        path,
        &mid[..rows * ff],
        rows,
        ff,
        w_out,
        b_out,
        hidden,
        x,
        Activation::Residual,
    );
}

/// How a forward pass over `rows` tokens on `path` runs its products in `bf16`, if it
/// does: more than [`FEW_ROWS`] rows on the AMX path (tiles) or the AVX-512 path
/// (vectors).
fn bf16_products(path: KernelPath, rows: usize) -> Option<amx::Products> {
    path.products().filter(|_| rows > FEW_ROWS)
}

/// Multi-head self-attention of one sequence of `len` tokens, part of a forward pass over
/// `rows` tokens: `qkv` is `[len][3 · hidden]` (queries, keys and values side by side),
/// the per-head contexts go side by side into `out` (`[len][hidden]`). In `bf16` on AMX
/// tiles or AVX-512 vectors when [`linear`] uses them for `rows` (and heads are 32
/// wide), else in `f32` through `matrixmultiply`.
pub(super) fn attention(
    path: KernelPath,
    rows: usize,
    qkv: &[f32],
    len: usize,
    hidden: usize,
    heads: usize,
    out: &mut [f32],
) {
    let scale = 1.0 / ((hidden / heads) as f32).sqrt();
    if let Some(products) = bf16_products(path, rows)
        && amx::attention(products, qkv, len, hidden, heads, scale, out)
    {
        return;
    }
    attention_f32(path.level(), qkv, len, hidden, heads, scale, out);
}

/// [`attention`] in `f32`: `matrixmultiply` for `scale · Q·Kᵀ` and `P·V` per head, the
/// soft-max by [`vector::softmax_rows`].
fn attention_f32(
    level: Level,
    qkv: &[f32],
    len: usize,
    hidden: usize,
    heads: usize,
    scale: f32,
    out: &mut [f32],
) {
    let h = hidden;
    let hd = h / heads;
    assert!(heads > 0 && qkv.len() >= len * 3 * h && out.len() >= len * h);
    let mut scores = vec![0f32; len * len];
    for head in 0..heads {
        let q = qkv[head * hd..].as_ptr();
        let k = qkv[h + head * hd..].as_ptr();
        let v = qkv[2 * h + head * hd..].as_ptr();
        // scores[len × len] = scale · Q_head · K_headᵀ
        // SAFETY: every pointer and stride addresses inside `qkv` (`len` rows of `3h`
        // values, columns `head·hd .. head·hd + hd` of each third), `scores`
        // (`len × len`) and `out` (`len` rows of `h`), as asserted.
        unsafe {
            matrixmultiply::sgemm(
                len,
                hd,
                len,
                scale,
                q,
                (3 * h) as isize,
                1,
                k,
                1,
                (3 * h) as isize,
                0.0,
                scores.as_mut_ptr(),
                len as isize,
                1,
            );
        }
        vector::softmax_rows(level, &mut scores, len);
        // out[:, head] = softmax · V_head
        // SAFETY: as above.
        unsafe {
            matrixmultiply::sgemm(
                len,
                len,
                hd,
                1.0,
                scores.as_ptr(),
                len as isize,
                1,
                v,
                (3 * h) as isize,
                1,
                0.0,
                out[head * hd..].as_mut_ptr(),
                h as isize,
                1,
            );
        }
    }
}

/// [`linear`] through `matrixmultiply` over the `f32` weights (any CPU, any row count).
fn linear_packed(
    x: &[f32],
    rows: usize,
    n_in: usize,
    w: &Matrix,
    b: &[f32],
    n_out: usize,
    y: &mut [f32],
) {
    assert!(
        x.len() >= rows * n_in
            && w.dense.len() == n_out * n_in
            && b.len() == n_out
            && y.len() >= rows * n_out,
        "the f32 form of this matrix is missing or of another shape"
    );
    for row in y[..rows * n_out].chunks_exact_mut(n_out) {
        row.copy_from_slice(b);
    }
    // SAFETY: the assertion above bounds every access of the three matrices.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            n_in,
            n_out,
            1.0,
            x.as_ptr(),
            n_in as isize,
            1,
            w.dense.as_ptr(),
            1,
            n_in as isize,
            1.0,
            y.as_mut_ptr(),
            n_out as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests;
