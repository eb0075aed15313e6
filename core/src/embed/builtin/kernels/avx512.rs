//! The `bf16` block product of the AMX kernel (`amx.rs`) in AVX-512 BF16 instructions,
//! for x86-64 CPUs that have AVX-512 BF16 and no AMX (AMD Zen 4 and later, Intel Cooper
//! Lake): the same operands in the same layouts, the same `f32` sums, so every step of
//! that kernel around its products (packing, the rounding to `bf16`, the attention's
//! layouts and soft-max) runs unchanged.
//!
//! `VDPBF16PS` adds, in each of 16 `f32` lanes, the products of one pair of `bf16`
//! values of each operand: with a B tile's row `r` (for 16 outputs, the pair of weights
//! `2r`, `2r + 1`) as one operand and one row's pair of inputs `2r`, `2r + 1` broadcast
//! to every lane as the other, it adds that row's share of 16 outputs at once, which is
//! what one row of `TDPBF16PS` does. A 32 × 32 block is four groups of 8 rows, each
//! group holding its 8 × 32 sums in 16 registers while the pairs of B rows stream past.

use std::arch::x86_64::*;
use std::sync::OnceLock;

/// Rows of a block that share one pass over the B tiles (their sums stay in registers:
/// 8 rows × 2 panels of 16 outputs = 16 of the 32 vector registers).
const GROUP: usize = 8;

/// Whether this CPU runs the kernel: `std` detects AVX-512F, AVX-512BW (the key and value
/// layouts of the attention), AVX-512VL and AVX-512 BF16, and AVX2 and FMA (the 4-bit
/// kernel for a few rows). Asked once per process.
pub(super) fn supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512bf16")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
    })
}

/// `c = A · B` for one block of 32 × 32 `f32`, with the operands and result of the AMX
/// kernel's block: `A` is 32 rows of `bf16` starting at `a` (`stride_a` bytes apart), `B`
/// two panels of B tiles starting at `b0` and `b1` (16 outputs each, 1 KiB per 32-wide
/// slice); the sum runs over `steps` slices, advancing 64 bytes along the rows of `A` and
/// 1 KiB along each panel. The result is stored at `c` in rows `ldc` bytes apart (columns
/// 0..16 from `b0`, 16..32 from `b1`).
///
/// # Safety
/// The CPU supports AVX-512F and AVX-512 BF16. The 32 rows of `steps · 64` bytes at `a`,
/// the `steps` KiB at `b0` and at `b1`, and the 32 rows of 128 bytes at `c` are valid for
/// reading (writing, for `c`).
#[target_feature(enable = "avx512f,avx512bf16,avx512vl")]
pub(super) unsafe fn block(
    a: *const u16,
    stride_a: usize,
    b0: *const u16,
    b1: *const u16,
    steps: usize,
    c: *mut f32,
    ldc: usize,
) {
    for group in 0..32 / GROUP {
        let mut sums = [[_mm512_setzero_ps(); 2]; GROUP];
        for step in 0..steps {
            // SAFETY (the pointers below): slice `step` of each panel is the 512 `u16`
            // at `512 · step`; row `group · GROUP + i` of `A` starts `stride_a` bytes per
            // row after `a`, and its pair `2r` of slice `step` is at `32 · step + 2r`:
            // all inside the ranges the caller guarantees.
            let (p0, p1) = unsafe { (b0.add(512 * step), b1.add(512 * step)) };
            for r in 0..16 {
                let (w0, w1) = unsafe {
                    (
                        std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(
                            p0.add(32 * r).cast(),
                        )),
                        std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(
                            p1.add(32 * r).cast(),
                        )),
                    )
                };
                for (i, sum) in sums.iter_mut().enumerate() {
                    let pair = unsafe {
                        a.byte_add((group * GROUP + i) * stride_a)
                            .add(32 * step + 2 * r)
                            .cast::<i32>()
                            .read_unaligned()
                    };
                    // SAFETY: a vector of 16 copies of the 32-bit pair is 32 `bf16`.
                    let x = unsafe {
                        std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(pair))
                    };
                    sum[0] = _mm512_dpbf16_ps(sum[0], x, w0);
                    sum[1] = _mm512_dpbf16_ps(sum[1], x, w1);
                }
            }
        }
        for (i, sum) in sums.iter().enumerate() {
            // SAFETY: row `group · GROUP + i` of `c`, 32 `f32` (128 bytes), inside the
            // range the caller guarantees.
            unsafe {
                let row = c.byte_add((group * GROUP + i) * ldc);
                _mm512_storeu_ps(row, sum[0]);
                _mm512_storeu_ps(row.add(16), sum[1]);
            }
        }
    }
}
