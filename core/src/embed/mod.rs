//! Embeddings: one [`Embedder`] trait and its providers.
//!
//! Providers (DESIGN.md "Embeddings"): `none` (lexical search only), the
//! built-in offline default, an Ollama-compatible endpoint (`POST /api/embed`)
//! and an OpenAI-compatible endpoint (`POST /v1/embeddings`).
//!
//! Vectors are `f32`, L2-normalised by the provider, so cosine similarity is the
//! dot product and sqlite-vec's L2 distance `d` maps to cosine `1 - d²/2`.

pub mod builtin;

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

    /// The number of dimensions of every returned vector.
    fn dimensions(&self) -> usize;

    /// Embeds passages (chunks being indexed), one vector per input, in
    /// order, each L2-normalised.
    ///
    /// Errors: see [`EmbedError`]; a `Refused` error refers to the whole batch.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Embeds one search query (models such as E5 embed queries and
    /// passages with different prefixes), L2-normalised.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}
