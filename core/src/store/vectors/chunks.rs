//! Chunk vectors: which chunk texts lack one, storing and pruning them, and reading them
//! back by chunk or by document.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::keyed::CHUNK_VECTORS;
use super::sqlite_vec::from_blob;
use super::{VEC_TABLE, read_model};
use crate::store::{ChunkRecord, Store, StoreError, chunk_record, embedding_text};

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

impl Store {
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

    /// Deletes the vectors whose content hash no chunk has any more (the chunk
    /// changed or its document was removed); returns how many were deleted.
    pub fn delete_orphan_vectors(&mut self) -> Result<usize, StoreError> {
        self.delete_orphans(&CHUNK_VECTORS)
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
            "SELECT c.seq, c.pointer, c.heading_path, c.start_line, c.end_line, c.text,
                    c.page, c.symbol_kind, c.symbol, v.embedding
             FROM chunks c
             JOIN documents d ON d.id = c.doc_id
             JOIN vector_keys vk ON vk.model_id = ?2 AND vk.content_hash = c.content_hash
             JOIN {VEC_TABLE} v ON v.rowid = vk.id
             WHERE d.path = ?1
             ORDER BY c.seq"
        ))?;
        let rows = stmt.query_map(params![path, model.model_id], |row| {
            let blob: Vec<u8> = row.get(9)?;
            Ok((chunk_record(row)?, from_blob(&blob)))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
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
}
