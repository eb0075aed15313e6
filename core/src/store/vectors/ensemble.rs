//! The ensemble model's whole-document vectors (`search::pipeline::PipelineOptions::
//! ensemble_weight`): which documents lack one, storing and pruning them, and the rank
//! of every document for a query.
//!
//! They live in the plain table `ensemble_doc_vectors` (`model_id`, `source_hash`,
//! `vector`: the `f32` values little-endian, 4 bytes each), apart from the vec0 tables of
//! the index's own model, so that a second model's vectors (of another dimension) sit
//! beside them and survive a change of the first model. A query scores every row: a
//! brute-force scan, one dot product per document (965 documents of 512 dimensions on
//! k8s-community, under a millisecond of arithmetic).

use std::collections::HashMap;

use rusqlite::{TransactionBehavior, params};

use super::documents::PendingDocument;
use super::scan::dot;
use super::sqlite_vec::{extend_from_blob, to_blob};
use crate::store::{Store, StoreError};

/// The table of the ensemble model's whole-document vectors.
pub(super) const ENSEMBLE_TABLE: &str = "ensemble_doc_vectors";

impl Store {
    /// Documents lacking an ensemble vector of `model_id`, by path, with the text to
    /// embed (the same text as [`Store::documents_lacking_vectors`]).
    ///
    /// Errors: the database cannot be read.
    pub fn documents_lacking_ensemble_vectors(
        &self,
        model_id: &str,
    ) -> Result<Vec<PendingDocument>, StoreError> {
        self.documents_lacking_in(ENSEMBLE_TABLE, model_id)
    }

    /// Stores ensemble vectors of `model_id` by source hash in one short transaction;
    /// returns how many were new.
    ///
    /// Errors: a vector is empty, of another length than the others of `model_id`, or
    /// has a non-finite value ([`StoreError::InvalidRecord`]); nothing is stored then.
    pub fn insert_ensemble_vectors(
        &mut self,
        model_id: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<usize, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let stored: Option<i64> = tx
            .query_row(
                &format!(
                    "SELECT length(vector) / 4 FROM {ENSEMBLE_TABLE} WHERE model_id = ?1 LIMIT 1"
                ),
                [model_id],
                |r| r.get(0),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        let dims = stored
            .map(|n| n as usize)
            .or(vectors.first().map(|(_, v)| v.len()));
        let mut n_new = 0;
        {
            let mut insert = tx.prepare_cached(&format!(
                "INSERT INTO {ENSEMBLE_TABLE} (model_id, source_hash, vector) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING"
            ))?;
            for (hash, vector) in vectors {
                if vector.is_empty() || Some(vector.len()) != dims {
                    return Err(StoreError::InvalidRecord(format!(
                        "the ensemble vector for document {hash} has {} dimensions; model `{model_id}` has {}",
                        vector.len(),
                        dims.unwrap_or(0)
                    )));
                }
                if vector.iter().any(|x| !x.is_finite()) {
                    return Err(StoreError::InvalidRecord(format!(
                        "the ensemble vector for document {hash} has a non-finite value"
                    )));
                }
                n_new += insert.execute(params![model_id, hash, to_blob(vector)])?;
            }
        }
        tx.commit()?;
        Ok(n_new)
    }

    /// Deletes the ensemble vectors no document has a use for: those whose source hash
    /// no document has any more, and those of any model but `model_id`; returns how many.
    ///
    /// Errors: the database fails.
    pub fn delete_stale_ensemble_vectors(&mut self, model_id: &str) -> Result<usize, StoreError> {
        let stale = format!(
            "FROM {ENSEMBLE_TABLE} WHERE model_id <> ?1
             OR source_hash NOT IN (SELECT source_hash FROM documents)"
        );
        // Look first without the write lock, which the other server may want.
        let any: bool = self.conn().query_row(
            &format!("SELECT EXISTS (SELECT 1 {stale})"),
            [model_id],
            |r| r.get(0),
        )?;
        if !any {
            return Ok(0);
        }
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = tx.execute(&format!("DELETE {stale}"), [model_id])?;
        tx.commit()?;
        Ok(n)
    }

    /// The rank (1 = nearest) of every document with an ensemble vector of `model_id`,
    /// by path: documents ordered by the dot product of `query_vec` with their vector
    /// (the cosine, both being unit vectors), ties by path. A vector of another length
    /// than `query_vec` is left out. Documents with the same text share one vector.
    ///
    /// Two plain reads joined here: SQLite's join of `documents` with this `WITHOUT
    /// ROWID` table of 2 KiB rows looked each vector up by key and took 8 ms per query on
    /// k8s-community (955 vectors), the two reads about 2 (docs/benchmarks.md, "Ensemble
    /// leg").
    ///
    /// Errors: the database cannot be read.
    pub fn ensemble_document_ranks(
        &self,
        model_id: &str,
        query_vec: &[f32],
    ) -> Result<HashMap<String, usize>, StoreError> {
        let conn = self.conn();
        let mut paths_by_hash: HashMap<String, Vec<String>> = HashMap::new();
        let mut docs = conn.prepare_cached("SELECT path, source_hash FROM documents")?;
        let rows = docs.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (path, hash) = row?;
            paths_by_hash.entry(hash).or_default().push(path);
        }
        let mut vectors = conn.prepare_cached(&format!(
            "SELECT source_hash, vector FROM {ENSEMBLE_TABLE} WHERE model_id = ?1"
        ))?;
        let mut rows = vectors.query([model_id])?;
        let mut scored: Vec<(f32, String)> = Vec::with_capacity(paths_by_hash.len());
        let mut vector = Vec::with_capacity(query_vec.len());
        while let Some(row) = rows.next()? {
            let blob = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
            if blob.len() != query_vec.len() * 4 {
                continue;
            }
            let hash = row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
            let Some(paths) = paths_by_hash.remove(hash) else {
                continue;
            };
            vector.clear();
            extend_from_blob(&mut vector, blob);
            let score = dot(query_vec, &vector);
            scored.extend(paths.into_iter().map(|path| (score, path)));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .enumerate()
            .map(|(i, (_, path))| (path, i + 1))
            .collect())
    }
}
