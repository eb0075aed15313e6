//! Whole-document vectors: which documents lack one (and the text to embed for each),
//! storing and pruning them, and a query's similarity to each document.

use std::collections::HashMap;

use rusqlite::params;

use super::centering::Centering;
use super::keyed::DOCUMENT_VECTORS;
use super::scan::{dot, unit_vector};
use super::sqlite_vec::to_blob;
use super::{DOC_VEC_TABLE, read_model};
use crate::store::writing_system::most_common;
use crate::store::{Store, StoreError};

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
        self.documents_lacking_in("doc_vector_keys", model_id)
    }

    /// Documents with no row of `model_id` and their source hash in `key_table`
    /// (`doc_vector_keys` or `ensemble_doc_vectors`), by path, each with the text to embed.
    ///
    /// Errors: the database cannot be read.
    pub(super) fn documents_lacking_in(
        &self,
        key_table: &str,
        model_id: &str,
    ) -> Result<Vec<PendingDocument>, StoreError> {
        let mut docs = self.conn().prepare_cached(&format!(
            "SELECT d.id, d.source_hash, d.path, coalesce(d.title, '') FROM documents d
             WHERE NOT EXISTS (SELECT 1 FROM {key_table} k WHERE k.model_id = ?1 AND k.source_hash = d.source_hash)
             ORDER BY d.path"
        ))?;
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

    /// The document leg's scores: for each of `paths`, the cosine of its whole-document
    /// vector `v` to `query_vec`, corrected by `centering` as the vector leg corrects a
    /// chunk's (`store::vectors::centering`): `cos − a · q · (μ_w − μ) − b · v · μ`,
    /// where `μ` and `μ_w` are the means of the chunk vectors (a document vector is
    /// the embedding of the same text) and `w` is the writing system of most of the
    /// document's chunks (of equal counts, the one met first in chunk order). With
    /// [`Centering::NONE`] this is [`Store::document_similarities`]. Documents without a
    /// vector of `model_id` are left out.
    ///
    /// Errors: the database cannot be read.
    pub fn document_scores(
        &self,
        model_id: &str,
        query_vec: &[f32],
        paths: &[String],
        centering: Centering,
    ) -> Result<HashMap<String, f64>, StoreError> {
        if centering.is_none() {
            return self.document_similarities(model_id, query_vec, paths);
        }
        let Some(model) = read_model(self.conn())?
            .filter(|m| m.model_id == model_id && m.dims == query_vec.len())
        else {
            return Ok(HashMap::new());
        };
        let copy = self.current_vector_copy(&model)?;
        let stats = copy.statistics();
        let q = unit_vector(query_vec);
        // v · (q − b μ) = cos(v, q − b μ) · |q − b μ| for a unit v.
        let moved: Vec<f32> = q
            .iter()
            .zip(stats.mean())
            .map(|(x, m)| x - centering.corpus * m)
            .collect();
        let length = f64::from(dot(&moved, &moved).sqrt());
        let mut scores = if length > 0.0 {
            let mut cosines = self.document_similarities(model_id, &moved, paths)?;
            cosines.values_mut().for_each(|c| *c *= length);
            cosines
        } else {
            // q = b μ: every document scores the same before the language term.
            let mut cosines = self.document_similarities(model_id, &q, paths)?;
            cosines.values_mut().for_each(|c| *c = 0.0);
            cosines
        };
        if centering.writing_system != 0.0 {
            let terms = stats.offset_terms(&q);
            let paths_json = serde_json::to_string(paths)
                .map_err(|e| StoreError::InvalidRecord(e.to_string()))?;
            let mut stmt = self.conn().prepare_cached(
                // CROSS JOIN keeps SQLite's planner from scanning `vector_keys` first
                // (20 ms on k8s-community instead of well under one).
                "SELECT d.path, vk.id FROM json_each(?1) p
                 CROSS JOIN documents d ON d.path = p.value
                 CROSS JOIN chunks c ON c.doc_id = d.id
                 CROSS JOIN vector_keys vk ON vk.model_id = ?2 AND vk.content_hash = c.content_hash
                 ORDER BY d.path, c.seq",
            )?;
            // Per path, the groups of its chunks in chunk order; keys the copy does not
            // hold (a vector added since it was read) have no say.
            let mut groups: HashMap<String, Vec<u16>> = HashMap::new();
            let rows = stmt.query_map(params![paths_json, model_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?;
            for row in rows {
                let (path, id) = row?;
                if let Some(group) = stats.group_of(id) {
                    groups.entry(path).or_default().push(group);
                }
            }
            for (path, score) in &mut scores {
                let group = groups
                    .get(path)
                    .and_then(|g| most_common(g.iter().copied()))
                    .map_or(0, usize::from);
                *score -=
                    f64::from(centering.writing_system * terms.get(group).copied().unwrap_or(0.0));
            }
        }
        Ok(scores)
    }
}
