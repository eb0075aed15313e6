//! `folio/search` and `folio/reindex`: custom requests over the core index of a root.
//! `folio/search` takes and gives core's one search contract (`host::search`).
//!
//! The index is the root's `.folio/index.db` (core `index::default_db_path`), the same
//! one `folio mcp` and `folio index` use. Each `folio/search` first runs an incremental
//! index pass (only changed files are parsed and written), then searches, so results
//! follow the files on disk without a background task. Unsaved buffer changes are not
//! searched.

use std::path::{Path, PathBuf};

use folio_core::host::search::{SearchRequest, SearchResponse, search_error};
use folio_core::host::{HostError, HostResult};
use folio_core::index::{IndexSummary, default_db_path, index_root};
use folio_core::store::Store;
use folio_core::workspace::Config;
use serde::Serialize;

use crate::session::Session;

/// `folio/search` parameters: the one search request of every front end (core
/// `host::search::SearchRequest`, the fields of `kb_search`).
pub type SearchParams = SearchRequest;

/// `folio/search` result: the one search answer of every front end (core
/// `host::search::SearchResponse`); each hit's `file_uri` is what the editor opens.
pub type SearchResult = SearchResponse;

/// `folio/reindex` result: the summary of the incremental pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReindexResult {
    pub root: String,
    pub files: usize,
    pub indexed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped: usize,
    pub elapsed_ms: u64,
}

/// What a search needs from the session, taken under the lock: the folder and configuration of the first root.
pub fn target(s: &Session) -> anyhow::Result<(PathBuf, Config)> {
    let root = s
        .roots
        .iter()
        .find(|r| !r.single_file)
        .or_else(|| s.roots.first())
        .ok_or_else(|| anyhow::anyhow!("no workspace folder: open a folder to search it"))?;
    Ok((root.folder.clone(), root.file_config.clone()))
}

/// Runs an incremental index pass of `folder`.
pub fn reindex(folder: &Path, config: &Config) -> anyhow::Result<IndexSummary> {
    Ok(index_root(
        folder,
        config,
        &default_db_path(folder),
        false,
        None,
    )?)
}

/// Indexes incrementally, then searches, with the reranker of the workspace's and the
/// user's `[rerank]` as they are now (`folio_core::rerank::select`). Errors are the
/// contract's ([`search_error`]): `INVALID_ARGUMENT` for a bad request, `NOT_CONFIGURED`
/// (semantic search without vectors, `rerank` without a reranker), `UNAVAILABLE` (the
/// reranker failed), `INTERNAL` for index failures.
pub fn search(
    folder: &Path,
    config: &Config,
    params: &SearchParams,
    embedding: Option<&folio_core::embed::runner::EmbeddingRunner>,
) -> HostResult<SearchResult> {
    let (query, options) = params.plan(&config.search)?;
    let rerank_setup = folio_core::rerank::setup_with_user_config(&config.rerank);
    let reranker =
        folio_core::rerank::select(params.rerank, &rerank_setup).map_err(search_error)?;
    reindex(folder, config).map_err(HostError::internal)?;
    let store = Store::open(&default_db_path(folder)).map_err(HostError::internal)?;
    let res = folio_core::search::semantic::search_with_runner(
        &store,
        embedding,
        reranker.map(|r| r as &dyn folio_core::search::pipeline::Reranker),
        &query,
        &options,
    )
    .map_err(search_error)?;
    let embedding = embedding.is_some_and(|e| e.is_running());
    Ok(SearchResponse::from_pipeline(folder, res, false, embedding))
}

/// The wire summary of a pass.
pub fn summary(folder: &Path, s: &IndexSummary) -> ReindexResult {
    ReindexResult {
        root: folder.display().to_string(),
        files: s.files,
        indexed: s.indexed,
        unchanged: s.unchanged,
        removed: s.removed,
        skipped: s.skipped.len(),
        elapsed_ms: s.elapsed_ms,
    }
}
