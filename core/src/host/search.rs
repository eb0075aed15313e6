//! `kb_search`: lexical search over the index, with filters.

use crate::search::pipeline::{PipelineError, PipelineOptions, SearchMode};
use crate::search::{SearchError, SearchQuery};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::parse::{Parsed, parse};

use super::read::resolve_pointer;
use super::{ErrorCode, Host, HostError, HostResult, doc_uri};

/// `kb_search` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
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
    /// `low_confidence` is set when the best score is less than this many times the mean score of the hits (default 1.5; 0 disables the ratio check).
    #[serde(default)]
    pub min_confidence_ratio: Option<f64>,
    /// Re-score with a cross-encoder. No cross-encoder is available in this build: true returns NOT_CONFIGURED.
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
    /// Only documents whose frontmatter `tags` contain at least one of these.
    #[serde(default)]
    pub tags_any: Vec<String>,
    /// Only documents whose frontmatter `tags` contain all of these.
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
}

/// One hit.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Hit {
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
    /// The mode's score, higher is better, comparable within one query only: BM25 (`lexical`), cosine similarity (`semantic`) or the RRF sum plus the document leg's boost (`hybrid`).
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
    /// Set when parent retrieval collapsed several hits of one section into this one: the pointers of the absorbed chunks, best first. The hit then covers the whole section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expanded_from: Option<Vec<String>>,
    /// About 200 characters around the first match.
    pub snippet: String,
    /// Source hash of the document when indexed; compare with kb_read's sourceHash.
    #[serde(rename = "indexedSourceHash")]
    pub indexed_source_hash: String,
    /// `kb://doc/<path>` resource of the document.
    pub uri: String,
    /// Set when the document is open in this editor (running `folio lsp`): the pointer
    /// and lines are then those of the editor's buffer, unsaved changes included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// `kb_search` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// Hits, best first.
    pub results: Vec<Hit>,
    /// True when there are no hits, the best hit does not stand out (best/mean score under `min_confidence_ratio`), or (lexical) it matches fewer than half of the query's terms: say so instead of guessing.
    pub low_confidence: bool,
    /// Filters that applied, by name (path_globs, category, topic, tags_any, tags_all, date_from, date_to, fields, fields_not).
    pub filter_applied: Vec<String>,
    /// The mode that ran: `hybrid` asked before the index has vectors runs `lexical`.
    pub mode: String,
    /// True while a reindex runs: results may miss files not indexed yet (see kb_status).
    pub indexing: bool,
    /// True while the background embedding pass runs: the vector leg of `semantic` and
    /// `hybrid` covers only the chunks embedded so far (kb_status `embedding` has the progress).
    pub embedding: bool,
}

impl Host {
    /// `kb_search`.
    pub fn search(&self, args: &SearchArgs) -> HostResult<SearchOutput> {
        let mode = match args.mode.as_deref() {
            None => SearchMode::Hybrid,
            Some(m) => m.parse::<SearchMode>().map_err(HostError::invalid)?,
        };
        if args.query.trim().is_empty() {
            return Err(HostError::invalid("`query` must not be empty"));
        }
        let limit = args.limit.unwrap_or(10);
        if !(1..=100).contains(&limit) {
            return Err(HostError::invalid("`limit` must be between 1 and 100"));
        }
        let defaults = PipelineOptions::for_mode(mode);
        let options = PipelineOptions {
            mmr: args.mmr.unwrap_or(defaults.mmr),
            mmr_lambda: args.mmr_lambda.unwrap_or(defaults.mmr_lambda),
            mmr_same_doc_penalty: args
                .mmr_same_doc_penalty
                .unwrap_or(defaults.mmr_same_doc_penalty),
            parent_retriever: args.parent_retriever.unwrap_or(defaults.parent_retriever),
            min_confidence_ratio: args
                .min_confidence_ratio
                .unwrap_or(defaults.min_confidence_ratio),
            rerank: args.rerank.unwrap_or(false),
            ..defaults
        };
        let query = SearchQuery {
            text: args.query.clone(),
            limit,
            path_globs: args.path_globs.clone(),
            category: args.category.clone(),
            topic: args.topic.clone(),
            tags_any: args.tags_any.clone(),
            tags_all: args.tags_all.clone(),
            date_from: args.date_from.clone(),
            date_to: args.date_to.clone(),
            fields: args.fields.clone().into_iter().collect(),
            fields_not: args.fields_not.clone().into_iter().collect(),
            min_quality: args.min_quality,
        };
        let res = self.with_store(|store| {
            crate::search::semantic::search_with_runner(
                store,
                Some(&self.embedding),
                &query,
                &options,
            )
            .map_err(|e| match e {
                PipelineError::NotConfigured(m) => HostError::new(ErrorCode::NotConfigured, m),
                PipelineError::Search(SearchError::InvalidArgument(m)) => HostError::invalid(m),
                PipelineError::Search(other) => HostError::internal(other),
            })
        })?;
        let ran = res.mode;
        let hits: Vec<Hit> = res
            .results
            .into_iter()
            .map(|p| {
                let h = p.hit;
                Hit {
                    uri: doc_uri(&h.path),
                    path: h.path,
                    pointer: h.pointer,
                    heading_path: h.heading_path,
                    start_line: h.start_line,
                    end_line: h.end_line,
                    score: h.score,
                    lexical_rank: p.lexical_rank,
                    vector_rank: p.vector_rank,
                    similarity: p.similarity,
                    expanded_from: (!p.expanded_from.is_empty()).then_some(p.expanded_from),
                    snippet: h.snippet,
                    indexed_source_hash: h.indexed_source_hash,
                    editor: None,
                }
            })
            .collect();
        Ok(SearchOutput {
            results: self.live_hits(hits)?,
            low_confidence: res.low_confidence,
            filter_applied: res.filter_applied,
            mode: ran.as_str().into(),
            indexing: self.reindex_running(),
            embedding: self.embedding.is_running(),
        })
    }

    /// Checks hits in documents open in an editor against the buffer: a hit whose
    /// element is still there gets the buffer's pointer and lines (shifted by as many
    /// lines as the element moved), a hit whose element is gone from the buffer is dropped.
    fn live_hits(&self, hits: Vec<Hit>) -> HostResult<Vec<Hit>> {
        if hits.is_empty() {
            return Ok(hits);
        }
        let buffers = self.buffers()?;
        if buffers.is_empty() {
            return Ok(hits);
        }
        let mut parsed: std::collections::HashMap<String, (Parsed, Option<Parsed>)> =
            std::collections::HashMap::new();
        let mut out = Vec::with_capacity(hits.len());
        for mut hit in hits {
            let Some(buffer) = buffers.get(&hit.path) else {
                out.push(hit);
                continue;
            };
            let (live, disk) = parsed.entry(hit.path.clone()).or_insert_with(|| {
                let disk = self
                    .resolve_markdown(&hit.path)
                    .and_then(|abs| self.read_disk(&hit.path, &abs))
                    .ok()
                    .map(|t| parse(&t));
                (parse(&buffer.text), disk)
            });
            let Ok((i, _)) = resolve_pointer(live, &hit.pointer) else {
                continue;
            };
            let element = &live.elements[i];
            let old_start = disk
                .as_ref()
                .and_then(|d| resolve_pointer(d, &hit.pointer).ok())
                .map(|(j, _)| disk.as_ref().expect("parsed").elements[j].start_line)
                .unwrap_or(element.start_line);
            let shift = i64::from(element.start_line) - i64::from(old_start);
            let moved = |line: u32| u32::try_from((i64::from(line) + shift).max(1)).unwrap_or(line);
            hit.start_line = moved(hit.start_line);
            hit.end_line = moved(hit.end_line).max(hit.start_line);
            hit.pointer = element.pointer().to_string();
            hit.editor = Some(buffer.editor.clone());
            out.push(hit);
        }
        Ok(out)
    }
}
