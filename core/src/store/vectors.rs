//! Chunk vectors in a sqlite-vec `vec0` table.
//!
//! Vectors are keyed by `(model_id, content_hash)` in `vector_keys`, whose
//! `id` is the rowid of the vector in the `chunk_vectors` vec0 table.
//! `content_hash` is the hash of exactly the text the embedder was given
//! ([`super::embedding_text`]), so a vector is computed once per distinct
//! chunk, shared by identical chunks in several files, and recomputed only when
//! a chunk's heading path or text changes.
//!
//! The index holds the vectors of one model at a time. `chunk_vectors` is
//! created when the first model is known, since its dimension comes with the
//! model; the model id and dimension are kept in `meta` (`vector_model`,
//! `vector_dims`). [`Store::ensure_vector_model`] with another model id or
//! dimension drops and recreates the vectors only; documents, chunks and the
//! FTS table are untouched.
//!
//! Distance: the table uses sqlite-vec's `distance_metric=cosine`, so a KNN
//! `distance` is `1 − cosine similarity` (in `[0, 2]`), and search scores are
//! the cosine similarity `1 − distance`. Embedders return L2-normalised
//! vectors, for which this ordering equals the L2 ordering.
//!
//! Every write is its own short `BEGIN IMMEDIATE` transaction, so a language
//! server and an MCP server sharing the file never wait long for each other.

use std::collections::HashMap;
use std::sync::Once;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{ChunkRecord, Store, StoreError, embedding_text};

/// The largest `k` one vec0 KNN query accepts (sqlite-vec's own limit);
/// [`Store::vector_search`] clamps to it.
pub const MAX_VECTOR_K: usize = 4096;

/// The vec0 table holding the vectors.
pub(crate) const VEC_TABLE: &str = "chunk_vectors";

/// The vec0 table holding whole-document vectors.
pub(crate) const DOC_VEC_TABLE: &str = "doc_vectors";

/// Registers sqlite-vec as an SQLite auto extension, once per process, so
/// every connection opened afterwards has `vec0` and the `vec_*` functions.
pub(crate) fn register_sqlite_vec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        type EntryPoint = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::ffi::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::ffi::c_int;
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, built
        // with SQLITE_CORE against the same bundled SQLite; the crate declares it
        // without arguments, but its C signature is exactly `EntryPoint`.
        let rc = unsafe {
            let init: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init))
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::error!(
                rc,
                "registering sqlite-vec failed; semantic search will be unavailable"
            );
        }
    });
}

/// The embedding model whose vectors the index holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VectorModel {
    /// The embedder's [`crate::embed::Embedder::model_id`].
    pub model_id: String,
    /// Dimensions of every vector.
    pub dims: usize,
}

/// A distinct chunk text that has no vector yet for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChunk {
    /// XxHash64 of `text`, 16 lowercase hex digits (the chunk's `content_hash`).
    pub content_hash: String,
    /// The text to embed: [`embedding_text`] of the chunk.
    pub text: String,
    /// The documents that hold a chunk with this hash, sorted, without duplicates.
    pub paths: Vec<String>,
}

/// Counts for `folio status` and `kb_status`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VectorStatus {
    /// The model of the stored vectors, if any were ever stored.
    pub model: Option<VectorModel>,
    /// Chunks that have a vector of that model.
    pub embedded_chunks: u64,
    /// All chunks of the index.
    pub total_chunks: u64,
    /// Stored vectors (distinct chunk texts, orphans included until the next
    /// embedding pass removes them).
    pub vectors: u64,
    /// Why the last embedding pass (in any process) stopped early because the
    /// provider was unavailable; `None` once a pass completes.
    pub last_unavailable: Option<String>,
}

/// `f32`s as the little-endian bytes sqlite-vec reads.
pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes back to `f32`s.
fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn meta_in(conn: &rusqlite::Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| {
        row.get(0)
    })
    .optional()
}

fn set_meta_in(conn: &rusqlite::Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

fn has_table(conn: &rusqlite::Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
        [name],
        |row| row.get(0),
    )
}

/// Where one kind of vector lives: chunk vectors keyed by content hash, or
/// whole-document vectors keyed by source hash. Storing and orphan deletion are
/// the same for both.
struct VectorKind {
    /// The key table (`id`, `model_id`, the key column).
    keys: &'static str,
    /// The key column of `keys`.
    key_column: &'static str,
    /// The vec0 table; its rowid is the key's `id`.
    vectors: &'static str,
    /// SQL condition on `k` (a row of `keys`) that makes the key an orphan.
    orphan: &'static str,
    /// What a key names, for messages.
    noun: &'static str,
}

const CHUNK_VECTORS: VectorKind = VectorKind {
    keys: "vector_keys",
    key_column: "content_hash",
    vectors: VEC_TABLE,
    orphan: "NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = k.content_hash)",
    noun: "chunk",
};

const DOCUMENT_VECTORS: VectorKind = VectorKind {
    keys: "doc_vector_keys",
    key_column: "source_hash",
    vectors: DOC_VEC_TABLE,
    orphan: "NOT EXISTS (SELECT 1 FROM documents d WHERE d.source_hash = k.source_hash)",
    noun: "document",
};

/// The model recorded in `meta`, when the vec0 table exists.
pub(crate) fn read_model(conn: &rusqlite::Connection) -> rusqlite::Result<Option<VectorModel>> {
    let (Some(model_id), Some(dims)) = (
        meta_in(conn, "vector_model")?,
        meta_in(conn, "vector_dims")?,
    ) else {
        return Ok(None);
    };
    let Ok(dims) = dims.parse::<usize>() else {
        return Ok(None);
    };
    if !has_table(conn, VEC_TABLE)? {
        return Ok(None);
    }
    Ok(Some(VectorModel { model_id, dims }))
}

impl Store {
    /// The model of the stored vectors, or `None` before the first embedding pass.
    pub fn vector_model(&self) -> Result<Option<VectorModel>, StoreError> {
        Ok(read_model(self.conn())?)
    }

    /// Makes the vector table hold vectors of `model`.
    ///
    /// When the index already holds `model` (same id and dimension), nothing is
    /// written and this returns `false`. Otherwise every stored vector is
    /// dropped, the vec0 table is created with `model.dims` dimensions and the
    /// model is recorded; this returns `true`. Lexical rows are never touched.
    ///
    /// Errors: `model.dims` is 0 or above 8192 (sqlite-vec's limit)
    /// ([`StoreError::InvalidRecord`]), or the database fails.
    pub fn ensure_vector_model(&mut self, model: &VectorModel) -> Result<bool, StoreError> {
        if model.dims == 0 || model.dims > 8192 {
            return Err(StoreError::InvalidRecord(format!(
                "embedding dimension {} of model `{}` is not between 1 and 8192",
                model.dims, model.model_id
            )));
        }
        if read_model(self.conn())?.as_ref() == Some(model) {
            return Ok(false);
        }
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have done it between the read and the lock.
        if read_model(&tx)?.as_ref() == Some(model) {
            return Ok(false);
        }
        tx.execute_batch(&format!(
            "DROP TABLE IF EXISTS {VEC_TABLE}; DELETE FROM vector_keys;
             DROP TABLE IF EXISTS {DOC_VEC_TABLE}; DELETE FROM doc_vector_keys;"
        ))?;
        tx.execute_batch(&format!(
            "CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding float[{dims}] distance_metric=cosine);
             CREATE VIRTUAL TABLE {DOC_VEC_TABLE} USING vec0(embedding float[{dims}] distance_metric=cosine);",
            dims = model.dims
        ))?;
        set_meta_in(&tx, "vector_model", &model.model_id)?;
        set_meta_in(&tx, "vector_dims", &model.dims.to_string())?;
        tx.commit()?;
        Ok(true)
    }

    /// The distinct chunk texts that lack a vector of `model_id`, ordered by
    /// the first document (path, then chunk position) that holds each.
    pub fn chunks_lacking_vectors(&self, model_id: &str) -> Result<Vec<PendingChunk>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT c.content_hash, d.path, c.heading_path, c.text
             FROM chunks c JOIN documents d ON d.id = c.doc_id
             WHERE NOT EXISTS (
                 SELECT 1 FROM vector_keys vk WHERE vk.model_id = ?1 AND vk.content_hash = c.content_hash)
             ORDER BY d.path, c.seq",
        )?;
        let rows = stmt.query_map([model_id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
            ))
        })?;
        let mut pending: Vec<PendingChunk> = Vec::new();
        let mut by_hash: HashMap<String, usize> = HashMap::new();
        for row in rows {
            let (hash, path, heading_path, text) = row?;
            match by_hash.get(&hash) {
                Some(&idx) => {
                    let paths = &mut pending[idx].paths;
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
                None => {
                    by_hash.insert(hash.clone(), pending.len());
                    pending.push(PendingChunk {
                        content_hash: hash,
                        text: embedding_text(&heading_path, &text),
                        paths: vec![path],
                    });
                }
            }
        }
        for p in &mut pending {
            p.paths.sort();
        }
        Ok(pending)
    }

    /// Stores vectors of `model_id`, each for a chunk `content_hash`, in one
    /// short transaction; returns how many were new (a hash that already has a
    /// vector of this model, stored meanwhile by another process, is left alone).
    ///
    /// Errors: the index holds another model (it changed since
    /// [`Store::ensure_vector_model`]), or a vector has the wrong dimension or a
    /// non-finite value ([`StoreError::InvalidRecord`]); nothing is stored then.
    pub fn insert_vectors(
        &mut self,
        model_id: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<usize, StoreError> {
        self.insert_keyed_vectors(&CHUNK_VECTORS, model_id, vectors)
    }

    fn insert_keyed_vectors(
        &mut self,
        kind: &VectorKind,
        model_id: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<usize, StoreError> {
        if vectors.is_empty() {
            return Ok(0);
        }
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let model = read_model(&tx)?;
        let dims = match &model {
            Some(m) if m.model_id == model_id => m.dims,
            other => {
                return Err(StoreError::InvalidRecord(format!(
                    "the index holds vectors of {}, not of `{model_id}`",
                    other
                        .as_ref()
                        .map_or("no model".to_owned(), |m| format!("`{}`", m.model_id))
                )));
            }
        };
        let noun = kind.noun;
        let mut n_new = 0;
        {
            let mut insert_key = tx.prepare_cached(&format!(
                "INSERT INTO {} (model_id, {}) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                kind.keys, kind.key_column
            ))?;
            let mut insert_vec = tx.prepare_cached(&format!(
                "INSERT INTO {} (rowid, embedding) VALUES (?1, ?2)",
                kind.vectors
            ))?;
            for (hash, vector) in vectors {
                if vector.len() != dims {
                    return Err(StoreError::InvalidRecord(format!(
                        "a vector for {noun} {hash} has {} dimensions; model `{model_id}` has {dims}",
                        vector.len()
                    )));
                }
                if vector.iter().any(|x| !x.is_finite()) {
                    return Err(StoreError::InvalidRecord(format!(
                        "the vector for {noun} {hash} has a non-finite value"
                    )));
                }
                if insert_key.execute(params![model_id, hash])? == 0 {
                    continue;
                }
                let id = tx.last_insert_rowid();
                insert_vec.execute(params![id, to_blob(vector)])?;
                n_new += 1;
            }
        }
        tx.commit()?;
        Ok(n_new)
    }

    /// Deletes the vectors whose content hash no chunk has any more (the chunk
    /// changed or its document was removed); returns how many were deleted.
    pub fn delete_orphan_vectors(&mut self) -> Result<usize, StoreError> {
        self.delete_orphans(&CHUNK_VECTORS)
    }

    fn delete_orphans(&mut self, kind: &VectorKind) -> Result<usize, StoreError> {
        let orphans_sql = format!("SELECT id FROM {} k WHERE {}", kind.keys, kind.orphan);
        // Look first without the write lock, which the other server may want.
        let any: bool =
            self.conn()
                .query_row(&format!("SELECT EXISTS ({orphans_sql})"), [], |row| {
                    row.get(0)
                })?;
        if !any {
            return Ok(0);
        }
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let orphans: Vec<i64> = {
            let mut stmt = tx.prepare_cached(&orphans_sql)?;
            let rows = stmt.query_map([], |row| row.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        if orphans.is_empty() {
            return Ok(0);
        }
        let has_vectors = has_table(&tx, kind.vectors)?;
        {
            let mut delete_key =
                tx.prepare_cached(&format!("DELETE FROM {} WHERE id = ?1", kind.keys))?;
            for id in &orphans {
                delete_key.execute([id])?;
            }
            if has_vectors {
                let mut delete_vec =
                    tx.prepare_cached(&format!("DELETE FROM {} WHERE rowid = ?1", kind.vectors))?;
                for id in &orphans {
                    delete_vec.execute([id])?;
                }
            }
        }
        tx.commit()?;
        Ok(orphans.len())
    }

    /// The stored vectors of these chunks (by `chunks.id`); chunks without a vector
    /// of the stored model are left out.
    ///
    /// Errors: the database cannot be read.
    pub fn chunk_vectors(&self, chunk_ids: &[i64]) -> Result<HashMap<i64, Vec<f32>>, StoreError> {
        let mut out = HashMap::new();
        let Some(model) = read_model(self.conn())? else {
            return Ok(out);
        };
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT v.embedding FROM chunks c
             JOIN vector_keys vk ON vk.model_id = ?2 AND vk.content_hash = c.content_hash
             JOIN {VEC_TABLE} v ON v.rowid = vk.id
             WHERE c.id = ?1"
        ))?;
        for &id in chunk_ids {
            if out.contains_key(&id) {
                continue;
            }
            let blob: Option<Vec<u8>> = stmt
                .query_row(params![id, model.model_id], |row| row.get(0))
                .optional()?;
            if let Some(blob) = blob {
                out.insert(id, from_blob(&blob));
            }
        }
        Ok(out)
    }

    /// `chunks.id` of the chunks of `path` that have a vector of `model_id`, in
    /// document order, at most `limit`.
    ///
    /// Errors: the database cannot be read.
    pub fn embedded_chunk_ids_of(
        &self,
        path: &str,
        model_id: &str,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT c.id FROM chunks c
             JOIN documents d ON d.id = c.doc_id
             JOIN vector_keys vk ON vk.model_id = ?2 AND vk.content_hash = c.content_hash
             WHERE d.path = ?1
             ORDER BY c.seq
             LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![path, model_id, limit as i64], |row| row.get(0))?;
        Ok(rows.collect::<Result<Vec<i64>, _>>()?)
    }

    /// The chunks of `path` that have a vector of the stored model, in order,
    /// each with its vector (L2-normalised, as the embedder returned it).
    /// Empty when the path is not indexed or nothing of it is embedded yet.
    pub fn vectors_of(&self, path: &str) -> Result<Vec<(ChunkRecord, Vec<f32>)>, StoreError> {
        let Some(model) = read_model(self.conn())? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT c.seq, c.pointer, c.heading_path, c.start_line, c.end_line, c.text, v.embedding
             FROM chunks c
             JOIN documents d ON d.id = c.doc_id
             JOIN vector_keys vk ON vk.model_id = ?2 AND vk.content_hash = c.content_hash
             JOIN {VEC_TABLE} v ON v.rowid = vk.id
             WHERE d.path = ?1
             ORDER BY c.seq"
        ))?;
        let rows = stmt.query_map(params![path, model.model_id], |row| {
            let blob: Vec<u8> = row.get(6)?;
            Ok((super::chunk_record(row)?, from_blob(&blob)))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The stored model and how many chunks have its vectors.
    pub fn vector_status(&self) -> Result<VectorStatus, StoreError> {
        let conn = self.conn();
        let count = |sql: &str, model: &str| -> Result<u64, StoreError> {
            let n: i64 = conn.query_row(sql, [model], |row| row.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let model = read_model(conn)?;
        let model_id = model
            .as_ref()
            .map_or("", |m| m.model_id.as_str())
            .to_owned();
        let total_chunks = count("SELECT count(*) FROM chunks WHERE ?1 = ?1", &model_id)?;
        let (embedded_chunks, vectors) = if model.is_some() {
            (
                count(
                    "SELECT count(*) FROM chunks c WHERE EXISTS (
                         SELECT 1 FROM vector_keys vk WHERE vk.model_id = ?1 AND vk.content_hash = c.content_hash)",
                    &model_id,
                )?,
                count("SELECT count(*) FROM vector_keys WHERE model_id = ?1", &model_id)?,
            )
        } else {
            (0, 0)
        };
        let last_unavailable = self.last_embed_unavailable()?;
        Ok(VectorStatus {
            model,
            embedded_chunks,
            total_chunks,
            vectors,
            last_unavailable,
        })
    }

    /// Whether a search with `model_id` has a vector leg: the stored vectors are of
    /// that model and at least one current chunk has one. One indexed lookup that
    /// stops at the first match (it runs on every semantic or hybrid search, where
    /// [`Store::vector_status`]'s counts would cost a scan of all chunks).
    ///
    /// Errors: the database cannot be read.
    pub fn has_vectors_of(&self, model_id: &str) -> Result<bool, StoreError> {
        if read_model(self.conn())?.is_none_or(|m| m.model_id != model_id) {
            return Ok(false);
        }
        let found: bool = self.conn().prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM vector_keys vk JOIN chunks c ON c.content_hash = vk.content_hash
                            WHERE vk.model_id = ?1)",
        )?.query_row([model_id], |row| row.get(0))?;
        Ok(found)
    }

    /// Why the last embedding pass (in any process) stopped early because the provider
    /// was unavailable; `None` once a pass completes. One `meta` read.
    ///
    /// Errors: the database cannot be read.
    pub fn last_embed_unavailable(&self) -> Result<Option<String>, StoreError> {
        Ok(meta_in(self.conn(), "embed_unavailable")?)
    }

    /// Records (or, with `None`, clears) why the last embedding pass found the
    /// provider unavailable; writes only when the value changes.
    pub fn record_embed_unavailable(&mut self, reason: Option<&str>) -> Result<(), StoreError> {
        if meta_in(self.conn(), "embed_unavailable")?.as_deref() == reason {
            return Ok(());
        }
        match reason {
            Some(reason) => set_meta_in(self.conn(), "embed_unavailable", reason)?,
            None => {
                self.conn()
                    .execute("DELETE FROM meta WHERE key = 'embed_unavailable'", [])?;
            }
        }
        Ok(())
    }

    /// Drops every stored vector and forgets the model (`folio index --force`
    /// re-embeds everything); documents, chunks and the FTS table are untouched.
    pub fn clear_vectors(&mut self) -> Result<(), StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(&format!(
            "DROP TABLE IF EXISTS {VEC_TABLE}; DELETE FROM vector_keys;
             DROP TABLE IF EXISTS {DOC_VEC_TABLE}; DELETE FROM doc_vector_keys;
             DELETE FROM meta WHERE key IN ('vector_model', 'vector_dims', 'embed_unavailable');"
        ))?;
        tx.commit()?;
        Ok(())
    }
}

/// A document whose whole-document vector is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDocument {
    /// `documents.source_hash`: the key of the vector.
    pub source_hash: String,
    /// KB-relative path.
    pub path: String,
    /// What is embedded: the title, then the chunks' texts in order, at most
    /// [`DOCUMENT_TEXT_BYTES`] bytes (the model truncates further to its token limit).
    pub text: String,
}

/// Most bytes of a document given to the embedder for its whole-document vector.
pub const DOCUMENT_TEXT_BYTES: usize = 8192;

impl Store {
    /// Documents lacking a whole-document vector of `model_id`, by path.
    ///
    /// Errors: the database cannot be read.
    pub fn documents_lacking_vectors(
        &self,
        model_id: &str,
    ) -> Result<Vec<PendingDocument>, StoreError> {
        let mut docs = self.conn().prepare_cached(
            "SELECT d.id, d.source_hash, d.path, coalesce(d.title, '') FROM documents d
             WHERE NOT EXISTS (SELECT 1 FROM doc_vector_keys k WHERE k.model_id = ?1 AND k.source_hash = d.source_hash)
             ORDER BY d.path",
        )?;
        let rows: Vec<(i64, String, String, String)> = docs
            .query_map([model_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut chunks = self
            .conn()
            .prepare_cached("SELECT text FROM chunks WHERE doc_id = ?1 ORDER BY seq")?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, source_hash, path, title) in rows {
            let mut text = title;
            for chunk in chunks.query_map([id], |r| r.get::<_, String>(0))? {
                if text.len() >= DOCUMENT_TEXT_BYTES {
                    break;
                }
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&chunk?);
            }
            if text.len() > DOCUMENT_TEXT_BYTES {
                let mut cut = DOCUMENT_TEXT_BYTES;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            out.push(PendingDocument {
                source_hash,
                path,
                text,
            });
        }
        Ok(out)
    }

    /// Stores whole-document vectors of `model_id` by source hash in one short
    /// transaction; returns how many were new.
    ///
    /// Errors: the index holds another model, or a vector has the wrong dimension or
    /// a non-finite value ([`StoreError::InvalidRecord`]); nothing is stored then.
    pub fn insert_document_vectors(
        &mut self,
        model_id: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<usize, StoreError> {
        self.insert_keyed_vectors(&DOCUMENT_VECTORS, model_id, vectors)
    }

    /// Deletes whole-document vectors whose source hash no document has any more;
    /// returns how many.
    ///
    /// Errors: the database fails.
    pub fn delete_orphan_document_vectors(&mut self) -> Result<usize, StoreError> {
        self.delete_orphans(&DOCUMENT_VECTORS)
    }

    /// Cosine similarity of `query_vec` to the whole-document vector of each of
    /// `paths` (of `model_id`); documents without one are left out.
    ///
    /// Errors: the database cannot be read.
    pub fn document_similarities(
        &self,
        model_id: &str,
        query_vec: &[f32],
        paths: &[String],
    ) -> Result<HashMap<String, f64>, StoreError> {
        let mut out = HashMap::new();
        match read_model(self.conn())? {
            Some(m) if m.model_id == model_id && m.dims == query_vec.len() => {}
            _ => return Ok(out),
        }
        // One statement for all paths (this runs on every hybrid search).
        let paths_json =
            serde_json::to_string(paths).map_err(|e| StoreError::InvalidRecord(e.to_string()))?;
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT d.path, vec_distance_cosine(v.embedding, ?3) FROM documents d
             JOIN doc_vector_keys k ON k.model_id = ?2 AND k.source_hash = d.source_hash
             JOIN {DOC_VEC_TABLE} v ON v.rowid = k.id
             WHERE d.path IN (SELECT value FROM json_each(?1))"
        ))?;
        let rows = stmt.query_map(params![paths_json, model_id, to_blob(query_vec)], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
        })?;
        for row in rows {
            let (path, distance) = row?;
            out.insert(path, 1.0 - distance);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
