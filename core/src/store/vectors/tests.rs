//! Vector store tests with the deterministic test embedder: KNN order and
//! scores worked out by hand, filters identical to lexical search, model
//! changes, orphans and rebuilds.

// Scores are compared rounded to 4 decimals, so 0.7071 is 1/√2 written as it is rounded.
#![allow(clippy::approx_constant)]

use std::sync::atomic::AtomicBool;

use super::super::tests::{chunk, doc};
use super::*;
use crate::embed::Embedder;
use crate::embed::pass::{EmbedProgress, embed_pending};
use crate::embed::testing::VocabEmbedder;
use crate::search::SearchQuery;
use crate::store::{ChunkRecord, Store};

const VOCAB: &[&str] = &["alpha", "beta", "gamma", "delta"];

/// Five documents (chunks without headings, so the embedded text is the chunk):
/// - notes/a.md  "alpha"                 cos(alpha) = 1
/// - notes/b.md  "alpha beta"            1/√2
/// - work/c.md   "alpha alpha beta"      2/√5; tag `x`, date 2024-05-01, quality 0.2
/// - work/d.md   "gamma"                 0
/// - work/e.md   "beta gamma", "alpha"   0, then 1 (the same text as notes/a.md)
fn fixture() -> Store {
    let mut store = Store::open_in_memory().unwrap();
    let mut batch = store.batch().unwrap();
    for (path, texts) in [
        ("notes/a.md", &["alpha"][..]),
        ("notes/b.md", &["alpha beta"][..]),
        ("work/d.md", &["gamma"][..]),
        ("work/e.md", &["beta gamma", "alpha"][..]),
    ] {
        let chunks: Vec<ChunkRecord> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| chunk(i as u32, &[], t))
            .collect();
        batch.upsert_document(&doc(path, texts), &chunks).unwrap();
    }
    let mut c = doc("work/c.md", &["alpha alpha beta"]);
    c.tags = vec!["x".to_owned()];
    c.date = Some("2024-05-01".to_owned());
    c.quality = 0.2;
    batch
        .upsert_document(&c, &[chunk(0, &[], "alpha alpha beta")])
        .unwrap();
    batch.commit().unwrap();
    store
}

fn embed_all(store: &mut Store, embedder: &VocabEmbedder) -> crate::embed::pass::EmbedSummary {
    embed_pending(
        store,
        embedder,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap()
}

/// `(path, start_line, score rounded to 4 decimals)` of each hit.
fn knn(
    store: &Store,
    embedder: &VocabEmbedder,
    query: &str,
    k: usize,
    filters: &SearchQuery,
) -> Vec<(String, u32, f64)> {
    let q = embedder.embed_query(query).unwrap();
    store
        .vector_search(embedder.model_id(), &q, k, filters)
        .unwrap()
        .results
        .into_iter()
        .map(|h| {
            (
                h.path,
                h.start_line,
                (h.score * 10_000.0).round() / 10_000.0,
            )
        })
        .collect()
}

fn hit(path: &str, line: u32, score: f64) -> (String, u32, f64) {
    (path.to_owned(), line, score)
}

#[test]
fn knn_order_and_scores_by_hand() {
    let mut store = fixture();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    let summary = embed_all(&mut store, &e);
    // Six chunks, five distinct texts ("alpha" twice).
    assert_eq!(
        (
            summary.embedded,
            summary.reused,
            summary.skipped_files.len()
        ),
        (5, 0, 0)
    );
    let status = store.vector_status().unwrap();
    assert_eq!(
        (status.embedded_chunks, status.total_chunks, status.vectors),
        (6, 6, 5)
    );
    assert_eq!(
        status.model,
        Some(VectorModel {
            model_id: "test:vocab".to_owned(),
            dims: 5
        })
    );

    let all = SearchQuery::default();
    assert_eq!(
        knn(&store, &e, "alpha", 10, &all),
        vec![
            hit("notes/a.md", 1, 1.0),
            hit("work/e.md", 11, 1.0),
            hit("work/c.md", 1, 0.8944),
            hit("notes/b.md", 1, 0.7071),
            hit("work/d.md", 1, 0.0),
            hit("work/e.md", 1, 0.0),
        ]
    );
    assert_eq!(
        knn(&store, &e, "alpha", 3, &all),
        vec![
            hit("notes/a.md", 1, 1.0),
            hit("work/e.md", 11, 1.0),
            hit("work/c.md", 1, 0.8944)
        ]
    );
    assert_eq!(knn(&store, &e, "alpha", 0, &all), vec![]);
    // "beta gamma" = (0, 1, 1, 0, 0)/√2: e.md's first chunk is the same text,
    // d.md ("gamma") scores 1/√2, b.md ("alpha beta") 1/2, c.md 1/√10.
    assert_eq!(
        knn(&store, &e, "beta gamma", 4, &all),
        vec![
            hit("work/e.md", 1, 1.0),
            hit("work/d.md", 1, 0.7071),
            hit("notes/b.md", 1, 0.5),
            hit("work/c.md", 1, 0.3162)
        ]
    );
}

#[test]
fn filters_are_the_lexical_ones_and_apply_before_knn() {
    let mut store = fixture();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embed_all(&mut store, &e);
    let q = |f: SearchQuery| f;
    let category = q(SearchQuery {
        category: Some("work".to_owned()),
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "alpha", 2, &category),
        vec![hit("work/e.md", 11, 1.0), hit("work/c.md", 1, 0.8944)]
    );
    let exclude = q(SearchQuery {
        path_globs: vec!["!work/**".to_owned()],
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "alpha", 10, &exclude),
        vec![hit("notes/a.md", 1, 1.0), hit("notes/b.md", 1, 0.7071)]
    );
    // A selective filter whose only chunk is far from the query: a KNN over
    // everything, filtered afterwards, would return nothing for k = 1.
    let only_d = q(SearchQuery {
        path_globs: vec!["work/d.md".to_owned()],
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "alpha", 1, &only_d),
        vec![hit("work/d.md", 1, 0.0)]
    );
    let tags = q(SearchQuery {
        tags_any: vec!["x".to_owned()],
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "gamma", 5, &tags),
        vec![hit("work/c.md", 1, 0.0)]
    );
    let dated = q(SearchQuery {
        date_from: Some("2024-01-01".to_owned()),
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "alpha", 5, &dated),
        vec![hit("work/c.md", 1, 0.8944)]
    );
    let quality = q(SearchQuery {
        min_quality: Some(0.5),
        category: Some("work".to_owned()),
        ..SearchQuery::default()
    });
    assert_eq!(
        knn(&store, &e, "alpha", 5, &quality),
        vec![
            hit("work/e.md", 11, 1.0),
            hit("work/d.md", 1, 0.0),
            hit("work/e.md", 1, 0.0)
        ]
    );
    let res = store
        .vector_search("test:vocab", &e.embed_query("alpha").unwrap(), 5, &quality)
        .unwrap();
    assert_eq!(
        res.filter_applied,
        vec!["category".to_owned(), "min_quality".to_owned()]
    );
    assert_eq!(
        res.filter_applied,
        store
            .search_lexical(&SearchQuery {
                text: "alpha".to_owned(),
                ..quality.clone()
            })
            .unwrap()
            .filter_applied
    );
    let nothing = q(SearchQuery {
        topic: Some("none/here".to_owned()),
        ..SearchQuery::default()
    });
    let res = store
        .vector_search("test:vocab", &e.embed_query("alpha").unwrap(), 5, &nothing)
        .unwrap();
    assert_eq!((res.results.len(), res.low_confidence), (0, true));

    // The same validation as lexical search.
    let bad = SearchQuery {
        path_globs: vec!["a/[b".to_owned()],
        ..SearchQuery::default()
    };
    let err = store
        .vector_search("test:vocab", &e.embed_query("alpha").unwrap(), 5, &bad)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: invalid path glob \"a/[b\": unclosed character class; missing ']'"
    );
    let err = store
        .vector_search("test:vocab", &[1.0, 0.0], 5, &SearchQuery::default())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: the query vector has 2 dimensions; model `test:vocab` has 5"
    );
    // Another model's query finds nothing rather than comparing unrelated vectors.
    let res = store
        .vector_search(
            "other",
            &e.embed_query("alpha").unwrap(),
            5,
            &SearchQuery::default(),
        )
        .unwrap();
    assert!(res.results.is_empty());
}

#[test]
fn vectors_of_returns_each_embedded_chunk_with_its_vector() {
    let mut store = fixture();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    assert_eq!(store.vectors_of("work/e.md").unwrap(), vec![]);
    embed_all(&mut store, &e);
    let got = store.vectors_of("work/e.md").unwrap();
    let expected: Vec<(ChunkRecord, Vec<f32>)> = [(0u32, "beta gamma"), (1, "alpha")]
        .into_iter()
        .map(|(seq, text)| (chunk(seq, &[], text), e.embed_query(text).unwrap()))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(store.vectors_of("missing.md").unwrap(), vec![]);
}

#[test]
fn model_change_drops_vectors_only() {
    let mut store = fixture();
    let a = VocabEmbedder::new("test:a", VOCAB);
    embed_all(&mut store, &a);
    let lexical_before = store.search_lexical(&SearchQuery::new("alpha")).unwrap();
    let status_before = store.status().unwrap();

    let b = VocabEmbedder::new("test:b", &["alpha", "beta"]);
    let summary = embed_all(&mut store, &b);
    assert_eq!(
        (summary.recreated, summary.embedded, summary.reused),
        (true, 5, 0)
    );
    let status = store.vector_status().unwrap();
    assert_eq!(
        status.model,
        Some(VectorModel {
            model_id: "test:b".to_owned(),
            dims: 3
        })
    );
    assert_eq!(
        (status.embedded_chunks, status.total_chunks, status.vectors),
        (6, 6, 5)
    );
    assert_eq!(
        (
            store.has_vectors_of("test:b").unwrap(),
            store.has_vectors_of("test:a").unwrap()
        ),
        (true, false)
    );
    assert_eq!(
        store.search_lexical(&SearchQuery::new("alpha")).unwrap(),
        lexical_before
    );
    assert_eq!(store.status().unwrap().n_chunks, status_before.n_chunks);
    // The old model's vectors are gone: its queries find nothing.
    let res = store
        .vector_search(
            "test:a",
            &a.embed_query("alpha").unwrap(),
            5,
            &SearchQuery::default(),
        )
        .unwrap();
    assert!(res.results.is_empty());

    // clear_vectors forgets the model and leaves the lexical rows.
    store.clear_vectors().unwrap();
    let status = store.vector_status().unwrap();
    assert_eq!(
        (status.model, status.embedded_chunks, status.vectors),
        (None, 0, 0)
    );
    assert!(!store.has_vectors_of("test:b").unwrap());
    assert_eq!(
        store.search_lexical(&SearchQuery::new("alpha")).unwrap(),
        lexical_before
    );
}

#[test]
fn orphans_are_deleted_and_shared_texts_kept() {
    let mut store = fixture();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embed_all(&mut store, &e);
    // notes/a.md goes; its text "alpha" lives on in work/e.md, so no vector is orphaned.
    let mut batch = store.batch().unwrap();
    batch.remove_document("notes/a.md").unwrap();
    batch.commit().unwrap();
    assert_eq!(store.delete_orphan_vectors().unwrap(), 0);
    // work/d.md goes: "gamma" is orphaned.
    let mut batch = store.batch().unwrap();
    batch.remove_document("work/d.md").unwrap();
    batch.commit().unwrap();
    assert_eq!(store.delete_orphan_vectors().unwrap(), 1);
    let status = store.vector_status().unwrap();
    assert_eq!(
        (status.embedded_chunks, status.total_chunks, status.vectors),
        (4, 4, 4)
    );
    assert!(store.has_vectors_of("test:vocab").unwrap());
    // Every document goes: the vectors remain (until the next pass) but no chunk has one.
    let mut batch = store.batch().unwrap();
    for path in ["notes/b.md", "work/c.md", "work/e.md"] {
        batch.remove_document(path).unwrap();
    }
    batch.commit().unwrap();
    assert_eq!(store.status().unwrap().n_chunks, 0);
    assert!(!store.has_vectors_of("test:vocab").unwrap());
}

#[test]
fn schema_rebuild_drops_the_vector_table() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    {
        let mut store = Store::open(&db_path).unwrap();
        super::super::tests::index(&mut store, &[("a.md", &["alpha"])]);
        embed_all(&mut store, &VocabEmbedder::new("test:vocab", VOCAB));
        assert_eq!(store.vector_status().unwrap().vectors, 1);
        store
            .conn()
            .execute(
                "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
    }
    let store = Store::open(&db_path).unwrap();
    assert!(store.was_rebuilt());
    let status = store.vector_status().unwrap();
    assert_eq!(
        (status.model, status.vectors, status.total_chunks),
        (None, 0, 0)
    );
    let n: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'chunk_vectors%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
}

/// Two documents in a file index, embedded with [`VOCAB`]; `notes/b.md`'s chunk has a
/// heading, so its embedded text is not its chunk text.
fn embedded_file_index(db_path: &std::path::Path, e: &VocabEmbedder) {
    let mut store = Store::open(db_path).unwrap();
    let mut batch = store.batch().unwrap();
    batch
        .upsert_document(&doc("notes/a.md", &["alpha"]), &[chunk(0, &[], "alpha")])
        .unwrap();
    batch
        .upsert_document(
            &doc("notes/b.md", &["alpha beta"]),
            &[chunk(0, &["B"], "alpha beta")],
        )
        .unwrap();
    batch.commit().unwrap();
    let summary = embed_all(&mut store, e);
    assert_eq!((summary.embedded, summary.documents_embedded), (2, 2));
}

fn chunk_hashes(store: &Store) -> Vec<String> {
    let mut stmt = store
        .conn()
        .prepare("SELECT content_hash FROM chunks ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn an_index_of_another_embedding_text_is_hashed_and_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    {
        let store = Store::open(&db_path).unwrap();
        assert_eq!(store.meta("embedding_text").unwrap().as_deref(), Some("1"));
        // What an index of another text version looks like: another recorded version,
        // other chunk hashes, vectors keyed by them.
        store
            .conn()
            .execute_batch(
                "UPDATE meta SET value = '0' WHERE key = 'embedding_text';
                 UPDATE chunks SET content_hash = 'v0-' || content_hash;
                 UPDATE vector_keys SET content_hash = 'v0-' || content_hash;",
            )
            .unwrap();
        assert!(store.has_vectors_of("test:vocab").unwrap());
    }
    let mut store = Store::open(&db_path).unwrap();
    // Opening it recomputed the hashes, dropped every vector and recorded this version:
    // search has no vector leg until the next pass.
    assert_eq!(
        chunk_hashes(&store),
        vec![
            crate::store::chunk_content_hash("", "alpha"),
            crate::store::chunk_content_hash("B", "alpha beta"),
        ]
    );
    assert_eq!(store.vector_model().unwrap(), None);
    assert!(!store.has_vectors_of("test:vocab").unwrap());
    assert_eq!(store.vector_status().unwrap().vectors, 0);
    assert_eq!(store.meta("embedding_text").unwrap().as_deref(), Some("1"));
    // The next pass embeds every chunk and document again, reusing nothing.
    let summary = embed_all(&mut store, &e);
    assert_eq!(
        (
            summary.embedded,
            summary.documents_embedded,
            summary.reused,
            summary.recreated
        ),
        (2, 2, 0, true)
    );
    assert_eq!(store.vector_status().unwrap().embedded_chunks, 2);
    drop(store);
    // Once at this version, opening writes nothing and keeps the vectors.
    let store = Store::open(&db_path).unwrap();
    assert_eq!(store.conn().total_changes(), 0);
    assert!(store.has_vectors_of("test:vocab").unwrap());
}

#[test]
fn an_index_without_a_recorded_text_version_is_version_1_and_keeps_its_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    {
        let store = Store::open(&db_path).unwrap();
        // A folio that did not record the version wrote this index.
        store
            .conn()
            .execute("DELETE FROM meta WHERE key = 'embedding_text'", [])
            .unwrap();
    }
    let mut store = Store::open(&db_path).unwrap();
    assert_eq!(store.meta("embedding_text").unwrap().as_deref(), Some("1"));
    assert!(store.has_vectors_of("test:vocab").unwrap());
    let summary = embed_all(&mut store, &e);
    assert_eq!(
        (summary.embedded, summary.documents_embedded, summary.reused),
        (0, 0, 2)
    );
}
