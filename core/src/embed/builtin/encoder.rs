//! The encoder network: embeddings, 12 BERT layers (self-attention and feed-forward,
//! each followed by a residual addition and layer normalisation), mean pooling and L2
//! normalisation. Matrix products go through [`kernels::linear`] and
//! [`kernels::attention`] on the network's [`KernelPath`], element-wise steps through
//! [`kernels::vector`]. Activations are `f32` between the steps.
//!
//! Several token sequences are packed into one activation matrix (no padding);
//! attention stays within each sequence.

use super::kernels::{self, Activation, KernelPath, Matrix, vector};
use super::weights::{Q4_BLOCK, Q4_BLOCK_BYTES, dequantise_q4};

/// One encoder layer; matrices row-major `[out][in]`.
pub(super) struct Layer {
    /// Query, key and value projections stacked: `[3 × hidden][hidden]`.
    pub(super) qkv_w: Matrix,
    pub(super) qkv_b: Vec<f32>,
    pub(super) attn_out_w: Matrix,
    pub(super) attn_out_b: Vec<f32>,
    pub(super) attn_norm_w: Vec<f32>,
    pub(super) attn_norm_b: Vec<f32>,
    pub(super) ff_in_w: Matrix,
    pub(super) ff_in_b: Vec<f32>,
    pub(super) ff_out_w: Matrix,
    pub(super) ff_out_b: Vec<f32>,
    pub(super) out_norm_w: Vec<f32>,
    pub(super) out_norm_b: Vec<f32>,
}

/// The encoder, as [`super::weights::parse`] builds it.
pub(super) struct Network {
    pub(super) hidden: usize,
    pub(super) heads: usize,
    pub(super) ff: usize,
    pub(super) vocab: usize,
    pub(super) max_positions: usize,
    pub(super) eps: f32,
    /// The kernels the matrices were prepared for.
    pub(super) path: KernelPath,
    /// The whole weights file; `word_offset` locates the 4-bit word table in it.
    pub(super) file: Vec<u8>,
    pub(super) word_offset: usize,
    /// Position embeddings `[max_positions][hidden]` plus token type 0, added.
    pub(super) position_plus_type: Vec<f32>,
    pub(super) emb_norm_w: Vec<f32>,
    pub(super) emb_norm_b: Vec<f32>,
    pub(super) layers: Vec<Layer>,
}

impl Network {
    /// Runs the encoder over several token sequences packed into one
    /// `[tokens × hidden]` matrix; returns one mean-pooled, L2-normalised
    /// vector per sequence. Every sequence is non-empty (it holds `<s>` and
    /// `</s>`) and at most `max_positions` long. Runs on the calling thread.
    pub(super) fn embed(&self, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let level = self.path.level();
        let total: usize = seqs.iter().map(Vec::len).sum();
        let mut spans = Vec::with_capacity(seqs.len());
        let mut x = vec![0f32; total * h];
        let mut at = 0;
        let row_blocks = h / Q4_BLOCK * Q4_BLOCK_BYTES;
        for seq in seqs {
            spans.push((at, seq.len()));
            for (pos, &id) in seq.iter().enumerate() {
                let id = (id as usize).min(self.vocab - 1);
                let row = &mut x[(at + pos) * h..(at + pos + 1) * h];
                let start = self.word_offset + id * row_blocks;
                dequantise_q4(&self.file[start..start + row_blocks], row);
                let pos = pos.min(self.max_positions - 1);
                vector::add_assign(level, row, &self.position_plus_type[pos * h..(pos + 1) * h]);
            }
            at += seq.len();
        }
        vector::layer_norm(
            level,
            &mut x,
            h,
            &self.emb_norm_w,
            &self.emb_norm_b,
            self.eps,
        );

        let mut qkv = vec![0f32; total * 3 * h];
        let mut ctx = vec![0f32; total * h];
        let mut mid = Vec::new();
        for layer in &self.layers {
            kernels::linear(
                self.path,
                &x,
                total,
                h,
                &layer.qkv_w,
                &layer.qkv_b,
                3 * h,
                &mut qkv,
                Activation::None,
            );
            for &(start, len) in &spans {
                kernels::attention(
                    self.path,
                    total,
                    &qkv[start * 3 * h..(start + len) * 3 * h],
                    len,
                    h,
                    self.heads,
                    &mut ctx[start * h..(start + len) * h],
                );
            }
            kernels::linear(
                self.path,
                &ctx,
                total,
                h,
                &layer.attn_out_w,
                &layer.attn_out_b,
                h,
                &mut x,
                Activation::Residual,
            );
            vector::layer_norm(
                level,
                &mut x,
                h,
                &layer.attn_norm_w,
                &layer.attn_norm_b,
                self.eps,
            );
            kernels::feed_forward(
                self.path,
                &mut x,
                total,
                h,
                self.ff,
                (&layer.ff_in_w, &layer.ff_in_b),
                (&layer.ff_out_w, &layer.ff_out_b),
                &mut mid,
            );
            vector::layer_norm(
                level,
                &mut x,
                h,
                &layer.out_norm_w,
                &layer.out_norm_b,
                self.eps,
            );
        }

        spans
            .iter()
            .map(|&(start, len)| {
                let mut v = vec![0f32; h];
                for row in x[start * h..(start + len) * h].chunks_exact(h) {
                    vector::add_assign(level, &mut v, row);
                }
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|a| *a /= norm);
                }
                v
            })
            .collect()
    }
}
