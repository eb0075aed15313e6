//! Which embedding model the index holds: reading it from `meta`, switching to another
//! (the vec0 tables are made for its dimension), forgetting it with every vector, and
//! dropping every vector when they were embedded from another version of the text
//! ([`ensure_embedding_text`]).

use rusqlite::TransactionBehavior;

use super::ensemble::ENSEMBLE_TABLE;
use super::scan::bump_generation;
use super::{DOC_VEC_TABLE, VEC_TABLE, has_table};
use crate::store::{EMBEDDING_TEXT_VERSION, Store, StoreError, chunk_content_hash};
use crate::store::{meta_in, set_meta_in};

/// The `meta` key holding the [`EMBEDDING_TEXT_VERSION`] the stored vectors and the
/// chunks' `content_hash`es were made with.
pub(crate) const EMBEDDING_TEXT_KEY: &str = "embedding_text";

/// Drops every vector (chunk and document) and forgets the model.
fn drop_vectors(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    // The ensemble model's vectors go too; its table exists, as `Store::open` brings the
    // schema up to date before anything here runs.
    conn.execute_batch(&format!(
        "DROP TABLE IF EXISTS {VEC_TABLE}; DELETE FROM vector_keys;
         DROP TABLE IF EXISTS {DOC_VEC_TABLE}; DELETE FROM doc_vector_keys;
         DELETE FROM {ENSEMBLE_TABLE};
         DELETE FROM meta WHERE key IN ('vector_model', 'vector_dims', 'embed_unavailable');"
    ))?;
    bump_generation(conn)
}

/// Makes the index agree with this build's [`EMBEDDING_TEXT_VERSION`].
///
/// - `meta` records this version: nothing is written.
/// - It records none (an index of a folio that did not record it, whose text was
///   version 1) and this is version 1: the version is recorded, nothing else changes.
/// - Otherwise (another version): every chunk's `content_hash` is computed again from
///   its heading path and text, every vector is dropped and the model forgotten, and
///   the version is recorded, in one transaction. The next embedding pass embeds every
///   chunk and document again; until then search has no vector leg, so vectors of two
///   texts are never mixed.
///
/// Returns whether the vectors were dropped.
pub(crate) fn ensure_embedding_text(conn: &mut rusqlite::Connection) -> Result<bool, StoreError> {
    let current = EMBEDDING_TEXT_VERSION.to_string();
    let stored = meta_in(conn, EMBEDDING_TEXT_KEY)?;
    if stored.as_deref() == Some(current.as_str()) {
        return Ok(false);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have done it between the read and the lock.
    let stored = meta_in(&tx, EMBEDDING_TEXT_KEY)?;
    if stored.as_deref() == Some(current.as_str()) {
        return Ok(false);
    }
    if stored.is_none() && EMBEDDING_TEXT_VERSION == 1 {
        set_meta_in(&tx, EMBEDDING_TEXT_KEY, &current)?;
        tx.commit()?;
        return Ok(false);
    }
    {
        let mut select = tx.prepare("SELECT id, heading_path, text, content_hash FROM chunks")?;
        let mut update = tx.prepare("UPDATE chunks SET content_hash = ?2 WHERE id = ?1")?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let (id, heading_path, text, old): (i64, String, String, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            let hash = chunk_content_hash(&heading_path, &text);
            if hash != old {
                update.execute(rusqlite::params![id, hash])?;
            }
        }
    }
    drop_vectors(&tx)?;
    set_meta_in(&tx, EMBEDDING_TEXT_KEY, &current)?;
    tx.commit()?;
    Ok(true)
}

/// The embedding model whose vectors the index holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VectorModel {
    /// The embedder's [`crate::embed::Embedder::model_id`].
    pub model_id: String,
    /// Dimensions of every vector.
    pub dims: usize,
}

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
        bump_generation(&tx)?;
        tx.commit()?;
        Ok(true)
    }

    /// Drops every stored vector, the ensemble model's included, and forgets the model
    /// (`folio index --force` re-embeds everything); documents, chunks and the FTS table
    /// are untouched.
    pub fn clear_vectors(&mut self) -> Result<(), StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        drop_vectors(&tx)?;
        tx.commit()?;
        Ok(())
    }
}
