//! The embedder and the embedding pass of a one-shot front end (`folio index`,
//! `folio search`), run on the caller's thread: servers leave both to the background
//! runner ([`crate::embed::runner::EmbeddingRunner::start`] after each index pass).

use crate::embed::Embedder;
use crate::embed::pass::{EmbedProgress, EmbedSummary};
use crate::embed::runner::EmbedderLoad;

use super::{ErrorCode, Host, HostError, HostResult};

impl Host {
    /// Builds the embedder the host's settings describe, on this thread (a model may
    /// load: seconds), and keeps it for this host's searches; or says why there is none.
    pub fn load_embedder(&self) -> EmbedderLoad {
        self.embedding.load_now()
    }

    /// Whether the index holds vectors of `embedder`'s model (so hybrid search has a
    /// vector leg without a first embedding of the whole folder).
    ///
    /// Errors (`INTERNAL`): the index cannot be read.
    pub fn has_vectors_of(&self, embedder: &dyn Embedder) -> HostResult<bool> {
        let model = self.with_store(|store| store.vector_model().map_err(HostError::internal))?;
        Ok(model.is_some_and(|m| m.model_id == embedder.model_id()))
    }

    /// Embeds what the index lacks (every chunk with `clear_first`, whose stored
    /// vectors are deleted once the pass holds the embedding lock) on this thread, with
    /// the embedder [`Host::load_embedder`] built, reporting to `progress`.
    ///
    /// Errors: `NOT_CONFIGURED` when no embedder is built; `INTERNAL` when the index or
    /// the embedding lock fails (a provider that stops answering is not an error: the
    /// summary's `unavailable` says why the pass stopped).
    pub fn embed_now(
        &self,
        clear_first: bool,
        progress: &EmbedProgress,
    ) -> HostResult<EmbedSummary> {
        self.require_root()?;
        match self
            .embedding
            .embed_now(&self.db_path, clear_first, progress)
        {
            None => Err(HostError::new(
                ErrorCode::NotConfigured,
                "no embedder is loaded (Host::load_embedder first)",
            )),
            Some(result) => result.map_err(HostError::internal),
        }
    }
}
