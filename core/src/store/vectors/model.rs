//! Which embedding model the index holds: reading it from `meta`, switching to another
//! (the vec0 tables are made for its dimension), and forgetting it with every vector.

use rusqlite::TransactionBehavior;

use super::{DOC_VEC_TABLE, VEC_TABLE, has_table, meta_in, set_meta_in};
use crate::store::{Store, StoreError};

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
        tx.commit()?;
        Ok(true)
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
