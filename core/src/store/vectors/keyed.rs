//! Storing and pruning vectors by their key, the same for chunk vectors (keyed by content
//! hash) and whole-document vectors (keyed by source hash).

use rusqlite::{TransactionBehavior, params};

use super::scan::bump_generation;
use super::sqlite_vec::to_blob;
use super::{DOC_VEC_TABLE, VEC_TABLE, has_table, read_model};
use crate::store::{Store, StoreError};

/// Where one kind of vector lives: chunk vectors keyed by content hash, or
/// whole-document vectors keyed by source hash. Storing and orphan deletion are
/// the same for both.
pub(super) struct VectorKind {
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
    /// Whether search scans an in-memory copy of these vectors, which a write must
    /// invalidate ([`bump_generation`]).
    copied: bool,
}

pub(super) const CHUNK_VECTORS: VectorKind = VectorKind {
    keys: "vector_keys",
    key_column: "content_hash",
    vectors: VEC_TABLE,
    orphan: "NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = k.content_hash)",
    noun: "chunk",
    copied: true,
};

pub(super) const DOCUMENT_VECTORS: VectorKind = VectorKind {
    keys: "doc_vector_keys",
    key_column: "source_hash",
    vectors: DOC_VEC_TABLE,
    orphan: "NOT EXISTS (SELECT 1 FROM documents d WHERE d.source_hash = k.source_hash)",
    noun: "document",
    copied: false,
};

impl Store {
    /// Stores `vectors` of `model_id` under their keys in one short transaction; returns
    /// how many were new (a key that already has a vector of this model is left alone).
    pub(super) fn insert_keyed_vectors(
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
        if kind.copied && n_new > 0 {
            bump_generation(&tx)?;
        }
        tx.commit()?;
        Ok(n_new)
    }

    /// Deletes the vectors of `kind` whose key is an orphan; returns how many.
    pub(super) fn delete_orphans(&mut self, kind: &VectorKind) -> Result<usize, StoreError> {
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
        if kind.copied {
            bump_generation(&tx)?;
        }
        tx.commit()?;
        Ok(orphans.len())
    }
}
