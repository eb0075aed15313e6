//! Tests of lexical search: CJK, ranking, query syntax, filters and hits.

use super::*;
use crate::store::tests::{chunk, doc, index, search_paths};
use crate::store::{ChunkRecord, DocRecord};

fn paths(results: &SearchResults) -> Vec<&str> {
    results
        .results
        .iter()
        .map(|hit| hit.path.as_str())
        .collect()
}

fn upsert(store: &mut Store, record: &DocRecord, chunks: &[ChunkRecord]) {
    let mut batch = store.batch().expect("batch");
    batch.upsert_document(record, chunks).expect("upsert");
    batch.commit().expect("commit");
}

fn multilingual_store() -> Store {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[
            (
                "en/engines.md",
                &["Search engines build an inverted index over text."],
            ),
            (
                "en/fox.md",
                &["The quick brown fox jumps over the lazy dog."],
            ),
            (
                "ja/kensaku.md",
                &["全文検索エンジンの仕組みについて説明します。"],
            ),
            ("zh/fenci.md", &["中文分词是搜索引擎的基础。"]),
            ("ko/geomsaek.md", &["한국어 검색 엔진을 만듭니다."]),
        ],
    );
    store
}

#[test]
fn two_character_cjk_queries() {
    let store = multilingual_store();
    assert_eq!(search_paths(&store, "検索"), vec!["ja/kensaku.md"]);
    assert_eq!(search_paths(&store, "仕組み"), vec!["ja/kensaku.md"]);
    assert_eq!(search_paths(&store, "分词"), vec!["zh/fenci.md"]);
    assert_eq!(search_paths(&store, "搜索"), vec!["zh/fenci.md"]);
    assert_eq!(search_paths(&store, "검색"), vec!["ko/geomsaek.md"]);
    assert_eq!(search_paths(&store, "エンジン"), vec!["ja/kensaku.md"]);
    // A bigram phrase must be contiguous: 検 and 明 both occur, 検明 does not.
    assert_eq!(search_paths(&store, "検明"), Vec::<String>::new());
    // A single character is a prefix query over the bigrams.
    assert_eq!(search_paths(&store, "検"), vec!["ja/kensaku.md"]);
    // FIXME: a single character that only ends a run (す in 説明します) is the
    // second half of its only bigram, so the prefix query misses it.
    assert_eq!(search_paths(&store, "す"), Vec::<String>::new());
    assert_eq!(search_paths(&store, "search"), vec!["en/engines.md"]);
}

#[test]
fn cjk_hit_snippet_uses_original_text() {
    let store = multilingual_store();
    let results = store
        .search_lexical(&SearchQuery::new("検索"))
        .expect("search");
    assert_eq!(
        results.results[0].snippet,
        "全文検索エンジンの仕組みについて説明します。"
    );
    assert!(!results.low_confidence);
}

#[test]
fn more_matching_terms_rank_higher() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[
            ("one.md", &["rust is a language with many words here"]),
            ("two.md", &["rust and sqlite together with more words"]),
            ("none.md", &["nothing relevant in this chunk of words"]),
        ],
    );
    assert_eq!(
        search_paths(&store, "rust sqlite"),
        vec!["two.md", "one.md"]
    );
}

#[test]
fn heading_match_outranks_body_match() {
    let mut store = Store::open_in_memory().expect("open");
    upsert(
        &mut store,
        &doc("body.md", &["b"]),
        &[chunk(
            0,
            &["Introduction"],
            "the tokenizer splits text into words",
        )],
    );
    upsert(
        &mut store,
        &doc("heading.md", &["h"]),
        &[chunk(0, &["Tokenizer"], "this part splits text into words")],
    );
    assert_eq!(
        search_paths(&store, "tokenizer"),
        vec!["heading.md", "body.md"]
    );
}

#[test]
fn excluded_terms_remove_chunks() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[("a.md", &["rust and python"]), ("b.md", &["rust and go"])],
    );
    assert_eq!(search_paths(&store, "rust -python"), vec!["b.md"]);
    assert_eq!(search_paths(&store, r#"rust -"and go""#), vec!["a.md"]);
    // Only exclusions: nothing, not everything.
    let results = store
        .search_lexical(&SearchQuery::new("-python"))
        .expect("search");
    assert_eq!(results.results, Vec::new());
    assert!(results.low_confidence);
}

#[test]
fn punctuation_never_errors() {
    let mut store = Store::open_in_memory().expect("open");
    index(&mut store, &[("a.md", &["foo bar baz near and or not"])]);
    let cases: &[(&str, &[&str])] = &[
        ("foo:bar", &["a.md"]),
        ("\"unterminated", &[]),
        ("\"foo", &["a.md"]),
        ("a*b(", &[]),
        ("-", &[]),
        ("NEAR(", &["a.md"]),
        ("NEAR(foo bar)", &["a.md"]),
        ("AND OR NOT", &["a.md"]),
        ("\"", &[]),
        ("*", &[]),
        ("^foo", &["a.md"]),
        ("foo* ba*", &["a.md"]),
        ("heading:foo", &[]),
        ("{foo bar}", &["a.md"]),
        ("'; DROP TABLE chunks; --", &[]),
        ("", &[]),
    ];
    for (text, expected) in cases {
        let results = store
            .search_lexical(&SearchQuery::new(text))
            .unwrap_or_else(|err| panic!("{text:?}: {err}"));
        assert_eq!(paths(&results), *expected, "query {text:?}");
    }
    assert_eq!(store.status().expect("status").n_chunks, 1);
}

#[test]
fn hit_fields() {
    let mut store = Store::open_in_memory().expect("open");
    let record = doc("guide/setup.md", &["x"]);
    upsert(
        &mut store,
        &record,
        &[
            chunk(0, &["Setup"], "Nothing to see."),
            chunk(
                1,
                &["Setup", "Install"],
                "Run the   installer\nthen restart.",
            ),
        ],
    );
    let results = store
        .search_lexical(&SearchQuery::new("installer"))
        .expect("search");
    assert_eq!(results.results.len(), 1);
    let hit = &results.results[0];
    assert_eq!(hit.path, "guide/setup.md");
    assert_eq!(hit.pointer, "2~0000000000000001~0000000000000001");
    assert_eq!(hit.heading_path, vec!["Setup", "Install"]);
    assert_eq!((hit.start_line, hit.end_line), (11, 13));
    assert_eq!(hit.snippet, "Run the installer then restart.");
    assert_eq!(hit.indexed_source_hash, record.source_hash);
    assert!(hit.score > 0.0);
    assert!(!results.low_confidence);
    assert_eq!(results.filter_applied, Vec::<String>::new());
}

#[test]
fn limit_and_low_confidence() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[
            ("a.md", &["rust one"]),
            ("b.md", &["rust two"]),
            ("c.md", &["rust three"]),
        ],
    );
    let mut query = SearchQuery::new("rust");
    query.limit = 2;
    assert_eq!(
        store.search_lexical(&query).expect("search").results.len(),
        2
    );
    query.limit = 0;
    assert_eq!(
        store.search_lexical(&query).expect("search").results.len(),
        3
    );

    // The best hit matches 1 of 3 terms: a minority.
    assert!(
        store
            .search_lexical(&SearchQuery::new("rust zebra yak"))
            .expect("search")
            .low_confidence
    );
    // 1 of 2 is not a minority.
    assert!(
        !store
            .search_lexical(&SearchQuery::new("rust zebra"))
            .expect("search")
            .low_confidence
    );
    assert!(
        store
            .search_lexical(&SearchQuery::new("zebra"))
            .expect("search")
            .low_confidence
    );
}

fn filter_store() -> Store {
    let mut store = Store::open_in_memory().expect("open");
    let docs: [(&str, &[&str], Option<&str>); 5] = [
        ("notes/rust/a.md", &["rust", "db"], Some("2024-01-10")),
        ("notes/go/b.md", &["go"], Some("2024-03-01")),
        ("journal/c.md", &["rust"], Some("2023-12-31")),
        ("notes/drafts/d.md", &["db", "rust", "draft"], None),
        ("top.md", &[], Some("2024-01-01")),
    ];
    for (path, tags, date) in docs {
        let mut record = doc(path, &[path]);
        record.tags = tags.iter().map(|t| t.to_string()).collect();
        record.date = date.map(str::to_owned);
        upsert(
            &mut store,
            &record,
            &[chunk(0, &[], "common words everywhere")],
        );
    }
    // A frontmatter category overrides the folder.
    let mut record = doc("misc/e.md", &["e"]);
    record.category = Some("notes".to_owned());
    upsert(
        &mut store,
        &record,
        &[chunk(0, &[], "common words everywhere")],
    );
    store
}

fn filtered(store: &Store, edit: impl FnOnce(&mut SearchQuery)) -> (Vec<String>, Vec<String>) {
    let mut query = SearchQuery::new("common");
    edit(&mut query);
    let results = store.search_lexical(&query).expect("search");
    // Sorted by path: every document has the same text, and FTS5's BM25 normalises by
    // the whole row's length, which the tags (the `document` column) change.
    let mut paths: Vec<String> = results.results.into_iter().map(|hit| hit.path).collect();
    paths.sort();
    (paths, results.filter_applied)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn filters() {
    let store = filter_store();
    assert_eq!(filtered(&store, |_| {}).0.len(), 6);
    assert_eq!(
        filtered(&store, |q| q.path_globs =
            strings(&["notes/**", "!notes/drafts/**"])),
        (
            strings(&["notes/go/b.md", "notes/rust/a.md"]),
            strings(&["path_globs"])
        )
    );
    assert_eq!(
        filtered(&store, |q| q.path_globs = strings(&["!notes/"])).0,
        strings(&["journal/c.md", "misc/e.md", "top.md"])
    );
    assert_eq!(
        filtered(&store, |q| q.category = Some("notes".into())),
        (
            strings(&[
                "misc/e.md",
                "notes/drafts/d.md",
                "notes/go/b.md",
                "notes/rust/a.md"
            ]),
            strings(&["category"])
        )
    );
    assert_eq!(
        filtered(&store, |q| q.topic = Some("notes/rust".into())),
        (strings(&["notes/rust/a.md"]), strings(&["topic"]))
    );
    assert_eq!(
        filtered(&store, |q| q.tags_any = strings(&["go", "db"])),
        (
            strings(&["notes/drafts/d.md", "notes/go/b.md", "notes/rust/a.md"]),
            strings(&["tags_any"])
        )
    );
    assert_eq!(
        filtered(&store, |q| q.tags_all = strings(&["rust", "db", "rust"])),
        (
            strings(&["notes/drafts/d.md", "notes/rust/a.md"]),
            strings(&["tags_all"])
        )
    );
    assert_eq!(
        filtered(&store, |q| {
            q.date_from = Some("2024-01-01".into());
            q.date_to = Some("2024-01-31".into());
        }),
        (
            strings(&["notes/rust/a.md", "top.md"]),
            strings(&["date_from", "date_to"])
        )
    );
    assert_eq!(
        filtered(&store, |q| q.date_to = Some("2023-12-31".into())).0,
        strings(&["journal/c.md"])
    );
    assert_eq!(
        filtered(&store, |q| {
            q.category = Some("notes".into());
            q.tags_any = strings(&["rust"]);
            q.path_globs = strings(&["!**/drafts/**"]);
        }),
        (
            strings(&["notes/rust/a.md"]),
            strings(&["path_globs", "category", "tags_any"])
        )
    );
}

#[test]
fn filters_apply_before_limit() {
    let store = filter_store();
    let (paths, _) = filtered(&store, |q| {
        q.limit = 1;
        q.path_globs = strings(&["top.md"]);
    });
    assert_eq!(paths, strings(&["top.md"]));
}

#[test]
fn invalid_arguments() {
    let store = filter_store();
    // A NUL byte in the query is a separator, not an SQL error.
    assert_eq!(
        store
            .search_lexical(&SearchQuery::new("comm\0words"))
            .unwrap()
            .results
            .len(),
        6
    );
    let message = |edit: fn(&mut SearchQuery)| {
        let mut query = SearchQuery::new("common");
        edit(&mut query);
        match store.search_lexical(&query) {
            Err(SearchError::InvalidArgument(message)) => message,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    };
    assert_eq!(
        message(|q| q.date_from = Some("2024-02-30".into())),
        "date_from must be a date written YYYY-MM-DD, got \"2024-02-30\""
    );
    assert_eq!(
        message(|q| q.date_to = Some("yesterday".into())),
        "date_to must be a date written YYYY-MM-DD, got \"yesterday\""
    );
    assert_eq!(
        message(|q| {
            q.date_from = Some("2024-02-01".into());
            q.date_to = Some("2024-01-01".into());
        }),
        "date_from 2024-02-01 is after date_to 2024-01-01"
    );
    assert_eq!(
        message(|q| q.path_globs = vec!["notes/[".into()]),
        "invalid path glob \"notes/[\": unclosed character class; missing ']'"
    );
    // Arguments are checked even when the query has no searchable term.
    assert_eq!(
        message(|q| {
            q.text = "-".into();
            q.date_to = Some("2024-1-1".into());
        }),
        "date_to must be a date written YYYY-MM-DD, got \"2024-1-1\""
    );
}

#[test]
fn a_store_on_a_file_widens_its_lexical_queries_unless_asked_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = crate::store::Store::open(&dir.path().join("index.db")).unwrap();
    crate::store::tests::index(
        &mut store,
        &[
            ("denchi.md", &["リモコンの電池を交換する"]),
            ("remote.md", &["Replace the battery of the remote control"]),
            ("fox.md", &["The quick brown fox"]),
        ],
    );
    let paths = |widen: bool| -> Vec<String> {
        let ranking = store
            .lexical_ranking(&SearchQuery::new("電池"), widen)
            .unwrap();
        let rows = store
            .load_chunk_rows(&ranking.ranked.iter().map(|(id, _)| *id).collect::<Vec<_>>())
            .unwrap();
        ranking
            .ranked
            .iter()
            .map(|(id, _)| rows[id].path.clone())
            .collect()
    };
    // (A file named after the synonym, `battery.md`, would rank first: its file name
    // is a title term too.)
    assert_eq!(paths(true), ["denchi.md", "remote.md"]);
    assert_eq!(paths(false), ["denchi.md"]);
    assert_eq!(store.synonyms_missing(), None);
    // An in-memory store has none.
    let memory = crate::store::Store::open_in_memory().unwrap();
    assert!(memory.synonyms().is_none());
    assert_eq!(
        memory.synonyms_missing().as_deref(),
        Some("an in-memory index is searched without synonyms")
    );
}
