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

// The in-memory copy the vector leg scans (`scan.rs`).

/// The paths of the nearest chunks to `query` through `store`, best first.
fn nearest_paths(store: &Store, e: &VocabEmbedder, query: &str, k: usize) -> Vec<String> {
    knn(store, e, query, k, &SearchQuery::default())
        .into_iter()
        .map(|(path, _, _)| path)
        .collect()
}

/// The copy `store` scans now (read again if the index changed).
fn copy_of(store: &Store) -> std::sync::Arc<VectorCopy> {
    let model = read_model(store.conn()).unwrap().unwrap();
    let key = current_key(store.conn(), store.file_identity(), &model.model_id).unwrap();
    VectorCopy::current(store.vector_copy_slot(), store.conn(), &key, model.dims).unwrap()
}

#[test]
fn the_copy_is_read_once_and_again_after_any_store_changes_the_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    let reader = Store::open(&db_path).unwrap();
    assert_eq!(
        nearest_paths(&reader, &e, "alpha", 5),
        vec!["notes/a.md", "notes/b.md"]
    );
    let first = copy_of(&reader);
    assert_eq!(first.len(), 2);
    // Nothing changed: the same copy, not read again.
    assert!(std::sync::Arc::ptr_eq(&first, &copy_of(&reader)));

    // Another store of the file (a language server, an embedding pass) adds a document
    // and its vector: the reader's next search finds it.
    let mut writer = Store::open(&db_path).unwrap();
    super::super::tests::index(&mut writer, &[("notes/g.md", &["gamma"])]);
    assert_eq!(embed_all(&mut writer, &e).embedded, 1);
    assert_eq!(nearest_paths(&reader, &e, "gamma", 1), vec!["notes/g.md"]);
    let second = copy_of(&reader);
    assert!(!std::sync::Arc::ptr_eq(&first, &second));
    assert_eq!(second.len(), 3);

    // Its orphaned vector is deleted: the copy is read again without it.
    let mut batch = writer.batch().unwrap();
    batch.remove_document("notes/g.md").unwrap();
    batch.commit().unwrap();
    assert_eq!(writer.delete_orphan_vectors().unwrap(), 1);
    assert_eq!(copy_of(&reader).len(), 2);
    assert_eq!(
        nearest_paths(&reader, &e, "gamma", 5),
        vec!["notes/a.md", "notes/b.md"]
    );

    // A chunk's text changes: its old vector goes and a new one comes, so the number of
    // vectors stays the same; the generation tells the copy apart.
    super::super::tests::index(&mut writer, &[("notes/a.md", &["delta"])]);
    let summary = embed_all(&mut writer, &e);
    assert_eq!((summary.embedded, summary.removed), (1, 1));
    assert_eq!(copy_of(&reader).len(), 2);
    assert_eq!(
        nearest_paths(&reader, &e, "delta", 5),
        vec!["notes/a.md", "notes/b.md"]
    );

    // Every vector dropped: no vector leg at all, then a new model's vectors.
    writer.clear_vectors().unwrap();
    assert_eq!(nearest_paths(&reader, &e, "alpha", 5), Vec::<String>::new());
    let other = VocabEmbedder::new("test:other", &["beta", "alpha"]);
    embed_all(&mut writer, &other);
    assert_eq!(
        nearest_paths(&reader, &other, "beta", 1),
        vec!["notes/b.md"]
    );
    assert_eq!(copy_of(&reader).len(), 2);
}

#[test]
fn a_vector_written_without_the_generation_is_found_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    let mut store = Store::open(&db_path).unwrap();
    assert_eq!(nearest_paths(&store, &e, "delta", 1), vec!["notes/a.md"]);
    super::super::tests::index(&mut store, &[("notes/d.md", &["delta"])]);
    // A writer that does not know `vector_generation` (another program, an older
    // folio) stores the new chunk's vector by hand.
    let generation = store.meta("vector_generation").unwrap();
    let conn = rusqlite::Connection::open(&db_path).unwrap();
    conn.execute(
        "INSERT INTO vector_keys (model_id, content_hash) VALUES ('test:vocab', ?1)",
        [crate::store::chunk_content_hash("", "delta")],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?1, ?2)",
        rusqlite::params![
            conn.last_insert_rowid(),
            super::sqlite_vec::to_blob(&e.embed_query("delta").unwrap())
        ],
    )
    .unwrap();
    assert_eq!(store.meta("vector_generation").unwrap(), generation);
    // The largest vector key changed, so the copy is read again.
    assert_eq!(nearest_paths(&store, &e, "delta", 1), vec!["notes/d.md"]);
}

#[test]
fn the_scan_agrees_with_sqlite_vec() {
    const DIMS: usize = 24;
    const N: usize = 300;
    // A fixed linear congruential sequence in [-1, 1): vectors of various lengths, not
    // normalised, so the division by each length is tested too.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
    };
    let mut store = Store::open_in_memory().unwrap();
    let texts: Vec<String> = (0..N).map(|i| format!("t{i}")).collect();
    let paths: Vec<String> = (0..N).map(|i| format!("d{i}.md")).collect();
    let docs: Vec<(&str, [&str; 1])> = paths
        .iter()
        .zip(&texts)
        .map(|(p, t)| (p.as_str(), [t.as_str()]))
        .collect();
    let docs: Vec<(&str, &[&str])> = docs.iter().map(|(p, t)| (*p, &t[..])).collect();
    super::super::tests::index(&mut store, &docs);
    let model = VectorModel {
        model_id: "test:random".to_owned(),
        dims: DIMS,
    };
    store.ensure_vector_model(&model).unwrap();
    let vectors: Vec<(String, Vec<f32>)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let scale = 0.1 + i as f32 / 40.0;
            let v: Vec<f32> = (0..DIMS).map(|_| next() * scale).collect();
            (crate::store::chunk_content_hash("", t), v)
        })
        .collect();
    assert_eq!(store.insert_vectors("test:random", &vectors).unwrap(), N);
    let copy = copy_of(&store);
    assert_eq!(copy.len(), N);
    for _ in 0..5 {
        let query: Vec<f32> = (0..DIMS).map(|_| next() * 3.0).collect();
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT rowid, distance FROM chunk_vectors WHERE embedding MATCH ?1 AND k = 20 ORDER BY distance",
            )
            .unwrap();
        let vec0: Vec<(i64, f64)> = stmt
            .query_map([super::sqlite_vec::to_blob(&query)], |r| {
                Ok((r.get(0)?, 1.0 - r.get::<_, f64>(1)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let ours = copy.nearest(&query, 20, None, Centering::NONE);
        assert_eq!(
            ours.iter().map(|(id, _, _)| *id).collect::<Vec<_>>(),
            vec0.iter().map(|(id, _)| *id).collect::<Vec<_>>()
        );
        for ((_, score, a), (_, b)) in ours.iter().zip(&vec0) {
            assert!((f64::from(*a) - b).abs() < 1e-6, "{a} vs {b}");
            assert_eq!(score, a, "without centring the score is the cosine");
        }
        // A filter keeps only the vectors it accepts, in the same order.
        let even = |id: i64| id % 2 == 0;
        let filtered = copy.nearest(&query, 5, Some(&even), Centering::NONE);
        let expected: Vec<(i64, f32, f32)> = copy
            .nearest(&query, N, None, Centering::NONE)
            .into_iter()
            .filter(|(id, _, _)| id % 2 == 0)
            .take(5)
            .collect();
        assert_eq!(filtered, expected);
    }
}

/// Deletes the index file at `db_path` with its WAL and shared-memory files.
fn delete_index_files(db_path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = db_path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(std::path::PathBuf::from(name)) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => panic!("{err}"),
        }
    }
}

#[test]
fn an_index_built_again_at_the_same_path_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let before = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &before);
    // A process that searches (a language server opens a store per request).
    let first = Store::open(&db_path).unwrap();
    assert_eq!(
        nearest_paths(&first, &before, "alpha", 1),
        vec!["notes/a.md"]
    );
    let old_key = current_key(first.conn(), first.file_identity(), "test:vocab").unwrap();
    // The index is deleted and built again from the same files, by the same steps, with
    // vectors of the same model id and dimension that differ ("alpha" and "beta" swap
    // places): the same generation and the same keys.
    delete_index_files(&db_path);
    let after = VocabEmbedder::new("test:vocab", &["beta", "alpha", "gamma", "delta"]);
    embedded_file_index(&db_path, &after);
    let second = Store::open(&db_path).unwrap();
    let new_key = current_key(second.conn(), second.file_identity(), "test:vocab").unwrap();
    assert_eq!(
        (new_key.generation, new_key.last_id),
        (old_key.generation, old_key.last_id)
    );
    assert_ne!(new_key.index_id, old_key.index_id);
    assert_eq!(new_key.index_id.len(), 16);
    // The new file's vectors: "beta" is now the first dimension, which notes/a.md
    // ("alpha") no longer has (notes/b.md's heading "B" is a third, unknown word).
    assert_eq!(
        knn(&second, &after, "beta", 5, &SearchQuery::default()),
        vec![hit("notes/b.md", 1, 0.5774), hit("notes/a.md", 1, 0.0)]
    );
}

#[test]
fn a_writer_that_drops_and_embeds_again_without_the_generation_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    let store = Store::open(&db_path).unwrap();
    // notes/b.md's embedded text has its heading "B", a word outside the vocabulary.
    assert_eq!(
        knn(&store, &e, "alpha", 5, &SearchQuery::default()),
        vec![hit("notes/a.md", 1, 1.0), hit("notes/b.md", 1, 0.5774)]
    );
    let old_key = current_key(store.conn(), store.file_identity(), "test:vocab").unwrap();
    // What `index --force` of a folio without `vector_generation` does: every vector
    // dropped, the table made again, the same keys stored again in the same order (so
    // the same ids), here with the two vectors swapped.
    let hashes: Vec<String> = {
        let mut stmt = store
            .conn()
            .prepare("SELECT content_hash FROM vector_keys ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let old = rusqlite::Connection::open(&db_path).unwrap();
    old.execute_batch(
        "DROP TABLE chunk_vectors; DELETE FROM vector_keys;
         CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[5] distance_metric=cosine);",
    )
    .unwrap();
    let swapped = [
        e.embed_query("alpha beta").unwrap(),
        e.embed_query("alpha").unwrap(),
    ];
    for (hash, vector) in hashes.iter().zip(&swapped) {
        old.execute(
            "INSERT INTO vector_keys (model_id, content_hash) VALUES ('test:vocab', ?1)",
            [hash],
        )
        .unwrap();
        old.execute(
            "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?1, ?2)",
            rusqlite::params![old.last_insert_rowid(), super::sqlite_vec::to_blob(vector)],
        )
        .unwrap();
    }
    let new_key = current_key(store.conn(), store.file_identity(), "test:vocab").unwrap();
    assert_eq!(
        (new_key.generation, new_key.last_id, &new_key.index_id),
        (old_key.generation, old_key.last_id, &old_key.index_id)
    );
    assert_ne!(new_key.schema_version, old_key.schema_version);
    assert_eq!(
        knn(&store, &e, "alpha", 5, &SearchQuery::default()),
        vec![hit("notes/b.md", 1, 1.0), hit("notes/a.md", 1, 0.7071)]
    );
}

#[test]
fn an_index_restored_from_a_copy_and_changed_otherwise_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join(".folio/index.db");
    let backup = dir.path().join("backup.db");
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    embedded_file_index(&db_path, &e);
    // Every store is closed, so the file holds every commit: a backup of it.
    std::fs::copy(&db_path, &backup).unwrap();
    let change = |text: &'static str| {
        let mut store = Store::open(&db_path).unwrap();
        super::super::tests::index(&mut store, &[("notes/a.md", &[text])]);
        assert_eq!(embed_all(&mut store, &e).embedded, 1);
    };
    // Each search opens a store of its own and closes it, as a language server does.
    let search = |query: &str| {
        let store = Store::open(&db_path).unwrap();
        let key = current_key(store.conn(), store.file_identity(), "test:vocab").unwrap();
        (knn(&store, &e, query, 1, &SearchQuery::default()), key)
    };
    change("delta");
    let (hits, changed) = search("delta");
    assert_eq!(hits, vec![hit("notes/a.md", 1, 1.0)]);
    // The backup is put back and changed another way, by the same steps: the same
    // index_id, schema, generation and largest key as the copy just read.
    delete_index_files(&db_path);
    std::fs::copy(&backup, &db_path).unwrap();
    change("gamma");
    let (hits, restored) = search("gamma");
    assert_eq!(
        (
            &restored.index_id,
            restored.schema_version,
            restored.generation,
            restored.last_id
        ),
        (
            &changed.index_id,
            changed.schema_version,
            changed.generation,
            changed.last_id
        )
    );
    assert_ne!(restored.file, changed.file);
    assert_eq!(hits, vec![hit("notes/a.md", 1, 1.0)]);
}

// Centring (`centering.rs`) through the store: the copy's statistics are read from the
// index's own chunks and vectors.

/// 20 English pages `the the noteN`, 19 Japanese ones `です です ノートN`, and the one
/// Japanese page that answers `the archive`: `です archive`. Unit vectors over
/// (the, です, archive, other): e = (2,0,0,1)/√5, j = (0,2,0,1)/√5, a = (0,1,1,0)/√2.
fn bilingual_fixture(e: &VocabEmbedder) -> Store {
    let mut store = Store::open_in_memory().unwrap();
    let english: Vec<(String, String)> = (0..20)
        .map(|i| (format!("en/{i}.md"), format!("the the note{i}")))
        .collect();
    let mut japanese: Vec<(String, String)> = (0..19)
        .map(|i| (format!("ja/{i}.md"), format!("です です ノート{i}")))
        .collect();
    japanese.push(("ja/answer.md".to_owned(), "です archive".to_owned()));
    let docs: Vec<(&str, [&str; 1])> = english
        .iter()
        .chain(&japanese)
        .map(|(p, t)| (p.as_str(), [t.as_str()]))
        .collect();
    let docs: Vec<(&str, &[&str])> = docs.iter().map(|(p, t)| (*p, &t[..])).collect();
    super::super::tests::index(&mut store, &docs);
    embed_all(&mut store, e);
    store
}

#[test]
fn writing_system_centring_lifts_the_answer_in_the_other_language() {
    let e = VocabEmbedder::new("test:vocab", &["the", "です", "archive"]);
    let store = bilingual_fixture(&e);
    let q = e.embed_query("the archive").unwrap();
    let rank_of_answer = |centering: Centering| {
        let hits = store
            .vector_search_centred("test:vocab", &q, 40, &SearchQuery::default(), centering)
            .unwrap();
        let paths: Vec<String> = hits
            .iter()
            .map(|h| {
                store
                    .conn()
                    .query_row(
                        "SELECT d.path FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
                        [h.chunk_id],
                        |r| r.get::<_, String>(0),
                    )
                    .unwrap()
            })
            .collect();
        let at = paths.iter().position(|p| p == "ja/answer.md").unwrap();
        (at + 1, hits[at], hits[0])
    };
    // Cosines: every English page 2/√10 = 0.63246, the answer 1/2: it comes 21st.
    let (rank, answer, first) = rank_of_answer(Centering::NONE);
    assert_eq!(rank, 21);
    assert!((first.similarity - 0.632_455_5).abs() < 1e-6);
    assert_eq!(answer.score, answer.similarity);
    // a = 0.5: μ = (20e + 19j + a)/40; English pages lose 0.5 · q·(e − μ) = 0.15187,
    // the answer gains 0.5 · q·(μ − μ_ja) = 0.15186 (μ_ja = (19j + a)/20): 0.48059
    // against 0.65186, so it comes first, and keeps its cosine as `similarity`.
    let language = Centering {
        corpus: 0.0,
        writing_system: 0.5,
    };
    let (rank, answer, _) = rank_of_answer(language);
    assert_eq!(rank, 1);
    assert!(
        (answer.score - 0.651_863_9).abs() < 1e-5,
        "{}",
        answer.score
    );
    assert!((answer.similarity - 0.5).abs() < 1e-6);
    // The document leg scores the same way (each document vector is its one chunk's).
    let paths = vec!["en/0.md".to_owned(), "ja/answer.md".to_owned()];
    let plain = store
        .document_scores("test:vocab", &q, &paths, Centering::NONE)
        .unwrap();
    assert!((plain["en/0.md"] - 0.632_455_5).abs() < 1e-6);
    assert!((plain["ja/answer.md"] - 0.5).abs() < 1e-6);
    let centred = store
        .document_scores("test:vocab", &q, &paths, language)
        .unwrap();
    assert!((centred["en/0.md"] - 0.480_591_6).abs() < 1e-5);
    assert!((centred["ja/answer.md"] - 0.651_863_9).abs() < 1e-5);
    // Both corrections at 0.5: 0.18309 against 0.48916 (b takes v·μ/2 off each).
    let both = Centering {
        corpus: 0.5,
        writing_system: 0.5,
    };
    let (rank, answer, _) = rank_of_answer(both);
    assert_eq!(rank, 1);
    assert!((answer.score - 0.489_155_7).abs() < 1e-5);
    let centred = store
        .document_scores("test:vocab", &q, &paths, both)
        .unwrap();
    assert!((centred["en/0.md"] - 0.183_091_6).abs() < 1e-5);
    assert!((centred["ja/answer.md"] - 0.489_155_7).abs() < 1e-5);
}

#[test]
fn corpus_centring_puts_a_specific_page_above_one_near_every_query() {
    // Over (x, y, other): 20 pages `x nN` = (1,0,1)/√2, one `y` = (0,1,0) and one
    // `x y hub` = (1,1,1)/√3, near the collection's mean μ = (20·xn + y + hub)/22.
    let e = VocabEmbedder::new("test:vocab", &["x", "y"]);
    let mut store = Store::open_in_memory().unwrap();
    let texts: Vec<(String, String)> = (0..20)
        .map(|i| (format!("x/{i}.md"), format!("x n{i}")))
        .chain([
            ("y.md".to_owned(), "y".to_owned()),
            ("hub.md".to_owned(), "x y hub".to_owned()),
        ])
        .collect();
    let docs: Vec<(&str, [&str; 1])> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), [t.as_str()]))
        .collect();
    let docs: Vec<(&str, &[&str])> = docs.iter().map(|(p, t)| (*p, &t[..])).collect();
    super::super::tests::index(&mut store, &docs);
    embed_all(&mut store, &e);
    let q = e.embed_query("x y").unwrap();
    let top2 = |centering: Centering| -> Vec<(String, f64)> {
        store
            .vector_search_centred("test:vocab", &q, 2, &SearchQuery::default(), centering)
            .unwrap()
            .into_iter()
            .map(|h| {
                let path = store
                    .conn()
                    .query_row(
                        "SELECT d.path FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
                        [h.chunk_id],
                        |r| r.get::<_, String>(0),
                    )
                    .unwrap();
                (path, (h.score * 1e4).round() / 1e4)
            })
            .collect()
    };
    // Cosines: hub 2/√6 = 0.8165, y 1/√2 = 0.7071.
    assert_eq!(
        top2(Centering::NONE),
        vec![("hub.md".to_owned(), 0.8165), ("y.md".to_owned(), 0.7071)]
    );
    // b = 0.5: hub loses 0.5 · hub·μ = 0.40698, y only 0.5 · y·μ = 0.03585.
    let corpus = Centering {
        corpus: 0.5,
        writing_system: 0.0,
    };
    assert_eq!(
        top2(corpus),
        vec![("y.md".to_owned(), 0.6713), ("hub.md".to_owned(), 0.4095)]
    );
    // One writing system: the language term changes nothing.
    let with_language = Centering {
        corpus: 0.5,
        writing_system: 1.0,
    };
    assert_eq!(top2(with_language), top2(corpus));
}

#[test]
fn a_document_takes_the_group_of_most_of_its_chunks_and_filters_keep_the_scores() {
    let e = VocabEmbedder::new("test:vocab", &["the", "です", "archive"]);
    let mut store = bilingual_fixture(&e);
    super::super::tests::index(
        &mut store,
        &[
            // Two Japanese chunks and one English: Japanese.
            (
                "mixed/major.md",
                &["です archive", "です zip", "the list"][..],
            ),
            // One of each: the first chunk's group.
            ("mixed/tie-ja.md", &["です tar", "the tar"][..]),
            ("mixed/tie-en.md", &["the gz", "です gz"][..]),
        ],
    );
    embed_all(&mut store, &e);
    let q = e.embed_query("the archive").unwrap();
    let paths: Vec<String> = [
        "en/0.md",
        "ja/answer.md",
        "mixed/major.md",
        "mixed/tie-ja.md",
        "mixed/tie-en.md",
    ]
    .map(str::to_owned)
    .to_vec();
    let plain = store
        .document_scores("test:vocab", &q, &paths, Centering::NONE)
        .unwrap();
    let language = Centering {
        corpus: 0.0,
        writing_system: 0.5,
    };
    let centred = store
        .document_scores("test:vocab", &q, &paths, language)
        .unwrap();
    // What the language term took off each document: −0.5 · q·(μ_w − μ) of its group.
    let shift = |p: &str| centred[p] - plain[p];
    let (english, japanese) = (shift("en/0.md"), shift("ja/answer.md"));
    assert!(english < 0.0 && japanese > 0.0, "{english} {japanese}");
    for (path, expected) in [
        ("mixed/major.md", japanese),
        ("mixed/tie-ja.md", japanese),
        ("mixed/tie-en.md", english),
    ] {
        assert!((shift(path) - expected).abs() < 1e-9, "{path}");
    }

    // A path filter scans only the chunks that pass, with the same scores.
    let all = store
        .vector_search_centred("test:vocab", &q, 60, &SearchQuery::default(), language)
        .unwrap();
    let only_ja = SearchQuery {
        path_globs: vec!["ja/**".to_owned()],
        ..SearchQuery::default()
    };
    let filtered = store
        .vector_search_centred("test:vocab", &q, 3, &only_ja, language)
        .unwrap();
    assert_eq!(filtered.len(), 3);
    let ja_ids: Vec<i64> = store
        .conn()
        .prepare("SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path LIKE 'ja/%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<_> = all
        .iter()
        .filter(|h| ja_ids.contains(&h.chunk_id))
        .take(3)
        .copied()
        .collect();
    assert_eq!(filtered, expected);
    let answer = store
        .conn()
        .query_row(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path = 'ja/answer.md'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap();
    assert_eq!(filtered[0].chunk_id, answer);
}

/// `ensemble_document_ranks` joins documents to the ensemble vectors by source hash:
/// two documents with the same text share one vector and both are ranked (ties by
/// path), a document without a vector of the model takes no part (another model's
/// vector does not count), and a query of another length than the vectors ranks nothing.
#[test]
fn ensemble_ranks_join_documents_by_source_hash() {
    let mut store = fixture();
    let mut batch = store.batch().unwrap();
    batch
        .upsert_document(&doc("notes/twin.md", &["alpha"]), &[chunk(0, &[], "alpha")])
        .unwrap();
    batch.commit().unwrap();
    let hash = |texts: &[&str]| doc("x.md", texts).source_hash;
    store
        .insert_ensemble_vectors(
            "test:ensemble",
            &[
                (hash(&["alpha"]), vec![1.0, 0.0]),
                (hash(&["alpha beta"]), vec![0.6, 0.8]),
                (hash(&["gamma"]), vec![0.0, 1.0]),
            ],
        )
        .unwrap();
    store
        .insert_ensemble_vectors("test:other", &[(hash(&["alpha alpha beta"]), vec![1.0])])
        .unwrap();
    let ranks = store
        .ensemble_document_ranks("test:ensemble", &[0.8, 0.6])
        .unwrap();
    let mut ranked: Vec<(&str, usize)> = ranks.iter().map(|(p, r)| (p.as_str(), *r)).collect();
    ranked.sort_by_key(|(_, r)| *r);
    // alpha: 0.8; alpha beta: 0.48 + 0.48 = 0.96; gamma: 0.6.
    assert_eq!(
        ranked,
        [
            ("notes/b.md", 1),
            ("notes/a.md", 2),
            ("notes/twin.md", 3),
            ("work/d.md", 4)
        ]
    );
    // A query of another length than the stored vectors ranks nothing.
    assert!(
        store
            .ensemble_document_ranks("test:ensemble", &[1.0, 0.0, 0.0])
            .unwrap()
            .is_empty()
    );
    // `folio index --force` (clear_vectors) drops them too, so that the next pass embeds
    // every document again with the second model.
    store.clear_vectors().unwrap();
    assert!(
        store
            .ensemble_document_ranks("test:ensemble", &[0.8, 0.6])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .documents_lacking_ensemble_vectors("test:ensemble")
            .unwrap()
            .len(),
        6
    );
}
