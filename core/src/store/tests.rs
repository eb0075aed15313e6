//! Tests of the store: schema, batches, persistence, rebuild and no-op writes.

use super::*;
use crate::search::SearchQuery;

/// A document at `path` with a source hash derived from `texts`, its category
/// and topic taken from the first one and two folders.
pub(crate) fn doc(path: &str, texts: &[&str]) -> DocRecord {
    let folders: Vec<&str> = path.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    DocRecord {
        path: path.to_owned(),
        source_hash: format!(
            "{:016x}",
            xxhash_rust::xxh64::xxh64(texts.concat().as_bytes(), 0)
        ),
        size: texts.iter().map(|t| t.len() as u64).sum(),
        mtime_ms: 1_700_000_000_000,
        title: None,
        category: folders.first().map(|f| f.to_string()),
        topic: (folders.len() >= 2).then(|| folders[..2].join("/")),
        tags: Vec::new(),
        date: None,
        frontmatter_json: None,
        quality: 1.0,
        format: None,
        frontmatter_error: None,
    }
}

/// A chunk numbered `seq` under `headings`, spanning lines `10 * seq + 1` to
/// `10 * seq + 3`.
pub(crate) fn chunk(seq: u32, headings: &[&str], text: &str) -> ChunkRecord {
    ChunkRecord {
        seq,
        pointer: format!("{}~{:016x}~{:016x}", seq + 1, seq, seq),
        heading_path: headings.iter().map(|h| h.to_string()).collect(),
        start_line: 10 * seq + 1,
        end_line: 10 * seq + 3,
        text: text.to_owned(),
        citation: Default::default(),
    }
}

/// Upserts each `(path, chunk texts)` as one document in one batch.
pub(crate) fn index(store: &mut Store, docs: &[(&str, &[&str])]) {
    let mut batch = store.batch().expect("batch");
    for (path, texts) in docs {
        let chunks: Vec<ChunkRecord> = texts
            .iter()
            .enumerate()
            .map(|(idx, text)| chunk(idx as u32, &[], text))
            .collect();
        batch
            .upsert_document(&doc(path, texts), &chunks)
            .expect("upsert");
    }
    batch.commit().expect("commit");
}

/// The paths of the hits for `text`, best first.
pub(crate) fn search_paths(store: &Store, text: &str) -> Vec<String> {
    store
        .search_lexical(&SearchQuery::new(text))
        .expect("search")
        .results
        .into_iter()
        .map(|hit| hit.path)
        .collect()
}

fn n_fts_rows(store: &Store) -> i64 {
    store
        .conn()
        .query_row("SELECT count(*) FROM chunks_fts", [], |row| row.get(0))
        .expect("count")
}

fn data_version(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0))
        .expect("data_version")
}

#[test]
fn open_creates_folder_and_gitignore() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    let store = Store::open(&db_path).expect("open");
    assert!(!store.was_rebuilt());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".folio/.gitignore")).expect("read"),
        "*\n"
    );
    let mode: String = store
        .conn()
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("mode");
    assert_eq!(mode, "wal");
    drop(store);

    // An existing .gitignore is left as it is.
    std::fs::write(dir.path().join(".folio/.gitignore"), "custom\n").expect("write");
    Store::open(&db_path).expect("reopen");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".folio/.gitignore")).expect("read"),
        "custom\n"
    );
}

#[test]
fn documents_and_status() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[("a.md", &["one", "two"]), ("b/c.md", &["three"])],
    );
    let docs = store.documents().expect("documents");
    let mut listed: Vec<(String, String)> = docs.into_iter().collect();
    listed.sort();
    assert_eq!(
        listed,
        vec![
            ("a.md".to_owned(), doc("a.md", &["one", "two"]).source_hash),
            ("b/c.md".to_owned(), doc("b/c.md", &["three"]).source_hash),
        ]
    );
    let status = store.status().expect("status");
    assert_eq!(
        (status.n_documents, status.n_chunks, status.schema_version),
        (2, 3, SCHEMA_VERSION)
    );
    assert!(status.db_size_bytes > 0);
    assert_eq!(n_fts_rows(&store), 3);
}

#[test]
fn upsert_replaces_old_chunks() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[
            ("a.md", &["alpha words", "more alpha"]),
            ("b.md", &["alpha elsewhere"]),
        ],
    );
    assert_eq!(search_paths(&store, "alpha"), vec!["a.md", "a.md", "b.md"]);
    index(&mut store, &[("a.md", &["beta words"])]);
    assert_eq!(search_paths(&store, "alpha"), vec!["b.md"]);
    assert_eq!(search_paths(&store, "beta"), vec!["a.md"]);
    assert_eq!(store.status().expect("status").n_chunks, 2);
    assert_eq!(n_fts_rows(&store), 2);
}

#[test]
fn remove_document_removes_chunks_and_fts_rows() {
    let mut store = Store::open_in_memory().expect("open");
    index(
        &mut store,
        &[("a.md", &["gamma one", "gamma two"]), ("b.md", &["delta"])],
    );
    assert_eq!(n_fts_rows(&store), 3);
    let mut batch = store.batch().expect("batch");
    assert!(batch.remove_document("a.md").expect("remove"));
    assert!(!batch.remove_document("missing.md").expect("remove missing"));
    batch.commit().expect("commit");
    assert_eq!(search_paths(&store, "gamma"), Vec::<String>::new());
    assert_eq!(n_fts_rows(&store), 1);
    let status = store.status().expect("status");
    assert_eq!((status.n_documents, status.n_chunks), (1, 1));
}

#[test]
fn dropped_batch_rolls_back() {
    let mut store = Store::open_in_memory().expect("open");
    {
        let mut batch = store.batch().expect("batch");
        batch
            .upsert_document(&doc("a.md", &["x"]), &[chunk(0, &[], "epsilon")])
            .expect("upsert");
    }
    assert_eq!(store.status().expect("status").n_documents, 0);
    assert_eq!(search_paths(&store, "epsilon"), Vec::<String>::new());
}

#[test]
fn persistence_across_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    let query = SearchQuery::new("persist");
    let before = {
        let mut store = Store::open(&db_path).expect("open");
        index(
            &mut store,
            &[
                ("a.md", &["persist me", "other"]),
                ("b.md", &["persist persist"]),
            ],
        );
        store.search_lexical(&query).expect("search")
    };
    let store = Store::open(&db_path).expect("reopen");
    assert!(!store.was_rebuilt());
    let after = store.search_lexical(&query).expect("search");
    assert_eq!(after, before);
    assert_eq!(
        after
            .results
            .iter()
            .map(|h| h.path.as_str())
            .collect::<Vec<_>>(),
        vec!["b.md", "a.md"]
    );
    assert_eq!(store.documents().expect("documents").len(), 2);
}

#[test]
fn schema_version_mismatch_rebuilds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    {
        let mut store = Store::open(&db_path).expect("open");
        index(&mut store, &[("a.md", &["zeta"])]);
    }
    {
        let conn = Connection::open(&db_path).expect("raw open");
        conn.execute(
            "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
            [],
        )
        .expect("update");
    }
    let store = Store::open(&db_path).expect("reopen");
    assert!(store.was_rebuilt());
    let status = store.status().expect("status");
    assert_eq!((status.n_documents, status.n_chunks), (0, 0));
    assert_eq!(n_fts_rows(&store), 0);
    assert_eq!(search_paths(&store, "zeta"), Vec::<String>::new());
    drop(store);

    // The rebuilt file is current: opening it again is not a rebuild.
    assert!(!Store::open(&db_path).expect("reopen").was_rebuilt());
}

#[test]
fn unreadable_version_and_foreign_schema_rebuild() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".folio")).expect("mkdir");
    let db_path = dir.path().join(".folio/index.db");
    {
        let conn = Connection::open(&db_path).expect("raw open");
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT, value TEXT);
             INSERT INTO meta VALUES ('schema_version', 'not a number');
             CREATE TABLE documents (id INTEGER PRIMARY KEY, stuff TEXT);
             CREATE VIRTUAL TABLE old_fts USING fts5(a);",
        )
        .expect("old schema");
    }
    let store = Store::open(&db_path).expect("open");
    assert!(store.was_rebuilt());
    let names: Vec<String> = store
        .conn()
        .prepare("SELECT name FROM sqlite_schema WHERE name LIKE 'old_fts%'")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(names, Vec::<String>::new());
    assert_eq!(store.status().expect("status").n_documents, 0);

    // A table without `meta` in folio's own folder is a foreign schema, rebuilt too.
    let other_path = dir.path().join(".folio/other.db");
    Connection::open(&other_path)
        .expect("raw open")
        .execute_batch("CREATE TABLE x (y)")
        .expect("create");
    assert!(Store::open(&other_path).expect("open").was_rebuilt());
}

#[test]
fn garbage_file_is_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".folio")).expect("mkdir");
    let db_path = dir.path().join(".folio/index.db");
    std::fs::write(&db_path, vec![0x42u8; 8192]).expect("write");
    let mut store = Store::open(&db_path).expect("open");
    assert!(store.was_rebuilt());
    index(&mut store, &[("a.md", &["theta"])]);
    assert_eq!(search_paths(&store, "theta"), vec!["a.md"]);
}

#[test]
fn files_outside_folio_folders_that_are_not_indexes_are_never_overwritten() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A user's note given as the database.
    let note = dir.path().join("precious.md");
    std::fs::write(&note, "# Precious\n\nDo not lose me.\n").expect("write");
    assert!(matches!(Store::open(&note), Err(StoreError::NotAnIndex(p)) if p == note));
    assert_eq!(
        std::fs::read_to_string(&note).expect("read"),
        "# Precious\n\nDo not lose me.\n"
    );
    // Another application's SQLite database keeps its tables.
    let app = dir.path().join("app.sqlite");
    Connection::open(&app)
        .expect("raw open")
        .execute_batch("CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('ada');")
        .expect("create");
    assert!(matches!(Store::open(&app), Err(StoreError::NotAnIndex(_))));
    let n: i64 = Connection::open(&app)
        .expect("raw open")
        .query_row("SELECT count(*) FROM customers", [], |row| row.get(0))
        .expect("customers survive");
    assert_eq!(n, 1);
    // A folder is not a database either.
    assert!(matches!(
        Store::open(dir.path()),
        Err(StoreError::NotAnIndex(_))
    ));
    // A new file outside `.folio/` works, is marked as folio's, and gets no `.gitignore` beside it.
    let custom = dir.path().join("custom.db");
    let store = Store::open(&custom).expect("new index");
    let id: i32 = store
        .conn()
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .expect("id");
    assert_eq!(id, schema::APPLICATION_ID);
    drop(store);
    assert!(!dir.path().join(".gitignore").exists());
    assert!(!Store::open(&custom).expect("reopen").was_rebuilt());
}

#[test]
fn reopen_and_empty_batch_write_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    {
        let mut store = Store::open(&db_path).expect("open");
        index(&mut store, &[("a.md", &["iota"])]);
    }
    let bytes_before = std::fs::read(&db_path).expect("read");
    {
        let observer = Connection::open(&db_path).expect("observer");
        let version_before = data_version(&observer);
        let mut store = Store::open(&db_path).expect("reopen");
        assert_eq!(store.conn().total_changes(), 0);
        store.batch().expect("batch").commit().expect("commit");
        store.documents().expect("documents");
        store.status().expect("status");
        assert_eq!(search_paths(&store, "iota"), vec!["a.md"]);
        assert_eq!(store.conn().total_changes(), 0);
        assert_eq!(data_version(&observer), version_before);

        // The observer does see a real write, so the check above means something.
        index(&mut store, &[("b.md", &["kappa"])]);
        assert_ne!(data_version(&observer), version_before);
    }
    {
        let store = Store::open(&db_path).expect("reopen");
        drop(store);
    }
    let bytes_after_write = std::fs::read(&db_path).expect("read");
    assert_ne!(bytes_after_write, bytes_before);
    {
        let mut store = Store::open(&db_path).expect("reopen");
        store.batch().expect("batch").commit().expect("commit");
    }
    assert_eq!(std::fs::read(&db_path).expect("read"), bytes_after_write);
}

#[test]
fn a_version_8_index_gains_the_citation_columns_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("index.db");
    let mut store = Store::open(&db).unwrap();
    index(&mut store, &[("a.md", &["kept words"])]);
    // As version 8 wrote it: no format or citation columns.
    store
        .conn()
        .execute_batch(
            "ALTER TABLE documents DROP COLUMN format;
             ALTER TABLE chunks DROP COLUMN page;
             ALTER TABLE chunks DROP COLUMN symbol_kind;
             ALTER TABLE chunks DROP COLUMN symbol;
             UPDATE meta SET value = '8' WHERE key = 'schema_version';",
        )
        .unwrap();
    drop(store);
    let store = Store::open(&db).unwrap();
    assert!(!store.was_rebuilt());
    assert_eq!(store.status().unwrap().schema_version, SCHEMA_VERSION);
    assert_eq!(search_paths(&store, "kept"), vec!["a.md"]);
    let chunks = store.chunks_of("a.md").unwrap();
    assert_eq!(chunks[0].citation, Citation::default());
    // Every document is recorded again, to read its frontmatter's errors.
    assert_eq!(
        store.meta(schema::RECORD_AGAIN).unwrap().as_deref(),
        Some("8")
    );
}

/// A new index opened while another connection is about to write the new file (two
/// processes, or a pass and a search, opening a new index together): changing the file
/// to WAL cannot happen meanwhile, and SQLite answers "database is locked" at once
/// instead of waiting; the open waits for the other connection and the index is in WAL
/// mode.
#[test]
fn a_new_index_opened_while_another_connection_writes_waits_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    std::fs::write(&db, b"").expect("an empty file, as a first open leaves it");
    let writer = Connection::open(&db).expect("writer");
    writer
        .execute_batch("BEGIN IMMEDIATE")
        .expect("a write transaction holds the file's reserved lock");
    let released = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        writer.execute_batch("COMMIT").expect("end the write");
    });
    let store = Store::open(&db).expect("the open waits for the writer");
    released.join().expect("writer thread");
    let mode: String = store
        .conn()
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("journal mode");
    assert_eq!(mode, "wal");
}
