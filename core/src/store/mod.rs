//! The SQLite index: documents, chunks and their FTS5 table.
//!
//! The index lives at `<root>/.folio/index.db` (WAL mode, 5 s busy timeout).
//! It is derived data: a file with another or an unreadable schema version is
//! dropped and rebuilt, never half-read, and [`Store::was_rebuilt`] says so.
//! Only this module opens the database.
//!
//! Writes go through a [`Batch`], one transaction per batch:
//!
//! ```no_run
//! # use folio_core::store::{Store, DocRecord, ChunkRecord, StoreError};
//! # fn f(doc: &DocRecord, chunks: &[ChunkRecord]) -> Result<(), StoreError> {
//! let mut store = Store::open(std::path::Path::new("kb/.folio/index.db"))?;
//! let mut batch = store.batch()?;
//! batch.upsert_document(doc, chunks)?;
//! batch.remove_document("old/note.md")?;
//! batch.commit()?;
//! # Ok(()) }
//! ```
//!
//! Incremental indexing is the caller's job: compare [`Store::documents`] with
//! the files' hashes and upsert only what changed.
//! Opening an up-to-date store and committing an empty batch write nothing.

mod catalog;
pub mod cjk;
mod file_identity;
mod fts_analyser;
pub mod functions;
pub mod japanese;
pub mod lexical;
pub(crate) mod schema;
pub mod synonyms;
pub mod vectors;
pub mod writing_system;

pub use catalog::CatalogEntry;
pub(crate) use file_identity::FileIdentity;
pub use vectors::{PendingChunk, PendingDocument, VectorModel, VectorStatus};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};

use lexical::{Lexical, has_kana};

pub use schema::{APPLICATION_ID, SCHEMA_VERSION};

/// How long a connection waits for another one's lock before SQLite answers
/// `SQLITE_BUSY` ("database is locked"): its busy timeout, and the time [`enter_wal`]
/// tries for.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often [`enter_wal`] tries again.
const WAL_RETRY_INTERVAL: Duration = Duration::from_millis(10);

/// Puts the database in WAL mode (SQLite's write-ahead log: readers never wait for the
/// writer). On a database already in WAL mode this writes nothing.
///
/// A new index starts in rollback-journal mode, and changing that writes the file:
/// when another connection holds the file for writing meanwhile (two processes, or a
/// pass and a search, opening a new index together, each changing it to WAL), the
/// change would wait while holding a read lock, so SQLite answers `SQLITE_BUSY` at once
/// instead of calling the busy handler (its deadlock rule,
/// <https://www.sqlite.org/c3ref/busy_handler.html>). So the change is tried again
/// every [`WAL_RETRY_INTERVAL`] until [`BUSY_TIMEOUT`] has passed.
///
/// Errors: SQLite's; `SQLITE_BUSY` once the timeout has passed.
fn enter_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        }) {
            Err(rusqlite::Error::SqliteFailure(err, _))
                if err.code == rusqlite::ErrorCode::DatabaseBusy && Instant::now() < deadline =>
            {
                std::thread::sleep(WAL_RETRY_INTERVAL);
            }
            other => return other.map(|_mode| ()),
        }
    }
}

/// The separator between headings in the stored `heading_path` column.
pub const HEADING_PATH_SEPARATOR: &str = " > ";

/// The version of the text given to the embedder for chunks ([`embedding_text`]) and
/// whole documents (`Store::documents_lacking_vectors`).
///
/// The index records the version its chunk hashes and vectors were made with (`meta`
/// key `embedding_text`; an index without it was written by a folio of version 1). When
/// an index holding another version is opened, every chunk's `content_hash` is computed
/// again and every vector is dropped, so the next embedding pass embeds everything again
/// instead of mixing vectors of two texts (`vectors::ensure_embedding_text`).
/// Bump it with any change to either text.
///
/// Version 1: a chunk is its heading path, a blank line and its Markdown; a document is
/// its title and its chunks' Markdown.
pub const EMBEDDING_TEXT_VERSION: u32 = 1;

/// The text an embedder is given for a chunk: its heading path (headings
/// joined with [`HEADING_PATH_SEPARATOR`], as stored), a blank line, then the
/// chunk's Markdown text; just the text when the chunk has no heading.
///
/// `chunks.content_hash` is the XxHash64 of exactly this text, so vectors are
/// keyed by what was embedded. Changing it means bumping [`EMBEDDING_TEXT_VERSION`].
pub fn embedding_text(heading_path: &str, text: &str) -> String {
    if heading_path.is_empty() {
        text.to_owned()
    } else {
        format!("{heading_path}\n\n{text}")
    }
}

/// The `content_hash` of a chunk: XxHash64 of [`embedding_text`], 16 lowercase
/// hex digits.
pub fn chunk_content_hash(heading_path: &str, text: &str) -> String {
    format!(
        "{:016x}",
        xxhash_rust::xxh64::xxh64(embedding_text(heading_path, text).as_bytes(), 0)
    )
}

/// A failure of the index store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("index database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Reading or writing a file next to the database failed.
    #[error("index file error at {path}: {source}")]
    Io {
        /// The file or folder the operation was about.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A record handed to the store cannot be stored as given.
    #[error("invalid index record: {0}")]
    InvalidRecord(String),
    /// The file exists and is not a folio index; folio refuses to overwrite it.
    #[error(
        "`{0}` is not a folio index (another file or database is there); refusing to overwrite it"
    )]
    NotAnIndex(PathBuf),
}

/// One Markdown document as the indexer hands it to the store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocRecord {
    /// KB-relative path, `/`-separated, exactly as the workspace spells it.
    pub path: String,
    /// XxHash64 of the file's bytes, 16 lowercase hex digits.
    pub source_hash: String,
    /// File size in bytes.
    pub size: u64,
    /// Modification time in milliseconds since the Unix epoch.
    pub mtime_ms: i64,
    /// Document title (first heading or frontmatter `title`).
    pub title: Option<String>,
    /// First folder of the path, or the frontmatter `category`.
    pub category: Option<String>,
    /// First two folders of the path (`a/b`), or the frontmatter `topic`.
    pub topic: Option<String>,
    /// Tags, each once: the frontmatter's, then the text's `#tag`s ([`crate::parse::Tag`]).
    /// Search filters match them exactly (case-sensitive), nested tags included.
    pub tags: Vec<String>,
    /// Frontmatter date, `YYYY-MM-DD`.
    pub date: Option<String>,
    /// The frontmatter as a JSON object, if the document has one.
    pub frontmatter_json: Option<String>,
    /// Quality score in `[0, 1]` (see `index::quality_score`); stubs score low.
    pub quality: f64,
    /// The document's format when it is not Markdown ([`crate::formats::Format::name`]).
    pub format: Option<String>,
    /// Why the note's frontmatter did not parse ([`crate::parse::Parsed::frontmatter_problem`]).
    pub frontmatter_error: Option<String>,
}

/// One search unit of a document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkRecord {
    /// Position of the chunk in its document, from 0.
    pub seq: u32,
    /// The pointer of the chunk's first element: `logical~selfHash~subtreeHash`.
    pub pointer: String,
    /// The headings enclosing the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The chunk's original Markdown text (another format's: its extracted text).
    pub text: String,
    /// Where the chunk is in a document other than Markdown (empty for Markdown).
    pub citation: Citation,
}

/// What cites a chunk of a document other than Markdown beyond its lines
/// ([`crate::formats`]): its PDF page, its source-code definition. All absent for
/// Markdown, and serialized only when present.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Citation {
    /// The PDF page the chunk is on, 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// The kind of source-code definition the chunk holds, as the language's tree-sitter grammar names it (`function_item`, `class_definition`, `method_declaration`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol_kind: Option<String>,
    /// The name of that definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// A [`ChunkRecord`] from a row whose first nine columns are `seq, pointer,
/// heading_path, start_line, end_line, text, page, symbol_kind, symbol`.
pub(crate) fn chunk_record(row: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkRecord> {
    let heading: String = row.get(2)?;
    Ok(ChunkRecord {
        seq: row.get(0)?,
        pointer: row.get(1)?,
        heading_path: if heading.is_empty() {
            Vec::new()
        } else {
            heading
                .split(HEADING_PATH_SEPARATOR)
                .map(str::to_string)
                .collect()
        },
        start_line: row.get(3)?,
        end_line: row.get(4)?,
        text: row.get(5)?,
        citation: Citation {
            page: row.get(6)?,
            symbol_kind: row.get(7)?,
            symbol: row.get(8)?,
        },
    })
}

/// A `meta` value of the index, if set (on any connection or transaction).
pub(crate) fn meta_in(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| {
        row.get(0)
    })
    .optional()
}

/// Sets a `meta` value of the index (on any connection or transaction).
pub(crate) fn set_meta_in(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

/// Counts and sizes reported by [`Store::status`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreStatus {
    /// Number of indexed documents.
    pub n_documents: u64,
    /// Number of indexed chunks.
    pub n_chunks: u64,
    /// Size of the main database in bytes (page count × page size; the WAL
    /// file is not included).
    pub db_size_bytes: u64,
    /// The schema version of the open database.
    pub schema_version: u32,
    /// How Japanese text is matched ([`lexical::Lexical::matching_id`]): `ipadic-words-3`,
    /// or `bigrams-2` without the dictionary or when it failed to load.
    pub lexical_analyser: &'static str,
    /// Why Japanese text is matched on character bigrams rather than words
    /// ([`lexical::Lexical::bigrams_reason`]); `None` when it is analysed into words.
    pub japanese_fallback: Option<String>,
    /// Why lexical queries are not widened with synonyms ([`synonyms`]): the dictionary
    /// is not installed, has the wrong size or does not load; `None` when it is in use.
    pub synonyms_missing: Option<String>,
}

/// An open index database.
///
/// A `Store` holds one SQLite connection; it is `Send` but not `Sync`.
/// Two processes may open the same file: SQLite's locking and short
/// transactions keep it consistent.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    db_path: Option<PathBuf>,
    rebuilt: bool,
    lexical: Lexical,
    /// The dictionary that widens lexical queries: the installed one for a store on a
    /// file, none for an in-memory store.
    synonyms: Option<Arc<synonyms::SynonymDictionary>>,
    /// The in-memory copy of the chunk vectors the vector leg scans, shared by every
    /// store of the same file in this process (`vectors::scan`).
    vector_copy: vectors::CopySlot,
    /// The file this store opened, when it is one (part of the copy's key).
    file: Option<FileIdentity>,
}

impl Store {
    /// Opens or creates the index at `db_path` (normally
    /// `<root>/.folio/index.db`).
    ///
    /// Creates the parent folder if missing and writes a `.gitignore`
    /// containing `*` into it if absent.
    /// A database with another or an unreadable schema version is dropped and
    /// rebuilt; a file that is not a SQLite database at all is deleted and
    /// created again. Both set [`Store::was_rebuilt`].
    ///
    /// Text is analysed with [`Lexical::from_environment`] (IPADIC words for Japanese
    /// when the dictionary is installed); an index written by the other analyser has its
    /// full-text table written again ([`Store::open_with_lexical`]).
    pub fn open(db_path: &Path) -> Result<Store, StoreError> {
        Self::open_with_lexical(db_path, Lexical::from_environment())
    }

    /// [`Store::open`] with the given analyser. When the index records another one
    /// (`meta` key [`lexical::LEXICAL_KEY`]) or none, every chunk's full-text row is
    /// written again from the `chunks` and `documents` tables with `lexical`, in one
    /// transaction, so the index never mixes two analysers; vectors are kept.
    pub fn open_with_lexical(db_path: &Path, lexical: Lexical) -> Result<Store, StoreError> {
        vectors::register_sqlite_vec();
        let owned_folder = is_folio_folder(db_path);
        if let Some(parent) = db_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::workspace::prepare_state_dir(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        if let Ok(meta) = std::fs::metadata(db_path)
            && !meta.is_file()
        {
            return Err(StoreError::NotAnIndex(db_path.to_path_buf()));
        }
        match Self::open_file(db_path, owned_folder, lexical.clone()) {
            Err(StoreError::Sqlite(err)) if is_not_a_database(&err) && owned_folder => {
                // An unreadable file in folio's own folder is a broken index;
                // the index is derived data, so it is replaced.
                tracing::warn!(path = %db_path.display(), "index file unreadable, recreating it");
                for suffix in ["", "-wal", "-shm"] {
                    let mut name = db_path.as_os_str().to_owned();
                    name.push(suffix);
                    let path = PathBuf::from(name);
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                        Err(source) => return Err(StoreError::Io { path, source }),
                    }
                }
                let mut store = Self::open_file(db_path, owned_folder, lexical)?;
                store.rebuilt = true;
                Ok(store)
            }
            Err(StoreError::Sqlite(err)) if is_not_a_database(&err) => {
                Err(StoreError::NotAnIndex(db_path.to_path_buf()))
            }
            res => res,
        }
    }

    /// Opens a private in-memory index with [`Lexical::Bigrams`] (whatever is
    /// installed), for tests.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::open_in_memory_with_lexical(Lexical::Bigrams)
    }

    /// Opens a private in-memory index with the given analyser, for tests.
    pub fn open_in_memory_with_lexical(lexical: Lexical) -> Result<Store, StoreError> {
        vectors::register_sqlite_vec();
        let conn = Connection::open_in_memory()?;
        Self::init(conn, None, lexical)
    }

    fn open_file(
        db_path: &Path,
        owned_folder: bool,
        lexical: Lexical,
    ) -> Result<Store, StoreError> {
        // A new index is readable by its owner only (`0600`; SQLite gives its `-wal` and
        // `-shm` files the same mode): it holds the text of every note.
        let mut new_file = std::fs::OpenOptions::new();
        new_file.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut new_file, 0o600);
        match new_file.open(db_path) {
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(StoreError::Io {
                    path: db_path.to_path_buf(),
                    source,
                });
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(db_path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Refuse, before writing anything, a database folio did not create.
        if !owned_folder && schema::ownership(&conn)? == schema::Ownership::Foreign {
            return Err(StoreError::NotAnIndex(db_path.to_path_buf()));
        }
        Self::init(conn, Some(db_path.to_path_buf()), lexical)
    }

    fn init(
        mut conn: Connection,
        db_path: Option<PathBuf>,
        lexical: Lexical,
    ) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        enter_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let outcome = schema::ensure_schema(&mut conn)?;
        functions::register_functions(&conn)?;
        // Chunk hashes and vectors of another embedding text are recomputed / dropped.
        vectors::ensure_embedding_text(&mut conn)?;
        // A full-text table of another analyser is written again with this one.
        fts_analyser::ensure_lexical(&conn, &lexical)?;
        // The id that tells this file from another built at the same path (the
        // in-memory vector copy's key).
        vectors::ensure_index_id(&conn)?;
        let synonyms = db_path
            .is_some()
            .then(synonyms::SynonymDictionary::installed)
            .flatten();
        Ok(Store {
            synonyms,
            vector_copy: vectors::slot_for(db_path.as_deref()),
            file: db_path.as_deref().and_then(FileIdentity::of),
            conn,
            db_path,
            rebuilt: outcome == schema::SchemaOutcome::Rebuilt,
            lexical,
        })
    }

    /// True when opening found an incompatible or unreadable index and
    /// rebuilt it empty; the caller should then reindex everything.
    pub fn was_rebuilt(&self) -> bool {
        self.rebuilt
    }

    /// The synonyms that widen lexical queries, read on first use; `None` when no
    /// dictionary is set or it failed to load.
    pub fn synonyms(&self) -> Option<&synonyms::Synonyms> {
        self.synonyms.as_ref()?.synonyms()
    }

    /// Why lexical queries are not widened with synonyms, for status reports (the
    /// dictionary is read now if it has not been); `None` when they are.
    pub fn synonyms_missing(&self) -> Option<String> {
        match &self.synonyms {
            Some(dictionary) => dictionary.load_error(),
            None if self.db_path.is_none() => {
                Some("an in-memory index is searched without synonyms".into())
            }
            None => Some(synonyms::SynonymDictionary::missing_reason().unwrap_or_else(|| {
                "the synonym dictionary was installed after this process started; start folio again".into()
            })),
        }
    }

    /// The analyser the full-text table is written and searched with.
    pub fn lexical(&self) -> &Lexical {
        &self.lexical
    }

    /// The database file, or `None` for an in-memory store.
    pub fn db_path(&self) -> Option<&Path> {
        self.db_path.as_deref()
    }

    /// A `meta` value, if set.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(meta_in(&self.conn, key)?)
    }

    /// The indexed documents: KB-relative path → source hash.
    pub fn documents(&self) -> Result<HashMap<String, String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, source_hash FROM documents")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        let mut res = HashMap::new();
        for row in rows {
            let (path, hash) = row?;
            res.insert(path, hash);
        }
        Ok(res)
    }

    /// The documents whose text could not be extracted: path → (hash of the bytes that
    /// failed, why).
    pub fn unextracted(&self) -> Result<HashMap<String, (String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, source_hash, reason FROM unextracted")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, (row.get(1)?, row.get(2)?))))?;
        Ok(rows.collect::<Result<HashMap<_, _>, _>>()?)
    }

    /// The documents other than Markdown that have no chunk (no text was found in them),
    /// sorted by path.
    pub fn documents_without_text(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.path FROM documents d WHERE d.format IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = d.id) ORDER BY d.path",
        )?;
        let rows = stmt.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The indexed documents other than Markdown, and the Markdown documents over
    /// `max_size` bytes, as `(path, format name or None for Markdown, size in bytes)`,
    /// sorted by path: what a read may not return.
    pub fn documents_to_withhold(
        &self,
        max_size: u64,
    ) -> Result<Vec<(String, Option<String>, u64)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, format, size FROM documents WHERE format IS NOT NULL OR size > ?1 ORDER BY path",
        )?;
        let rows = stmt.query_map([max_size as i64], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get::<_, i64>(2)?.max(0) as u64,
            ))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The documents whose frontmatter did not parse, as `(path, why)`, sorted by path.
    pub fn frontmatter_errors(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, frontmatter_error FROM documents WHERE frontmatter_error IS NOT NULL ORDER BY path",
        )?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The indexed chunks of `path` in order, as [`ChunkRecord`]s; empty when the path is not indexed.
    pub fn chunks_of(&self, path: &str) -> Result<Vec<ChunkRecord>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.seq, c.pointer, c.heading_path, c.start_line, c.end_line, c.text, \
             c.page, c.symbol_kind, c.symbol \
             FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path = ?1 ORDER BY c.seq",
        )?;
        let rows = stmt.query_map([path], chunk_record)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Counts of documents and chunks, database size and schema version.
    pub fn status(&self) -> Result<StoreStatus, StoreError> {
        // What it reports of the analyser is true of the table.
        self.keep_lexical()?;
        let count = |sql: &str| -> Result<u64, StoreError> {
            let n: i64 = self.conn.query_row(sql, [], |row| row.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let n_documents = count("SELECT count(*) FROM documents")?;
        let n_chunks = count("SELECT count(*) FROM chunks")?;
        let page_count = count("PRAGMA page_count")?;
        let page_size = count("PRAGMA page_size")?;
        Ok(StoreStatus {
            n_documents,
            n_chunks,
            db_size_bytes: page_count.saturating_mul(page_size),
            schema_version: SCHEMA_VERSION,
            lexical_analyser: self.lexical.matching_id(),
            japanese_fallback: self.lexical.bigrams_reason(),
            synonyms_missing: self.synonyms_missing(),
        })
    }

    /// Writes the full-text table again with this store's analyser when another process
    /// wrote it with another one since this store opened (`fts_analyser::ensure_lexical`;
    /// one `meta` read when nothing changed). Called before each lexical search and each
    /// write batch.
    ///
    /// Errors: SQLite's.
    pub fn keep_lexical(&self) -> Result<(), StoreError> {
        fts_analyser::ensure_lexical(&self.conn, &self.lexical)?;
        Ok(())
    }

    /// Starts a write batch: one `BEGIN IMMEDIATE` transaction that ends with
    /// [`Batch::commit`]; dropping the batch without committing rolls it back.
    pub fn batch(&mut self) -> Result<Batch<'_>, StoreError> {
        self.keep_lexical()?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Ok(Batch {
            tx,
            lexical: self.lexical.clone(),
        })
    }

    /// The connection, for the search module.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The slot of the in-memory vector copy this store shares, for the vector leg.
    pub(crate) fn vector_copy_slot(&self) -> &vectors::CopySlot {
        &self.vector_copy
    }

    /// The file this store opened (`None` in memory).
    pub(crate) fn file_identity(&self) -> Option<FileIdentity> {
        self.file
    }

    /// The connection, for writes outside a [`Batch`] (the vector module).
    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// A write transaction over the store; see [`Store::batch`].
#[derive(Debug)]
pub struct Batch<'a> {
    tx: Transaction<'a>,
    lexical: Lexical,
}

/// The words of a document that describe it as a whole and are not part of any
/// chunk's text: its file name without the extension (`-` and `_` read as spaces, so
/// `release-notes.md` gives `release notes`), then the frontmatter `title`, `aliases` (or
/// `alias`) and `tags` (strings or numbers), one per line, from the document's path,
/// `frontmatter_json` and `tags`. They go into the FTS `document` column of the
/// document's first chunk only, so a note is found by its file name, title, alias or tag
/// (landing on its beginning) even when no heading or paragraph repeats them, without
/// every chunk of a long note matching.
fn document_terms(path: &str, frontmatter_json: Option<&str>, tags: &[String]) -> String {
    let mut terms: Vec<String> = vec![crate::parse::file_title(path).replace(['-', '_'], " ")];
    if let Some(fm) =
        frontmatter_json.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
    {
        terms.extend(crate::parse::frontmatter_strings(
            &fm,
            &["title", "aliases", "alias"],
        ));
    }
    terms.extend(tags.iter().cloned());
    terms.retain(|t| !t.trim().is_empty());
    terms.join("\n")
}

/// Writes the FTS rows of every chunk from the `chunks` and `documents` tables (the
/// full-text table must be empty): what a schema migration does instead of parsing
/// every file again, and what opening an index written by another analyser does
/// (`fts_analyser`). Returns the rows written.
pub(crate) fn fill_fts(conn: &Connection, lexical: &Lexical) -> rusqlite::Result<usize> {
    let mut select = conn.prepare(
        "SELECT c.id, c.seq, c.heading_path, c.text, d.frontmatter_json, d.tags_json, d.path
         FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.doc_id, c.seq",
    )?;
    let mut insert = conn.prepare(INSERT_FTS)?;
    let mut rows = select.query([])?;
    let mut n = 0;
    while let Some(row) = rows.next()? {
        let seq: u32 = row.get(1)?;
        let doc_terms = if seq == 0 {
            let frontmatter: Option<String> = row.get(4)?;
            let tags: Vec<String> = row
                .get::<_, Option<String>>(5)?
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default();
            let path: String = row.get(6)?;
            document_terms(&path, frontmatter.as_deref(), &tags)
        } else {
            String::new()
        };
        let (heading_path, text): (String, String) = (row.get(2)?, row.get(3)?);
        write_fts_row(
            &mut insert,
            lexical,
            row.get(0)?,
            seq,
            &heading_path,
            &text,
            &doc_terms,
        )?;
        n += 1;
    }
    Ok(n)
}

const INSERT_FTS: &str =
    "INSERT INTO chunks_fts (rowid, heading, body, document) VALUES (?1, ?2, ?3, ?4)";

/// Writes one chunk's FTS row with [`INSERT_FTS`]: its heading path and text, and, for
/// the document's first chunk (`seq` 0), the [`document_terms`], each in NFKC
/// ([`lexical::normalize`]); every CJK run becomes tokens through `lexical`
/// ([`Lexical::fts_text`]), the three texts being Japanese when any of them has kana. The one place that decides what the full-text index holds.
fn write_fts_row(
    insert: &mut rusqlite::Statement<'_>,
    lexical: &Lexical,
    chunk_id: i64,
    seq: u32,
    heading_path: &str,
    text: &str,
    doc_terms: &str,
) -> rusqlite::Result<()> {
    let doc_terms = if seq == 0 { doc_terms } else { "" };
    let (heading_path, text, doc_terms) = (
        lexical::normalize(heading_path),
        lexical::normalize(text),
        lexical::normalize(doc_terms),
    );
    let (heading_path, text, doc_terms) =
        (heading_path.as_ref(), text.as_ref(), doc_terms.as_ref());
    let japanese = has_kana(heading_path) || has_kana(text) || has_kana(doc_terms);
    insert.execute(params![
        chunk_id,
        lexical.fts_text(heading_path, japanese).as_ref(),
        lexical.fts_text(text, japanese).as_ref(),
        lexical.fts_text(doc_terms, japanese).as_ref()
    ])?;
    Ok(())
}

impl Batch<'_> {
    /// Inserts or replaces the document at `doc.path` and replaces all of its
    /// chunks (and their FTS rows) with `chunks`.
    ///
    /// The document keeps its row id across updates.
    pub fn upsert_document(
        &mut self,
        doc: &DocRecord,
        chunks: &[ChunkRecord],
    ) -> Result<(), StoreError> {
        let size = i64::try_from(doc.size).map_err(|_| {
            StoreError::InvalidRecord(format!("size of {} is too large: {}", doc.path, doc.size))
        })?;
        let tags_json = serde_json::to_string(&doc.tags)
            .map_err(|err| StoreError::InvalidRecord(format!("tags of {}: {err}", doc.path)))?;
        self.forget_vectors_of_a_new_title(doc)?;
        let doc_id: i64 = self.tx.prepare_cached(
            "INSERT INTO documents
                 (path, source_hash, size, mtime_ms, title, category, topic, tags_json, date, frontmatter_json, quality, format, frontmatter_error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (path) DO UPDATE SET
                 source_hash = excluded.source_hash, size = excluded.size, mtime_ms = excluded.mtime_ms,
                 title = excluded.title, category = excluded.category, topic = excluded.topic,
                 tags_json = excluded.tags_json, date = excluded.date,
                 frontmatter_json = excluded.frontmatter_json, quality = excluded.quality,
                 format = excluded.format, frontmatter_error = excluded.frontmatter_error
             RETURNING id",
        )?
        .query_row(
            params![
                doc.path,
                doc.source_hash,
                size,
                doc.mtime_ms,
                doc.title,
                doc.category,
                doc.topic,
                tags_json,
                doc.date,
                doc.frontmatter_json,
                doc.quality,
                doc.format,
                doc.frontmatter_error,
            ],
            |row| row.get(0),
        )?;
        // The delete trigger removes the old chunks' FTS rows.
        self.tx
            .prepare_cached("DELETE FROM chunks WHERE doc_id = ?1")?
            .execute([doc_id])?;
        let mut insert_chunk = self.tx.prepare_cached(
            "INSERT INTO chunks (doc_id, seq, pointer, heading_path, start_line, end_line, text, content_hash, page, symbol_kind, symbol)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut insert_fts = self.tx.prepare_cached(INSERT_FTS)?;
        let doc_terms = document_terms(&doc.path, doc.frontmatter_json.as_deref(), &doc.tags);
        for chunk in chunks {
            let heading_path = chunk.heading_path.join(HEADING_PATH_SEPARATOR);
            let content_hash = chunk_content_hash(&heading_path, &chunk.text);
            insert_chunk.execute(params![
                doc_id,
                chunk.seq,
                chunk.pointer,
                heading_path,
                chunk.start_line,
                chunk.end_line,
                chunk.text,
                content_hash,
                chunk.citation.page,
                chunk.citation.symbol_kind,
                chunk.citation.symbol,
            ])?;
            let chunk_id = self.tx.last_insert_rowid();
            write_fts_row(
                &mut insert_fts,
                &self.lexical,
                chunk_id,
                chunk.seq,
                &heading_path,
                &chunk.text,
                &doc_terms,
            )?;
        }
        Ok(())
    }

    /// Deletes the whole-document vectors (every model's, the ensemble's too) of the
    /// document at `doc.path` when its text is unchanged but its title is not (a file
    /// renamed, a vault whose notes are now titled by file name): they are keyed by the
    /// text's hash, but the title is part of what was embedded, so the next embedding
    /// pass computes them again. A changed text needs nothing: its old vectors are
    /// orphans the pass removes.
    fn forget_vectors_of_a_new_title(&mut self, doc: &DocRecord) -> Result<(), StoreError> {
        let old: Option<(String, Option<String>)> = self
            .tx
            .prepare_cached("SELECT source_hash, title FROM documents WHERE path = ?1")?
            .query_row([&doc.path], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        let Some((source_hash, title)) = old else {
            return Ok(());
        };
        if source_hash != doc.source_hash || title == doc.title {
            return Ok(());
        }
        if vectors::has_table(&self.tx, vectors::DOC_VEC_TABLE)? {
            self.tx.execute(
                &format!(
                    "DELETE FROM {} WHERE rowid IN (SELECT id FROM doc_vector_keys WHERE source_hash = ?1)",
                    vectors::DOC_VEC_TABLE
                ),
                [&source_hash],
            )?;
        }
        self.tx.execute(
            "DELETE FROM doc_vector_keys WHERE source_hash = ?1",
            [&source_hash],
        )?;
        self.tx.execute(
            "DELETE FROM ensemble_doc_vectors WHERE source_hash = ?1",
            [&source_hash],
        )?;
        Ok(())
    }

    /// Removes the document at `path` with its chunks and FTS rows.
    /// Returns whether the document was indexed.
    pub fn remove_document(&mut self, path: &str) -> Result<bool, StoreError> {
        // Chunks go first so that the trigger removes their FTS rows even if
        // foreign keys were turned off on this connection.
        self.tx
            .prepare_cached(
                "DELETE FROM chunks WHERE doc_id IN (SELECT id FROM documents WHERE path = ?1)",
            )?
            .execute([path])?;
        let n = self
            .tx
            .prepare_cached("DELETE FROM documents WHERE path = ?1")?
            .execute([path])?;
        Ok(n > 0)
    }

    /// Records that the document at `path`, whose bytes hash to `source_hash`, could not
    /// be extracted, and why ([`Store::unextracted`]).
    pub fn set_unextracted(
        &mut self,
        path: &str,
        source_hash: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO unextracted (path, source_hash, reason) VALUES (?1, ?2, ?3)")?
            .execute(params![path, source_hash, reason])?;
        Ok(())
    }

    /// Forgets every recorded extraction failure but those of `keep` (the paths that
    /// failed in this pass, or were not read again).
    pub fn keep_unextracted(&mut self, keep: &[String]) -> Result<(), StoreError> {
        let keep =
            serde_json::to_string(keep).map_err(|e| StoreError::InvalidRecord(e.to_string()))?;
        self.tx.execute(
            "DELETE FROM unextracted WHERE path NOT IN (SELECT value FROM json_each(?1))",
            [keep],
        )?;
        Ok(())
    }

    /// Sets a `meta` value (e.g. `root`, the folder this index belongs to).
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        Ok(set_meta_in(&self.tx, key, value)?)
    }

    /// Removes a `meta` key (nothing when it is absent).
    pub fn delete_meta(&mut self, key: &str) -> Result<(), StoreError> {
        self.tx.execute("DELETE FROM meta WHERE key = ?1", [key])?;
        Ok(())
    }

    /// Commits every change of the batch at once.
    pub fn commit(self) -> Result<(), StoreError> {
        fts_analyser::record_fallback(&self.tx, &self.lexical)?;
        self.tx.commit()?;
        Ok(())
    }
}

/// True for errors that mean the file is not a readable SQLite database.
/// True for a database file inside folio's own folders: `<root>/.folio/` or the
/// cache layout `…/folio/<key>/`, where folio may replace a broken file.
fn is_folio_folder(db_path: &Path) -> bool {
    let parent = db_path.parent();
    parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == ".folio")
        || parent
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "folio")
}

fn is_not_a_database(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    )
}

#[cfg(test)]
mod lexical_tests;
#[cfg(test)]
pub(crate) mod tests;
