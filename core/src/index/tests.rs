//! Indexer tests on a real file system and a real SQLite file.

use std::path::Path;

use super::*;
use crate::search::SearchQuery;

fn write(root: &Path, path: &str, text: &[u8]) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, text).unwrap();
}

/// Everything the index holds, in a comparable form.
fn dump(db: &Path) -> Vec<(String, String, Vec<ChunkRecord>)> {
    let store = Store::open(db).unwrap();
    let mut docs: Vec<(String, String)> = store.documents().unwrap().into_iter().collect();
    docs.sort();
    docs.into_iter()
        .map(|(path, hash)| {
            let chunks = store.chunks_of(&path).unwrap();
            (path, hash, chunks)
        })
        .collect()
}

fn corpus(root: &Path) {
    write(
        root,
        "guide/install.md",
        b"# Install\n\nRun the installer.\n\n## Linux\n\nUse the package manager.\n",
    );
    write(
        root,
        "guide/ja/search.md",
        "# 検索\n\n全文検索の説明です。東京で開発しています。\n".as_bytes(),
    );
    write(
        root,
        "ops/deploy.md",
        b"---\ntags: [release]\ndate: 2024-05-01\n---\n# Deploy\n\nShip it carefully.\n",
    );
    write(
        root,
        "README.markdown",
        b"# Readme\n\nSee [install](guide/install.md).\n",
    );
}

#[test]
fn incremental_index_equals_full_rebuild_and_noop_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    corpus(&root);
    let db = root.join(".folio/index.db");
    let config = Config::default();

    let first = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!(
        (first.files, first.indexed, first.unchanged, first.removed),
        (4, 4, 0, 0)
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".folio/.gitignore"))
            .unwrap()
            .trim(),
        "*"
    );

    // A no-op reindex parses nothing and leaves the database file byte-identical.
    let before = std::fs::read(&db).unwrap();
    let noop = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!(
        (noop.indexed, noop.unchanged, noop.removed, noop.chunks),
        (0, 4, 0, 0)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);

    // Change one file, add one, delete one.
    write(
        &root,
        "guide/install.md",
        b"# Install\n\nRun the new installer.\n",
    );
    write(
        &root,
        "ops/rollback.md",
        b"# Rollback\n\nRevert the release.\n",
    );
    std::fs::remove_file(root.join("README.markdown")).unwrap();
    let incr = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!((incr.indexed, incr.unchanged, incr.removed), (2, 2, 1));

    // A fresh index of the same files holds exactly the same rows.
    let fresh_db = dir.path().join("fresh/index.db");
    index_root(&root, &config, &fresh_db, false, None).unwrap();
    assert_eq!(dump(&db), dump(&fresh_db));

    // Deleting `.folio/` and reindexing gives the same results again.
    std::fs::remove_dir_all(root.join(".folio")).unwrap();
    index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!(dump(&db), dump(&fresh_db));
    let paths: Vec<String> = dump(&db).into_iter().map(|d| d.0).collect();
    assert_eq!(
        paths,
        vec![
            "guide/install.md",
            "guide/ja/search.md",
            "ops/deploy.md",
            "ops/rollback.md"
        ]
    );
}

#[test]
fn cjk_two_character_query_finds_its_japanese_document() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let db = dir.path().join(".folio/index.db");
    index_root(dir.path(), &Config::default(), &db, false, None).unwrap();
    let store = Store::open(&db).unwrap();
    for query in ["検索", "東京"] {
        let hits = store.search_lexical(&SearchQuery::new(query)).unwrap();
        let paths: Vec<&str> = hits.results.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, vec!["guide/ja/search.md"], "{query}");
    }
    let hits = store.search_lexical(&SearchQuery::new("検索")).unwrap();
    assert_eq!(hits.results[0].start_line, 1);
    assert_eq!(hits.results[0].heading_path, vec!["検索".to_string()]);
    assert_eq!(
        hits.results[0].indexed_source_hash,
        hex(hash_bytes(
            "# 検索\n\n全文検索の説明です。東京で開発しています。\n".as_bytes()
        ))
    );
}

#[test]
fn metadata_categories_tags_and_dates() {
    let (doc, chunks) = records(
        "ops/runbooks/deploy.md",
        "---\ntitle: Deploying\ntags: [release, prod]\ndate: 2024-05-01\n---\n# Deploy\n\nShip.\n",
        10,
        0,
        1500,
        false,
    );
    assert_eq!(doc.title.as_deref(), Some("Deploying"));
    assert_eq!(doc.category.as_deref(), Some("ops"));
    assert_eq!(doc.topic.as_deref(), Some("ops/runbooks"));
    assert_eq!(doc.tags, vec!["release", "prod"]);
    assert_eq!(doc.date.as_deref(), Some("2024-05-01"));
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].text, "# Deploy\n\nShip.");
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (6, 8));
    let (plain, _) = records("top.md", "no heading\n", 11, 0, 1500, false);
    assert_eq!(
        (plain.title.as_deref(), plain.category, plain.topic),
        (Some("top"), None, None)
    );
    let (bad_date, _) = records(
        "a/b.md",
        "---\ndate: yesterday\ncategory: custom\n---\n",
        1,
        0,
        1500,
        false,
    );
    assert_eq!(
        (bad_date.date, bad_date.category.as_deref(), bad_date.topic),
        (None, Some("custom"), None)
    );
}

#[test]
fn bad_files_are_skipped_with_reasons_and_the_rest_is_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good.md", b"# Good\n");
    write(root, "latin1.md", b"caf\xe9\n");
    write(root, "binary.md", b"\x89PNG\r\n\x1a\n\0\0\0");
    write(root, "big.md", &vec![b'a'; 2048]);
    write(root, "ignored/skip.md", b"# Ignored\n");
    write(root, ".folioignore", b"ignored/\n");
    std::os::unix::fs::symlink(root.join("good.md"), root.join("link.md")).unwrap();
    let mut config = Config::default();
    config.index.max_file_size = 1024;
    let db = root.join(".folio/index.db");
    let summary = index_root(root, &config, &db, false, None).unwrap();
    let skipped: Vec<String> = summary
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.path, s.reason))
        .collect();
    assert_eq!(
        skipped,
        vec![
            "big.md: too large (2048 bytes; the cap is 1024 bytes)",
            "binary.md: binary content (NUL bytes)",
            "link.md: symbolic link (not followed)",
        ]
    );
    // A file that is not UTF-8 is indexed with U+FFFD for its invalid byte (read-only).
    assert_eq!((summary.files, summary.indexed), (4, 2));
    let paths: Vec<String> = dump(&db).into_iter().map(|d| d.0).collect();
    assert_eq!(paths, vec!["good.md", "latin1.md"]);
}

#[test]
fn a_missing_root_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = index_root(
        &dir.path().join("nope"),
        &Config::default(),
        &dir.path().join("db"),
        false,
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` does not exist or is not a folder",
            dir.path().join("nope").display()
        )
    );
}

#[test]
fn an_index_of_another_root_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write(&a, "one.md", b"# One\n");
    write(&b, "two.md", b"# Two\n");
    let db = dir.path().join("shared.db");
    index_root(&a, &Config::default(), &db, false, None).unwrap();
    let err = index_root(&b, &Config::default(), &db, false, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` is the index of `{}`, not of `{}`; use another index file (`--db`), or reindex with force (`folio index --force`, kb_reindex `force: true`) to take it over",
            db.display(),
            a.display(),
            b.display()
        )
    );
    let paths: Vec<String> = dump(&db).into_iter().map(|d| d.0).collect();
    assert_eq!(paths, vec!["one.md"]);
    let taken = index_root(&b, &Config::default(), &db, true, None).unwrap();
    assert_eq!((taken.indexed, taken.removed), (1, 1));
}

#[test]
fn concurrent_index_runs_wait_for_each_other() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let db = dir.path().join(".folio/index.db");
    let summaries: Vec<IndexSummary> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| index_root(dir.path(), &Config::default(), &db, false, None).unwrap())
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    // Exactly one run did the work; the others waited and found nothing to do.
    let mut indexed: Vec<usize> = summaries.iter().map(|s| s.indexed).collect();
    indexed.sort();
    assert_eq!(indexed, vec![0, 0, 4]);
}

#[test]
fn quality_scores_stubs_low_and_frontmatter_wins() {
    let score = |text: &str| quality_score(text, &crate::parse::parse(text));
    assert_eq!(score("# Title\n\nTODO\n"), 0.01);
    assert_eq!(score("# Title\n\nComing soon: the whole guide.\n"), 0.05);
    assert_eq!(score(&format!("# Title\n\n{}\n", "word ".repeat(50))), 0.5);
    assert_eq!(
        score(&format!(
            "# Title\n\n- {}\n  - nested item\n",
            "word ".repeat(200)
        )),
        1.0
    );
    // Ten CJK characters count as five words.
    assert_eq!(score("# 見出し\n\n東京都の天気予報です\n"), 0.05);
    assert_eq!(score("---\nquality: 0.8\n---\nTODO\n"), 0.8);
}

#[test]
fn min_quality_filters_stubs_out_of_search() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "full.md",
        format!(
            "# Deploy\n\n{}\n",
            "deploy the service carefully ".repeat(30)
        )
        .as_bytes(),
    );
    write(
        dir.path(),
        "stub.md",
        b"# Deploy\n\nTODO: write the deploy guide.\n",
    );
    let db = dir.path().join(".folio/index.db");
    index_root(dir.path(), &Config::default(), &db, false, None).unwrap();
    let store = Store::open(&db).unwrap();
    let paths = |min_quality| {
        let q = SearchQuery {
            min_quality,
            ..SearchQuery::new("deploy")
        };
        let r = store.search_lexical(&q).unwrap();
        let mut p: Vec<String> = r.results.into_iter().map(|h| h.path).collect();
        p.sort();
        p.dedup();
        (p, r.filter_applied)
    };
    assert_eq!(
        paths(None),
        (
            vec!["full.md".to_string(), "stub.md".to_string()],
            Vec::<String>::new()
        )
    );
    assert_eq!(
        paths(Some(0.5)),
        (vec!["full.md".to_string()], vec!["min_quality".to_string()])
    );
    let err = store
        .search_lexical(&SearchQuery {
            min_quality: Some(1.5),
            ..SearchQuery::new("deploy")
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: min_quality 1.5 is not between 0 and 1"
    );
}

/// Frontmatter title, aliases and tags (strings or numbers) are searchable although no
/// chunk's text holds them, through the document's first chunk; a word only in the
/// frontmatter's other keys is not.
#[test]
fn frontmatter_title_aliases_and_tags_are_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "notes/a.md", b"---\ntitle: Zettelkasten method\naliases: [slip box, 1984]\ntags: [pkm, 2024]\nowner: quixotic\n---\n# Intro\n\nFirst part.\n\n# More\n\nSecond part.\n");
    write(&root, "notes/b.md", b"# Other\n\nNothing here about it.\n");
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    let store = Store::open(&db).unwrap();
    let found = |q: &str| -> Vec<(String, String)> {
        let res = store.search_lexical(&SearchQuery::new(q)).unwrap();
        res.results
            .into_iter()
            .map(|h| (h.path, h.pointer.split('~').next().unwrap().to_owned()))
            .collect()
    };
    let first = vec![("notes/a.md".to_owned(), "1".to_owned())];
    assert_eq!(found("zettelkasten"), first);
    assert_eq!(found("\"slip box\""), first);
    assert_eq!(found("pkm"), first);
    assert_eq!(found("1984"), first);
    assert_eq!(found("2024"), first);
    assert_eq!(found("quixotic"), Vec::<(String, String)>::new());
    // The title word finds the first chunk, the body word the second.
    let mut both = found("zettelkasten second");
    both.sort();
    assert_eq!(
        both,
        [
            ("notes/a.md".to_owned(), "1".to_owned()),
            ("notes/a.md".to_owned(), "2".to_owned())
        ]
    );
}

/// A version 4 index (before frontmatter terms) is migrated when opened, not rebuilt:
/// its full-text rows are written again from its own tables, so the title is searchable
/// at once and no vector is embedded again. The step to version 6 (inline tags) asks the
/// next pass to record every document again, which embeds nothing either. A version 4
/// file that cannot be migrated (its full-text table is gone) is rebuilt.
#[test]
fn a_version_4_index_is_migrated_keeping_its_vectors() {
    use crate::embed::pass::{EmbedProgress, embed_pending};
    use crate::embed::testing::VocabEmbedder;
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(
        &root,
        "a.md",
        b"---\ntitle: Zettelkasten\n---\n# Intro\n\nalpha beta\n",
    );
    write(&root, "b.md", "# B\n\ngamma 東京\n".as_bytes());
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    let e = VocabEmbedder::new("test:vocab", &["alpha", "beta", "gamma"]);
    let make_v4 = |store: &Store| {
        store.conn().execute_batch(
            "DROP TABLE chunks_fts;
             CREATE VIRTUAL TABLE chunks_fts USING fts5(heading, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
             INSERT INTO chunks_fts (rowid, heading, body) SELECT id, heading_path, text FROM chunks;
             DROP TABLE ensemble_doc_vectors;
             UPDATE meta SET value = '4' WHERE key = 'schema_version';",
        ).unwrap();
    };
    let hashes;
    {
        let mut store = Store::open(&db).unwrap();
        let first = embed_pending(
            &mut store,
            &e,
            &EmbedProgress::new(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(
            (first.embedded, first.documents_embedded),
            (2, 2),
            "{first:?}"
        );
        hashes = store.documents().unwrap();
        make_v4(&store);
    }
    let mut store = Store::open(&db).unwrap();
    assert!(!store.was_rebuilt());
    assert_eq!(
        store.status().unwrap().schema_version,
        crate::store::SCHEMA_VERSION
    );
    assert_eq!(store.vector_status().unwrap().vectors, 2);
    assert_eq!(store.documents().unwrap(), hashes);
    let paths = |store: &Store, q: &str| -> Vec<String> {
        store
            .search_lexical(&SearchQuery::new(q))
            .unwrap()
            .results
            .into_iter()
            .map(|h| h.path)
            .collect()
    };
    assert_eq!(paths(&store, "zettelkasten"), ["a.md"]);
    assert_eq!(paths(&store, "東京"), ["b.md"]);
    let again = embed_pending(
        &mut store,
        &e,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(
        (again.embedded, again.documents_embedded, again.removed),
        (0, 0, 0),
        "{again:?}"
    );
    drop(store);
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (2, 0));
    let mut store = Store::open(&db).unwrap();
    assert_eq!(store.documents().unwrap(), hashes);
    assert_eq!(store.meta("record_again").unwrap(), None);
    let after = embed_pending(
        &mut store,
        &e,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!((after.embedded, after.removed), (0, 0), "{after:?}");
    drop(store);
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (0, 2));

    // A damaged version 4 file: rebuilt, then indexed afresh.
    {
        let store = Store::open(&db).unwrap();
        make_v4(&store);
        store.conn().execute_batch("DROP TABLE chunks_fts").unwrap();
    }
    let store = Store::open(&db).unwrap();
    assert!(store.was_rebuilt());
    assert_eq!(
        (
            store.status().unwrap().n_chunks,
            store.vector_status().unwrap().vectors
        ),
        (0, 0)
    );
    drop(store);
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (2, 0));
    assert_eq!(paths(&Store::open(&db).unwrap(), "zettelkasten"), ["a.md"]);
}

/// Inline `#tag`s are tags of the document beside its frontmatter tags: recorded once
/// each, listed with their counts, and matched by `tags_any` / `tags_all`, a tag also
/// matching the tags nested in it. A version 5 index (frontmatter tags only) is migrated
/// and its next pass records the inline tags.
#[test]
fn inline_tags_are_indexed_listed_and_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(
        &root,
        "a.md",
        b"---\ntags: [plan]\n---\n# Alpha #draft\n\nWork on #project/alpha and #plan, not `#code` or C#. Shared.\n",
    );
    write(
        &root,
        "b.md",
        b"# Beta\n\n#project notes, issue #42. Shared.\n",
    );
    write(
        &root,
        "c.md",
        b"# Gamma\n\nNothing tagged: see [x](#project). Shared.\n",
    );
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    let store = Store::open(&db).unwrap();
    assert_eq!(
        store.tag_counts().unwrap(),
        [
            ("draft".to_owned(), 1),
            ("plan".to_owned(), 1),
            ("project".to_owned(), 1),
            ("project/alpha".to_owned(), 1)
        ]
    );
    let paths = |any: &[&str], all: &[&str]| -> Vec<String> {
        let mut q = SearchQuery::new("shared");
        q.tags_any = any.iter().map(|t| t.to_string()).collect();
        q.tags_all = all.iter().map(|t| t.to_string()).collect();
        let mut p: Vec<String> = store
            .search_lexical(&q)
            .unwrap()
            .results
            .into_iter()
            .map(|h| h.path)
            .collect();
        p.sort();
        p.dedup();
        p
    };
    assert_eq!(paths(&["project"], &[]), ["a.md", "b.md"]);
    assert_eq!(paths(&["project/alpha"], &[]), ["a.md"]);
    assert_eq!(paths(&["proj"], &[]), Vec::<String>::new());
    assert_eq!(paths(&[], &["project", "draft"]), ["a.md"]);
    assert_eq!(paths(&[], &["project", "plan", "draft"]), ["a.md"]);
    assert_eq!(paths(&[], &["project", "beta"]), Vec::<String>::new());
    assert_eq!(paths(&["code", "42"], &[]), Vec::<String>::new());
    // Written as a user might: `#` and a trailing `/` are not part of the name.
    assert_eq!(paths(&["#project/"], &[]), ["a.md", "b.md"]);
    // Any number of tags is one SQL expression (a chain of 500 ORs was too deep for SQLite).
    let many: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
    let mut many_refs: Vec<&str> = many.iter().map(String::as_str).collect();
    many_refs.push("draft");
    assert_eq!(paths(&many_refs, &[]), ["a.md"]);
    assert_eq!(paths(&[], &many_refs), Vec::<String>::new());

    // A version 5 file recorded before inline tags: migrated, then recorded again.
    store
        .conn()
        .execute_batch(
            "UPDATE documents SET tags_json = '[\"plan\"]' WHERE path = 'a.md';
             UPDATE documents SET tags_json = '[]' WHERE path = 'b.md';
             UPDATE meta SET value = '5' WHERE key = 'schema_version';",
        )
        .unwrap();
    drop(store);
    let store = Store::open(&db).unwrap();
    assert!(!store.was_rebuilt());
    assert_eq!(store.tag_counts().unwrap(), [("plan".to_owned(), 1)]);
    drop(store);
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (3, 0));
    assert_eq!(Store::open(&db).unwrap().tag_counts().unwrap().len(), 4);
}

/// A folder moved or copied with its `.folio/index.db` keeps its index: the copy is
/// taken over without `--force`, nothing unchanged is read again, the new root is
/// recorded, and the original's index still belongs to the original.
#[test]
fn an_index_moved_with_its_folder_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write(&a, "one.md", b"# One\n");
    write(&a, "two.md", b"# Two\n");
    let db_a = a.join(".folio/index.db");
    index_root(&a, &Config::default(), &db_a, false, None).unwrap();
    write(&b, "one.md", b"# One\n");
    write(&b, "two.md", b"# Two, changed\n");
    std::fs::create_dir_all(b.join(".folio")).unwrap();
    let db_b = b.join(".folio/index.db");
    std::fs::copy(&db_a, &db_b).unwrap();
    let summary = index_root(&b, &Config::default(), &db_b, false, None).unwrap();
    assert_eq!(
        (summary.indexed, summary.unchanged, summary.removed),
        (1, 1, 0)
    );
    let store = Store::open(&db_b).unwrap();
    assert_eq!(
        store.meta("root").unwrap().as_deref(),
        Some(b.to_string_lossy().as_ref())
    );
    drop(store);
    // The same file named with --db from outside the folder is still refused for a,
    // however the path is spelt.
    let err = index_root(&a, &Config::default(), &db_b, false, None).unwrap_err();
    assert!(matches!(err, IndexError::OtherRoot { .. }), "{err}");
    let spelt = a.join(".folio/../../b/.folio/index.db");
    let err = index_root(&a, &Config::default(), &spelt, false, None).unwrap_err();
    assert!(matches!(err, IndexError::OtherRoot { .. }), "{err}");
    // A `.folio` that is a link to another root's folder shares that index: refused.
    let c = dir.path().join("c");
    write(&c, "one.md", b"# One\n");
    std::os::unix::fs::symlink(b.join(".folio"), c.join(".folio")).unwrap();
    let err = index_root(
        &c,
        &Config::default(),
        &c.join(".folio/index.db"),
        false,
        None,
    )
    .unwrap_err();
    assert!(matches!(err, IndexError::OtherRoot { .. }), "{err}");
}

#[test]
fn a_pass_over_reported_changes_reads_only_those_and_still_finds_new_and_gone_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.md", b"# A\n\nalpha\n");
    write(root, "b.md", b"# B\n\nbeta\n");
    write(root, "c.md", b"# C\n\ngamma\n");
    write(root, "sub/d.md", b"# D\n\ndelta\n");
    let db = root.join(".folio/index.db");
    let config = Config::default();
    index_root(root, &config, &db, false, None).unwrap();

    // a.md reported; b.md changed but not reported; c.md deleted and e.md created, neither
    // reported; the folder `sub` reported, so sub/d.md is read.
    write(root, "a.md", b"# A\n\nalpha two\n");
    write(root, "b.md", b"# B\n\nbeta two\n");
    std::fs::remove_file(root.join("c.md")).unwrap();
    write(root, "e.md", b"# E\n\nepsilon\n");
    write(root, "sub/d.md", b"# D\n\ndelta two\n");
    let changed = Changed {
        files: ["a.md".to_owned()].into(),
        folders: ["sub".to_owned()].into(),
    };
    let summary = index_changes(root, &config, &db, &changed, None).unwrap();
    assert_eq!(
        (
            summary.files,
            summary.indexed,
            summary.unchanged,
            summary.removed
        ),
        (4, 3, 1, 1)
    );
    let texts: Vec<(String, String)> = dump(&db)
        .into_iter()
        .map(|(path, _, chunks)| (path, chunks[0].text.clone()))
        .collect();
    assert_eq!(
        texts,
        [
            ("a.md".to_owned(), "# A\n\nalpha two".to_owned()),
            ("b.md".to_owned(), "# B\n\nbeta".to_owned()),
            ("e.md".to_owned(), "# E\n\nepsilon".to_owned()),
            ("sub/d.md".to_owned(), "# D\n\ndelta two".to_owned()),
        ]
    );
    // The whole root reported: b.md's change is found; nothing else is written again.
    let all = Changed {
        folders: [String::new()].into(),
        ..Changed::default()
    };
    let summary = index_changes(root, &config, &db, &all, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (1, 3));
}

#[test]
fn a_note_is_titled_by_its_owner_never_by_a_section_heading() {
    let title = |path: &str, text: &str, vault: bool| {
        records(path, text, text.len() as u64, 0, 1500, vault)
            .0
            .title
    };
    let sections = "Some text.\n\n## Action items\n\n- call\n";
    assert_eq!(
        title("notes/Meeting notes.md", sections, false).as_deref(),
        Some("Meeting notes")
    );
    assert_eq!(
        title("Garden.md", "# Plants I keep\n", false).as_deref(),
        Some("Plants I keep")
    );
    // A vault titles its notes by file name, unless the frontmatter says otherwise.
    assert_eq!(
        title("Garden.md", "# Plants I keep\n", true).as_deref(),
        Some("Garden")
    );
    assert_eq!(
        title("Garden.md", "---\ntitle: Greenhouse\n---\n# Plants\n", true).as_deref(),
        Some("Greenhouse")
    );
}

/// A version 7 index (notes titled by their first heading of any level, no file name in
/// the full-text index) is migrated in place: the next pass records every document
/// again, so a note without an H1 gets its file name as title and is found by it, and
/// only that note's whole-document vector is embedded again (its title is part of what
/// was embedded); no chunk vector is.
#[test]
fn a_version_7_index_is_migrated_to_file_name_titles_keeping_its_chunk_vectors() {
    use crate::embed::pass::{EmbedProgress, embed_pending};
    use crate::embed::testing::VocabEmbedder;
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(
        &root,
        "Garden.md",
        b"Roses need sun.\n\n## Watering\n\nEvery day.\n",
    );
    write(&root, "b.md", b"# B\n\nalpha roses\n");
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    let e = VocabEmbedder::new("test:vocab", &["roses", "alpha", "garden", "watering"]);
    let embed = |store: &mut Store| {
        embed_pending(store, &e, &EmbedProgress::new(), &AtomicBool::new(false)).unwrap()
    };
    let titles = |store: &Store| -> Vec<Option<String>> {
        store
            .catalog()
            .unwrap()
            .into_iter()
            .map(|c| c.title)
            .collect()
    };
    {
        let mut store = Store::open(&db).unwrap();
        let first = embed(&mut store);
        assert_eq!(
            (first.embedded, first.documents_embedded),
            (3, 2),
            "{first:?}"
        );
        assert_eq!(
            titles(&store),
            [Some("Garden".to_owned()), Some("B".to_owned())]
        );
        // As version 7 recorded it: titled by its section heading.
        store
            .conn()
            .execute_batch(
                "UPDATE documents SET title = 'Watering' WHERE path = 'Garden.md';
                 UPDATE meta SET value = '7' WHERE key = 'schema_version';",
            )
            .unwrap();
    }
    let store = Store::open(&db).unwrap();
    assert!(!store.was_rebuilt());
    assert_eq!(store.meta("record_again").unwrap().as_deref(), Some("8"));
    drop(store);
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((summary.indexed, summary.unchanged), (2, 0));
    let mut store = Store::open(&db).unwrap();
    assert_eq!(
        titles(&store),
        [Some("Garden".to_owned()), Some("B".to_owned())]
    );
    let found: Vec<String> = store
        .search_lexical(&SearchQuery::new("garden"))
        .unwrap()
        .results
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(found, ["Garden.md"]);
    let again = embed(&mut store);
    assert_eq!(
        (again.embedded, again.documents_embedded, again.removed),
        (0, 1, 0),
        "{again:?}"
    );
}

/// A root that becomes an Obsidian vault (an `.obsidian/` folder made) titles its notes by
/// file name: the next pass records every document again though no file changed, and
/// the pass after it reads nothing; removing the folder does the same the other way.
#[test]
fn a_root_that_becomes_a_vault_is_recorded_again_with_file_name_titles() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "kitchen-notes.md", b"# Real Title\n\nbody\n");
    write(&root, "b.md", b"# B\n");
    let db = root.join(".folio/index.db");
    let pass = || index_root(&root, &Config::default(), &db, false, None).unwrap();
    let titles = || -> Vec<Option<String>> {
        Store::open(&db)
            .unwrap()
            .catalog()
            .unwrap()
            .into_iter()
            .map(|c| c.title)
            .collect()
    };
    assert_eq!(pass().indexed, 2);
    assert_eq!(
        titles(),
        [Some("B".to_owned()), Some("Real Title".to_owned())]
    );
    std::fs::create_dir(root.join(".obsidian")).unwrap();
    let again = pass();
    assert_eq!((again.indexed, again.unchanged), (2, 0));
    assert_eq!(
        titles(),
        [Some("b".to_owned()), Some("kitchen-notes".to_owned())]
    );
    let third = pass();
    assert_eq!((third.indexed, third.unchanged), (0, 2));
    std::fs::remove_dir(root.join(".obsidian")).unwrap();
    assert_eq!(pass().indexed, 2);
    assert_eq!(
        titles(),
        [Some("B".to_owned()), Some("Real Title".to_owned())]
    );
}

/// The paths the index holds, with each one's format.
fn formats(db: &Path) -> Vec<(String, Option<String>)> {
    let store = Store::open(db).unwrap();
    let mut rows: Vec<(String, Option<String>)> = store
        .conn()
        .prepare("SELECT path, format FROM documents ORDER BY path")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.sort();
    rows
}

#[test]
fn enabled_parsers_decide_which_other_documents_are_indexed_and_a_narrower_list_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "a.md", b"# A\n\nA note.\n");
    write(&root, "notes.txt", b"Plain words about heliotrope.\n");
    write(&root, "data.csv", b"name,qty\nnarwhal lamp,4\n");
    write(
        &root,
        "src/lib.rs",
        b"/// Counts.\npub fn count() -> u32 {\n    1\n}\n",
    );
    // A folder with a registered extension is no document; a link to one is named, never
    // followed.
    std::fs::create_dir_all(root.join("v1.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("notes.txt"), root.join("linked.txt")).unwrap();
    let db = root.join(".folio/index.db");
    let mut config = Config::default();

    let first = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!((first.files, first.indexed), (3, 3));
    assert_eq!(
        first.skipped,
        vec![Skipped {
            path: "linked.txt".into(),
            reason: crate::workspace::SkipReason::Symlink,
        }]
    );
    assert_eq!(
        formats(&db),
        vec![
            ("a.md".to_string(), None),
            ("data.csv".to_string(), Some("csv".to_string())),
            ("notes.txt".to_string(), Some("text".to_string())),
        ]
    );

    config.parsers.enabled.push("rs".into());
    let second = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!(
        (second.indexed, second.unchanged, second.removed),
        (1, 3, 0)
    );
    let code = Store::open(&db).unwrap().chunks_of("src/lib.rs").unwrap();
    assert_eq!(
        code.iter()
            .map(|c| (c.start_line, c.end_line, c.citation.clone()))
            .collect::<Vec<_>>(),
        vec![(
            1,
            4,
            crate::store::Citation {
                page: None,
                symbol_kind: Some("function_item".into()),
                symbol: Some("count".into()),
            }
        )]
    );

    config.parsers.enabled = vec!["csv".into()];
    let third = index_root(&root, &config, &db, false, None).unwrap();
    assert_eq!((third.files, third.removed), (2, 2));
    assert_eq!(
        formats(&db),
        vec![
            ("a.md".to_string(), None),
            ("data.csv".to_string(), Some("csv".to_string())),
        ]
    );
}

#[test]
fn a_document_whose_text_cannot_be_extracted_is_skipped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "a.md", b"# A\n\nA note.\n");
    write(&root, "broken.pdf", b"%PDF-1.7\nnot really a pdf");
    let db = root.join(".folio/index.db");
    let summary = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!(summary.indexed, 1);
    assert_eq!(summary.skipped.len(), 1);
    assert_eq!(summary.skipped[0].path, "broken.pdf");
    assert!(
        matches!(&summary.skipped[0].reason, crate::workspace::SkipReason::NotExtracted { message } if message.starts_with("not a readable pdf file")),
        "{:?}",
        summary.skipped[0].reason
    );
    // The failure is recorded by the hash of the bytes: the next pass does not extract
    // them again (the recorded reason, changed here, is what it reports).
    let recorded = Store::open(&db).unwrap().unextracted().unwrap();
    let hash = extracted::source_hash(b"%PDF-1.7\nnot really a pdf");
    assert_eq!(recorded["broken.pdf"].0, hash);
    Store::open(&db)
        .unwrap()
        .conn()
        .execute("UPDATE unextracted SET reason = 'recorded'", [])
        .unwrap();
    let again = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!(
        again.skipped[0].reason,
        crate::workspace::SkipReason::NotExtracted {
            message: "recorded".into()
        }
    );
    // Other budgets try it again.
    let mut roomier = Config::default();
    roomier.parsers.time_budget_ms = 60_000;
    let retried = index_root(&root, &roomier, &db, false, None).unwrap();
    assert!(
        matches!(&retried.skipped[0].reason, crate::workspace::SkipReason::NotExtracted { message } if message.starts_with("not a readable pdf file"))
    );
    // New bytes are extracted again; a readable document leaves the record.
    write(&root, "broken.pdf", b"%PDF-1.7\nstill not a pdf");
    let changed = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert!(
        matches!(&changed.skipped[0].reason, crate::workspace::SkipReason::NotExtracted { message } if message.starts_with("not a readable pdf file"))
    );
    std::fs::remove_file(root.join("broken.pdf")).unwrap();
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert!(Store::open(&db).unwrap().unextracted().unwrap().is_empty());
}

/// Notes chunked under an older chunking rule, or another `chunk_bytes`, are chunked
/// again by the next pass; the pass after it reads nothing again.
#[test]
fn notes_chunked_under_another_rule_or_budget_are_chunked_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    corpus(&root);
    let db = dir.path().join("index.db");
    let rule = |store: &Store| store.meta(crate::store::schema::CHUNK_RULE).unwrap();
    let first = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((first.indexed, first.unchanged), (4, 0));
    assert_eq!(rule(&Store::open(&db).unwrap()).as_deref(), Some("2:1500"));
    let again = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((again.indexed, again.unchanged), (0, 4));
    // As an index built before tables were cut between rows records it.
    {
        let mut store = Store::open(&db).unwrap();
        let mut batch = store.batch().unwrap();
        batch
            .set_meta(crate::store::schema::CHUNK_RULE, "1:1500")
            .unwrap();
        batch.commit().unwrap();
    }
    let rechunked = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!((rechunked.indexed, rechunked.unchanged), (4, 0));
    let mut smaller = Config::default();
    smaller.index.chunk_bytes = 200;
    let resized = index_root(&root, &smaller, &db, false, None).unwrap();
    assert_eq!((resized.indexed, resized.unchanged), (4, 0));
    assert_eq!(rule(&Store::open(&db).unwrap()).as_deref(), Some("2:200"));
    let settled = index_root(&root, &smaller, &db, false, None).unwrap();
    assert_eq!((settled.indexed, settled.unchanged), (0, 4));
}
