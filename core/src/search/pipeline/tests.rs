//! Tests of the pipeline over an in-memory store, with a closure as the vector leg.

use super::*;
use crate::store::tests::{chunk, doc, index};

/// `path -> [chunk ids in order]`.
fn chunk_ids(store: &Store) -> HashMap<String, Vec<i64>> {
    let conn = store.conn();
    let mut stmt = conn.prepare("SELECT d.path, c.id FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY d.path, c.seq").unwrap();
    let mut out: HashMap<String, Vec<i64>> = HashMap::new();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap()
    {
        let (p, id) = row.unwrap();
        out.entry(p).or_default().push(id);
    }
    out
}

fn store() -> Store {
    let mut store = Store::open_in_memory().unwrap();
    index(
        &mut store,
        &[
            (
                "ops/rollback.md",
                &["Roll back a deploy to the previous release."],
            ),
            (
                "ops/canary.md",
                &["Ship a canary build to a few users before the release."],
            ),
            ("ref/cache.md", &["Cache invalidation after a deploy."]),
            ("guide/notes.md", &["Unrelated notes about writing."]),
        ],
    );
    store
}

fn paths(res: &PipelineResults) -> Vec<&str> {
    res.results.iter().map(|h| h.hit.path.as_str()).collect()
}

#[test]
fn pipeline_lexical_mode_matches_search_lexical() {
    let store = store();
    let query = SearchQuery::new("deploy release");
    let plain = store.search_lexical(&query).unwrap();
    let every_chunk = PipelineOptions {
        per_document: 0,
        ..PipelineOptions::for_mode(SearchMode::Lexical)
    };
    let res = hybrid_search(&store, &query, &every_chunk, None).unwrap();
    assert_eq!(res.mode, SearchMode::Lexical);
    assert_eq!(res.candidates, 10);
    let hits: Vec<SearchHit> = res.results.iter().map(|h| h.hit.clone()).collect();
    assert_eq!(hits, plain.results);
    assert_eq!(res.results[0].lexical_rank, Some(1));
    // Hybrid without a vector leg runs lexical and says so.
    let res = hybrid_search(&store, &query, &PipelineOptions::default(), None).unwrap();
    assert_eq!(res.mode, SearchMode::Lexical);
    assert_eq!(
        res.results
            .iter()
            .map(|h| h.hit.clone())
            .collect::<Vec<_>>(),
        plain.results
    );
}

#[test]
fn pipeline_not_configured_and_invalid_options() {
    let store = store();
    let query = SearchQuery::new("deploy");
    let err = hybrid_search(
        &store,
        &query,
        &PipelineOptions::for_mode(SearchMode::Semantic),
        None,
    )
    .unwrap_err();
    assert!(matches!(err, PipelineError::NotConfigured(_)), "{err}");
    let opts = PipelineOptions {
        rerank: true,
        ..PipelineOptions::for_mode(SearchMode::Lexical)
    };
    let err = hybrid_search(&store, &query, &opts, None).unwrap_err();
    assert!(
        matches!(err, PipelineError::NotConfigured(ref m) if m.contains("rerank")),
        "{err}"
    );
    let opts = PipelineOptions {
        mmr_lambda: 2.0,
        ..PipelineOptions::default()
    };
    let err = hybrid_search(&store, &query, &opts, None).unwrap_err();
    assert!(
        matches!(err, PipelineError::Search(SearchError::InvalidArgument(ref m)) if m.contains("mmr_lambda")),
        "{err}"
    );
    assert_eq!("hybrid".parse::<SearchMode>(), Ok(SearchMode::Hybrid));
    assert!("dense".parse::<SearchMode>().is_err());
}

#[test]
fn centring_weights_outside_zero_to_one_are_refused() {
    let store = store();
    let query = SearchQuery::new("deploy");
    for (corpus, writing_system, name) in [
        (1.5, 0.5, "corpus_centering"),
        (-0.1, 0.5, "corpus_centering"),
        (0.5, f64::NAN, "writing_system_centering"),
        (0.5, 2.0, "writing_system_centering"),
    ] {
        let opts = PipelineOptions {
            corpus_centering: corpus,
            writing_system_centering: writing_system,
            ..PipelineOptions::default()
        };
        let err = hybrid_search(&store, &query, &opts, None).unwrap_err();
        assert!(
            matches!(err, PipelineError::Search(SearchError::InvalidArgument(ref m)) if m.contains(name)),
            "{err}"
        );
    }
    let edges = PipelineOptions {
        corpus_centering: 0.0,
        writing_system_centering: 1.0,
        ..PipelineOptions::default()
    };
    assert_eq!(edges.validate(), Ok(()));
}

#[test]
fn a_search_table_replaces_the_defaults_it_names_and_bad_numbers_are_named() {
    let tuning = SearchConfig {
        writing_system_centering: Some(0.0),
        semantic_only_floor: Some(0.7),
        document_weight: Some(2.0),
        ..SearchConfig::default()
    };
    let options = PipelineOptions::tuned(SearchMode::Semantic, &tuning).unwrap();
    assert_eq!(
        options,
        PipelineOptions {
            writing_system_centering: 0.0,
            semantic_only_floor: 0.7,
            document_weight: 2.0,
            ..PipelineOptions::for_mode(SearchMode::Semantic)
        }
    );
    assert_eq!(options.min_confidence_ratio, 1.1, "the mode's own default");
    assert_eq!(options.corpus_centering, DEFAULT_CENTERING);
    assert_eq!(
        PipelineOptions::tuned(SearchMode::Hybrid, &SearchConfig::default()).unwrap(),
        PipelineOptions::for_mode(SearchMode::Hybrid)
    );
    assert!(PipelineOptions::for_mode(SearchMode::Lexical).synonyms);
    let no_synonyms = SearchConfig {
        synonyms: Some(false),
        ..SearchConfig::default()
    };
    assert!(
        !PipelineOptions::tuned(SearchMode::Lexical, &no_synonyms)
            .unwrap()
            .synonyms
    );
    for (tuning, message) in [
        (
            SearchConfig {
                corpus_centering: Some(2.0),
                ..SearchConfig::default()
            },
            "corpus_centering must be between 0 and 1, got 2",
        ),
        (
            SearchConfig {
                vector_weight: Some(-1.0),
                ..SearchConfig::default()
            },
            "vector_weight must be a finite number ≥ 0, got -1",
        ),
        (
            SearchConfig {
                cjk_lexical_factor: Some(1.5),
                ..SearchConfig::default()
            },
            "cjk_lexical_factor must be between 0 and 1, got 1.5",
        ),
    ] {
        assert_eq!(
            PipelineOptions::tuned(SearchMode::Hybrid, &tuning),
            Err(message.to_string())
        );
    }
}

#[test]
fn semantic_ranks_by_the_score_and_judges_confidence_on_the_cosine() {
    let store = store();
    let ids = chunk_ids(&store);
    let (rollback, canary, notes) = (
        ids["ops/rollback.md"][0],
        ids["ops/canary.md"][0],
        ids["guide/notes.md"][0],
    );
    // The leg's order (by score) is not the cosines' order: notes has the lowest cosine.
    let leg = |_k: usize| -> Result<Vec<VectorHit>, SearchError> {
        Ok(vec![
            VectorHit {
                chunk_id: notes,
                score: 0.9,
                similarity: 0.5,
            },
            VectorHit {
                chunk_id: canary,
                score: 0.8,
                similarity: 0.9,
            },
            VectorHit {
                chunk_id: rollback,
                score: 0.7,
                similarity: 0.6,
            },
        ])
    };
    let options = PipelineOptions::for_mode(SearchMode::Semantic);
    let res = hybrid_search(&store, &SearchQuery::new("deploy"), &options, Some(&leg)).unwrap();
    let got: Vec<(&str, f64, Option<f64>)> = res
        .results
        .iter()
        .map(|h| (h.hit.path.as_str(), h.hit.score, h.similarity))
        .collect();
    assert_eq!(
        got,
        vec![
            ("guide/notes.md", 0.9, Some(0.5)),
            ("ops/canary.md", 0.8, Some(0.9)),
            ("ops/rollback.md", 0.7, Some(0.6)),
        ]
    );
    // The ratio is taken on cosine distances 0.5, 0.1, 0.4: mean 1/3 over the smallest
    // 0.1 = 3.33 (on the scores' distances 0.1, 0.2, 0.3 it would be 2.0).
    let ratio = res.confidence_ratio.unwrap();
    assert!((ratio - 10.0 / 3.0).abs() < 1e-9, "{ratio}");
    assert!(!res.low_confidence);
}

#[test]
fn pipeline_hybrid_fuses_both_legs() {
    let store = store();
    let ids = chunk_ids(&store);
    let (rollback, canary, notes) = (
        ids["ops/rollback.md"][0],
        ids["ops/canary.md"][0],
        ids["guide/notes.md"][0],
    );
    let query = SearchQuery::new("deploy");
    // Lexical: "deploy" is in rollback and cache; BM25 order between them:
    let lexical = store.search_lexical(&query).unwrap();
    let lex_paths: Vec<&str> = lexical.results.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(lex_paths.len(), 2);
    // Vector leg: notes, canary, rollback.
    let leg = |k: usize| -> Result<Vec<VectorHit>, SearchError> {
        assert!(k == 50 || k == 10, "{k}");
        Ok(vec![
            VectorHit {
                chunk_id: notes,
                score: 0.9,
                similarity: 0.9,
            },
            VectorHit {
                chunk_id: canary,
                score: 0.8,
                similarity: 0.8,
            },
            VectorHit {
                chunk_id: rollback,
                score: 0.7,
                similarity: 0.7,
            },
        ])
    };
    let res = hybrid_search(&store, &query, &PipelineOptions::default(), Some(&leg)).unwrap();
    assert_eq!(res.mode, SearchMode::Hybrid);
    let lex_rank = |p: &str| lex_paths.iter().position(|x| *x == p).map(|i| i + 1);
    let r_rb = lex_rank("ops/rollback.md").unwrap();
    let r_cache = lex_rank("ref/cache.md").unwrap();
    // rollback: 1/(60 + r_rb) + 1/63; notes: 1/61; canary: 1/62; cache: 1/(60 + r_cache).
    let want_rb = 1.0 / (60.0 + r_rb as f64) + 1.0 / 63.0;
    assert_eq!(res.results[0].hit.path, "ops/rollback.md");
    assert_eq!(res.results[0].hit.score, want_rb);
    assert_eq!(
        (res.results[0].lexical_rank, res.results[0].vector_rank),
        (Some(r_rb), Some(3))
    );
    assert_eq!(res.results[0].similarity, Some(0.7));
    // notes (1/61, vector rank 1) vs cache (1/61 when lexical rank 1, else 1/62): tie-break
    // by best rank then the earlier leg (lexical).
    let rest: Vec<(&str, f64)> = res.results[1..]
        .iter()
        .map(|h| (h.hit.path.as_str(), h.hit.score))
        .collect();
    if r_cache == 1 {
        assert_eq!(
            rest,
            vec![
                ("ref/cache.md", 1.0 / 61.0),
                ("guide/notes.md", 1.0 / 61.0),
                ("ops/canary.md", 1.0 / 62.0)
            ]
        );
    } else {
        assert_eq!(
            rest,
            vec![
                ("guide/notes.md", 1.0 / 61.0),
                ("ref/cache.md", 1.0 / 62.0),
                ("ops/canary.md", 1.0 / 62.0)
            ]
        );
    }
    // Hybrid confidence: max / mean of the four fused scores.
    let fused: Vec<f64> = res.results.iter().map(|h| h.hit.score).collect();
    let want_ratio = fused[0] / (fused.iter().sum::<f64>() / 4.0);
    assert_eq!(res.confidence_ratio, Some(want_ratio));
    // 1/61 + 1/63 over a mean of about 0.0203: a ratio near 1.6. The ratio check is off
    // in hybrid mode by default; a caller who asks for it gets it.
    assert!(want_ratio > 1.5 && want_ratio < 1.7, "{want_ratio}");
    assert!(!res.low_confidence);
    let strict = PipelineOptions {
        min_confidence_ratio: 1.7,
        ..PipelineOptions::default()
    };
    assert!(
        hybrid_search(&store, &query, &strict, Some(&leg))
            .unwrap()
            .low_confidence
    );
    // Semantic mode: the vector order, score = cosine; distances 0.1, 0.2, 0.3 → mean 0.2 / 0.1 = 2 ≥ 1.5.
    let res = hybrid_search(
        &store,
        &query,
        &PipelineOptions::for_mode(SearchMode::Semantic),
        Some(&leg),
    )
    .unwrap();
    assert_eq!(
        paths(&res),
        vec!["guide/notes.md", "ops/canary.md", "ops/rollback.md"]
    );
    assert_eq!(res.results[0].hit.score, 0.9);
    assert!((res.confidence_ratio.unwrap() - 2.0).abs() < 1e-9);
    assert!(!res.low_confidence);
    // Semantic mode's default ratio is 1.1: the same distances judged at 2.5 are low.
    let strict = PipelineOptions {
        min_confidence_ratio: 2.5,
        ..PipelineOptions::for_mode(SearchMode::Semantic)
    };
    assert_eq!(
        PipelineOptions::for_mode(SearchMode::Semantic).min_confidence_ratio,
        1.1
    );
    assert!(
        hybrid_search(&store, &query, &strict, Some(&leg))
            .unwrap()
            .low_confidence
    );
    // Snippets come from the stored text.
    assert_eq!(
        res.results[2].hit.snippet,
        "Roll back a deploy to the previous release."
    );
}

#[test]
fn pipeline_vector_leg_obeys_filters_and_exclusions() {
    let store = store();
    let ids = chunk_ids(&store);
    let all: Vec<i64> = [
        "ops/rollback.md",
        "ops/canary.md",
        "ref/cache.md",
        "guide/notes.md",
    ]
    .iter()
    .map(|p| ids[*p][0])
    .collect();
    let leg = |k: usize| -> Result<Vec<VectorHit>, SearchError> {
        Ok(all
            .iter()
            .take(k)
            .enumerate()
            .map(|(i, id)| VectorHit {
                chunk_id: *id,
                score: 0.9 - i as f64 * 0.1,
                similarity: 0.9 - i as f64 * 0.1,
            })
            .collect())
    };
    let semantic = PipelineOptions::for_mode(SearchMode::Semantic);
    let query = SearchQuery {
        path_globs: vec!["ops/**".into()],
        ..SearchQuery::new("release")
    };
    let res = hybrid_search(&store, &query, &semantic, Some(&leg)).unwrap();
    assert_eq!(paths(&res), vec!["ops/rollback.md", "ops/canary.md"]);
    assert_eq!(res.filter_applied, vec!["path_globs"]);
    // `-canary` removes the chunk from the vector leg too.
    let res = hybrid_search(
        &store,
        &SearchQuery::new("release -canary"),
        &semantic,
        Some(&leg),
    )
    .unwrap();
    assert_eq!(
        paths(&res),
        vec!["ops/rollback.md", "ref/cache.md", "guide/notes.md"]
    );
    // An id no longer in the index is dropped.
    let stale = |_: usize| -> Result<Vec<VectorHit>, SearchError> {
        Ok(vec![VectorHit {
            chunk_id: 999_999,
            score: 1.0,
            similarity: 1.0,
        }])
    };
    let res = hybrid_search(&store, &SearchQuery::new("x"), &semantic, Some(&stale)).unwrap();
    assert!(res.results.is_empty() && res.low_confidence);
}

#[test]
fn pipeline_parent_retrieval_collapses_a_section() {
    let mut store = Store::open_in_memory().unwrap();
    let texts = [
        "# Guide",
        "## Install",
        "Install on Linux with apt.",
        "Install on macOS with brew.",
        "Usage notes.",
    ];
    // Lines: chunk n spans 10n+1 ..= 10n+3.
    let chunks = vec![
        chunk(0, &["Guide"], texts[0]),
        chunk(1, &["Guide", "Install"], texts[1]),
        chunk(2, &["Guide", "Install", "Linux"], texts[2]),
        chunk(3, &["Guide", "Install", "macOS"], texts[3]),
        chunk(4, &["Guide", "Usage"], texts[4]),
    ];
    {
        let mut batch = store.batch().unwrap();
        batch
            .upsert_document(&doc("guide.md", &texts), &chunks)
            .unwrap();
        batch
            .upsert_document(
                &doc("other.md", &["Install anything."]),
                &[chunk(0, &[], "Install anything.")],
            )
            .unwrap();
        batch.commit().unwrap();
    }
    let opts = PipelineOptions {
        parent_retriever: true,
        // Every hit of a document, for the collapse to see them (as kb_search asks with
        // parent_retriever).
        per_document: 0,
        ..PipelineOptions::for_mode(SearchMode::Lexical)
    };
    let res = hybrid_search(&store, &SearchQuery::new("install"), &opts, None).unwrap();
    let guide: Vec<&PipelineHit> = res
        .results
        .iter()
        .filter(|h| h.hit.path == "guide.md")
        .collect();
    assert_eq!(guide.len(), 1, "{res:#?}");
    let g = guide[0];
    // Chunks 1..=3 (lines 11-33) form the Install section; its pointer is chunk 1's.
    assert_eq!(
        g.hit.heading_path,
        vec!["Guide".to_string(), "Install".to_string()]
    );
    assert_eq!((g.hit.start_line, g.hit.end_line), (11, 33));
    assert_eq!(g.hit.pointer, chunks[1].pointer);
    let mut from = g.expanded_from.clone();
    from.sort();
    assert_eq!(
        from,
        vec![
            chunks[1].pointer.clone(),
            chunks[2].pointer.clone(),
            chunks[3].pointer.clone()
        ]
    );
    assert_eq!(g.expanded_chunk_ids.len(), 3);
    // Without parent retrieval the three chunks come back separately.
    let res = hybrid_search(
        &store,
        &SearchQuery::new("install"),
        &PipelineOptions {
            per_document: 0,
            ..PipelineOptions::for_mode(SearchMode::Lexical)
        },
        None,
    )
    .unwrap();
    assert_eq!(
        res.results
            .iter()
            .filter(|h| h.hit.path == "guide.md")
            .count(),
        3
    );
}

#[test]
fn pipeline_mmr_in_lexical_mode_diversifies_by_tokens() {
    let mut store = Store::open_in_memory().unwrap();
    index(
        &mut store,
        &[
            (
                "a.md",
                &[
                    "backup backup database nightly snapshot",
                    "backup backup database nightly snapshot copy",
                ],
            ),
            (
                "b.md",
                &["backup restore drill with many other words here for some padding text"],
            ),
        ],
    );
    let query = SearchQuery {
        limit: 2,
        ..SearchQuery::new("backup")
    };
    let plain = hybrid_search(
        &store,
        &query,
        &PipelineOptions {
            per_document: 0,
            ..PipelineOptions::for_mode(SearchMode::Lexical)
        },
        None,
    )
    .unwrap();
    assert_eq!(paths(&plain), vec!["a.md", "a.md"]);
    // λ = 0.3: the second a.md chunk (Jaccard 0.8 with the first) scores at most
    // 0.3 − 0.7·0.8 = −0.26; b.md scores 0 − 0.7·(1/15) ≈ −0.047.
    let opts = PipelineOptions {
        mmr: true,
        mmr_lambda: 0.3,
        ..PipelineOptions::for_mode(SearchMode::Lexical)
    };
    let res = hybrid_search(&store, &query, &opts, None).unwrap();
    assert_eq!(paths(&res), vec!["a.md", "b.md"]);
    assert!(res.results.iter().all(|h| h.mmr_score.is_some()));
}

#[test]
fn pipeline_lexical_finds_a_japanese_sentence_by_its_bigrams() {
    let mut store = Store::open_in_memory().unwrap();
    index(
        &mut store,
        &[
            (
                "ja/kensaku.md",
                &["全文検索エンジンの仕組みについて説明します。"],
            ),
            ("ja/other.md", &["今日は天気がよいので散歩します。"]),
        ],
    );
    // One space-free term: as a phrase it would match nothing.
    let res = hybrid_search(
        &store,
        &SearchQuery::new("検索の仕組みを知りたい"),
        &PipelineOptions::for_mode(SearchMode::Lexical),
        None,
    )
    .unwrap();
    assert_eq!(paths(&res), vec!["ja/kensaku.md"]);
    // Quoted, it stays verbatim.
    let res = hybrid_search(
        &store,
        &SearchQuery::new("\"検索の仕組みを知りたい\""),
        &PipelineOptions::for_mode(SearchMode::Lexical),
        None,
    )
    .unwrap();
    assert!(res.results.is_empty());
}

/// The lexical leg's weight drops by `weak_lexical_factor` when its best hit matches
/// fewer than half of the query's terms: with factor 0 the fused order is the vector
/// leg's, each hit scored 1/(60 + vector rank).
#[test]
fn pipeline_weak_lexical_leg_is_weighted_down() {
    let store = store();
    let ids = chunk_ids(&store);
    let (rollback, canary, notes) = (
        ids["ops/rollback.md"][0],
        ids["ops/canary.md"][0],
        ids["guide/notes.md"][0],
    );
    let leg = |_k: usize| -> Result<Vec<VectorHit>, SearchError> {
        Ok(vec![
            VectorHit {
                chunk_id: notes,
                score: 0.9,
                similarity: 0.9,
            },
            VectorHit {
                chunk_id: canary,
                score: 0.8,
                similarity: 0.8,
            },
            VectorHit {
                chunk_id: rollback,
                score: 0.7,
                similarity: 0.7,
            },
        ])
    };
    // "deploy" is in two chunks; "zebra" and "quokka" in none: 1 of 3 terms matched.
    let query = SearchQuery::new("deploy zebra quokka");
    let options = PipelineOptions {
        weak_lexical_factor: 0.0,
        document_weight: 0.0,
        ..PipelineOptions::default()
    };
    let res = hybrid_search(&store, &query, &options, Some(&leg)).unwrap();
    let scored: Vec<(&str, f64)> = res
        .results
        .iter()
        .map(|h| (h.hit.path.as_str(), h.hit.score))
        .collect();
    assert_eq!(
        scored[..3],
        [
            ("guide/notes.md", 1.0 / 61.0),
            ("ops/canary.md", 1.0 / 62.0),
            ("ops/rollback.md", 1.0 / 63.0)
        ]
    );
    // With the factor at 1, the lexical leg still counts: rollback (both legs) leads.
    let options = PipelineOptions {
        weak_lexical_factor: 1.0,
        document_weight: 0.0,
        ..PipelineOptions::default()
    };
    let res = hybrid_search(&store, &query, &options, Some(&leg)).unwrap();
    assert_eq!(res.results[0].hit.path, "ops/rollback.md");
    // Out of range: refused, naming the option.
    let options = PipelineOptions {
        cjk_lexical_factor: 1.5,
        ..PipelineOptions::default()
    };
    let err = hybrid_search(&store, &query, &options, Some(&leg)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: cjk_lexical_factor must be between 0 and 1, got 1.5"
    );
}

#[test]
fn mostly_cjk_counts_letters() {
    assert!(query::mostly_cjk("スクリーンショットを撮りたい"));
    assert!(query::mostly_cjk("tarでアーカイブを展開したい"));
    assert!(!query::mostly_cjk("how do I extract a tar archive"));
    assert!(!query::mostly_cjk("tar 展開"));
    assert!(!query::mostly_cjk(""));
}

/// Vector hits on the first chunk of each of `paths`, in that order, the first with
/// similarity `best` and each next 0.1 lower.
fn descending(ids: &HashMap<String, Vec<i64>>, paths: &[&str], best: f64) -> Vec<VectorHit> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| VectorHit {
            chunk_id: ids[*p][0],
            score: best - 0.1 * i as f64,
            similarity: best - 0.1 * i as f64,
        })
        .collect()
}

/// Hybrid where the lexical leg is weak: the vector leg's hits are low confidence under
/// the semantic-only floor, and stand when the best is above it or the lexical leg is strong.
#[test]
fn semantic_only_hits_under_the_floor_are_low_confidence() {
    let store = store();
    let ids = chunk_ids(&store);
    let order = [
        "guide/notes.md",
        "ops/canary.md",
        "ops/rollback.md",
        "ref/cache.md",
    ];
    // Four hits, the best well ahead once fused (ratio 1.6 ≥ 1.5): only the floor can mark them.
    let leg_at = |best: f64| {
        let hits = descending(&ids, &order, best);
        move |_k: usize| -> Result<Vec<VectorHit>, SearchError> { Ok(hits.clone()) }
    };
    let run = |text: &str, best: f64, floor: f64| {
        let options = PipelineOptions {
            semantic_only_floor: floor,
            ..PipelineOptions::default()
        };
        let leg = leg_at(best);
        let res = hybrid_search(&store, &SearchQuery::new(text), &options, Some(&leg)).unwrap();
        let first = res.results[0].hit.path.clone();
        (first, res.low_confidence)
    };
    let notes = "guide/notes.md".to_string();
    // "writing" is one of four terms: the lexical leg is weak.
    let weak = "writing sourdough bread zebra";
    assert_eq!(run(weak, 0.81, 0.82), (notes.clone(), true));
    assert_eq!(run(weak, 0.83, 0.82), (notes.clone(), false));
    assert_eq!(run(weak, 0.81, 0.0), (notes.clone(), false));
    // Both terms match: the floor does not apply.
    assert_eq!(run("writing notes", 0.81, 0.82), (notes, false));

    // A mostly-CJK query whose bigrams all match: the floor applies all the same.
    let mut ja = Store::open_in_memory().unwrap();
    index(
        &mut ja,
        &[
            ("ja/pan.md", &["パンの焼き方を説明します。"]),
            ("ja/a.md", &["別の話題です。"]),
            ("ja/b.md", &["三つ目の文書です。"]),
            ("ja/c.md", &["四つ目の文書です。"]),
        ],
    );
    let ids = chunk_ids(&ja);
    let order = ["ja/pan.md", "ja/a.md", "ja/b.md", "ja/c.md"];
    let run_ja = |best: f64| {
        let hits = descending(&ids, &order, best);
        let leg = move |_k: usize| -> Result<Vec<VectorHit>, SearchError> { Ok(hits.clone()) };
        let q = SearchQuery::new("パンの焼き方");
        let res = hybrid_search(&ja, &q, &PipelineOptions::default(), Some(&leg)).unwrap();
        (
            res.results[0].hit.path.clone(),
            res.results[0].lexical_rank,
            res.low_confidence,
        )
    };
    assert_eq!(run_ja(0.81), ("ja/pan.md".to_string(), Some(1), true));
    assert_eq!(run_ja(0.83), ("ja/pan.md".to_string(), Some(1), false));
}

/// Hybrid where the first hit was found by one leg only (the legs disagree on what
/// answers): low confidence under the single-leg floor, as an unanswerable question's
/// hits are; a first hit both legs found stands at the same similarity.
#[test]
fn a_first_hit_of_one_leg_under_the_single_leg_floor_is_low_confidence() {
    let store = store();
    let ids = chunk_ids(&store);
    // "deploy release": both terms match ops/rollback.md, so the lexical leg is strong.
    let run = |first: &str, best: f64, floor: f64| {
        let hits = vec![VectorHit {
            chunk_id: ids[first][0],
            score: best,
            similarity: best,
        }];
        let leg = move |_k: usize| -> Result<Vec<VectorHit>, SearchError> { Ok(hits.clone()) };
        let options = PipelineOptions {
            // The vector leg's first hit outranks the lexical leg's.
            lexical_weight: 0.5,
            single_leg_floor: floor,
            ..PipelineOptions::default()
        };
        let q = SearchQuery::new("deploy release");
        let res = hybrid_search(&store, &q, &options, Some(&leg)).unwrap();
        let top = &res.results[0];
        (
            top.hit.path.clone(),
            top.lexical_rank.is_some(),
            res.low_confidence,
        )
    };
    let notes = "guide/notes.md".to_string();
    assert_eq!(
        run("guide/notes.md", 0.85, 0.86),
        (notes.clone(), false, true)
    );
    assert_eq!(
        run("guide/notes.md", 0.87, 0.86),
        (notes.clone(), false, false)
    );
    assert_eq!(run("guide/notes.md", 0.85, 0.0), (notes, false, false));
    // Found by both legs: not this rule's case.
    let rollback = "ops/rollback.md".to_string();
    assert_eq!(run("ops/rollback.md", 0.85, 0.86), (rollback, true, false));
}

/// A reranker that records what it is given and scores 0.9 a passage holding `favourite`,
/// 0.1 any other; or fails, or gives one score too few.
struct RecordingReranker {
    favourite: &'static str,
    behaviour: &'static str,
    seen: std::cell::RefCell<Vec<(String, Vec<String>)>>,
}

impl Reranker for RecordingReranker {
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>, String> {
        self.seen.borrow_mut().push((
            query.to_owned(),
            passages.iter().map(|p| p.to_string()).collect(),
        ));
        let mut scores: Vec<f64> = passages
            .iter()
            .map(|p| if p.contains(self.favourite) { 0.9 } else { 0.1 })
            .collect();
        match self.behaviour {
            "fail" => Err("connection refused".into()),
            "short" => {
                scores.pop();
                Ok(scores)
            }
            _ => Ok(scores),
        }
    }
}

#[test]
fn rerank_rescores_the_pool_with_the_query_words_and_keeps_ties_in_fused_order() {
    let store = store();
    let query = SearchQuery::new("\"deploy\" release -writing");
    let lexical = hybrid_search(
        &store,
        &query,
        &PipelineOptions::for_mode(SearchMode::Lexical),
        None,
    )
    .unwrap();
    assert_eq!(
        paths(&lexical),
        ["ops/rollback.md", "ref/cache.md", "ops/canary.md"]
    );
    let reranker = reranker_with("canary");
    let options = PipelineOptions {
        rerank: true,
        ..PipelineOptions::for_mode(SearchMode::Lexical)
    };
    let res = hybrid_search_with(&store, &query, &options, None, Some(&reranker)).unwrap();
    assert_eq!(
        paths(&res),
        ["ops/canary.md", "ops/rollback.md", "ref/cache.md"]
    );
    let scores: Vec<f64> = res.results.iter().map(|h| h.hit.score).collect();
    assert_eq!(scores, [0.9, 0.1, 0.1]);
    // The lexical ranks stay those of the leg.
    let ranks: Vec<Option<usize>> = res.results.iter().map(|h| h.lexical_rank).collect();
    assert_eq!(ranks, [Some(3), Some(1), Some(2)]);
    // One call: the query's words, and the pool in the lexical order.
    assert_eq!(
        *reranker.seen.borrow(),
        [(
            "deploy release".to_owned(),
            vec![
                "Roll back a deploy to the previous release.".to_owned(),
                "Cache invalidation after a deploy.".to_owned(),
                "Ship a canary build to a few users before the release.".to_owned(),
            ]
        )]
    );
    // 0.9 against a mean of 0.367: the best hit stands out.
    assert!(!res.low_confidence);
    assert!(res.reranked);
    assert_eq!(res.confidence_ratio, Some(0.9 / (1.1 / 3.0)));
    // A rerank orders what the legs found; it does not make a weak lexical match (one of
    // four words) confident.
    let weak = SearchQuery::new("deploy qqqx zzzy wwwv");
    let plain = hybrid_search(
        &store,
        &weak,
        &PipelineOptions::for_mode(SearchMode::Lexical),
        None,
    )
    .unwrap();
    assert!(plain.low_confidence && !plain.reranked);
    let res = hybrid_search_with(&store, &weak, &options, None, Some(&reranker)).unwrap();
    assert_eq!(
        (paths(&res), res.low_confidence, res.reranked),
        (paths(&plain), true, true)
    );

    for (behaviour, message) in [
        (
            "fail",
            "unavailable: the reranker failed: connection refused",
        ),
        (
            "short",
            "unavailable: the reranker returned 2 scores for 3 passages",
        ),
    ] {
        let reranker = RecordingReranker {
            behaviour,
            ..reranker_with("canary")
        };
        let err = hybrid_search_with(&store, &query, &options, None, Some(&reranker)).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
}

fn reranker_with(favourite: &'static str) -> RecordingReranker {
    RecordingReranker {
        favourite,
        behaviour: "ok",
        seen: Default::default(),
    }
}

/// A vector leg with fixed chunk hits and whole-document similarities.
struct DocumentLeg {
    hits: Vec<VectorHit>,
    documents: HashMap<String, f64>,
}

impl VectorLeg for DocumentLeg {
    fn nearest(&self, _k: usize) -> Result<Vec<VectorHit>, SearchError> {
        Ok(self.hits.clone())
    }
    fn document_similarity(&self, _paths: &[String]) -> Result<HashMap<String, f64>, SearchError> {
        Ok(self.documents.clone())
    }
}

/// The failure shape of a fusion whose document leg outweighs the chunk legs: a chunk
/// that both the lexical and the vector leg rank first, in a document the document leg
/// ranks second, fell behind a chunk both legs rank second in the document leg's first
/// document. It stays first; when the chunk legs disagree, the document leg still decides.
#[test]
fn a_chunk_both_legs_rank_first_stays_first_whatever_the_document_leg_says() {
    let mut store = Store::open_in_memory().unwrap();
    index(
        &mut store,
        &[
            ("a.md", &["Roll back a deploy to the previous release."]),
            ("b.md", &["Ship a canary deploy to a few users."]),
        ],
    );
    let ids = chunk_ids(&store);
    let (a, b) = (ids["a.md"][0], ids["b.md"][0]);
    let query = SearchQuery::new("roll back deploy");
    let lexical = store.search_lexical(&query).unwrap();
    let lexical_paths: Vec<&str> = lexical.results.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(lexical_paths, ["a.md", "b.md"]);
    let hit = |chunk_id, similarity| VectorHit {
        chunk_id,
        score: similarity,
        similarity,
    };
    let documents: HashMap<String, f64> =
        [("b.md".to_owned(), 0.9), ("a.md".to_owned(), 0.1)].into();
    let agreeing = DocumentLeg {
        hits: vec![hit(a, 0.89), hit(b, 0.5)],
        documents: documents.clone(),
    };
    let res = hybrid_search(&store, &query, &PipelineOptions::default(), Some(&agreeing)).unwrap();
    assert_eq!(paths(&res), ["a.md", "b.md"]);
    // Without the rule b would lead: its document leg's 5/61 against a's 5/62 outweighs
    // the chunk legs' 2/61 against 2/62.
    let b_score = 2.0 / 62.0 + 5.0 / 61.0;
    assert_eq!(res.results[1].hit.score, b_score);
    assert!(2.0 / 61.0 + 5.0 / 62.0 < b_score);
    assert!(res.results[0].hit.score > b_score);
    assert_eq!(
        (res.results[0].lexical_rank, res.results[0].vector_rank),
        (Some(1), Some(1))
    );
    // The legs disagree on the first chunk: the document leg decides, as before.
    let disagreeing = DocumentLeg {
        hits: vec![hit(b, 0.89), hit(a, 0.5)],
        documents,
    };
    let res = hybrid_search(
        &store,
        &query,
        &PipelineOptions::default(),
        Some(&disagreeing),
    )
    .unwrap();
    assert_eq!(paths(&res), ["b.md", "a.md"]);
    assert_eq!(
        res.results[0].hit.score,
        1.0 / 62.0 + 1.0 / 61.0 + 5.0 / 61.0
    );
}

/// Without MMR, a document takes `per_document` places (1 by default): its other chunks
/// in the pool are listed on its hit, best first, and the next document takes the place.
#[test]
fn one_document_takes_one_place_and_lists_its_other_sections() {
    let mut store = Store::open_in_memory().unwrap();
    index(
        &mut store,
        &[
            (
                "a.md",
                &[
                    "backup backup backup database nightly",
                    "backup backup database snapshot",
                    "backup database copy",
                ],
            ),
            ("b.md", &["backup restore drill with other words"]),
            ("c.md", &["nothing about that here"]),
        ],
    );
    let query = SearchQuery {
        limit: 2,
        ..SearchQuery::new("backup")
    };
    let lexical = PipelineOptions::for_mode(SearchMode::Lexical);
    let res = hybrid_search(&store, &query, &lexical, None).unwrap();
    assert_eq!(paths(&res), vec!["a.md", "b.md"]);
    let a = &res.results[0];
    let ids = chunk_ids(&store);
    let rows = store.chunks_of("a.md").unwrap();
    // a.md's second and third chunks, in the order BM25 ranks them.
    let listed: Vec<(&str, u32)> = a
        .sections
        .iter()
        .map(|s| (s.pointer.as_str(), s.start_line))
        .collect();
    assert_eq!(
        listed,
        vec![
            (rows[1].pointer.as_str(), rows[1].start_line),
            (rows[2].pointer.as_str(), rows[2].start_line)
        ]
    );
    assert_eq!(a.chunk_id, ids["a.md"][0]);
    assert!(res.results[1].sections.is_empty());
    // Two places per document, or no limit (then nothing is listed: every chunk may take
    // a place).
    for (n, expected, listed) in [
        (2, vec!["a.md", "a.md"], vec![0, 1]),
        (0, vec!["a.md", "a.md"], vec![0, 0]),
    ] {
        let options = PipelineOptions {
            per_document: n,
            ..lexical.clone()
        };
        let res = hybrid_search(&store, &query, &options, None).unwrap();
        assert_eq!(paths(&res), expected, "per_document {n}");
        let sections: Vec<usize> = res.results.iter().map(|h| h.sections.len()).collect();
        assert_eq!(sections, listed, "per_document {n}");
    }
    // With MMR too: it chooses among each document's first chunk.
    let options = PipelineOptions {
        mmr: true,
        per_document: 1,
        ..lexical.clone()
    };
    let res = hybrid_search(&store, &query, &options, None).unwrap();
    assert_eq!(paths(&res), vec!["a.md", "b.md"]);
    // Spares: kept after the first `limit`.
    let options = PipelineOptions {
        spare: 1,
        ..lexical.clone()
    };
    let res = hybrid_search(&store, &query, &options, None).unwrap();
    assert_eq!(
        paths(&res),
        vec!["a.md", "b.md"],
        "only two documents match"
    );
}
