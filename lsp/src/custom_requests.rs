//! The custom requests `folio/search`, `folio/reindex` and `folio/status`: calls into
//! the root's core host ([`crate::hosts`]) off the async threads.

use std::sync::Arc;

use folio_core::host::Host;
use folio_core::host::status::StatusOutput;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use crate::convert;
use crate::handlers;
use crate::server::Backend;

/// A blocking task's failure to finish (a panic in it) as the request's error.
fn join_error(method: &str, e: tokio::task::JoinError) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: format!("{method}: {e}").into(),
        data: None,
    }
}

impl Backend {
    /// The host of the first root ([`handlers::search::target`]), opened on first use,
    /// and whether it opened now; shows any configuration problem.
    async fn host(&self, method: &str) -> Result<(std::path::PathBuf, Arc<Host>, bool)> {
        let (folder, config) = self.request(method, handlers::search::target)?;
        let endpoint = self.endpoint_of(&folder);
        let host = self
            .hosts
            .of(&self.shared, &folder, &config, endpoint, self.no_embeddings)
            .map_err(|e| Error {
                code: ErrorCode::InternalError,
                message: format!("{method}: {e:#}").into(),
                data: None,
            });
        self.shared.show_warnings().await;
        let (host, opened) = host?;
        Ok((folder, host, opened))
    }

    /// `folio/search`: `kb_search` on the first root's host, whose hits in open
    /// documents come from the editor's buffers.
    pub async fn folio_search(
        &self,
        params: handlers::search::SearchParams,
    ) -> Result<handlers::search::SearchResult> {
        // A bad request or `[search]` table is refused before a host opens.
        let (_, config) = self.request("folio/search", handlers::search::target)?;
        params.plan(&config.search).map_err(convert::host_error)?;
        let (_, host, opened) = self.host("folio/search").await?;
        if opened && let Err(e) = host.start_reindex(false) {
            tracing::warn!(error = %e.message, "the first index pass did not start");
        }
        tokio::task::spawn_blocking(move || host.search(&params))
            .await
            .map_err(|e| join_error("folio/search", e))?
            .map_err(|err| {
                tracing::warn!("folio/search: {}", err.message);
                convert::host_error(err)
            })
    }

    /// `folio/status`: `kb_status` of the first root's host.
    pub async fn folio_status(&self) -> Result<StatusOutput> {
        let (_, host, _) = self.host("folio/status").await?;
        tokio::task::spawn_blocking(move || host.status())
            .await
            .map_err(|e| join_error("folio/status", e))?
            .map_err(convert::host_error)
    }

    /// `folio/reindex`: a pass over the whole first root (after the running one, if any);
    /// returns its counts. With a work-done progress (`folio/reindex/N`) when the
    /// client shows them.
    pub async fn folio_reindex(&self) -> Result<handlers::search::ReindexResult> {
        let (folder, host, _) = self.host("folio/reindex").await?;
        let work = self
            .shared
            .begin_work(
                "reindex",
                "folio: reindexing",
                format!("indexing {}", folder.display()),
            )
            .await;
        let result = tokio::task::spawn_blocking(move || host.reindex_blocking(false))
            .await
            .map_err(|e| join_error("folio/reindex", e))
            .and_then(|r| r.map_err(convert::host_error))
            .and_then(|last| match &last.error {
                None => Ok(handlers::search::summary(&folder, &last)),
                Some(error) => Err(Error {
                    code: ErrorCode::InternalError,
                    message: format!("folio/reindex: {error}").into(),
                    data: None,
                }),
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
