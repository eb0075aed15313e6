//! The SQLite schema of the index: creation, version check and rebuild.
//!
//! The schema is versioned by one row in `meta` (`key = 'schema_version'`).
//! A database whose version is missing, unreadable or different from
//! [`SCHEMA_VERSION`] is never read: every object in it is dropped and the
//! schema is created again, because the index is derived data. The exceptions
//! are versions 4, 5 and 6, migrated in place so that their vectors (costly to
//! compute again) are kept; such a file that cannot be migrated is rebuilt.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// The schema version this build reads and writes.
///
/// Bump it whenever a table, column, tokenizer or the text transform given to
/// FTS5 changes, so that old index files are rebuilt instead of half-read.
///
/// Version 3: `chunks.content_hash` covers the heading path and the text (the
/// exact input of the embedder), with an index on it, and `vector_keys` holds
/// the keys of the vectors in the `chunk_vectors` vec0 table.
///
/// Version 5: `chunks_fts` has a third column, `document`: the document's frontmatter
/// title, aliases and tags. A version 4 index is migrated in place (`MIGRATE_4_TO_5`),
/// keeping its vectors.
///
/// Version 6: `documents.tags_json` holds inline `#tag`s as well as frontmatter tags. A
/// version 4 or 5 index is migrated in place (`RECORD_EVERY_DOCUMENT`), keeping its vectors.
///
/// Version 7: `ensemble_doc_vectors` holds the ensemble model's whole-document vectors
/// (`store::vectors::ensemble`). A version 4, 5 or 6 index is migrated in place
/// (`MIGRATE_6_TO_7`), keeping its vectors.
///
/// Version 8: a note without a frontmatter title or an H1 is titled by its file name,
/// not by a section heading (a vault's notes always are), and the FTS `document` column
/// holds the file name. A version 4 to 7 index is migrated in place: the next index pass
/// records every document again (the `record_again` meta key); chunk vectors are kept, and the
/// whole-document vectors of documents whose title changed are computed again.
///
/// Version 9: documents other than Markdown (`crate::formats`): `documents.format` names
/// a document's format (NULL for Markdown), and `chunks.page`, `chunks.symbol_kind` and
/// `chunks.symbol` cite a chunk's PDF page and source-code definition;
/// `documents.frontmatter_error` holds why a note's frontmatter did not parse, and the
/// `unextracted` table the documents whose text could not be extracted. A version 4
/// to 8 index is migrated in place (`MIGRATE_8_TO_9`: the columns added, empty), keeping
/// its vectors; the next pass records every document again (to read its frontmatter's
/// errors) and finds the other documents as new files.
pub const SCHEMA_VERSION: u32 = 9;

/// Documents whose text could not be extracted, by the hash of the bytes that failed and
/// why (`crate::formats::ExtractError`): a pass does not extract them again until their
/// bytes change (a document that runs out of its time budget would cost that budget on
/// every pass).
macro_rules! unextracted_ddl {
    () => {
        "CREATE TABLE IF NOT EXISTS unextracted (
    path TEXT PRIMARY KEY NOT NULL,
    source_hash TEXT NOT NULL,
    reason TEXT NOT NULL
) WITHOUT ROWID;
"
    };
}

/// From version 8 (or a version 4 to 7 index migrated to 8's tables) to 9: the format and
/// citation columns, NULL in every existing row; each added only where it is missing.
const MIGRATE_8_TO_9: &[(&str, &str, &str)] = &[
    ("documents", "format", "TEXT"),
    ("documents", "frontmatter_error", "TEXT"),
    ("chunks", "page", "INTEGER"),
    ("chunks", "symbol_kind", "TEXT"),
    ("chunks", "symbol", "TEXT"),
];

/// Adds each `(table, column, type)` of `columns` that `table` does not have yet.
fn add_missing_columns(conn: &Connection, columns: &[(&str, &str, &str)]) -> rusqlite::Result<()> {
    for (table, column, kind) in columns {
        let exists: bool = conn.query_row(
            &format!("SELECT count(*) > 0 FROM pragma_table_info('{table}') WHERE name = ?1"),
            [column],
            |row| row.get(0),
        )?;
        if !exists {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
        }
    }
    Ok(())
}
/// The full-text table: per chunk, its heading path, its text, and the words describing
/// its whole document (see `Batch::upsert_document`), each CJK run replaced by the tokens
/// of the index's analyser (`store::lexical`: Japanese words or bigrams).
macro_rules! chunks_fts_ddl {
    () => {
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(
    heading,
    body,
    document,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);"
    };
}

/// From version 4 to 5: the full-text table is created again with its new column, then
/// filled from the `chunks` and `documents` tables (`fill_fts`), all in the transaction
/// that bumps the version. Chunk texts and content hashes do not change, so no vector
/// is embedded again and no file needs parsing.
const MIGRATE_4_TO_5: &str = concat!("DROP TABLE chunks_fts;\n", chunks_fts_ddl!());

/// The `meta` key that asks the next full index pass to record every document again, as
/// if each had changed (`index::index_root` reads it and deletes it when it commits).
pub(crate) const RECORD_AGAIN: &str = "record_again";

/// The `meta` key of the title rule the documents were recorded under: `vault` (an
/// Obsidian vault titles notes by file name) or `notes` (`crate::parse::Parsed::title_for`).
/// A pass under the other rule records every document again, as the titles change
/// while no file does (an `.obsidian/` folder made or removed, `[links] obsidian` set).
pub(crate) const TITLE_RULE: &str = "title_rule";

/// The `meta` key of the rule and budget the notes were chunked under:
/// `<crate::chunk::RULE_VERSION>:<[index] chunk_bytes>`. A pass under another one records
/// every note again (chunks whose text is unchanged keep their vectors); documents of
/// other formats are chunked again when they change.
pub(crate) const CHUNK_RULE: &str = "chunk_rule";

/// From any version before 8: the next index pass records every document again
/// ([`RECORD_AGAIN`], bound as `?1`), so that its tags include the inline ones (version
/// 6), its title follows the title rule and the full-text index holds its file name
/// (version 8). Source hashes stay, and with them the vectors keyed by them; chunks whose
/// text is unchanged keep their vectors.
const RECORD_EVERY_DOCUMENT: &str = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, '8')";

/// The ensemble model's whole-document vectors: `vector` is the `f32` values,
/// little-endian (`store::vectors::ensemble`).
macro_rules! ensemble_ddl {
    () => {
        "CREATE TABLE IF NOT EXISTS ensemble_doc_vectors (
    model_id TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, source_hash)
) WITHOUT ROWID;
"
    };
}

/// From version 6 to 7: the table of the ensemble model's vectors, empty (the next
/// embedding pass fills it).
const MIGRATE_6_TO_7: &str = ensemble_ddl!();

/// `PRAGMA application_id` of a folio index: the ASCII bytes `foli`.
///
/// It tells a folio index apart from any other SQLite file, so folio never
/// drops the tables of a database it did not create.
pub const APPLICATION_ID: i32 = 0x666F_6C69;

/// What an existing database file is, before anything is written to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// Empty, or marked with [`APPLICATION_ID`].
    Folio,
    /// A SQLite database with tables that folio did not create.
    Foreign,
}

/// Tells whether the database on `conn` is folio's (or empty) without writing.
pub(crate) fn ownership(conn: &Connection) -> rusqlite::Result<Ownership> {
    let id: i32 = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    if id == APPLICATION_ID || n_user_objects(conn)? == 0 {
        Ok(Ownership::Folio)
    } else {
        Ok(Ownership::Foreign)
    }
}

/// The DDL of schema version [`SCHEMA_VERSION`].
///
/// `chunks_fts` is a contentless FTS5 table (the text lives in `chunks`) whose
/// rowid is `chunks.id`; `contentless_delete=1` lets rows be deleted by rowid.
/// Its `heading` and `body` columns hold the heading path and chunk text with
/// each CJK run rewritten by the analyser (`store::lexical`).
/// The trigger keeps `chunks_fts` in step with every deletion from `chunks`,
/// including the cascade from `documents`.
///
/// `chunks.content_hash` is XxHash64 of [`crate::store::embedding_text`] (heading
/// path and text), so a chunk whose heading path or text changes gets a new
/// vector, and identical chunks share one.
/// `doc_vector_keys` maps `(model_id, documents.source_hash)` to the rowid of a
/// whole-document vector in the vec0 table `doc_vectors` (same model and
/// dimension as `chunk_vectors`, created and dropped with it).
/// `vector_keys` maps `(model_id, content_hash)` to the rowid of its vector in
/// the `chunk_vectors` vec0 table. That table is not created here: its
/// dimension is known only with the model, so `store::vectors` creates it on
/// first use and records the model id and dimension in `meta`
/// (`vector_model`, `vector_dims`).
const CREATE_SQL: &str = concat!(
    "
CREATE TABLE meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    source_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ms INTEGER NOT NULL,
    title TEXT,
    category TEXT,
    topic TEXT,
    tags_json TEXT NOT NULL DEFAULT '[]',
    date TEXT,
    frontmatter_json TEXT,
    quality REAL NOT NULL DEFAULT 1.0,
    format TEXT,
    frontmatter_error TEXT
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    pointer TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    page INTEGER,
    symbol_kind TEXT,
    symbol TEXT
);
CREATE INDEX chunks_doc_id ON chunks(doc_id, seq);
CREATE INDEX chunks_content_hash ON chunks(content_hash);
CREATE TABLE vector_keys (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    UNIQUE (model_id, content_hash)
);
CREATE TABLE doc_vector_keys (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    UNIQUE (model_id, source_hash)
);
CREATE INDEX documents_category ON documents(category);
CREATE INDEX documents_topic ON documents(topic);
",
    chunks_fts_ddl!(),
    ensemble_ddl!(),
    unextracted_ddl!(),
    "
CREATE TRIGGER chunks_after_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;
"
);

/// What [`ensure_schema`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchemaOutcome {
    /// The schema was already at [`SCHEMA_VERSION`]; nothing was written.
    Current,
    /// The database was empty and the schema was created.
    Created,
    /// The database held schema 4, 5 or 6, migrated in place (vectors kept).
    Migrated,
    /// The database held another or an unreadable schema; it was dropped and
    /// created again.
    Rebuilt,
}

/// Reads the stored schema version: `Ok(None)` when the database has no
/// `meta` table or no version row, `Ok(Some(None))` when the row is not a
/// number.
fn read_version(conn: &Connection) -> rusqlite::Result<Option<Option<u32>>> {
    let has_meta: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta')",
        [],
        |row| row.get(0),
    )?;
    if !has_meta {
        return Ok(None);
    }
    // Any failure to read the row (wrong columns, wrong type) counts as an
    // unreadable version, which leads to a rebuild.
    let value: Option<String> = conn
        .query_row(
            "SELECT CAST(value AS TEXT) FROM meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .optional()
        .unwrap_or(None);
    Ok(Some(value.and_then(|v| v.trim().parse::<u32>().ok())))
}

/// Returns the number of user objects (tables, views, triggers, indexes) in
/// the database.
fn n_user_objects(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
        [],
        |row| row.get(0),
    )
}

/// Brings the database to schema [`SCHEMA_VERSION`].
///
/// Reading the version first happens outside any write transaction, so an
/// up-to-date database is opened without writing anything.
/// Creation and rebuild run in one `BEGIN IMMEDIATE` transaction that checks
/// the version again, so two processes opening the same new file do not both
/// create the schema.
pub(crate) fn ensure_schema(conn: &mut Connection) -> rusqlite::Result<SchemaOutcome> {
    if read_version(conn)? == Some(Some(SCHEMA_VERSION)) {
        return Ok(SchemaOutcome::Current);
    }
    // `foreign_keys` cannot change inside a transaction; it is off while
    // tables are dropped so that dropping `documents` does not cascade row by
    // row into `chunks`.
    conn.pragma_update(None, "foreign_keys", false)?;
    let outcome = (|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let outcome = match read_version(&tx)? {
            Some(Some(version)) if version == SCHEMA_VERSION => return Ok(SchemaOutcome::Current),
            Some(Some(from @ (4..=8))) => {
                let migrated = (|| {
                    tx.execute_batch("SAVEPOINT migrate")?;
                    let rows = if from == 4 {
                        tx.execute_batch(MIGRATE_4_TO_5)?;
                        // Bigrams, as every version-4 index was written; the index records
                        // no analyser, so `fts_analyser::ensure_lexical` writes it again when
                        // the store's analyser is another.
                        super::fill_fts(&tx, &super::Lexical::Bigrams)?
                    } else {
                        0
                    };
                    // Every version before 9 records every document again (tags before 6,
                    // titles and file names before 8, frontmatter errors before 9).
                    tx.execute(RECORD_EVERY_DOCUMENT, [RECORD_AGAIN])?;
                    if from < 8 {
                        tx.execute_batch(MIGRATE_6_TO_7)?;
                    }
                    add_missing_columns(&tx, MIGRATE_8_TO_9)?;
                    tx.execute_batch(unextracted_ddl!())?;
                    tx.execute(
                        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                        [SCHEMA_VERSION.to_string()],
                    )?;
                    tx.execute_batch("RELEASE migrate")?;
                    Ok::<usize, rusqlite::Error>(rows)
                })();
                match migrated {
                    Ok(rows) => {
                        tx.commit()?;
                        tracing::info!(from, rows, "index migrated to schema 9; vectors kept");
                        return Ok(SchemaOutcome::Migrated);
                    }
                    Err(err) => {
                        // A damaged version 4 to 8 file (a table missing, say): rebuilt like
                        // any other unreadable schema.
                        tracing::warn!(from, %err, "migrating the index failed; rebuilding it");
                        tx.execute_batch("ROLLBACK TO migrate; RELEASE migrate")?;
                        drop_everything(&tx)?;
                        SchemaOutcome::Rebuilt
                    }
                }
            }
            None if n_user_objects(&tx)? == 0 => SchemaOutcome::Created,
            _ => {
                drop_everything(&tx)?;
                SchemaOutcome::Rebuilt
            }
        };
        tx.execute_batch(CREATE_SQL)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
            [SCHEMA_VERSION.to_string()],
        )?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()?;
        Ok(outcome)
    })();
    conn.pragma_update(None, "foreign_keys", true)?;
    outcome
}

/// Drops every user table, view, trigger and index, leaving an empty schema.
///
/// FTS5 shadow tables disappear with their virtual table, so names are read
/// again after each drop and dropped with `IF EXISTS`.
fn drop_everything(conn: &Connection) -> rusqlite::Result<()> {
    // Each round drops one object; the bound only guards against a schema
    // that reports an object a `DROP` does not remove.
    for _ in 0..10_000 {
        let next: Option<(String, String)> = conn
            .query_row(
                "SELECT type, name FROM sqlite_schema
                 WHERE name NOT LIKE 'sqlite_%' AND type IN ('trigger', 'view', 'table')
                 ORDER BY CASE type WHEN 'trigger' THEN 0 WHEN 'view' THEN 1 ELSE 2 END,
                          CASE WHEN sql LIKE 'CREATE VIRTUAL%' THEN 0 ELSE 1 END
                 LIMIT 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let Some((kind, name)) = next else {
            return Ok(());
        };
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        let sql = match kind.as_str() {
            "trigger" => format!("DROP TRIGGER IF EXISTS {quoted}"),
            "view" => format!("DROP VIEW IF EXISTS {quoted}"),
            _ => format!("DROP TABLE IF EXISTS {quoted}"),
        };
        conn.execute_batch(&sql)?;
    }
    Err(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        Some("the old index schema could not be dropped".to_owned()),
    ))
}
