//! The ranking pipeline: lexical leg + vector leg → RRF → optional rerank → MMR →
//! parent retrieval → `limit`.
//!
//! [`hybrid_search`] is the one entry point for `lexical`, `semantic` and `hybrid`
//! search ([`SearchMode`]):
//!
//! 1. **Candidates.** Each leg over-fetches `candidates` chunks
//!    (default `max(limit × 5, 50)`, GrooveSeek's pool size; just `limit` for a single
//!    leg without rerank or MMR, where a pool would change nothing): the lexical leg is
//!    [`Store::search_lexical`] with that limit; the vector leg is a [`VectorLeg`]
//!    supplied by the caller (it owns the query embedding). Vector hits are filtered
//!    here with the same SQL filters as the lexical leg (path globs, category, topic,
//!    tags, dates, fields, quality) and lose every chunk matching a `-excluded` query
//!    term, so both legs obey one filter set; when a filter or exclusion is active the
//!    vector leg is asked for `4 × candidates` to leave room for the filtering.
//! 2. **Fusion.** `hybrid`: [`fusion::rrf`] with `k = rrf_k` (60) and per-leg weights
//!    (1.0 / 1.0; the lexical one × `weak_lexical_factor` (0) when the lexical leg's best
//!    hit matches fewer than half of the query's terms, × `cjk_lexical_factor` (0.25) for a
//!    mostly-CJK query); the hit score is the fused score. `lexical`: the lexical order,
//!    score `-bm25`. `semantic`: the vector order, score = the cosine corrected for the
//!    collection (`corpus_centering`, `writing_system_centering`, 0.5 each).
//! 3. **Rerank** (`rerank: true`): a [`Reranker`] rescores the pool (the query's words
//!    against each chunk's heading path and text); the hit score is the reranker's, equal
//!    scores keep the fused order. Without a reranker the request fails with
//!    [`PipelineError::NotConfigured`]; a reranker that fails, with
//!    [`PipelineError::Unavailable`]. (No cross-encoder ships: [`crate::rerank`] is the
//!    client of one behind an HTTP endpoint.)
//! 4. **MMR** (`mmr: true`): [`mmr::select`] picks `limit` hits from the pool with
//!    `mmr_lambda` (0.7) and `mmr_same_doc_penalty` (0.0); similarity is the cosine of
//!    chunk vectors from [`VectorLeg::vectors`] when both have one, else Jaccard of
//!    token sets. Without MMR the first `limit` hits are kept, at most `per_document`
//!    (1) of one document: the document's other chunks in the pool are listed on its hit
//!    (`sections`, at most [`MAX_SECTIONS`]).
//! 5. **Confidence**: [`confidence`] on the kept hits (without MMR: the first `limit` of
//!    the pool, whatever `per_document` keeps; see there for each mode); after a
//!    rerank the ratio reads the reranker's scores ([`confidence::rerank_probabilities`])
//!    while the lexical coverage and semantic-only floors still apply.
//! 6. **Parent retrieval** (`parent_retriever: true`): [`parent::collapse`]; a
//!    collapsed hit covers its section and lists the absorbed chunks' pointers in
//!    `expanded_from`.
//!
//! Asking for `hybrid` without a vector leg runs `lexical` and reports
//! `mode: lexical` (so callers can say "vectors not ready"); asking for `semantic`
//! without one fails with [`PipelineError::NotConfigured`].

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use rusqlite::types::Value;

use super::{DEFAULT_LIMIT, SearchError, SearchHit, SearchQuery, SearchResults, SectionHit};
use super::{build_filters, confidence, fusion, mmr, parent, query, snippet, split_heading_path};
use crate::config::{CONFIG_FILE, ConfigError, SearchConfig};
use crate::store::Store;
use crate::store::vectors::Centering;

/// Default [`PipelineOptions::document_weight`]. Measured on the kb-eval golden set
/// (tests/fixtures/kb-eval) with the built-in model: weights 4 to 15 all give single-answer
/// recall@1 0.96, MRR 0.98 and multi-answer recall@5 1.0 (0 to 3: multi recall@5 0.9); 5 sits
/// inside that plateau.
pub const DEFAULT_DOCUMENT_WEIGHT: f64 = 5.0;

/// Default [`PipelineOptions::ensemble_weight`]. Chosen on the development set
/// (benchmarks/tldr-bilingual) with the GrooveSeek set (tests/fixtures/kb-eval) held at
/// its targets; docs/search.md, "Ensemble leg", has the grid.
pub const DEFAULT_ENSEMBLE_WEIGHT: f64 = 2.0;

/// Default [`PipelineOptions::weak_lexical_factor`]: 0, the lexical leg drops out of the
/// fusion when its best hit matches fewer than half of the query's terms. Chosen on the
/// development set (benchmarks/tldr-bilingual, built-in model, with
/// [`DEFAULT_CJK_LEXICAL_FACTOR`]): against 1.0, hybrid recall@1 0.184 vs 0.163, MRR
/// 0.382 vs 0.375 alone; no change on the GrooveSeek set (tests/fixtures/kb-eval).
pub const DEFAULT_WEAK_LEXICAL_FACTOR: f64 = 0.0;

/// Default [`PipelineOptions::cjk_lexical_factor`]: 0.25. On the development set (121
/// questions) with the weak-leg rule, factors 1 / 0.5 / 0.25 / 0 give hybrid recall@1
/// 0.184 / 0.192 / 0.209 / 0.238, recall@5 0.459 / 0.463 / 0.476 / 0.468 and MRR
/// 0.382 / 0.390 / 0.407 / 0.419; 0.25 is the one at or above the old defaults in every
/// language group on recall@1, recall@5 and MRR (0 loses a Japanese answer from the top
/// 5). On the GrooveSeek set, multi-answer nDCG@10 0.984 → 0.975, the rest unchanged.
pub const DEFAULT_CJK_LEXICAL_FACTOR: f64 = 0.25;

/// Default [`PipelineOptions::per_document`]: each document once, so that the first five
/// hits are five documents.
pub const DEFAULT_PER_DOCUMENT: usize = 1;

/// The most other chunks of a document listed on its hit ([`PipelineHit::sections`]).
pub const MAX_SECTIONS: usize = 3;

/// Default [`PipelineOptions::semantic_only_floor`]: 0.82 (cosine, built-in model). On
/// the development set (benchmarks/tldr-bilingual, 121 questions) the best similarity of
/// every question is 0.825–0.913, and the lowest, 0.825, is a right first hit; on the
/// GrooveSeek set 0.830 and more. Questions the slice does not answer ("bake sourdough
/// bread at home", matching only "home"; 「パンを焼く方法」, matching bigrams of a page
/// far down) get 0.809 and 0.805. The floor sits under every answerable question of both
/// sets, so it flags none of them, and marks 3 of the development set's 12 unanswerable
/// questions (`expected: []`); 0.83 would mark 5 and one right first hit (docs/search.md,
/// `low_confidence`). Another embedding model has another scale: set it again (`0`
/// turns it off).
pub const DEFAULT_SEMANTIC_ONLY_FLOOR: f64 = 0.82;

/// Default [`PipelineOptions::single_leg_floor`]: 0.86 (cosine, built-in model). Chosen
/// on both development sets (benchmarks/tldr-bilingual and benchmarks/vue-docs-bilingual:
/// 44 questions nothing answers, 117 right first hits, 126 wrong ones) and the GrooveSeek
/// set, from 0.84–0.865: a right first hit is found by both legs in 102 of 117 cases, an
/// answer to an unanswerable question in 15 of 44. With the semantic-only floor, 0.86
/// flags 21 of the 44 unanswerable questions (3 before) and 5 of 117 right first hits (4%;
/// 0 of 29 on GrooveSeek); 0.865 flags 24 and 9, 0.85 14 and 4 (docs/search.md,
/// `low_confidence`). Another embedding model has another scale: set it again (`0` turns
/// it off).
pub const DEFAULT_SINGLE_LEG_FLOOR: f64 = 0.86;

/// Default [`PipelineOptions::corpus_centering`] and
/// [`PipelineOptions::writing_system_centering`]: 0.5 each. Chosen on the development set
/// (benchmarks/tldr-bilingual, 121 questions, built-in model) from 0, 0.25, 0.5, 0.75 and
/// 1 for each: hybrid recall@5 0.476 → 0.523 and MRR 0.419 → 0.458 with both at 0.5
/// (docs/search.md, "Centring", has the grid and the figures per language); the
/// GrooveSeek set (tests/fixtures/kb-eval) does not move in hybrid mode.
pub const DEFAULT_CENTERING: f64 = 0.5;

/// The default `min_confidence_ratio` of a mode: off in hybrid
/// ([`confidence::HYBRID_MIN_CONFIDENCE_RATIO`]), 1.1 on cosine distances in semantic
/// ([`confidence::SEMANTIC_MIN_CONFIDENCE_RATIO`]), and off in lexical, which judges the
/// best hit's term coverage instead.
pub fn default_min_confidence_ratio(mode: SearchMode) -> f64 {
    match mode {
        SearchMode::Hybrid => confidence::HYBRID_MIN_CONFIDENCE_RATIO,
        SearchMode::Semantic => confidence::SEMANTIC_MIN_CONFIDENCE_RATIO,
        SearchMode::Lexical => 0.0,
    }
}

/// Which legs a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Full-text (FTS5, BM25) only.
    Lexical,
    /// Embedding similarity only.
    Semantic,
    /// Both, fused with Reciprocal Rank Fusion.
    Hybrid,
}

impl SearchMode {
    /// `lexical`, `semantic` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<SearchMode, String> {
        match s {
            "lexical" => Ok(SearchMode::Lexical),
            "semantic" => Ok(SearchMode::Semantic),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(format!(
                "unknown search mode `{other}` (expected lexical, semantic or hybrid)"
            )),
        }
    }
}

/// Pipeline settings; [`Default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineOptions {
    /// The mode asked for.
    pub mode: SearchMode,
    /// Candidates fetched per leg; `None` means `max(limit × 5, 50)`.
    pub candidates: Option<usize>,
    /// RRF constant `k` (default 60).
    pub rrf_k: f64,
    /// RRF weight of the lexical leg (default 1.0).
    pub lexical_weight: f64,
    /// RRF weight of the vector leg (default 1.0).
    pub vector_weight: f64,
    /// The lexical leg's weight is `lexical_weight × weak_lexical_factor` when its best hit
    /// matches fewer than half of the query's included terms (the lexical leg's own
    /// low-confidence rule): a question whose words mostly miss every page then ranks by
    /// the vector leg. Default [`DEFAULT_WEAK_LEXICAL_FACTOR`]; 1 turns the rule off.
    pub weak_lexical_factor: f64,
    /// The lexical leg's weight is also multiplied by `cjk_lexical_factor` when most of
    /// the query's letters are CJK ([`query::mostly_cjk`]): such a query is matched on
    /// character bigrams, which particles and common endings (した, から) make noisy.
    /// Default [`DEFAULT_CJK_LEXICAL_FACTOR`]; 1 turns it off.
    pub cjk_lexical_factor: f64,
    /// Weight of the document leg in hybrid mode (default [`DEFAULT_DOCUMENT_WEIGHT`];
    /// 0 turns it off): the candidate documents are ranked by the query's score for each
    /// one's whole-document vector (its title and text embedded as one passage; the
    /// cosine corrected for the collection, [`VectorLeg::document_similarity`]), and every candidate chunk gains
    /// `document_weight / (rrf_k + rank of its document)` on top of its chunk-level RRF
    /// score. It lifts a document that answers the query as a whole when no single
    /// chunk of it ranks high. A chunk both chunk legs rank first keeps the first place
    /// whatever this and the ensemble leg add to others (`unanimous_first`).
    pub document_weight: f64,
    /// Weight of the ensemble leg in hybrid mode (default [`DEFAULT_ENSEMBLE_WEIGHT`]; 0
    /// turns it off): a second model (the embedder's [`crate::embed::Embedder::ensemble`],
    /// USE-Multilingual v3 beside the built-in model) ranks every document of the
    /// collection by the cosine of the query with its whole-document vector
    /// ([`VectorLeg::ensemble_ranks`]), and every candidate chunk gains
    /// `ensemble_weight / (rrf_k + that rank)`. Two models trained apart err on
    /// different questions; the second one's ranking lifts the pages the first misses,
    /// above all across languages.
    pub ensemble_weight: f64,
    /// Widen the lexical leg's query with the store's synonym dictionary (default true;
    /// `[search] synonyms`; docs/search.md, "Synonyms").
    pub synonyms: bool,
    /// Rescore the pool with a cross-encoder.
    pub rerank: bool,
    /// Diversify with MMR.
    pub mmr: bool,
    /// MMR relevance/diversity balance in `[0, 1]` (default 0.7).
    pub mmr_lambda: f64,
    /// MMR penalty for a second chunk of an already picked document (default 0.0).
    pub mmr_same_doc_penalty: f64,
    /// Without MMR: hits of one document kept, best first (default
    /// [`DEFAULT_PER_DOCUMENT`]; 0: no limit). The document's other chunks in the pool are
    /// listed on its last kept hit ([`PipelineHit::sections`]) instead of taking places.
    /// With MMR, MMR chooses among each document's `per_document` best chunks.
    pub per_document: usize,
    /// Hits kept after the first `limit`, for a caller that may drop some (hits whose
    /// file changed since the pass) and fill the list up again; `low_confidence` is
    /// judged on the first `limit` (default 0).
    pub spare: usize,
    /// Collapse several hits of one section into the section.
    pub parent_retriever: bool,
    /// Parent retrieval thresholds.
    pub parent: parent::ParentOptions,
    /// `low_confidence` threshold on the best score over the mean ([`confidence`]); the
    /// default depends on the mode ([`default_min_confidence_ratio`]); 0 disables the
    /// ratio check.
    pub min_confidence_ratio: f64,
    /// Hybrid: when the lexical leg matched nothing, its best hit matches fewer than
    /// half of the query's terms, or the query is mostly CJK (bigrams match by accident),
    /// the hits stand on the vector leg alone, and
    /// `low_confidence` is set unless the best cosine similarity reaches this floor
    /// (default [`DEFAULT_SEMANTIC_ONLY_FLOOR`]; 0 turns it off), so that an answer whose
    /// words match nothing and whose meaning is only vaguely near is not presented as one.
    pub semantic_only_floor: f64,
    /// Hybrid: when the first hit was found by one leg only (it is not among both the
    /// lexical and the vector leg's candidates), `low_confidence` is set unless the best
    /// cosine similarity reaches this floor (default [`DEFAULT_SINGLE_LEG_FLOOR`]; 0 turns
    /// it off): the legs disagree on what answers, and nothing is near enough to say.
    pub single_leg_floor: f64,
    /// Semantic and hybrid: how far the vector and document legs move the query away from
    /// the mean of the collection's chunk vectors, in `[0, 1]` (default
    /// [`DEFAULT_CENTERING`]): a vector `v` scores `b · (v · μ)` less, so that pages near
    /// every query (alias pages, short lists) stop crowding the top
    /// (`store::vectors::centering`).
    pub corpus_centering: f64,
    /// Semantic and hybrid: how much of each writing system's offset from the
    /// collection's mean is taken off its vectors' scores, in `[0, 1]` (default
    /// [`DEFAULT_CENTERING`]), so that a query is not nearer every page in its own
    /// language than the page in another language that answers it.
    pub writing_system_centering: f64,
}

impl Default for PipelineOptions {
    fn default() -> PipelineOptions {
        PipelineOptions {
            mode: SearchMode::Hybrid,
            candidates: None,
            rrf_k: fusion::DEFAULT_RRF_K,
            lexical_weight: 1.0,
            vector_weight: 1.0,
            weak_lexical_factor: DEFAULT_WEAK_LEXICAL_FACTOR,
            cjk_lexical_factor: DEFAULT_CJK_LEXICAL_FACTOR,
            document_weight: DEFAULT_DOCUMENT_WEIGHT,
            ensemble_weight: DEFAULT_ENSEMBLE_WEIGHT,
            synonyms: true,
            rerank: false,
            mmr: false,
            mmr_lambda: mmr::DEFAULT_MMR_LAMBDA,
            mmr_same_doc_penalty: mmr::DEFAULT_MMR_SAME_DOC_PENALTY,
            per_document: DEFAULT_PER_DOCUMENT,
            spare: 0,
            parent_retriever: false,
            parent: parent::ParentOptions::default(),
            min_confidence_ratio: default_min_confidence_ratio(SearchMode::Hybrid),
            semantic_only_floor: DEFAULT_SEMANTIC_ONLY_FLOOR,
            single_leg_floor: DEFAULT_SINGLE_LEG_FLOOR,
            corpus_centering: DEFAULT_CENTERING,
            writing_system_centering: DEFAULT_CENTERING,
        }
    }
}

impl PipelineOptions {
    /// Options for `mode` with every other setting at its default (the mode's own
    /// [`default_min_confidence_ratio`]).
    pub fn for_mode(mode: SearchMode) -> PipelineOptions {
        PipelineOptions {
            mode,
            min_confidence_ratio: default_min_confidence_ratio(mode),
            ..PipelineOptions::default()
        }
    }

    /// Options for `mode` with the numbers a `[search]` table sets (`folio.toml`, with
    /// any command-line flags laid over it) in place of the defaults, checked.
    ///
    /// Errors: the [`PipelineOptions::validate`] message of the first bad number, e.g.
    /// `corpus_centering must be between 0 and 1, got 2`.
    pub fn tuned(mode: SearchMode, tuning: &SearchConfig) -> Result<PipelineOptions, String> {
        let defaults = PipelineOptions::for_mode(mode);
        let options = PipelineOptions {
            lexical_weight: tuning.lexical_weight.unwrap_or(defaults.lexical_weight),
            vector_weight: tuning.vector_weight.unwrap_or(defaults.vector_weight),
            weak_lexical_factor: tuning
                .weak_lexical_factor
                .unwrap_or(defaults.weak_lexical_factor),
            cjk_lexical_factor: tuning
                .cjk_lexical_factor
                .unwrap_or(defaults.cjk_lexical_factor),
            document_weight: tuning.document_weight.unwrap_or(defaults.document_weight),
            ensemble_weight: tuning.ensemble_weight.unwrap_or(defaults.ensemble_weight),
            corpus_centering: tuning.corpus_centering.unwrap_or(defaults.corpus_centering),
            writing_system_centering: tuning
                .writing_system_centering
                .unwrap_or(defaults.writing_system_centering),
            semantic_only_floor: tuning
                .semantic_only_floor
                .unwrap_or(defaults.semantic_only_floor),
            single_leg_floor: tuning.single_leg_floor.unwrap_or(defaults.single_leg_floor),
            synonyms: tuning.synonyms.unwrap_or(defaults.synonyms),
            ..defaults
        };
        options.validate()?;
        Ok(options)
    }

    /// [`PipelineOptions::tuned`] with the `[search]` table of the workspace at `root`:
    /// a bad number is that file's error, `invalid <root>/folio.toml: [search] …`, the
    /// one message every front end reports it with.
    pub fn for_root(
        mode: SearchMode,
        root: &std::path::Path,
        tuning: &SearchConfig,
    ) -> Result<PipelineOptions, ConfigError> {
        PipelineOptions::tuned(mode, tuning).map_err(|message| ConfigError::Invalid {
            path: root.join(CONFIG_FILE).display().to_string(),
            message: format!("[search] {message}"),
        })
    }

    /// Checks every number; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        fusion::validate(
            self.rrf_k,
            &[
                ("lexical_weight", self.lexical_weight),
                ("vector_weight", self.vector_weight),
                ("document_weight", self.document_weight),
                ("ensemble_weight", self.ensemble_weight),
            ],
        )?;
        for (name, factor) in [
            ("weak_lexical_factor", self.weak_lexical_factor),
            ("cjk_lexical_factor", self.cjk_lexical_factor),
            ("semantic_only_floor", self.semantic_only_floor),
            ("single_leg_floor", self.single_leg_floor),
            ("corpus_centering", self.corpus_centering),
            ("writing_system_centering", self.writing_system_centering),
        ] {
            if !(0.0..=1.0).contains(&factor) {
                return Err(format!("{name} must be between 0 and 1, got {factor}"));
            }
        }
        mmr::validate(self.mmr_lambda, self.mmr_same_doc_penalty)?;
        confidence::validate(self.min_confidence_ratio)?;
        if self.candidates == Some(0) {
            return Err("candidates must be at least 1".into());
        }
        Ok(())
    }

    /// The vector and document legs' [`Centering`] (validated weights; `f32` is what the
    /// scan computes in).
    pub fn centering(&self) -> Centering {
        Centering {
            corpus: self.corpus_centering as f32,
            writing_system: self.writing_system_centering as f32,
        }
    }

    /// The per-leg candidate count for `limit`.
    pub fn candidates_for(&self, limit: usize) -> usize {
        self.candidates
            .unwrap_or_else(|| limit.saturating_mul(5).max(50))
            .max(limit)
    }
}

/// One chunk found by the vector leg. The pipeline reads everything else about the
/// chunk (path, pointer, heading path, lines, text, source hash) from the store by id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    /// `chunks.id` of the chunk (the key both legs share).
    pub chunk_id: i64,
    /// What the leg ranks by, higher is better: the cosine similarity corrected for the
    /// collection ([`PipelineOptions::centering`]); the cosine itself without centring.
    pub score: f64,
    /// Cosine similarity to the query: what the confidence rules read, whatever the
    /// ranking's correction.
    pub similarity: f64,
}

/// The vector leg of one query: it holds the query embedding.
pub trait VectorLeg {
    /// Waits until the leg can answer (the query embedding may be computed while the
    /// lexical leg runs); `Err(reason)` when it cannot, e.g. the query could not be
    /// embedded. The pipeline calls it once, after the lexical leg and before any other
    /// method. The default is always ready.
    fn ready(&self) -> Result<(), String> {
        Ok(())
    }
    /// The `k` chunks that score highest for the query, best first. Filters need not be
    /// applied.
    fn nearest(&self, k: usize) -> Result<Vec<VectorHit>, SearchError>;
    /// The stored vectors of these chunks, for MMR's cosine; chunks left out fall back
    /// to the lexical similarity. The default knows none.
    fn vectors(&self, _chunk_ids: &[i64]) -> Result<HashMap<i64, Vec<f32>>, SearchError> {
        Ok(HashMap::new())
    }
    /// Score of each document's whole-document vector for the query (its cosine, corrected
    /// for the collection like [`VectorHit::score`]), by path; only the order counts.
    /// Documents left out take no part in the document leg. The default knows none.
    fn document_similarity(&self, _paths: &[String]) -> Result<HashMap<String, f64>, SearchError> {
        Ok(HashMap::new())
    }
    /// The ensemble model's rank (1 = nearest) of every document of the collection that
    /// has a current whole-document vector of that model, by path: the cosine of the
    /// query's and the document's vectors, uncorrected (see
    /// [`PipelineOptions::ensemble_weight`]). Empty when there is no ensemble model or
    /// no such vector yet. The default knows none.
    fn ensemble_ranks(&self) -> Result<HashMap<String, usize>, SearchError> {
        Ok(HashMap::new())
    }
}

/// A closure `k -> nearest hits` is a vector leg without vectors for MMR.
impl<F> VectorLeg for F
where
    F: Fn(usize) -> Result<Vec<VectorHit>, SearchError>,
{
    fn nearest(&self, k: usize) -> Result<Vec<VectorHit>, SearchError> {
        self(k)
    }
}

/// A cross-encoder: scores `(query, passage)` pairs, higher is better
/// ([`crate::rerank::HttpReranker`]).
pub trait Reranker {
    /// One score per passage, in order. The pipeline gives the query's words (without
    /// `-excluded` terms or quotes) and each candidate chunk as embedded: its heading
    /// path, a blank line, its Markdown ([`crate::store::embedding_text`]).
    ///
    /// Errors: why no scores came (the provider is unreachable, refused the request or
    /// answered something else); the search fails with [`PipelineError::Unavailable`].
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>, String>;
}

/// A failure of [`hybrid_search`].
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A stage was asked for that this installation cannot run (MCP `NOT_CONFIGURED`).
    #[error("not configured: {0}")]
    NotConfigured(String),
    /// A service the search needs failed: the reranker (MCP `UNAVAILABLE`).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Invalid arguments or an index failure.
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// One hit of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineHit {
    /// The hit; `score` is the mode's score (`-bm25`, cosine, RRF or reranker score).
    /// For a collapsed hit: the section's pointer, heading path and lines, the best
    /// member's score and snippet.
    pub hit: SearchHit,
    /// `chunks.id` of the hit (of the best member for a collapsed hit).
    pub chunk_id: i64,
    /// 1-based rank in the lexical leg, when it returned the chunk.
    pub lexical_rank: Option<usize>,
    /// 1-based rank in the vector leg, when it returned the chunk.
    pub vector_rank: Option<usize>,
    /// Cosine to the query, when the vector leg returned the chunk.
    pub similarity: Option<f64>,
    /// The MMR value at the pick, when MMR ran.
    pub mmr_score: Option<f64>,
    /// Pointers of the chunks a parent collapse absorbed, best first; empty otherwise.
    pub expanded_from: Vec<String>,
    /// The document's other chunks in the pool, best first, at most [`MAX_SECTIONS`],
    /// when `per_document` left them out; empty otherwise.
    pub sections: Vec<SectionHit>,
    /// Chunk ids matching `expanded_from`.
    pub expanded_chunk_ids: Vec<i64>,
}

/// The answer of [`hybrid_search`].
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineResults {
    /// Hits, best first.
    pub results: Vec<PipelineHit>,
    /// See [`confidence`].
    pub low_confidence: bool,
    /// The ratio `low_confidence` compared (`None` when it could not be computed).
    pub confidence_ratio: Option<f64>,
    /// The filters that applied (as [`SearchResults::filter_applied`]).
    pub filter_applied: Vec<String>,
    /// The mode that ran (`lexical` when `hybrid` was asked without a vector leg).
    pub mode: SearchMode,
    /// Candidates fetched per leg (`limit` for a single leg without rerank or MMR).
    pub candidates: usize,
    /// Whether a [`Reranker`] rescored the pool (each hit's score is then its score).
    pub reranked: bool,
}

impl PipelineResults {
    /// The plain [`SearchResults`] (drops the pipeline's extra fields).
    pub fn into_search_results(self) -> SearchResults {
        SearchResults {
            results: self.results.into_iter().map(|h| h.hit).collect(),
            low_confidence: self.low_confidence,
            filter_applied: self.filter_applied,
        }
    }
}

/// A candidate chunk as read from the store.
#[derive(Debug, Clone)]
pub(crate) struct ChunkRow {
    pub(crate) path: String,
    pub(crate) pointer: String,
    pub(crate) heading_path: Vec<String>,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) text: String,
    pub(crate) source_hash: String,
    pub(crate) citation: crate::store::Citation,
}

/// A candidate in the pool.
#[derive(Debug, Clone)]
struct Candidate {
    id: i64,
    score: f64,
    /// The score before the document leg's boost (hybrid), which `low_confidence`
    /// compares: the boost lifts whole documents and flattens the ratio it reads.
    unboosted: Option<f64>,
    lexical_rank: Option<usize>,
    vector_rank: Option<usize>,
    similarity: Option<f64>,
}

/// Runs the pipeline for `query` (its `limit`, filters and text); see the module docs.
pub fn hybrid_search(
    store: &Store,
    query: &SearchQuery,
    options: &PipelineOptions,
    vector_leg: Option<&dyn VectorLeg>,
) -> Result<PipelineResults, PipelineError> {
    hybrid_search_with(store, query, options, vector_leg, None)
}

/// [`hybrid_search`] with a [`Reranker`] for `rerank: true`.
pub fn hybrid_search_with(
    store: &Store,
    query: &SearchQuery,
    options: &PipelineOptions,
    vector_leg: Option<&dyn VectorLeg>,
    reranker: Option<&dyn Reranker>,
) -> Result<PipelineResults, PipelineError> {
    let mut plan = Plan::new(query, options, vector_leg, reranker)?;

    // 1. The legs.
    let lexical = lexical_leg(store, query, options, &plan)?;
    let vector_leg = ready_vector_leg(vector_leg, &mut plan.mode)?;
    let mut vector_hits: Vec<VectorHit> = Vec::new();
    if let Some(leg) = vector_leg {
        let filtering = !lexical.filter_applied.is_empty() || plan.terms.iter().any(|t| t.excluded);
        vector_hits = vector_leg_hits(store, query, leg, plan.n_candidates, filtering)?;
    }

    // 2. Fusion (or the single leg's order), then the document leg.
    let (pool, nominal) = fuse_legs(query, options, plan.mode, &lexical, &vector_hits);
    let unanimous = unanimous_first(query, options, plan.mode, &lexical, &vector_hits);
    let (mut pool, rows) = candidate_pool(store, options, &plan, vector_leg, pool, unanimous)?;

    // 3. Rerank.
    let mut reranked = false;
    if let (true, Some(reranker)) = (options.rerank, reranker) {
        rerank_pool(reranker, &mut pool, &rows, query, &plan.terms)?;
        reranked = true;
    }

    // 4. MMR or the first `limit`, at most `per_document` of a document.
    let (selected, mmr_scores) = select_hits(options, &plan, vector_leg, &pool, &rows)?;
    let sections = if options.per_document == 0 {
        HashMap::new()
    } else {
        other_sections(&selected, &pool, &rows)
    };

    // 5. Confidence: on what the legs ranked first (MMR: its first `limit` picks),
    // whatever the cap keeps, spares aside.
    let judged: Vec<Candidate> = if options.mmr {
        selected.iter().take(plan.limit).cloned().collect()
    } else {
        pool.iter().take(plan.limit).cloned().collect()
    };
    let judged = &judged;
    let (ratio, low_confidence) = ConfidenceRule {
        options,
        query,
        mode: plan.mode,
        reranked,
        lexical_low: lexical.low,
        nominal: nominal.as_ref(),
    }
    .judge(judged);

    // Hits; 6. Parent retrieval.
    let mut hits = pipeline_hits(&selected, mmr_scores, &rows, &plan.terms, sections);
    if options.parent_retriever && hits.len() >= 2 {
        hits = collapse_hits(store, hits, options.parent)?;
    }

    Ok(PipelineResults {
        results: hits,
        low_confidence,
        confidence_ratio: ratio,
        filter_applied: lexical.filter_applied,
        mode: plan.mode,
        candidates: plan.n_candidates,
        reranked,
    })
}

/// What one search runs: its mode, how many hits it keeps, each leg's pool size and the
/// query's terms.
struct Plan {
    /// The mode that runs (`lexical` for a hybrid search without a vector leg).
    mode: SearchMode,
    /// Hits kept (`query.limit`, or [`DEFAULT_LIMIT`] for 0).
    limit: usize,
    /// Candidates fetched per leg.
    n_candidates: usize,
    /// The parsed query.
    terms: Vec<query::QueryTerm>,
}

impl Plan {
    /// Checks the options and that the stages asked for can run, and sizes the pool.
    fn new(
        query: &SearchQuery,
        options: &PipelineOptions,
        vector_leg: Option<&dyn VectorLeg>,
        reranker: Option<&dyn Reranker>,
    ) -> Result<Plan, PipelineError> {
        options.validate().map_err(SearchError::InvalidArgument)?;
        if options.rerank && reranker.is_none() {
            return Err(PipelineError::NotConfigured(
                "rerank needs a cross-encoder model and none is available; search without rerank"
                    .into(),
            ));
        }
        let mode = match (options.mode, vector_leg) {
            (SearchMode::Semantic, None) => {
                return Err(PipelineError::NotConfigured(
                    "semantic search needs embeddings and none are available (no embedding provider, or the index has no vectors yet); use mode lexical".into(),
                ));
            }
            (SearchMode::Hybrid, None) => SearchMode::Lexical,
            (m, _) => m,
        };
        let limit = if query.limit == 0 {
            DEFAULT_LIMIT
        } else {
            query.limit
        };
        // A single leg with nothing to re-rank and every chunk of a document kept needs
        // no pool beyond `limit`.
        let single_leg_plain = mode != SearchMode::Hybrid
            && !options.mmr
            && !options.rerank
            && options.per_document == 0
            && options.spare == 0
            && options.candidates.is_none();
        let n_candidates = if single_leg_plain {
            limit
        } else {
            options.candidates_for(limit)
        };
        let terms = query::parse_query(&query.text);
        Ok(Plan {
            mode,
            limit,
            n_candidates,
            terms,
        })
    }
}

/// What the lexical leg found; in semantic mode, where it does not run, only the filters
/// that applied.
struct LexicalLeg {
    /// Chunk ids, best first.
    ids: Vec<i64>,
    /// Each chunk's `-bm25`.
    scores: HashMap<i64, f64>,
    /// The leg's own low-confidence rule (true when it did not run).
    low: bool,
    /// The filters that applied (as [`SearchResults::filter_applied`]).
    filter_applied: Vec<String>,
}

/// Runs the lexical leg for `plan.n_candidates` chunks, unless the mode is semantic.
fn lexical_leg(
    store: &Store,
    query: &SearchQuery,
    options: &PipelineOptions,
    plan: &Plan,
) -> Result<LexicalLeg, SearchError> {
    if plan.mode == SearchMode::Semantic {
        return Ok(LexicalLeg {
            ids: Vec::new(),
            scores: HashMap::new(),
            low: true,
            filter_applied: build_filters(query)?.applied,
        });
    }
    let leg_query = SearchQuery {
        limit: plan.n_candidates,
        ..query.clone()
    };
    let ranking = store.lexical_ranking(&leg_query, options.synonyms)?;
    Ok(LexicalLeg {
        ids: ranking.ranked.iter().map(|(id, _)| *id).collect(),
        scores: ranking.ranked.into_iter().collect(),
        low: ranking.low_confidence,
        filter_applied: ranking.filter_applied,
    })
}

/// The vector leg if the mode uses one and it is ready; a hybrid search whose query could
/// not be embedded falls back to `lexical` (and `mode` says so), a semantic one fails.
fn ready_vector_leg<'a>(
    vector_leg: Option<&'a dyn VectorLeg>,
    mode: &mut SearchMode,
) -> Result<Option<&'a dyn VectorLeg>, PipelineError> {
    let vector_leg = vector_leg.filter(|_| *mode != SearchMode::Lexical);
    if let Some(Err(reason)) = vector_leg.map(|leg| leg.ready()) {
        if *mode == SearchMode::Semantic {
            return Err(PipelineError::NotConfigured(format!(
                "the query could not be embedded: {reason}"
            )));
        }
        tracing::warn!(%reason, "query embedding failed; searching lexically");
        *mode = SearchMode::Lexical;
        return Ok(None);
    }
    Ok(vector_leg)
}

/// The vector leg's first `n_candidates` distinct chunks that pass the query's filters and
/// exclusions (asking for 4× as many when `filtering`).
fn vector_leg_hits(
    store: &Store,
    query: &SearchQuery,
    leg: &dyn VectorLeg,
    n_candidates: usize,
    filtering: bool,
) -> Result<Vec<VectorHit>, SearchError> {
    let k = if filtering {
        n_candidates.saturating_mul(4)
    } else {
        n_candidates
    };
    let raw = leg.nearest(k)?;
    let ids: Vec<i64> = raw.iter().map(|h| h.chunk_id).collect();
    let keep = store.chunk_ids_passing(query, &ids)?;
    let mut seen = HashSet::new();
    Ok(raw
        .into_iter()
        .filter(|h| keep.contains(&h.chunk_id) && seen.insert(h.chunk_id))
        .take(n_candidates)
        .collect())
}

/// The lexical leg's weight factor: it counts less for a query whose words mostly miss
/// (its own low-confidence rule) and for a mostly-CJK query.
fn lexical_factor(options: &PipelineOptions, lexical_low: bool, text: &str) -> f64 {
    (if lexical_low {
        options.weak_lexical_factor
    } else {
        1.0
    }) * if query::mostly_cjk(text) {
        options.cjk_lexical_factor
    } else {
        1.0
    }
}

/// RRF of the two legs, the lexical one with weight `lexical_weight`.
fn fuse(
    options: &PipelineOptions,
    lexical_ids: &[i64],
    vector_ids: &[i64],
    lexical_weight: f64,
) -> Vec<fusion::Fused<i64>> {
    fusion::rrf(
        &[
            fusion::RrfLeg {
                weight: lexical_weight,
                ranked: lexical_ids,
            },
            fusion::RrfLeg {
                weight: options.vector_weight,
                ranked: vector_ids,
            },
        ],
        options.rrf_k,
    )
}

/// The pool in the mode's order (the lexical leg's, the vector leg's, or their fusion),
/// and in hybrid mode with the lexical leg weighted down, the RRF scores at the nominal
/// weights, which the confidence rule reads.
fn fuse_legs(
    query: &SearchQuery,
    options: &PipelineOptions,
    mode: SearchMode,
    lexical: &LexicalLeg,
    vector_hits: &[VectorHit],
) -> (Vec<Candidate>, Option<HashMap<i64, f64>>) {
    let lexical_factor = lexical_factor(options, lexical.low, &query.text);
    let vector_ids: Vec<i64> = vector_hits.iter().map(|h| h.chunk_id).collect();
    let pool = match mode {
        SearchMode::Lexical => lexical_pool(lexical),
        SearchMode::Semantic => semantic_pool(vector_hits),
        SearchMode::Hybrid => hybrid_pool(
            fuse(
                options,
                &lexical.ids,
                &vector_ids,
                options.lexical_weight * lexical_factor,
            ),
            vector_hits,
        ),
    };
    // The confidence rule reads the RRF scores of the nominal leg weights: with the lexical
    // leg weighted down, one leg's scores (1/61, 1/62, …) never stand 1.5× above their
    // mean, and the flag would fire on most queries; it keeps saying whether the two legs
    // agreed on a winner.
    let nominal: Option<HashMap<i64, f64>> = (mode == SearchMode::Hybrid && lexical_factor < 1.0)
        .then(|| {
            fuse(options, &lexical.ids, &vector_ids, options.lexical_weight)
                .into_iter()
                .map(|f| (f.key, f.score))
                .collect()
        });
    (pool, nominal)
}

/// The chunk both legs rank first in hybrid mode, when the lexical leg counts (its
/// weight factor is not 0: see [`lexical_factor`]): two independent rankings agree on
/// it, so the document legs, which rank whole documents, do not push it down
/// ([`document_fusion`]).
fn unanimous_first(
    query: &SearchQuery,
    options: &PipelineOptions,
    mode: SearchMode,
    lexical: &LexicalLeg,
    vector_hits: &[VectorHit],
) -> Option<i64> {
    let first = *lexical.ids.first()?;
    (mode == SearchMode::Hybrid
        && lexical_factor(options, lexical.low, &query.text) > 0.0
        && vector_hits.first().map(|h| h.chunk_id) == Some(first))
    .then_some(first)
}

/// The lexical leg's hits as candidates, scored `-bm25`.
fn lexical_pool(lexical: &LexicalLeg) -> Vec<Candidate> {
    lexical
        .ids
        .iter()
        .enumerate()
        .map(|(i, id)| Candidate {
            id: *id,
            score: lexical.scores[id],
            unboosted: None,
            lexical_rank: Some(i + 1),
            vector_rank: None,
            similarity: None,
        })
        .collect()
}

/// The vector leg's hits as candidates, scored by the corrected cosine.
fn semantic_pool(vector_hits: &[VectorHit]) -> Vec<Candidate> {
    vector_hits
        .iter()
        .enumerate()
        .map(|(i, h)| Candidate {
            id: h.chunk_id,
            score: h.score,
            unboosted: None,
            lexical_rank: None,
            vector_rank: Some(i + 1),
            similarity: Some(h.similarity),
        })
        .collect()
}

/// The fused hits as candidates, scored by RRF, with the vector leg's cosines.
fn hybrid_pool(fused: Vec<fusion::Fused<i64>>, vector_hits: &[VectorHit]) -> Vec<Candidate> {
    let similarity: HashMap<i64, f64> = vector_hits
        .iter()
        .map(|h| (h.chunk_id, h.similarity))
        .collect();
    fused
        .into_iter()
        .map(|f| Candidate {
            id: f.key,
            score: f.score,
            unboosted: None,
            lexical_rank: f.ranks[0],
            vector_rank: f.ranks[1],
            similarity: similarity.get(&f.key).copied(),
        })
        .collect()
}

/// Reads the pool's chunks (once, for the document leg and every later stage), adds the
/// document leg in hybrid mode (keeping the `unanimous` chunk first: [`unanimous_first`]),
/// and keeps the first `n_candidates` still in the index.
fn candidate_pool(
    store: &Store,
    options: &PipelineOptions,
    plan: &Plan,
    vector_leg: Option<&dyn VectorLeg>,
    mut pool: Vec<Candidate>,
    unanimous: Option<i64>,
) -> Result<(Vec<Candidate>, HashMap<i64, ChunkRow>), SearchError> {
    let rows = store.load_chunk_rows(&pool.iter().map(|c| c.id).collect::<Vec<_>>())?;
    if plan.mode == SearchMode::Hybrid {
        pool = document_fusion(vector_leg, options, pool, &rows)?;
        if let Some(id) = unanimous {
            keep_first(&mut pool, id);
        }
    }
    pool.truncate(plan.n_candidates);
    pool.retain(|c| rows.contains_key(&c.id));
    Ok((pool, rows))
}

/// Rescores the pool with the reranker (the query's included words against each chunk as
/// embedded) and re-sorts it, stable.
fn rerank_pool(
    reranker: &dyn Reranker,
    pool: &mut [Candidate],
    rows: &HashMap<i64, ChunkRow>,
    query: &SearchQuery,
    terms: &[query::QueryTerm],
) -> Result<(), PipelineError> {
    let passages: Vec<String> = pool
        .iter()
        .map(|c| {
            let row = &rows[&c.id];
            crate::store::embedding_text(
                &row.heading_path.join(crate::store::HEADING_PATH_SEPARATOR),
                &row.text,
            )
        })
        .collect();
    let passages: Vec<&str> = passages.iter().map(String::as_str).collect();
    let words = query::included_text(terms);
    let rerank_query = if words.trim().is_empty() {
        query.text.as_str()
    } else {
        words.as_str()
    };
    let scores = reranker
        .score(rerank_query, &passages)
        .map_err(|why| PipelineError::Unavailable(format!("the reranker failed: {why}")))?;
    if scores.len() != pool.len() {
        return Err(PipelineError::Unavailable(format!(
            "the reranker returned {} scores for {} passages",
            scores.len(),
            pool.len()
        )));
    }
    for (c, s) in pool.iter_mut().zip(scores) {
        c.score = s;
    }
    // Stable: equal reranker scores keep the fused order.
    pool.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(())
}

/// The `limit` (+ `spare`) hits kept, at most `per_document` of a document (0: any
/// number): MMR's picks among them with their MMR values when `mmr` is on, else the first
/// of the pool (the values `None`).
fn select_hits(
    options: &PipelineOptions,
    plan: &Plan,
    vector_leg: Option<&dyn VectorLeg>,
    pool: &[Candidate],
    rows: &HashMap<i64, ChunkRow>,
) -> Result<(Vec<Candidate>, Vec<Option<f64>>), SearchError> {
    let wanted = plan.limit + options.spare;
    // Each document's first `per_document` chunks, in the pool's order.
    let mut per_doc: HashMap<&str, usize> = HashMap::new();
    let capped: Vec<&Candidate> = pool
        .iter()
        .filter(|c| {
            let n = per_doc.entry(rows[&c.id].path.as_str()).or_default();
            *n += 1;
            options.per_document == 0 || *n <= options.per_document
        })
        .collect();
    let mut mmr_scores: Vec<Option<f64>> = Vec::new();
    let selected: Vec<Candidate> = if options.mmr && !capped.is_empty() {
        let ids: Vec<i64> = capped.iter().map(|c| c.id).collect();
        let vectors = match vector_leg {
            Some(leg) if plan.mode != SearchMode::Lexical => leg.vectors(&ids)?,
            _ => HashMap::new(),
        };
        let tokens: Vec<HashSet<String>> = capped
            .iter()
            .map(|c| mmr::token_set(&rows[&c.id].text))
            .collect();
        let cands: Vec<mmr::MmrCandidate> = capped
            .iter()
            .zip(&tokens)
            .map(|(c, t)| mmr::MmrCandidate {
                score: c.score,
                doc: rows[&c.id].path.as_str(),
                vector: vectors.get(&c.id).map(Vec::as_slice),
                tokens: t,
            })
            .collect();
        let picks = mmr::select(
            &cands,
            wanted,
            options.mmr_lambda,
            options.mmr_same_doc_penalty,
        );
        mmr_scores = picks.iter().map(|p| Some(p.mmr_score)).collect();
        picks.iter().map(|p| capped[p.index].clone()).collect()
    } else {
        capped.into_iter().take(wanted).cloned().collect()
    };
    mmr_scores.resize(selected.len(), None);
    Ok((selected, mmr_scores))
}

/// The chunks of `pool` that `selected` left out, listed by the id of the last selected
/// hit of their document (best first, at most [`MAX_SECTIONS`] each).
fn other_sections(
    selected: &[Candidate],
    pool: &[Candidate],
    rows: &HashMap<i64, ChunkRow>,
) -> HashMap<i64, Vec<SectionHit>> {
    let chosen: HashSet<i64> = selected.iter().map(|c| c.id).collect();
    let mut last_of: HashMap<&str, i64> = HashMap::new();
    for c in selected {
        last_of.insert(rows[&c.id].path.as_str(), c.id);
    }
    let mut out: HashMap<i64, Vec<SectionHit>> = HashMap::new();
    for c in pool.iter().filter(|c| !chosen.contains(&c.id)) {
        let row = &rows[&c.id];
        let Some(&owner) = last_of.get(row.path.as_str()) else {
            continue;
        };
        let list = out.entry(owner).or_default();
        if list.len() < MAX_SECTIONS {
            list.push(SectionHit {
                pointer: row.pointer.clone(),
                heading_path: row.heading_path.clone(),
                start_line: row.start_line,
                end_line: row.end_line,
                score: c.score,
            });
        }
    }
    out
}

/// What the `low_confidence` rules read besides the kept hits.
struct ConfidenceRule<'a> {
    options: &'a PipelineOptions,
    query: &'a SearchQuery,
    mode: SearchMode,
    reranked: bool,
    lexical_low: bool,
    /// The RRF scores at the nominal leg weights (see [`fuse_legs`]).
    nominal: Option<&'a HashMap<i64, f64>>,
}

impl ConfidenceRule<'_> {
    /// The confidence ratio and `low_confidence` of the kept hits (see [`confidence`]).
    fn judge(&self, selected: &[Candidate]) -> (Option<f64>, bool) {
        let options = self.options;
        let scores = self.scores(selected);
        let vaguely_near = self.vaguely_near(selected);
        if selected.is_empty() {
            (None, true)
        } else if self.reranked {
            // The reranker's scores replace the ratio's input (on a probability scale, so
            // that logits work too); the legs' own floors stay: a rerank orders what the
            // legs found, it does not make a weak match strong.
            let ratio = confidence::ratio_higher_better(&confidence::rerank_probabilities(&scores));
            let floor = (self.mode == SearchMode::Lexical && self.lexical_low) || vaguely_near;
            (
                ratio,
                floor || confidence::is_low(ratio, options.min_confidence_ratio),
            )
        } else if self.mode == SearchMode::Semantic {
            // On cosine distances (the ranking score is corrected for the collection; the
            // ratio's threshold was set on cosines).
            let distances: Vec<f64> = selected
                .iter()
                .map(|c| 1.0 - c.similarity.unwrap_or(c.score))
                .collect();
            let ratio = confidence::ratio_distances(&distances);
            (
                ratio,
                confidence::is_low(ratio, options.min_confidence_ratio),
            )
        } else if self.mode == SearchMode::Lexical {
            // BM25 scores of a few good hits sit close together, so their ratio says little
            // (and depends on `limit`); lexical confidence is term coverage: the best hit
            // matches at least half of the query's included terms.
            (confidence::ratio_higher_better(&scores), self.lexical_low)
        } else {
            let ratio = confidence::ratio_higher_better(&scores);
            (
                ratio,
                vaguely_near || confidence::is_low(ratio, options.min_confidence_ratio),
            )
        }
    }

    /// The scores the ratio reads: the reranker's, the nominal RRF scores, or the scores
    /// before the document leg's boost.
    fn scores(&self, selected: &[Candidate]) -> Vec<f64> {
        selected
            .iter()
            .map(|c| {
                if self.reranked {
                    c.score
                } else if let Some(nominal) = self.nominal {
                    nominal.get(&c.id).copied().unwrap_or(0.0)
                } else {
                    c.unboosted.unwrap_or(c.score)
                }
            })
            .collect()
    }

    /// Hybrid where the lexical leg matched nothing, too little to count (its best hit
    /// matches fewer than half of the query's terms), or matched character bigrams of a
    /// mostly-CJK query, which particles and endings match by accident: the vector leg
    /// alone must be near enough ([`PipelineOptions::semantic_only_floor`]); or where the
    /// first hit was found by one leg only: the best hit must be nearer still
    /// ([`PipelineOptions::single_leg_floor`]). It says what the legs found, so it holds
    /// after a rerank.
    fn vaguely_near(&self, selected: &[Candidate]) -> bool {
        let best_similarity = best_similarity(selected);
        let semantic_only = (self.lexical_low || query::mostly_cjk(&self.query.text))
            && best_similarity < self.options.semantic_only_floor;
        let single_leg = selected
            .first()
            .is_some_and(|c| c.lexical_rank.is_none() || c.vector_rank.is_none())
            && best_similarity < self.options.single_leg_floor;
        self.mode == SearchMode::Hybrid && (semantic_only || single_leg)
    }
}

/// The highest cosine similarity among `selected` (minus infinity when none has one).
fn best_similarity(selected: &[Candidate]) -> f64 {
    selected
        .iter()
        .filter_map(|c| c.similarity)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The kept candidates as hits, with their chunks' locations, snippets, MMR values and
/// the other chunks of their documents (`sections`, by candidate id).
fn pipeline_hits(
    selected: &[Candidate],
    mmr_scores: Vec<Option<f64>>,
    rows: &HashMap<i64, ChunkRow>,
    terms: &[query::QueryTerm],
    mut sections: HashMap<i64, Vec<SectionHit>>,
) -> Vec<PipelineHit> {
    let needles = snippet::needles_for(terms);
    selected
        .iter()
        .zip(mmr_scores)
        .map(|(c, mmr_score)| {
            let row = &rows[&c.id];
            PipelineHit {
                hit: SearchHit {
                    path: row.path.clone(),
                    pointer: row.pointer.clone(),
                    heading_path: row.heading_path.clone(),
                    start_line: row.start_line,
                    end_line: row.end_line,
                    score: c.score,
                    snippet: snippet::make_snippet(&row.text, &needles),
                    indexed_source_hash: row.source_hash.clone(),
                    citation: row.citation.clone(),
                },
                chunk_id: c.id,
                lexical_rank: c.lexical_rank,
                vector_rank: c.vector_rank,
                similarity: c.similarity,
                mmr_score,
                expanded_from: Vec::new(),
                expanded_chunk_ids: Vec::new(),
                sections: sections.remove(&c.id).unwrap_or_default(),
            }
        })
        .collect()
}

/// The document and ensemble legs of hybrid search (see
/// [`PipelineOptions::document_weight`] and [`PipelineOptions::ensemble_weight`]): adds
/// each chunk's document boosts to the chunk-level fusion and re-sorts (stable, so equal
/// scores keep the fused order). For the document leg a candidate document without a
/// current whole-document vector is ranked at its place in the chunk-level fusion; the
/// ensemble leg boosts only documents it ranks. Without either leg's vectors (or with both
/// weights 0) the chunk-level fusion is returned unchanged.
fn document_fusion(
    vector_leg: Option<&dyn VectorLeg>,
    options: &PipelineOptions,
    chunks: Vec<Candidate>,
    rows: &HashMap<i64, ChunkRow>,
) -> Result<Vec<Candidate>, SearchError> {
    let Some(leg) = vector_leg else {
        return Ok(chunks);
    };
    let mut in_chunk_order: Vec<String> = Vec::new();
    for row in chunks.iter().filter_map(|c| rows.get(&c.id)) {
        if !in_chunk_order.contains(&row.path) {
            in_chunk_order.push(row.path.clone());
        }
    }
    let doc_rank = if options.document_weight > 0.0 {
        document_ranks(leg, &in_chunk_order)?
    } else {
        HashMap::new()
    };
    let ensemble_rank = if options.ensemble_weight > 0.0 {
        leg.ensemble_ranks()?
    } else {
        HashMap::new()
    };
    if doc_rank.is_empty() && ensemble_rank.is_empty() {
        return Ok(chunks);
    }
    let boost_of = |path: &str| {
        doc_rank.get(path).map_or(0.0, |rank| {
            options.document_weight / (options.rrf_k + *rank as f64)
        }) + ensemble_rank.get(path).map_or(0.0, |rank| {
            options.ensemble_weight / (options.rrf_k + *rank as f64)
        })
    };
    let mut pool: Vec<Candidate> = chunks
        .into_iter()
        .map(|c| {
            let boost = rows.get(&c.id).map_or(0.0, |r| boost_of(&r.path));
            Candidate {
                score: c.score + boost,
                unboosted: Some(c.score),
                ..c
            }
        })
        .collect();
    pool.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(pool)
}

/// Puts chunk `id` first in the pool, its score raised just above the best one (so every
/// later stage that orders by score keeps it there); nothing when it is first already
/// or not in the pool.
fn keep_first(pool: &mut Vec<Candidate>, id: i64) {
    let Some(at) = pool.iter().position(|c| c.id == id).filter(|at| *at > 0) else {
        return;
    };
    let best = pool[0].score;
    let mut first = pool.remove(at);
    first.score = best + best.abs().max(1e-9) * 1e-9;
    pool.insert(0, first);
}

/// The document leg's rank of each candidate document (`in_chunk_order`: the candidates'
/// paths in chunk-level fusion order), 1 = best; empty when the leg knows no
/// whole-document vector. A document without a current whole-document vector (changed
/// since the last embedding pass, or refused by the provider) is not pushed down for it:
/// it takes the rank of its place in the chunk-level fusion.
fn document_ranks(
    leg: &dyn VectorLeg,
    in_chunk_order: &[String],
) -> Result<HashMap<String, usize>, SearchError> {
    let similarity = leg.document_similarity(in_chunk_order)?;
    if similarity.is_empty() {
        return Ok(HashMap::new());
    }
    let mut by_similarity: Vec<(f64, &String)> = in_chunk_order
        .iter()
        .filter_map(|p| similarity.get(p).map(|s| (*s, p)))
        .collect();
    by_similarity.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut doc_rank: HashMap<String, usize> = by_similarity
        .into_iter()
        .enumerate()
        .map(|(i, (_, p))| (p.clone(), i + 1))
        .collect();
    for (i, path) in in_chunk_order.iter().enumerate() {
        doc_rank.entry(path.clone()).or_insert(i + 1);
    }
    Ok(doc_rank)
}

/// Parent retrieval over pipeline hits: loads the chunks of every document with at
/// least `min_hits` hits and applies [`parent::collapse`].
fn collapse_hits(
    store: &Store,
    hits: Vec<PipelineHit>,
    options: parent::ParentOptions,
) -> Result<Vec<PipelineHit>, SearchError> {
    let mut per_doc: HashMap<&str, usize> = HashMap::new();
    for h in &hits {
        *per_doc.entry(h.hit.path.as_str()).or_default() += 1;
    }
    let mut chunks = HashMap::new();
    for (path, n) in &per_doc {
        if *n >= options.min_hits.max(2) {
            chunks.insert(path.to_string(), store.chunks_of(path)?);
        }
    }
    let locations: Vec<parent::HitLocation> = hits
        .iter()
        .map(|h| parent::HitLocation {
            path: &h.hit.path,
            heading_path: &h.hit.heading_path,
        })
        .collect();
    let chunks_of = |path: &str| -> Vec<parent::SectionChunk<'_>> {
        chunks
            .get(path)
            .map(|records| {
                records
                    .iter()
                    .map(|r| parent::SectionChunk {
                        pointer: &r.pointer,
                        heading_path: &r.heading_path,
                        start_line: r.start_line,
                        end_line: r.end_line,
                        bytes: r.text.len(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let groups = parent::collapse(&locations, &chunks_of, options);
    Ok(groups
        .into_iter()
        .map(|g| {
            let mut best = hits[g.members[0]].clone();
            if let Some(section) = g.section {
                best.hit.pointer = section.pointer;
                best.hit.heading_path = section.heading_path;
                best.hit.start_line = section.start_line;
                best.hit.end_line = section.end_line;
                best.expanded_from = g
                    .members
                    .iter()
                    .map(|&i| hits[i].hit.pointer.clone())
                    .collect();
                best.expanded_chunk_ids = g.members.iter().map(|&i| hits[i].chunk_id).collect();
            }
            best
        })
        .collect())
}

impl Store {
    /// The ids among `ids` whose chunks pass every filter of `search` (path globs,
    /// category, topic, tags, dates, fields, quality) and match none of its `-excluded`
    /// terms — the vector leg's equivalent of the lexical leg's SQL filtering. Ids of
    /// chunks no longer in the index are dropped. Invalid filters give
    /// [`SearchError::InvalidArgument`].
    pub fn chunk_ids_passing(
        &self,
        search: &SearchQuery,
        ids: &[i64],
    ) -> Result<HashSet<i64>, SearchError> {
        let filters = build_filters(search)?;
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let ids_json =
            serde_json::to_string(ids).map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        let mut values = vec![Value::Text(ids_json)];
        values.extend(filters.values);
        let mut sql = format!(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id
             WHERE c.id IN (SELECT value FROM json_each(?1)){}",
            filters.sql
        );
        let excluded: Vec<String> = query::parse_query(&search.text)
            .iter()
            .filter(|t| t.excluded)
            .map(|t| t.fts_expr(self.lexical()))
            .collect();
        if !excluded.is_empty() {
            values.push(Value::Text(excluded.join(" OR ")));
            sql.push_str(&format!(
                " AND c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?{})",
                values.len()
            ));
        }
        let conn = self.conn();
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values.iter()), |row| {
            row.get::<_, i64>(0)
        })?;
        Ok(rows.collect::<Result<HashSet<_>, _>>()?)
    }

    /// The candidate chunks by id (missing ids are absent from the map).
    pub(crate) fn load_chunk_rows(
        &self,
        ids: &[i64],
    ) -> Result<HashMap<i64, ChunkRow>, SearchError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let ids_json =
            serde_json::to_string(ids).map_err(|e| SearchError::InvalidArgument(e.to_string()))?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT c.id, d.path, c.pointer, c.heading_path, c.start_line, c.end_line, c.text, d.source_hash,
                    c.page, c.symbol_kind, c.symbol
             FROM chunks c JOIN documents d ON d.id = c.doc_id
             WHERE c.id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([ids_json], |row| {
            let heading: String = row.get(3)?;
            Ok((
                row.get::<_, i64>(0)?,
                ChunkRow {
                    path: row.get(1)?,
                    pointer: row.get(2)?,
                    heading_path: split_heading_path(&heading),
                    start_line: row.get(4)?,
                    end_line: row.get(5)?,
                    text: row.get(6)?,
                    source_hash: row.get(7)?,
                    citation: crate::store::Citation {
                        page: row.get(8)?,
                        symbol_kind: row.get(9)?,
                        symbol: row.get(10)?,
                    },
                },
            ))
        })?;
        Ok(rows.collect::<Result<HashMap<_, _>, _>>()?)
    }
}

#[cfg(test)]
mod tests;
