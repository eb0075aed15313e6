//! The one search entry point of every front end (`kb_search`, `folio search`,
//! `folio/search`, `folio eval`): it builds the vector leg from an [`Embedder`]
//! and the stored vectors, then runs the [`pipeline`].
//!
//! The vector leg exists only when an embedder is loaded **and** the index holds
//! vectors of that embedder's model (`Store::has_vectors_of`); otherwise `hybrid`
//! runs lexical alone (and reports `mode: lexical`), and `semantic` is
//! [`PipelineError::NotConfigured`] with the reason.
//!
//! The query is embedded on a thread of its own while the pipeline runs the lexical
//! leg (on 2 cores this hides the shorter of the two), and the vector leg waits for it.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::mpsc;

use super::pipeline::{
    self, PipelineError, PipelineOptions, PipelineResults, Reranker, SearchMode, VectorHit,
    VectorLeg,
};
use super::query::{included_text, parse_query};
use super::{SearchError, SearchQuery};
use crate::embed::Embedder;
use crate::embed::runner::EmbeddingRunner;
use crate::store::Store;
use crate::store::vectors::Centering;

/// The text embedded for a query: its included terms, space-separated, as typed
/// (quotes and `*` dropped); excluded `-terms` are left out, since they filter
/// both legs instead of describing what is sought.
pub fn query_embedding_text(text: &str) -> String {
    included_text(&parse_query(text))
}

/// How the [`PipelineError::NotConfigured`] message of a `semantic` search without a
/// vector leg begins; the reason and "; use mode lexical" follow.
const SEMANTIC_UNAVAILABLE: &str = "semantic search is not available:";

/// The vector leg over the store for one query.
pub struct StoreVectorLeg<'a> {
    store: &'a Store,
    model_id: String,
    /// The query vector, or why there is none; set on the first [`VectorLeg::ready`]
    /// when the vector is computed on another thread.
    vector: OnceCell<Result<Vec<f32>, String>>,
    /// The embedding thread's answer, when the vector is still being computed.
    pending: Option<mpsc::Receiver<Result<Vec<f32>, String>>>,
    filters: SearchQuery,
    /// How the scores are corrected for the collection.
    centering: Centering,
    /// The ensemble model's id and its query vector's arrival, when there is one.
    ensemble_pending: Option<(String, mpsc::Receiver<Option<Vec<f32>>>)>,
    /// The ensemble model's query vector, once received (`None` when it failed).
    ensemble_vector: OnceCell<Option<Vec<f32>>>,
}

impl<'a> StoreVectorLeg<'a> {
    /// A leg searching `store`'s vectors of `model_id` near `vector` (the embedded
    /// query, same dimension as the model), pre-filtered by `filters`' filters, scoring
    /// with `centering` ([`PipelineOptions::centering`]).
    pub fn new(
        store: &'a Store,
        model_id: &str,
        vector: Vec<f32>,
        filters: &SearchQuery,
        centering: Centering,
    ) -> StoreVectorLeg<'a> {
        StoreVectorLeg {
            store,
            model_id: model_id.to_owned(),
            vector: OnceCell::from(Ok(vector)),
            pending: None,
            filters: filters.clone(),
            centering,
            ensemble_pending: None,
            ensemble_vector: OnceCell::new(),
        }
    }

    /// A leg whose query vector arrives on `pending` (from a thread embedding the
    /// query while the lexical leg runs).
    fn deferred(
        store: &'a Store,
        model_id: &str,
        pending: mpsc::Receiver<Result<Vec<f32>, String>>,
        filters: &SearchQuery,
        centering: Centering,
    ) -> StoreVectorLeg<'a> {
        StoreVectorLeg {
            store,
            model_id: model_id.to_owned(),
            vector: OnceCell::new(),
            pending: Some(pending),
            filters: filters.clone(),
            centering,
            ensemble_pending: None,
            ensemble_vector: OnceCell::new(),
        }
    }

    fn vector(&self) -> Result<&[f32], SearchError> {
        match self.vector.get() {
            Some(Ok(v)) => Ok(v),
            // The pipeline only asks after `ready` said yes.
            _ => Err(SearchError::InvalidArgument(
                "the query has no embedding".into(),
            )),
        }
    }
}

impl VectorLeg for StoreVectorLeg<'_> {
    fn ready(&self) -> Result<(), String> {
        let result = self.vector.get_or_init(|| match &self.pending {
            Some(rx) => rx
                .recv()
                .unwrap_or_else(|_| Err("the embedding thread stopped".into())),
            None => Err("the query has no embedding".into()),
        });
        result.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    fn nearest(&self, k: usize) -> Result<Vec<VectorHit>, SearchError> {
        self.store.vector_search_centred(
            &self.model_id,
            self.vector()?,
            k,
            &self.filters,
            self.centering,
        )
    }

    fn vectors(&self, chunk_ids: &[i64]) -> Result<HashMap<i64, Vec<f32>>, SearchError> {
        Ok(self.store.chunk_vectors(chunk_ids)?)
    }

    fn document_similarity(&self, paths: &[String]) -> Result<HashMap<String, f64>, SearchError> {
        Ok(self
            .store
            .document_scores(&self.model_id, self.vector()?, paths, self.centering)?)
    }

    fn ensemble_ranks(&self) -> Result<HashMap<String, usize>, SearchError> {
        let Some((model_id, rx)) = &self.ensemble_pending else {
            return Ok(HashMap::new());
        };
        match self
            .ensemble_vector
            .get_or_init(|| rx.recv().ok().flatten())
        {
            Some(vector) => Ok(self.store.ensemble_document_ranks(model_id, vector)?),
            None => Ok(HashMap::new()),
        }
    }
}

/// Why the vector leg cannot run, or `None` when it can: no embedder, or the
/// index holds no vectors of the embedder's model yet.
///
/// Errors: the index cannot be read.
pub fn vectors_unavailable(
    store: &Store,
    embedder: Option<&dyn Embedder>,
) -> Result<Option<String>, SearchError> {
    let Some(embedder) = embedder else {
        return Ok(Some("no embedding model is loaded (provider `none`, the model is not installed, or it is still loading)".into()));
    };
    if !store.has_vectors_of(embedder.model_id())? {
        if let Some(reason) = store.last_embed_unavailable()? {
            return Ok(Some(format!(
                "the index has no vectors of `{}`: the last embedding pass found the provider unavailable ({reason})",
                embedder.model_id()
            )));
        }
        return Ok(Some(format!(
            "the index has no vectors of `{}` yet (embedding has not run or is still running)",
            embedder.model_id()
        )));
    }
    Ok(None)
}

/// [`vectors_unavailable`] for a server's background [`EmbeddingRunner`]: the
/// runner's own account (embeddings off, the provider unavailable, a pass running, the
/// model loading; [`EmbeddingRunner::not_ready_reason`]) replaces the generic reason.
///
/// Errors: the index cannot be read.
pub fn runner_vectors_unavailable(
    store: &Store,
    runner: Option<&EmbeddingRunner>,
) -> Result<Option<String>, SearchError> {
    let embedder = runner.and_then(EmbeddingRunner::embedder);
    Ok(
        vectors_unavailable(store, embedder.as_deref())?.map(|generic| {
            runner
                .and_then(EmbeddingRunner::not_ready_reason)
                .unwrap_or(generic)
        }),
    )
}

/// Runs one search in `options.mode` (see the module documentation for when
/// the vector leg runs).
///
/// Errors: [`PipelineError::NotConfigured`] for `semantic` without vectors, for an
/// embedder that fails on the query in `semantic` mode (in `hybrid` it falls back
/// to lexical), and for `rerank`; [`PipelineError::Search`] for invalid
/// arguments or index failures.
pub fn search(
    store: &Store,
    embedder: Option<&dyn Embedder>,
    reranker: Option<&dyn Reranker>,
    query: &SearchQuery,
    options: &PipelineOptions,
) -> Result<PipelineResults, PipelineError> {
    search_inner(store, embedder, None, reranker, query, options)
}

/// [`search`] with the embedder of a server's background [`EmbeddingRunner`] (`None`
/// when the server runs without embeddings); a `semantic` search without vectors says
/// why in the runner's terms ([`runner_vectors_unavailable`]).
///
/// Errors: as [`search`].
pub fn search_with_runner(
    store: &Store,
    runner: Option<&EmbeddingRunner>,
    reranker: Option<&dyn Reranker>,
    query: &SearchQuery,
    options: &PipelineOptions,
) -> Result<PipelineResults, PipelineError> {
    let embedder = runner.and_then(EmbeddingRunner::embedder);
    search_inner(store, embedder.as_deref(), runner, reranker, query, options)
}

fn search_inner(
    store: &Store,
    embedder: Option<&dyn Embedder>,
    runner: Option<&EmbeddingRunner>,
    reranker: Option<&dyn Reranker>,
    query: &SearchQuery,
    options: &PipelineOptions,
) -> Result<PipelineResults, PipelineError> {
    // A reranker given is a reranker used; `rerank` without one stays an error.
    let options = &PipelineOptions {
        rerank: options.rerank || reranker.is_some(),
        ..options.clone()
    };
    if options.mode == SearchMode::Lexical {
        return pipeline::hybrid_search_with(store, query, options, None, reranker);
    }
    let terms = parse_query(&query.text);
    // The lexical leg's term limit, checked before the query is embedded for nothing.
    if options.mode == SearchMode::Hybrid && terms.len() > super::MAX_TERMS {
        return Err(PipelineError::Search(SearchError::InvalidArgument(
            format!(
                "the query has {} distinct terms; at most {} are allowed",
                terms.len(),
                super::MAX_TERMS
            ),
        )));
    }
    let text = included_text(&terms);
    if text.trim().is_empty() {
        // Only `-excluded` terms: nothing to be near. Hybrid runs its lexical leg (which
        // finds nothing either); semantic says why.
        if options.mode == SearchMode::Semantic {
            return Err(PipelineError::Search(SearchError::InvalidArgument(
                if terms.iter().any(|t| t.excluded) {
                    "the query has no words to search for, only -excluded ones".into()
                } else {
                    "the query has no words to search for (letters or digits)".into()
                },
            )));
        }
        return pipeline::hybrid_search_with(store, query, options, None, reranker);
    }
    let unavailable = vectors_unavailable(store, embedder)?.map(|generic| {
        runner
            .and_then(EmbeddingRunner::not_ready_reason)
            .unwrap_or(generic)
    });
    match (unavailable, embedder) {
        (None, Some(embedder)) => {
            // The query is embedded on its own thread while the pipeline runs the
            // lexical leg; the vector leg waits for it (see `VectorLeg::ready`). A
            // failure, or a panic in the embedder, reaches the pipeline as a reason:
            // `semantic` reports it, `hybrid` searches lexically.
            std::thread::scope(|scope| {
                let (tx, rx) = mpsc::sync_channel(1);
                let ensemble = embedder.ensemble().filter(|_| {
                    options.mode == SearchMode::Hybrid && options.ensemble_weight > 0.0
                });
                let (ensemble_tx, ensemble_rx) = mpsc::sync_channel(1);
                let text = text.as_str();
                scope.spawn(move || {
                    let embed = |embedder: &dyn Embedder| {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            embedder.embed_query(text)
                        }))
                    };
                    let _ = tx.send(match embed(embedder) {
                        Ok(Ok(vector)) => Ok(vector),
                        Ok(Err(err)) => Err(err.to_string()),
                        Err(_) => Err("the embedder panicked".to_owned()),
                    });
                    // The ensemble leg is an addition: without its vector it ranks nothing.
                    if let Some(ensemble) = ensemble {
                        let _ = ensemble_tx.send(embed(ensemble).ok().and_then(Result::ok));
                    }
                });
                let mut leg = StoreVectorLeg::deferred(
                    store,
                    embedder.model_id(),
                    rx,
                    query,
                    options.centering(),
                );
                if let Some(ensemble) = ensemble {
                    leg.ensemble_pending = Some((ensemble.model_id().to_owned(), ensemble_rx));
                }
                pipeline::hybrid_search_with(store, query, options, Some(&leg), reranker)
            })
        }
        (Some(reason), _) if options.mode == SearchMode::Semantic => {
            Err(PipelineError::NotConfigured(format!(
                "{SEMANTIC_UNAVAILABLE} {reason}; use mode lexical"
            )))
        }
        _ => pipeline::hybrid_search_with(store, query, options, None, reranker),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::embed::pass::{EmbedProgress, embed_pending};
    use crate::embed::testing::VocabEmbedder;
    use crate::index::index_root;
    use crate::workspace::Config;

    fn write(root: &Path, path: &str, text: &str) {
        std::fs::create_dir_all(root).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    }

    /// Three one-chunk documents: a.md says install + linux, b.md deploy + linux,
    /// c.md search (no word of the test queries).
    fn setup(embed: bool) -> (tempfile::TempDir, Store, VocabEmbedder) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kb");
        write(&root, "a.md", "Install it on linux.\n");
        write(&root, "b.md", "Deploy it on linux with deploy tools.\n");
        write(&root, "c.md", "Search words.\n");
        let db = root.join(".folio/index.db");
        index_root(&root, &Config::default(), &db, false, None).unwrap();
        let e = VocabEmbedder::new("test:vocab", &["install", "linux", "deploy", "search"]);
        let mut store = Store::open(&db).unwrap();
        if embed {
            embed_pending(
                &mut store,
                &e,
                &EmbedProgress::new(),
                &AtomicBool::new(false),
            )
            .unwrap();
        }
        (dir, store, e)
    }

    fn paths(res: &PipelineResults) -> Vec<&str> {
        res.results.iter().map(|h| h.hit.path.as_str()).collect()
    }

    /// The ensemble leg: the embedding pass stores the ensemble model's whole-document
    /// vectors (once per document), and hybrid search adds `ensemble_weight / (rrf_k +
    /// rank)` by the ensemble's ranking of every document. The ensemble here knows one
    /// word, `words`: for "words linux" it puts c.md (cosine 1) before a.md and b.md
    /// (cosine 1/√2 each, tied, so by path); a weight of 1000 makes that order win over
    /// both legs and the document leg (at most 2/61 + 5/61 apart).
    #[test]
    fn the_ensemble_leg_ranks_every_document_by_the_second_model() {
        let (dir, _store, _) = setup(false);
        let db = dir.path().join("kb/.folio/index.db");
        let e = VocabEmbedder::new("test:vocab", &["install", "linux", "deploy", "search"])
            .with_ensemble(VocabEmbedder::new("test:ensemble", &["words"]));
        let mut store = Store::open(&db).unwrap();
        let run = |store: &mut Store| {
            embed_pending(store, &e, &EmbedProgress::new(), &AtomicBool::new(false)).unwrap()
        };
        let first = run(&mut store);
        assert_eq!(
            (first.documents_embedded, first.ensemble_documents_embedded),
            (3, 3)
        );
        assert_eq!(run(&mut store).ensemble_documents_embedded, 0);
        let query = SearchQuery::new("words linux");
        let q = e.ensemble().unwrap().embed_query("words linux").unwrap();
        let ranks = store.ensemble_document_ranks("test:ensemble", &q).unwrap();
        assert_eq!(
            [&ranks["c.md"], &ranks["a.md"], &ranks["b.md"]],
            [&1, &2, &3]
        );
        let hybrid = |weight: f64| {
            let options = PipelineOptions {
                ensemble_weight: weight,
                ..PipelineOptions::for_mode(SearchMode::Hybrid)
            };
            search(&store, Some(&e), None, &query, &options).unwrap()
        };
        let without = hybrid(0.0);
        assert_eq!(paths(&without), ["a.md", "b.md", "c.md"]);
        let with = hybrid(1000.0);
        assert_eq!(paths(&with), ["c.md", "a.md", "b.md"]);
        // c.md's score is its chunk-level and document-leg score plus 1000/61.
        assert!(with.results[0].hit.score > 1000.0 / 61.0);
        assert!(without.results[0].hit.score < 7.0 / 61.0);
    }

    #[test]
    fn semantic_ranks_by_the_vector_leg_and_hybrid_fuses_both_legs() {
        let (_dir, store, e) = setup(true);
        let query = SearchQuery::new("deploy linux");
        let semantic = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap();
        assert_eq!(semantic.mode, SearchMode::Semantic);
        assert_eq!(paths(&semantic), ["b.md", "a.md", "c.md"]);
        // Query (deploy, linux)/√2; b.md (deploy ×2, linux, 4 others)/√9... each cosine is
        // the dot product of the two normalised bags of words.
        let q = e.embed_query("deploy linux").unwrap();
        for hit in &semantic.results {
            let text = std::fs::read_to_string(_dir.path().join("kb").join(&hit.hit.path)).unwrap();
            let v = &e.embed_passages(&[text.trim_end()]).unwrap()[0];
            let cos: f64 = q.iter().zip(v).map(|(a, b)| f64::from(a * b)).sum();
            assert!(
                (hit.similarity.unwrap() - cos).abs() < 1e-6,
                "{}: {:?} vs {cos}",
                hit.hit.path,
                hit.similarity
            );
        }

        let hybrid = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Hybrid),
        )
        .unwrap();
        assert_eq!(hybrid.mode, SearchMode::Hybrid);
        assert_eq!(paths(&hybrid), ["b.md", "a.md", "c.md"]);
        let ranks: Vec<(Option<usize>, Option<usize>)> = hybrid
            .results
            .iter()
            .map(|h| (h.lexical_rank, h.vector_rank))
            .collect();
        assert_eq!(
            ranks,
            [(Some(1), Some(1)), (Some(2), Some(2)), (None, Some(3))]
        );
        let scores: Vec<f64> = hybrid.results.iter().map(|h| h.hit.score).collect();
        // Chunk-level RRF (k = 60) plus the document leg (weight 5): each one-chunk document's
        // whole-document vector ranks it as its chunk does (b, a, c).
        let expected = [
            2.0 / 61.0 + 5.0 / 61.0,
            2.0 / 62.0 + 5.0 / 62.0,
            1.0 / 63.0 + 5.0 / 63.0,
        ];
        for (s, x) in scores.iter().zip(expected) {
            assert!((s - x).abs() < 1e-12, "{scores:?}");
        }
    }

    #[test]
    fn the_vector_leg_obeys_filters_and_excluded_terms() {
        let (_dir, store, e) = setup(true);
        let query = SearchQuery {
            path_globs: vec!["!b.md".into()],
            ..SearchQuery::new("deploy linux")
        };
        let res = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap();
        assert_eq!(paths(&res), ["a.md", "c.md"]);
        assert_eq!(res.filter_applied, ["path_globs"]);
        // `-install` leaves a.md out of both legs and out of the embedded text.
        assert_eq!(
            query_embedding_text("deploy \"on linux\" -install"),
            "deploy on linux"
        );
        let res = search(
            &store,
            Some(&e),
            None,
            &SearchQuery::new("linux -install"),
            &PipelineOptions::for_mode(SearchMode::Hybrid),
        )
        .unwrap();
        assert_eq!(paths(&res), ["b.md", "c.md"]);
        // Only excluded terms: nothing to embed.
        let err = search(
            &store,
            Some(&e),
            None,
            &SearchQuery::new("-install"),
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: the query has no words to search for, only -excluded ones"
        );
        let res = search(
            &store,
            Some(&e),
            None,
            &SearchQuery::new("-install"),
            &PipelineOptions::for_mode(SearchMode::Hybrid),
        )
        .unwrap();
        assert_eq!((res.mode, res.results.len()), (SearchMode::Lexical, 0));
    }

    /// Passages embed as the vocabulary embedder does; queries fail or panic.
    struct BrokenQueries {
        inner: VocabEmbedder,
        panic: bool,
        /// `embed_query` calls.
        calls: std::sync::atomic::AtomicUsize,
    }

    impl Embedder for BrokenQueries {
        fn model_id(&self) -> &str {
            self.inner.model_id()
        }
        fn dimensions(&self) -> usize {
            self.inner.dimensions()
        }
        fn embed_passages(
            &self,
            texts: &[&str],
        ) -> Result<Vec<Vec<f32>>, crate::embed::EmbedError> {
            self.inner.embed_passages(texts)
        }
        fn embed_query(&self, _text: &str) -> Result<Vec<f32>, crate::embed::EmbedError> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if self.panic {
                panic!("query embedding panicked on purpose");
            }
            Err(crate::embed::EmbedError::Unavailable(
                "connection refused".into(),
            ))
        }
    }

    /// The query is embedded on another thread while the lexical leg runs: its
    /// failure (an error or a panic) makes `semantic` say why and `hybrid` lexical.
    #[test]
    fn a_failing_query_embedding_degrades_hybrid_and_fails_semantic() {
        let (_dir, store, e) = setup(true);
        let query = SearchQuery::new("deploy linux");
        for (panic, reason) in [
            (false, "embedding provider unavailable: connection refused"),
            (true, "the embedder panicked"),
        ] {
            let broken = BrokenQueries {
                inner: VocabEmbedder::new(e.model_id(), &["install", "linux", "deploy", "search"]),
                panic,
                calls: Default::default(),
            };
            let err = search(
                &store,
                Some(&broken),
                None,
                &query,
                &PipelineOptions::for_mode(SearchMode::Semantic),
            )
            .unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("not configured: the query could not be embedded: {reason}")
            );
            let res = search(
                &store,
                Some(&broken),
                None,
                &query,
                &PipelineOptions::for_mode(SearchMode::Hybrid),
            )
            .unwrap();
            assert_eq!(res.mode, SearchMode::Lexical);
            assert_eq!(paths(&res), ["b.md", "a.md"]);
            assert!(res.results.iter().all(|h| h.vector_rank.is_none()));
            assert_eq!(broken.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
        }
        // Hybrid refuses a query over the lexical leg's term limit before embedding it
        // (the index has vectors, so the query would otherwise be embedded).
        let long = SearchQuery::new(
            &(0..=crate::search::MAX_TERMS)
                .map(|i| format!("w{i}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let counting = BrokenQueries {
            inner: VocabEmbedder::new(e.model_id(), &["install"]),
            panic: false,
            calls: Default::default(),
        };
        let err = search(
            &store,
            Some(&counting),
            None,
            &long,
            &PipelineOptions::for_mode(SearchMode::Hybrid),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: the query has 65 distinct terms; at most 64 are allowed"
        );
        assert_eq!(counting.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn without_vectors_hybrid_is_lexical_and_semantic_says_why() {
        let (_dir, store, e) = setup(false);
        let query = SearchQuery::new("deploy linux");
        let res = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Hybrid),
        )
        .unwrap();
        assert_eq!(res.mode, SearchMode::Lexical);
        assert_eq!(paths(&res), ["b.md", "a.md"]);
        let err = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "not configured: semantic search is not available: the index has no vectors of `test:vocab` yet (embedding has not run or is still running); use mode lexical"
        );
        let err = search(
            &store,
            None,
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "not configured: semantic search is not available: no embedding model is loaded (provider `none`, the model is not installed, or it is still loading); use mode lexical"
        );
        // A pass that found the provider unavailable left its reason in the index.
        let mut store = store;
        store
            .record_embed_unavailable(Some("embedding provider unavailable: connection refused"))
            .unwrap();
        let err = search(
            &store,
            Some(&e),
            None,
            &query,
            &PipelineOptions::for_mode(SearchMode::Semantic),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "not configured: semantic search is not available: the index has no vectors of `test:vocab`: the last embedding pass found the provider unavailable (embedding provider unavailable: connection refused); use mode lexical"
        );
    }
}
