//! Embeddings: one [`Embedder`] trait and its providers.
//!
//! Providers (docs/configuration.md, `[embed]`): `none` (lexical search only), the
//! built-in offline default, an Ollama-compatible endpoint (`POST /api/embed`)
//! and an OpenAI-compatible endpoint (`POST /v1/embeddings`).
//!
//! Vectors are `f32`, L2-normalised by the provider, so cosine similarity is the
//! dot product. The store's vec0 table uses sqlite-vec's cosine distance
//! (`1 − cosine`); see [`crate::store::vectors`].
//!
//! - [`builtin`]: the built-in offline model (multilingual-e5-small, 4-bit),
//!   installed by `scripts/fetch-model`.
//! - [`settings`]: `[embed]` configuration from `folio.toml`, the user's config
//!   and the command line, the remote-endpoint policy, and [`settings::make_embedder`].
//! - [`http`]: the Ollama- and OpenAI-compatible HTTP providers.
//! - [`use_m3`]: the second built-in model (USE-Multilingual v3), whose whole-document
//!   vectors make hybrid search's ensemble leg ([`Embedder::ensemble`]).
//! - [`pass`]: the incremental embedding pass ([`pass::embed_pending`],
//!   [`pass::spawn_embed_pass`]) and its shared [`pass::EmbedProgress`].

pub mod builtin;
pub mod http;
pub mod pass;
pub mod runner;
pub mod settings;
pub mod use_m3;

#[cfg(test)]
pub(crate) mod testing;

/// A failure to embed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The provider refused this input (too long, bad bytes, a 4xx for this
    /// batch). The caller skips the affected file and counts it.
    #[error("input refused: {0}")]
    Refused(String),
    /// The provider is unreachable or failing (connection refused, 5xx,
    /// timeout, model files missing). The caller stops embedding and says so.
    #[error("embedding provider unavailable: {0}")]
    Unavailable(String),
    /// The provider answered with something that is not a valid embedding
    /// (wrong dimension count, non-finite values, malformed JSON).
    #[error("invalid embedding response: {0}")]
    Invalid(String),
}

/// Turns text into fixed-size vectors.
///
/// Implementations are called from blocking threads (never from an async
/// executor thread) and must be `Send + Sync`; they may batch internally.
pub trait Embedder: Send + Sync {
    /// A stable identifier of the model and its settings, e.g.
    /// `builtin:multilingual-e5-small` or `openai:text-embedding-3-small@http://127.0.0.1:8080`.
    /// Stored with every vector: a change of id re-embeds every chunk.
    fn model_id(&self) -> &str;

    /// The number of dimensions of every returned vector; 0 while unknown
    /// (an HTTP provider learns it from its first answer).
    fn dimensions(&self) -> usize;

    /// How many passages the embedding pass hands to one
    /// [`Embedder::embed_passages`] call (default 32).
    fn batch_size(&self) -> usize {
        32
    }

    /// Embeds passages (chunks being indexed), one vector per input, in
    /// order, each L2-normalised.
    ///
    /// Errors: see [`EmbedError`]; a `Refused` error refers to the whole batch.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Embeds one search query (models such as E5 embed queries and
    /// passages with different prefixes), L2-normalised.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;

    /// A second model whose whole-document vectors make the ensemble leg of hybrid
    /// search (`search::pipeline::PipelineOptions::ensemble_weight`), or `None`. The
    /// built-in model carries USE-Multilingual v3 ([`use_m3`]) when it is installed;
    /// the HTTP providers carry none. The default is `None`.
    fn ensemble(&self) -> Option<&dyn Embedder> {
        None
    }

    /// Why the second model this provider pairs with is not loaded, or `None` when it is
    /// loaded or the provider pairs with none: the built-in provider without
    /// USE-Multilingual v3 installed, or with an unusable copy of it (the message says
    /// which and names `scripts/fetch-model`). Hybrid search then runs without its
    /// ensemble leg. `folio index` prints it and `kb_status` reports it
    /// (`embedding.ensemble_missing`). The default is `None`.
    fn ensemble_missing(&self) -> Option<&str> {
        None
    }
}

/// L2-normalises `vector` in place after checking it.
///
/// Errors: [`EmbedError::Invalid`] for an empty vector, a non-finite value, or
/// a zero vector (which has no direction).
pub fn normalize(vector: &mut [f32]) -> Result<(), EmbedError> {
    if vector.is_empty() {
        return Err(EmbedError::Invalid("an empty vector".to_owned()));
    }
    if vector.iter().any(|x| !x.is_finite()) {
        return Err(EmbedError::Invalid(
            "a vector with a non-finite value".to_owned(),
        ));
    }
    let norm = vector
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(EmbedError::Invalid("a zero vector".to_owned()));
    }
    for x in vector.iter_mut() {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(())
}
