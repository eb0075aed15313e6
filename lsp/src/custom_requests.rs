//! The custom requests `folio/search` and `folio/reindex`: they run the core index and
//! search off the async threads, with the root's background embedder.

use std::sync::{Arc, PoisonError};

use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use crate::convert;
use crate::handlers;
use crate::server::Backend;

impl Backend {
    /// `folio/search`: the hits of kb_search, from the core index of the first root
    /// (brought up to date incrementally first; see `handlers::search`).
    pub async fn folio_search(
        &self,
        params: handlers::search::SearchParams,
    ) -> Result<handlers::search::SearchResult> {
        let (folder, config) = self.request("folio/search", handlers::search::target)?;
        params.plan(&config.search).map_err(convert::host_error)?;
        let embedding = self.embedding_of(&folder, &config);
        self.shared.show_config_problems().await;
        let result = tokio::task::spawn_blocking(move || {
            let result = handlers::search::search(&folder, &config, &params, embedding.as_deref());
            // Embeds what changed, in the background, after answering: the next search can use it.
            if let Some(embedding) = &embedding {
                embedding.start(folio_core::index::default_db_path(&folder));
            }
            result
        })
        .await
        .map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: format!("folio/search: {e}").into(),
            data: None,
        })?;
        result.map_err(|err| {
            tracing::warn!("folio/search: {}", err.message);
            convert::host_error(err)
        })
    }

    /// The embedding runner of `folder`, made on first use from its `folio.toml` and the
    /// user's configuration, and again when the settings resolved from them differ from
    /// the runner's (the root's `[embed]` table or the user's config file changed; both
    /// are read at each request, a small file each). `None` with
    /// `Options::no_embeddings`. Settings that cannot be used (a bad user config, a
    /// remote endpoint nobody allowed) leave search lexical and are shown to the user
    /// once per runner, as a configuration problem (`window/showMessage`).
    fn embedding_of(
        &self,
        folder: &std::path::Path,
        config: &folio_core::workspace::Config,
    ) -> Option<Arc<folio_core::embed::runner::EmbeddingRunner>> {
        if self.no_embeddings {
            return None;
        }
        let settings = folio_core::config::user::UserConfig::load().and_then(|user| {
            folio_core::embed::settings::EmbedSettings::resolve(&config.embed, &user.embed, false)
        });
        let mut map = self
            .embeddings
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((made_from, runner)) = map.get(folder)
            && *made_from == settings
        {
            return Some(Arc::clone(runner));
        }
        let problem = settings.as_ref().err().map(|reason| {
            tracing::warn!(%reason, "embeddings are off");
            format!("folio: {reason}; embeddings are off, so folio/search matches words only until it is fixed")
        });
        let runner = Arc::new(folio_core::embed::runner::EmbeddingRunner::new(
            settings.clone(),
        ));
        map.insert(folder.to_path_buf(), (settings, Arc::clone(&runner)));
        drop(map);
        self.shared.lock().config_problems.extend(problem);
        Some(runner)
    }

    /// `folio/reindex`: an incremental index pass of the first root; returns its summary.
    /// With a work-done progress (`folio/reindex/N`) when the client shows them.
    pub async fn folio_reindex(&self) -> Result<handlers::search::ReindexResult> {
        let (folder, config) = self.request("folio/reindex", handlers::search::target)?;
        let embedding = self.embedding_of(&folder, &config);
        self.shared.show_config_problems().await;
        let work = self
            .shared
            .begin_work(
                "reindex",
                "folio: reindexing",
                format!("indexing {}", folder.display()),
            )
            .await;
        let result = tokio::task::spawn_blocking(move || {
            let summary = handlers::search::reindex(&folder, &config)
                .map(|s| handlers::search::summary(&folder, &s));
            if let Some(embedding) = &embedding {
                embedding.start(folio_core::index::default_db_path(&folder));
            }
            summary
        })
        .await
        .map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: format!("folio/reindex: {e}").into(),
            data: None,
        })
        .and_then(|r| {
            r.map_err(|err| Error {
                code: ErrorCode::InternalError,
                message: format!("folio/reindex: {err:#}").into(),
                data: None,
            })
        });
        if let Some(work) = work {
            let message = match &result {
                Ok(r) => format!(
                    "indexed {} of {} files ({} unchanged, {} removed)",
                    r.indexed, r.files, r.unchanged, r.removed
                ),
                Err(e) => format!("failed: {}", e.message),
            };
            work.end(message).await;
        }
        result
    }
}
