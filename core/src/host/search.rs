//! The one search contract of every front end (`kb_search`, LSP `folio/search`, `folio
//! search --json`): the request with its limits ([`SearchRequest`], checked by
//! [`SearchRequest::plan`]), the serializable hit ([`SearchHit`]) and answer
//! ([`SearchResponse`]), and the mapping of pipeline errors to [`HostError`]
//! ([`search_error`]). Each front end maps its own wire to and from these in one place.

use crate::config::SearchConfig;
use crate::search::pipeline::{PipelineError, PipelineOptions, PipelineResults, SearchMode};
use crate::search::{SearchError, SearchQuery};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::parse::{Parsed, parse};

use super::read::resolve_pointer;
use super::{ErrorCode, Host, HostError, HostResult, doc_uri};

/// A search request: the query, the mode and pipeline switches, and the filters. Field
/// names are those of `kb_search` (GrooveSeek's, where it has them).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Words and "quoted phrases"; a chunk matching more of them ranks higher (BM25, any term may match). Prefix a word with `-` to exclude chunks containing it. Two-character Japanese/Chinese/Korean queries work.
    pub query: String,
    /// Maximum hits, 1–100 (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `hybrid` (default: BM25 and embedding similarity fused by Reciprocal Rank Fusion, k = 60; runs as `lexical` until the index has vectors — see kb_status `search_modes`), `semantic` (embedding similarity only; NOT_CONFIGURED without vectors) or `lexical` (BM25 only).
    #[serde(default)]
    pub mode: Option<String>,
    /// Diversify the hits with Maximal Marginal Relevance (default false).
    #[serde(default)]
    pub mmr: Option<bool>,
    /// MMR balance in [0, 1]: 1 is pure relevance, 0 pure diversity (default 0.7).
    #[serde(default)]
    pub mmr_lambda: Option<f64>,
    /// MMR penalty in [0, 1] for a second hit from an already picked document (default 0).
    #[serde(default)]
    pub mmr_same_doc_penalty: Option<f64>,
    /// Collapse two or more hits of one section into one hit covering the section, listing the absorbed chunks in `expanded_from` (default false).
    #[serde(default)]
    pub parent_retriever: Option<bool>,
    /// Hits of one file, best first (default 1: each file takes one place, and its other matching chunks are listed in its hit's `sections`; 0: no limit). With `mmr` or `parent_retriever` the default is 0: they choose what to show themselves.
    #[serde(default)]
    pub per_file: Option<usize>,
    /// `low_confidence` is set when the best score is less than this many times the mean score of the hits (default: off in hybrid mode, 1.1 on cosine distances in semantic mode; GrooveSeek uses 1.5; 0 disables the ratio check).
    #[serde(default)]
    pub min_confidence_ratio: Option<f64>,
    /// Rescore the candidates with the cross-encoder configured in `[rerank]` (kb_status `rerank`). Default: rerank when one is configured; false searches without it; true without one returns NOT_CONFIGURED. A reranker that fails returns UNAVAILABLE.
    #[serde(default)]
    pub rerank: Option<bool>,
    /// Path globs to include (`docs/**`); a glob starting with `!` excludes.
    #[serde(default)]
    pub path_globs: Vec<String>,
    /// Only this category: the first folder of the path (or frontmatter `category`). See kb_list_topics.
    #[serde(default)]
    pub category: Option<String>,
    /// Only this topic: the first two folders, `a/b` (or frontmatter `topic`). See kb_list_topics.
    #[serde(default)]
    pub topic: Option<String>,
    /// Only documents carrying at least one of these tags: frontmatter `tags` or inline `#tag`s (exact, case-sensitive; `project` also matches the nested `project/alpha`). See kb_list_topics `tags`.
    #[serde(default)]
    pub tags_any: Vec<String>,
    /// Only documents carrying all of these tags (matched as tags_any matches).
    #[serde(default)]
    pub tags_all: Vec<String>,
    /// Only documents with frontmatter `date` on or after this day (`YYYY-MM-DD`; the author's date, not the file time).
    #[serde(default)]
    pub date_from: Option<String>,
    /// Only documents with frontmatter `date` on or before this day (`YYYY-MM-DD`).
    #[serde(default)]
    pub date_to: Option<String>,
    /// Frontmatter fields to require: key → accepted values; the document's value (string, number, or any item of a list) must equal one of them, e.g. {"status": ["published"]}.
    #[serde(default)]
    pub fields: std::collections::BTreeMap<String, Vec<String>>,
    /// Frontmatter fields to exclude: key → values; documents whose value equals one of them are left out (documents without the key stay).
    #[serde(default)]
    pub fields_not: std::collections::BTreeMap<String, Vec<String>>,
    /// Only documents whose quality score is at least this (0–1). The score grows with the words of the body (1.0 at 100 words); a short body holding TODO/TBD/WIP is a stub (≤ 0.1); a frontmatter `quality` number wins.
    #[serde(default)]
    pub min_quality: Option<f64>,
    /// True: no quality floor at all, stubs included (`min_quality` is then ignored). folio has no floor unless `min_quality` sets one, so false (the default) changes nothing.
    #[serde(default)]
    pub include_low_quality: bool,
}

/// One hit, as every front end returns it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SearchHit {
    /// KB-relative path of the document.
    pub path: String,
    /// Pointer of the chunk's first element (for kb_read / kb_patch; may be stale if the file changed since indexing).
    pub pointer: String,
    /// Headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub end_line: u32,
    /// The mode's score, higher is better, comparable within one query only: BM25 (`lexical`), cosine similarity corrected for the collection (`semantic`; docs/search.md, "Centring"; `similarity` is the plain cosine), the RRF sum plus the document and ensemble legs' boosts (`hybrid`), or the reranker's score (`reranked: true`).
    pub score: f64,
    /// 1-based rank of the chunk in the lexical (BM25) leg, when that leg found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    /// 1-based rank of the chunk in the vector leg, when that leg found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<usize>,
    /// Cosine similarity of the chunk to the query, when the vector leg found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// MMR's value for the hit when it was picked (`mmr: true`): `λ · relevance − (1 − λ) ·
    /// the highest similarity to a hit picked before it − the same-document penalty when
    /// its document was picked before` (docs/search.md, "MMR"); the hits come in the
    /// order of their picking, and `score` stays the mode's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mmr_score: Option<f64>,
    /// Set when parent retrieval collapsed several hits of one section into this one: the pointers of the absorbed chunks, best first. The hit then covers the whole section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expanded_from: Option<Vec<String>>,
    /// Other chunks of this document the search found (best first, at most 3), listed here rather than as hits of their own: each file takes one place (`per_file`). Absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<crate::search::SectionHit>>,
    /// About 200 characters around the first match.
    pub snippet: String,
    /// Source hash of the document when indexed; compare with kb_read's sourceHash.
    #[serde(rename = "indexedSourceHash")]
    pub indexed_source_hash: String,
    /// Where the chunk is in a document other than Markdown: `page` (PDF, 1-based),
    /// `symbol_kind` and `symbol` (source code: the definition the chunk holds). Absent for Markdown.
    #[serde(flatten)]
    pub citation: crate::store::Citation,
    /// `kb://doc/<path>` resource of the document.
    pub uri: String,
    /// `file:` URI of the document on this machine (what an editor opens).
    pub file_uri: String,
    /// Set when the document is open in this editor (running `folio lsp`): the pointer
    /// and lines are then those of the editor's buffer, unsaved changes included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// The answer to a search.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SearchResponse {
    /// Hits, best first.
    pub results: Vec<SearchHit>,
    /// True when there are no hits, the best hit does not stand out (best/mean score under `min_confidence_ratio`), or (lexical) it matches fewer than half of the query's terms: say so instead of guessing.
    pub low_confidence: bool,
    /// Filters that applied, by name (path_globs, category, topic, tags_any, tags_all, date_from, date_to, fields, fields_not).
    pub filter_applied: Vec<String>,
    /// The mode that ran: `hybrid` asked before the index has vectors runs `lexical`.
    pub mode: String,
    /// Present and true when the `[rerank]` cross-encoder rescored the candidates: each
    /// hit's `score` is then the reranker's. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reranked: bool,
    /// True while a reindex runs: results may miss files not indexed yet (see kb_status).
    pub indexing: bool,
    /// True while the background embedding pass runs: the vector leg of `semantic` and
    /// `hybrid` covers only the chunks embedded so far (kb_status `embedding` has the progress).
    pub embedding: bool,
    /// Present and true when the index was still catching up with the disk after the
    /// search waited for it: this root's first index was being built after
    /// [`FIRST_INDEX_WAIT`] (a root folio has not indexed before; a pass writes its
    /// documents once it has read them all, so an empty list does not mean "no match"),
    /// or files other programs changed were not indexed yet after [`CATCH_UP_WAIT`]
    /// (`index_progress.pending_changes`), or hits were dropped because their file changed
    /// or went since it was indexed (`stale_hits_dropped`). The results come from what the
    /// index held; hits in files changed or deleted since are re-read or dropped.
    /// Search again when kb_status `indexing.state` is `idle`. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// With `partial`: how far the first pass is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_progress: Option<IndexProgress>,
    /// Hits left out because their file was deleted, or changed so that it no longer
    /// holds the hit's chunk, since it was indexed (the index has not caught up with it
    /// yet: `partial` is then set too). Absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stale_hits_dropped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How far a running reindex is: files read (it writes them all after the last).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IndexProgress {
    /// Markdown files read so far.
    pub done: usize,
    /// Markdown files the pass will read (0 while it is still listing them).
    pub total: usize,
    /// Paths the file watcher reported changed that are not indexed yet (those the
    /// running pass took, and those waiting for the next).
    pub pending_changes: usize,
}

/// How long a search waits for changes the file watcher reported (another program
/// wrote, renamed or deleted notes) to be indexed before answering with `partial`: a
/// few hundred milliseconds for a handful of files.
pub const CATCH_UP_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// How long a search on a root whose first index is still being built waits for it
/// before answering with `partial` (a few seconds for a folder of thousands of notes).
pub const FIRST_INDEX_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a `semantic` or `hybrid` search waits for the embedding model while the
/// server is still loading it (right after start: about 0.2 s for the built-in model in
/// a release build) when the index already holds vectors, instead of answering
/// lexically. A search that still finds no model answers as without one (`mode`
/// `lexical` for `hybrid`).
pub const MODEL_LOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The most hits one search returns.
pub const MAX_LIMIT: usize = 100;

/// The hits returned when the request names no limit.
pub const DEFAULT_LIMIT: usize = 10;

impl SearchRequest {
    /// A request for `query` with every default.
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            ..SearchRequest::default()
        }
    }

    /// Checks the request and turns it into the pipeline's query and options: the mode's
    /// defaults, with the numbers `tuning` (the workspace's `[search]` table) sets, then
    /// the request's own switches.
    ///
    /// Errors (`INVALID_ARGUMENT`): an empty query, a limit outside 1–[`MAX_LIMIT`], an
    /// unknown mode, an MMR setting or confidence ratio outside its range, a number of
    /// `tuning` outside its range (the message starts `[search]`).
    pub fn plan(&self, tuning: &SearchConfig) -> HostResult<(SearchQuery, PipelineOptions)> {
        let mode = match self.mode.as_deref() {
            None => SearchMode::Hybrid,
            Some(m) => m.parse::<SearchMode>().map_err(HostError::invalid)?,
        };
        if self.query.trim().is_empty() {
            return Err(HostError::invalid("`query` must not be empty"));
        }
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(HostError::invalid(format!(
                "`limit` must be between 1 and {MAX_LIMIT}"
            )));
        }
        for (name, value) in [
            ("mmr_lambda", self.mmr_lambda),
            ("mmr_same_doc_penalty", self.mmr_same_doc_penalty),
        ] {
            if value.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
                return Err(HostError::invalid(format!(
                    "`{name}` must be between 0 and 1"
                )));
            }
        }
        if self
            .min_confidence_ratio
            .is_some_and(|v| !v.is_finite() || v < 0.0)
        {
            return Err(HostError::invalid(
                "`min_confidence_ratio` must be a finite number, 0 or more",
            ));
        }
        let defaults = PipelineOptions::tuned(mode, tuning)
            .map_err(|m| HostError::invalid(format!("[search] {m}")))?;
        let options = PipelineOptions {
            mmr: self.mmr.unwrap_or(defaults.mmr),
            mmr_lambda: self.mmr_lambda.unwrap_or(defaults.mmr_lambda),
            mmr_same_doc_penalty: self
                .mmr_same_doc_penalty
                .unwrap_or(defaults.mmr_same_doc_penalty),
            parent_retriever: self.parent_retriever.unwrap_or(defaults.parent_retriever),
            per_document: self.per_file.unwrap_or(
                if self.mmr == Some(true) || self.parent_retriever == Some(true) {
                    0
                } else {
                    defaults.per_document
                },
            ),
            min_confidence_ratio: self
                .min_confidence_ratio
                .unwrap_or(defaults.min_confidence_ratio),
            rerank: self.rerank.unwrap_or(false),
            // Hits to fill the list with when some turn out stale (`Host::search_tuned`).
            spare: SPARE_HITS,
            ..defaults
        };
        let query = SearchQuery {
            text: self.query.clone(),
            limit,
            path_globs: self.path_globs.clone(),
            category: self.category.clone(),
            topic: self.topic.clone(),
            tags_any: self.tags_any.clone(),
            tags_all: self.tags_all.clone(),
            date_from: self.date_from.clone(),
            date_to: self.date_to.clone(),
            fields: self.fields.clone().into_iter().collect(),
            fields_not: self.fields_not.clone().into_iter().collect(),
            min_quality: self.min_quality.filter(|_| !self.include_low_quality),
        };
        Ok((query, options))
    }
}

/// A pipeline failure as the contract's error: `NOT_CONFIGURED` (semantic search without
/// vectors, a rerank with no cross-encoder), `UNAVAILABLE` (the reranker failed),
/// `INVALID_ARGUMENT` (a bad filter), else `INTERNAL`.
pub fn search_error(err: PipelineError) -> HostError {
    match err {
        PipelineError::NotConfigured(m) => HostError::new(ErrorCode::NotConfigured, m),
        PipelineError::Unavailable(m) => HostError::new(ErrorCode::Unavailable, m),
        PipelineError::Search(SearchError::InvalidArgument(m)) => HostError::invalid(m),
        PipelineError::Search(other) => HostError::internal(other),
    }
}

impl SearchResponse {
    /// The answer for pipeline results over the index of `root`; `indexing` and
    /// `embedding` say whether a reindex or an embedding pass runs meanwhile.
    pub fn from_pipeline(
        root: &std::path::Path,
        res: PipelineResults,
        indexing: bool,
        embedding: bool,
    ) -> SearchResponse {
        let results = res
            .results
            .into_iter()
            .map(|p| {
                let h = p.hit;
                SearchHit {
                    uri: doc_uri(&h.path),
                    file_uri: file_uri(root, &h.path),
                    path: h.path,
                    pointer: h.pointer,
                    heading_path: h.heading_path,
                    start_line: h.start_line,
                    end_line: h.end_line,
                    score: h.score,
                    lexical_rank: p.lexical_rank,
                    vector_rank: p.vector_rank,
                    similarity: p.similarity,
                    mmr_score: p.mmr_score,
                    expanded_from: (!p.expanded_from.is_empty()).then_some(p.expanded_from),
                    sections: (!p.sections.is_empty()).then_some(p.sections),
                    snippet: h.snippet,
                    indexed_source_hash: h.indexed_source_hash,
                    citation: h.citation,
                    editor: None,
                }
            })
            .collect();
        SearchResponse {
            results,
            low_confidence: res.low_confidence,
            filter_applied: res.filter_applied,
            mode: res.mode.as_str().into(),
            reranked: res.reranked,
            indexing,
            embedding,
            partial: false,
            index_progress: None,
            stale_hits_dropped: 0,
        }
    }
}

/// The `file:` URI of a KB-relative path under `root` (percent-encoded as RFC 8089 asks).
pub fn file_uri(root: &std::path::Path, path: &str) -> String {
    let mut abs = root.to_path_buf();
    abs.extend(path.split('/'));
    let text = abs.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    format!(
        "file://{}",
        percent_encoding::utf8_percent_encode(&text, FILE_URI_KEEP)
    )
}

/// Characters kept as they are in `file:` URIs: unreserved ones, `/` and `:`.
const FILE_URI_KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/')
    .remove(b':');

impl SearchHit {
    /// Makes this hit `section` of its file, standing in for its chunk, gone: the
    /// section's pointer, heading path, lines and score; no leg ranks or similarity (they
    /// were the old chunk's).
    fn stand_in(&mut self, section: &crate::search::SectionHit) {
        self.pointer = section.pointer.clone();
        self.heading_path = section.heading_path.clone();
        self.start_line = section.start_line;
        self.end_line = section.end_line;
        self.score = section.score;
        self.lexical_rank = None;
        self.vector_rank = None;
        self.similarity = None;
    }
}

/// Hits a search asks the pipeline for beyond `limit`, to fill the list up again when
/// hits of files changed since the pass are dropped.
pub const SPARE_HITS: usize = 5;

impl Host {
    /// Searches the index: [`SearchRequest::plan`], the hybrid pipeline with the
    /// background embedder, then, for documents open in an editor, the hits checked
    /// against the editor's buffer.
    ///
    /// On a root with no finished index yet, it first waits for the running pass, up to
    /// [`FIRST_INDEX_WAIT`] (`partial` when that is not enough); a `semantic` or `hybrid`
    /// search on an index with vectors waits for a model still loading, up to
    /// [`MODEL_LOAD_WAIT`].
    pub fn search(&self, args: &SearchRequest) -> HostResult<SearchResponse> {
        self.search_tuned(args, &SearchConfig::default())
    }

    /// Checks a search before it runs (what [`Host::search_tuned`] refuses without
    /// reading the index: the request's arguments, the flags, the reranker), and returns
    /// the mode it asks for; a front end that indexes first calls it before that pass.
    ///
    /// Errors: `INVALID_ARGUMENT` (an argument or flag out of its range),
    /// `NOT_CONFIGURED` (a reranker asked for and none configured, or its settings
    /// refused).
    pub fn check_search(
        &self,
        args: &SearchRequest,
        flags: &SearchConfig,
    ) -> HostResult<SearchMode> {
        self.plan_search(args, flags)
            .map(|(_, options, _)| options.mode)
    }

    /// The query, pipeline options and reranker of a search with `flags`.
    fn plan_search(
        &self,
        args: &SearchRequest,
        flags: &SearchConfig,
    ) -> HostResult<(
        SearchQuery,
        PipelineOptions,
        Option<&dyn crate::search::pipeline::Reranker>,
    )> {
        if *flags != SearchConfig::default() {
            PipelineOptions::tuned(SearchMode::Hybrid, flags).map_err(HostError::invalid)?;
        }
        let (query, options) = args.plan(&self.config.search.overlaid(flags))?;
        let reranker = crate::rerank::select(args.rerank, &self.reranker).map_err(search_error)?;
        Ok((
            query,
            options,
            reranker.map(|r| r as &dyn crate::search::pipeline::Reranker),
        ))
    }

    /// [`Host::search`] with `flags` over the workspace's `[search]` numbers: the
    /// command line's tuning flags (`folio search --lexical-weight ...`), for trying a
    /// setting before writing it into `folio.toml`.
    ///
    /// Errors: as [`Host::search`]; a flag out of its range is `INVALID_ARGUMENT` naming
    /// the parameter (without the `[search]` of a `folio.toml` number).
    pub fn search_tuned(
        &self,
        args: &SearchRequest,
        flags: &SearchConfig,
    ) -> HostResult<SearchResponse> {
        let (query, options, reranker) = self.plan_search(args, flags)?;
        let index_progress = match self.await_first_index()? {
            Some(progress) => Some(progress),
            None => self.wait_for_changes(CATCH_UP_WAIT),
        };
        if options.mode != crate::search::pipeline::SearchMode::Lexical
            && self.embedding.embedder().is_none()
            && self
                .with_store(|store| store.vector_model().map_err(HostError::internal))?
                .is_some()
        {
            self.embedding.await_embedder(MODEL_LOAD_WAIT);
        }
        let res = self.with_store(|store| {
            crate::search::semantic::search_with_runner(
                store,
                Some(&self.embedding),
                reranker,
                &query,
                &options,
            )
            .map_err(search_error)
        })?;
        let mut response = SearchResponse::from_pipeline(
            &self.root,
            res,
            self.reindex_running(),
            self.embedding.is_running(),
        );
        let needles =
            crate::search::snippet::needles_for(&crate::search::query::parse_query(&query.text));
        let first = response.results.first().map(|h| h.path.clone());
        response.results = self.live_hits(response.results, &needles)?;
        let hits = response.results.len();
        response.results = self.current_hits(response.results);
        // Spares (`SPARE_HITS`) fill in for hits whose file changed; the list is `limit` long.
        response.stale_hits_dropped = hits - response.results.len();
        response.results.truncate(query.limit);
        // The legs' best answer is gone from its file: what was judged no longer stands.
        if first.is_some() && response.results.first().map(|h| &h.path) != first.as_ref() {
            response.low_confidence = true;
        }
        response.partial = index_progress.is_some() || response.stale_hits_dropped > 0;
        response.index_progress = index_progress;
        Ok(response)
    }

    /// Until the index holds a finished pass over this root, waits for the running pass
    /// (at most `first_index_wait`). Returns that pass's progress when it still runs, so
    /// the answer is partial; `None` when the index is complete or no pass runs.
    fn await_first_index(&self) -> HostResult<Option<IndexProgress>> {
        use std::sync::atomic::Ordering;
        if self.root_indexed.load(Ordering::Acquire) {
            return Ok(None);
        }
        let root = self.root.to_string_lossy();
        let recorded = || self.with_store(|store| store.meta("root").map_err(HostError::internal));
        if recorded()?.as_deref() != Some(root.as_ref()) {
            let progress = self.wait_for_reindex(self.first_index_wait);
            if progress.is_some() {
                return Ok(progress);
            }
            let recorded = recorded()?;
            if recorded.as_deref() != Some(root.as_ref()) {
                // The pass ended without recording this root: an index of another folder
                // (`--db`) is refused (its text under this root's paths would mislead).
                if let Some(err) =
                    crate::index::foreign_index(&self.root, &self.db_path, recorded.as_deref())
                {
                    return Err(HostError::new(ErrorCode::NotConfigured, err.to_string()));
                }
                return Ok(None);
            }
        }
        self.root_indexed.store(true, Ordering::Release);
        Ok(None)
    }

    /// Checks hits read from the index against the files as they are now (hits from an
    /// editor's buffer, `editor` set, are current already): a hit whose file is gone, or
    /// no longer a note folio reads, is dropped; in a file changed since it was indexed
    /// (its content hash differs), a hit is kept only when the file, chunked again, still
    /// has a chunk with the hit's pointer and the indexed chunk's exact text, with that
    /// chunk's lines; else the first of its `sections` the file still holds stands in for
    /// it; otherwise it is dropped. So a hit never carries text the file no longer holds.
    /// Each file is read (and chunked) once.
    fn current_hits(&self, hits: Vec<SearchHit>) -> Vec<SearchHit> {
        use crate::pointer::{hash_bytes, hex};
        /// A file as it is now: unchanged since indexed, or its chunks now with the
        /// indexed ones.
        enum Now {
            Gone,
            Unchanged,
            Changed(Vec<crate::chunk::Chunk>, Vec<crate::store::ChunkRecord>),
        }
        let mut files: std::collections::HashMap<String, Now> = std::collections::HashMap::new();
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            if hit.editor.is_some() {
                out.push(hit);
                continue;
            }
            let path = hit.path.clone();
            let now = files.entry(hit.path.clone()).or_insert_with(|| {
                if self.extracted_format(&hit.path).is_some() {
                    // Another format: its hits hold while its bytes are the indexed ones.
                    return match self.extracted_unchanged(&hit.path, &hit.indexed_source_hash) {
                        true => Now::Unchanged,
                        false => Now::Gone,
                    };
                }
                let cap = self.config.index.max_file_size;
                match crate::workspace::read_markdown_lossy_in(&self.root, &hit.path, cap) {
                    Err(_) => Now::Gone,
                    Ok((text, _))
                        if hex(hash_bytes(text.as_bytes())) == hit.indexed_source_hash =>
                    {
                        Now::Unchanged
                    }
                    Ok((text, _)) => {
                        let budget = self.config.index.chunk_budget();
                        let indexed = self
                            .with_store(|store| {
                                store.chunks_of(&hit.path).map_err(HostError::internal)
                            })
                            .unwrap_or_default();
                        Now::Changed(crate::chunk::chunks(&text, &parse(&text), budget), indexed)
                    }
                }
            });
            match now {
                Now::Gone => {
                    tracing::debug!(path = %hit.path, "dropped a hit whose file is gone");
                }
                Now::Unchanged => out.push(hit),
                Now::Changed(chunks, indexed) => match held_now(hit, chunks, indexed) {
                    Some(hit) => out.push(hit),
                    None => {
                        tracing::debug!(path = %path, "dropped a hit whose text changed since it was indexed")
                    }
                },
            }
        }
        out
    }

    /// Checks hits in documents open in an editor against the buffer: a hit whose
    /// element is still there (else the first of its `sections` whose element is) gets
    /// the buffer's chunk holding it (its pointer, lines and a snippet of its text around
    /// `needles`, so unsaved edits show), a hit with none left in the buffer is dropped.
    fn live_hits(&self, hits: Vec<SearchHit>, needles: &[String]) -> HostResult<Vec<SearchHit>> {
        if hits.is_empty() {
            return Ok(hits);
        }
        let buffers = self.buffers()?;
        if buffers.is_empty() {
            return Ok(hits);
        }
        let budget = self.config.index.chunk_budget();
        let mut parsed: std::collections::HashMap<String, (Parsed, Vec<crate::chunk::Chunk>)> =
            std::collections::HashMap::new();
        let mut out = Vec::with_capacity(hits.len());
        let mut shown = std::collections::HashSet::new();
        for mut hit in hits {
            let Some(buffer) = buffers.get(&hit.path) else {
                out.push(hit);
                continue;
            };
            let (live, chunks) = parsed.entry(hit.path.clone()).or_insert_with(|| {
                let live = parse(&buffer.text);
                let chunks = crate::chunk::chunks(&buffer.text, &live, budget);
                (live, chunks)
            });
            // The buffer's chunk of the hit's element, else of the first of the file's
            // other sections still in the buffer (standing in with its score: the legs'
            // ranks and similarity were the old chunk's); the other sections found keep
            // their places in the buffer.
            let sections = hit.sections.take().unwrap_or_default();
            let mut found = sections.into_iter().filter_map(|s| {
                buffer_chunk(live, chunks, &s.pointer, s.start_line).map(|c| (s, c))
            });
            let chunk = match buffer_chunk(live, chunks, &hit.pointer, hit.start_line) {
                Some(chunk) => chunk,
                None => {
                    let Some((first, chunk)) = found.next() else {
                        continue;
                    };
                    hit.stand_in(&first);
                    chunk
                }
            };
            // Two indexed chunks the buffer merged into one are one hit (the better one).
            if !shown.insert((hit.path.clone(), chunk.seq)) {
                continue;
            }
            hit.start_line = chunk.start_line;
            hit.end_line = chunk.end_line;
            hit.pointer = chunk.pointer.clone();
            hit.heading_path = chunk.heading_path.clone();
            let rest: Vec<crate::search::SectionHit> = found
                .filter(|(_, c)| c.seq != chunk.seq)
                .map(|(s, c)| crate::search::SectionHit {
                    pointer: c.pointer.clone(),
                    heading_path: c.heading_path.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    score: s.score,
                })
                .collect();
            hit.sections = (!rest.is_empty()).then_some(rest);
            hit.snippet = crate::search::snippet::make_snippet(&chunk.text, needles);
            hit.editor = Some(buffer.editor.clone());
            out.push(hit);
        }
        Ok(out)
    }
}

/// The chunk of an editor's buffer (parsed as `live`, chunked as `chunks`) that holds the
/// element `pointer` names, when the buffer still has it: the chunk holding `first_line`
/// when the element still spans it (a part of a table cut between rows), else the one
/// holding the element's first line.
fn buffer_chunk<'a>(
    live: &Parsed,
    chunks: &'a [crate::chunk::Chunk],
    pointer: &str,
    first_line: u32,
) -> Option<&'a crate::chunk::Chunk> {
    let (i, _) = resolve_pointer(live, pointer).ok()?;
    let element = &live.elements[i];
    let line = if (element.start_line..=element.end_line).contains(&first_line) {
        first_line
    } else {
        element.start_line
    };
    chunks
        .iter()
        .find(|c| (c.start_line..=c.end_line).contains(&line))
}

/// The chunk of a changed file, chunked again (`chunks`), that holds what the index held
/// at `pointer` and lines `start`–`end` (`indexed`): the same pointer and the same text.
/// A table's parts share its pointer and differ in lines; a section a hit was widened to
/// starts with its pointer (matched by pointer alone).
fn still_held<'a>(
    chunks: &'a [crate::chunk::Chunk],
    indexed: &[crate::store::ChunkRecord],
    pointer: &str,
    start: u32,
    end: u32,
) -> Option<&'a crate::chunk::Chunk> {
    let old = indexed
        .iter()
        .find(|c| c.pointer == pointer && (c.start_line, c.end_line) == (start, end))
        .or_else(|| indexed.iter().find(|c| c.pointer == pointer))?;
    chunks
        .iter()
        .find(|c| c.pointer == pointer && c.text == old.text)
}

/// `hit` in a file changed since it was indexed (chunked again: `chunks`; as indexed:
/// `indexed`): its chunk with its lines now when the file still holds its text; else the
/// first of its `sections` the file still holds, standing in with that section's place
/// and score (the legs' ranks and similarity were the old chunk's, so they go); `None`
/// when neither. The sections kept are those the file still holds, with their lines now.
fn held_now(
    mut hit: SearchHit,
    chunks: &[crate::chunk::Chunk],
    indexed: &[crate::store::ChunkRecord],
) -> Option<SearchHit> {
    let sections = hit.sections.take().unwrap_or_default();
    let mut held = sections.into_iter().filter_map(|s| {
        still_held(chunks, indexed, &s.pointer, s.start_line, s.end_line).map(|c| {
            let now = crate::search::SectionHit {
                start_line: c.start_line,
                end_line: c.end_line,
                ..s
            };
            (now, c)
        })
    });
    match still_held(chunks, indexed, &hit.pointer, hit.start_line, hit.end_line) {
        Some(chunk) => {
            hit.start_line = chunk.start_line;
            hit.end_line = chunk.end_line;
        }
        None => {
            let (first, chunk) = held.next()?;
            hit.stand_in(&first);
            hit.snippet = crate::search::snippet::make_snippet(&chunk.text, &[]);
        }
    }
    let rest: Vec<_> = held.map(|(section, _)| section).collect();
    hit.sections = (!rest.is_empty()).then_some(rest);
    Some(hit)
}
