//! `folio/search`, `folio/reindex` and `folio/status`: custom requests answered by the
//! core host of a root (`lsp/src/hosts.rs`), with core's contracts: `folio/search` takes
//! and gives the one search request and answer (`host::search`, as `kb_search`),
//! `folio/status` is `kb_status`'s answer, and `folio/reindex` runs a pass over the
//! whole root and reports it.
//!
//! The index is the root's `.folio/index.db` (core `index::default_db_path`), the same
//! one `folio mcp` and `folio index` use. The host follows the root's changes, so a
//! search never reindexes; hits in documents open in the editor come from their buffers.

use std::path::PathBuf;

use folio_core::host::search::{SearchRequest, SearchResponse};
use folio_core::host::status::LastRun;
use folio_core::workspace::Config;
use serde::Serialize;

use crate::session::Session;

/// `folio/search` parameters: the one search request of every front end (core
/// `host::search::SearchRequest`, the fields of `kb_search`).
pub type SearchParams = SearchRequest;

/// `folio/search` result: the one search answer of every front end (core
/// `host::search::SearchResponse`); each hit's `file_uri` is what the editor opens.
pub type SearchResult = SearchResponse;

/// `folio/reindex` result: the pass's counts (core `host::status::LastRun`).
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

/// The root a custom request works on, taken under the lock: the folder and the
/// configuration of the first workspace root (a lone file's folder when there is none).
pub fn target(s: &Session) -> anyhow::Result<(PathBuf, Config)> {
    let root = s
        .roots
        .iter()
        .find(|r| !r.single_file)
        .or_else(|| s.roots.first())
        .ok_or_else(|| anyhow::anyhow!("no workspace folder: open a folder to search it"))?;
    Ok((root.folder.clone(), root.file_config.clone()))
}

/// The wire summary of a pass over `folder`.
pub fn summary(folder: &std::path::Path, last: &LastRun) -> ReindexResult {
    ReindexResult {
        root: folder.display().to_string(),
        files: last.files,
        indexed: last.indexed,
        unchanged: last.unchanged,
        removed: last.removed,
        skipped: last.skipped,
        elapsed_ms: last.elapsed_ms,
    }
}
