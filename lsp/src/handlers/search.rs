//! `folio/search` and `folio/reindex`: custom requests over the core index of a root.
//!
//! The index is the root's `.folio/index.db` (core `index::default_db_path`), the same
//! one `folio mcp` and `folio index` use. Each `folio/search` first runs an incremental
//! index pass (only changed files are parsed and written), then searches, so results
//! follow the files on disk without a background task. Unsaved buffer changes are not
//! searched.

use std::path::{Path, PathBuf};

use folio_core::index::{IndexSummary, default_db_path, index_root};
use folio_core::search::pipeline::{PipelineError, PipelineOptions, SearchMode};
use folio_core::search::{SearchError, SearchQuery};
use folio_core::store::Store;
use folio_core::workspace::Config;
use serde::{Deserialize, Serialize};

use crate::convert;
use crate::session::Session;

/// `folio/search` parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchParams {
    /// Words and "quoted phrases", as kb_search.
    pub query: String,
    /// Maximum hits, 1–100 (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Path globs to include; a glob starting with `!` excludes.
    #[serde(default)]
    pub path_globs: Vec<String>,
    /// `hybrid` (default; lexical until the root has vectors), `semantic` or `lexical`, as kb_search.
    #[serde(default)]
    pub mode: Option<String>,
    /// Diversify with MMR (default false).
    #[serde(default)]
    pub mmr: bool,
    /// Collapse several hits of one section into the section (default false).
    #[serde(default)]
    pub parent_retriever: bool,
}

/// One hit, as kb_search's, with a `file:` URI.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    pub path: String,
    pub uri: String,
    pub pointer: String,
    pub heading_path: Vec<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    pub snippet: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expanded_from: Vec<String>,
}

/// `folio/search` result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    pub results: Vec<Hit>,
    pub low_confidence: bool,
    pub filter_applied: Vec<String>,
    /// The mode that ran.
    pub mode: String,
}

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

/// Checks the parameters (an invalid-params error message when wrong).
pub fn check(params: &SearchParams) -> Result<(), String> {
    if params.query.trim().is_empty() {
        return Err("`query` must not be empty".into());
    }
    if !(1..=100).contains(&params.limit.unwrap_or(10)) {
        return Err("`limit` must be between 1 and 100".into());
    }
    if let Some(mode) = &params.mode {
        mode.parse::<SearchMode>()?;
    }
    Ok(())
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

/// Indexes incrementally, then searches. `Err(Ok(msg))` is an invalid argument.
/// `Err(Err(_))` carries "not configured" (semantic without vectors, as kb_search's
/// NOT_CONFIGURED) and index failures.
pub fn search(
    folder: &Path,
    config: &Config,
    params: &SearchParams,
    embedding: Option<&folio_core::embed::runner::Embedding>,
) -> Result<SearchResult, Result<String, anyhow::Error>> {
    reindex(folder, config).map_err(Err)?;
    let store = Store::open(&default_db_path(folder)).map_err(|e| Err(e.into()))?;
    let query = SearchQuery {
        text: params.query.clone(),
        limit: params.limit.unwrap_or(10),
        path_globs: params.path_globs.clone(),
        ..SearchQuery::default()
    };
    let mode = params
        .mode
        .as_deref()
        .map_or(Ok(SearchMode::Hybrid), str::parse::<SearchMode>)
        .map_err(Ok)?;
    let options = PipelineOptions {
        mmr: params.mmr,
        parent_retriever: params.parent_retriever,
        ..PipelineOptions::for_mode(mode)
    };
    let res = folio_core::search::semantic::search_with_runner(&store, embedding, &query, &options)
        .map_err(|e| match e {
            PipelineError::Search(SearchError::InvalidArgument(m)) => Ok(m),
            PipelineError::NotConfigured(m) => Err(anyhow::anyhow!("not configured: {m}")),
            PipelineError::Search(other) => Err(other.into()),
        })?;
    let ran = res.mode;
    let results = res
        .results
        .into_iter()
        .map(|p| (p.hit, p.expanded_from))
        .map(|(h, expanded_from)| Hit {
            uri: convert::path_to_uri(&folder.join(&h.path))
                .map(|u| u.as_str().to_string())
                .unwrap_or_default(),
            path: h.path,
            pointer: h.pointer,
            heading_path: h.heading_path,
            start_line: h.start_line,
            end_line: h.end_line,
            score: h.score,
            snippet: h.snippet,
            expanded_from,
        })
        .collect();
    Ok(SearchResult {
        results,
        low_confidence: res.low_confidence,
        filter_applied: res.filter_applied,
        mode: ran.as_str().to_owned(),
    })
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
