//! The vector leg: the `k` chunks nearest to a query vector among those that pass the
//! query's filters, from the in-memory copy of the stored vectors
//! (`store::vectors::scan`), as search hits or as a ranking of chunk ids.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;

use super::pipeline::VectorHit;
use super::{SearchError, SearchQuery, SearchResults, build_filters};
use crate::store::Store;
use crate::store::vectors::{Centering, MAX_VECTOR_K, read_model};

impl Store {
    /// The `k` chunks nearest to `query_vec` (by cosine similarity) among the
    /// chunks that pass the filters of `filters` — the same filters, with the
    /// same validation and the same `filter_applied` names, as
    /// [`Store::search_lexical`]; its `text` and `limit` are ignored.
    ///
    /// Hits are ordered by similarity (best first), then path and position.
    /// `score` is the cosine similarity in `[-1, 1]`; `snippet` is the start of
    /// the chunk. The filters are applied before the nearest-neighbour scan
    /// (only the vectors of chunks that pass are scanned), so a selective
    /// filter still returns its `k` nearest chunks. Chunks with identical text
    /// share one vector and the same score.
    /// `low_confidence` is true only when there are no hits.
    ///
    /// `k` is clamped to [`MAX_VECTOR_K`]; `k = 0` returns no hits. When the
    /// index holds no vectors of `model_id` (none yet, or another model's),
    /// the answer is empty, not an error.
    ///
    /// Errors: invalid filters, or a query vector whose dimension differs from
    /// the stored model's ([`SearchError::InvalidArgument`]).
    pub fn vector_search(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
    ) -> Result<SearchResults, SearchError> {
        let (hits, filter_applied) =
            self.vector_ranking(model_id, query_vec, k, filters, Centering::NONE)?;
        let ranked: Vec<(i64, f64)> = hits.iter().map(|h| (h.chunk_id, h.similarity)).collect();
        let results = self.hits_for(&ranked, &[])?;
        Ok(SearchResults {
            low_confidence: results.is_empty(),
            results,
            filter_applied,
        })
    }

    /// [`Store::vector_search`]'s chunks as `(chunks.id, cosine similarity)`, best
    /// first, without their text (the key the ranking pipeline fuses on).
    ///
    /// Errors: as [`Store::vector_search`].
    pub fn vector_search_ids(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
    ) -> Result<Vec<(i64, f64)>, SearchError> {
        Ok(self
            .vector_search_centred(model_id, query_vec, k, filters, Centering::NONE)?
            .into_iter()
            .map(|h| (h.chunk_id, h.similarity))
            .collect())
    }

    /// The search ranking's vector leg: the `k` chunks that score highest for
    /// `query_vec` with the collection's `centering` (`store::vectors::centering`;
    /// docs/search.md, "Centring"), among those that pass the filters of `filters`.
    /// Each hit has its score and its cosine similarity; they are ordered by score
    /// (best first), then path and position. With [`Centering::NONE`] the score is the
    /// cosine and the hits are [`Store::vector_search_ids`]'s.
    ///
    /// Errors: as [`Store::vector_search`].
    pub fn vector_search_centred(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
        centering: Centering,
    ) -> Result<Vec<VectorHit>, SearchError> {
        Ok(self
            .vector_ranking(model_id, query_vec, k, filters, centering)?
            .0)
    }

    /// The hits and the names of the filters that applied.
    fn vector_ranking(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
        centering: Centering,
    ) -> Result<(Vec<VectorHit>, Vec<String>), SearchError> {
        let built = build_filters(filters)?;
        let Some(model) = read_model(self.conn())?.filter(|m| m.model_id == model_id) else {
            return Ok((Vec::new(), built.applied));
        };
        if query_vec.len() != model.dims {
            return Err(SearchError::InvalidArgument(format!(
                "the query vector has {} dimensions; model `{}` has {}",
                query_vec.len(),
                model.model_id,
                model.dims
            )));
        }
        if query_vec.iter().any(|x| !x.is_finite()) {
            return Err(SearchError::InvalidArgument(
                "the query vector has a non-finite value".to_owned(),
            ));
        }
        let k = k.min(MAX_VECTOR_K);
        if k == 0 {
            return Ok((Vec::new(), built.applied));
        }
        let copy = self.current_vector_copy(&model)?;
        // ?1 is the JSON array of candidate vector ids; filter values are ?2..; then the
        // model id.
        let mut values = vec![Value::Null];
        values.extend(built.values);
        values.push(Value::Text(model.model_id.clone()));
        let model_idx = values.len();
        // With filters, only the vectors of chunks that pass them are scanned, so a
        // selective filter still returns its `k` nearest chunks.
        let allowed: Option<HashSet<i64>> = if built.sql.is_empty() {
            None
        } else {
            let sql = format!(
                "SELECT vk.id FROM chunks c
                 JOIN documents d ON d.id = c.doc_id
                 JOIN vector_keys vk ON vk.model_id = ?{model_idx} AND vk.content_hash = c.content_hash
                 WHERE 1 = 1{filters}",
                filters = built.sql
            );
            let mut stmt = self.conn().prepare_cached(&sql)?;
            let ids = stmt.query_map(rusqlite::params_from_iter(values.iter()), |row| {
                row.get::<_, i64>(0)
            })?;
            Some(ids.collect::<Result<_, _>>()?)
        };
        let accepts = allowed.as_ref().map(|set| move |id: i64| set.contains(&id));
        let accepts = accepts.as_ref().map(|f| f as &dyn Fn(i64) -> bool);
        let sql = format!(
            "SELECT vk.id, c.id, d.path, c.seq
             FROM vector_keys vk
             JOIN chunks c ON c.content_hash = vk.content_hash
             JOIN documents d ON d.id = c.doc_id
             WHERE vk.id IN (SELECT value FROM json_each(?1)) AND vk.model_id = ?{model_idx}{filters}",
            filters = built.sql
        );
        // Vectors whose chunk changed and is not embedded again yet (a pass is running,
        // the provider is down, `--no-embed`) still take places among the nearest; ask
        // for more until `k` current chunks are found or every vector was considered.
        // With filters every candidate is a current chunk, so one round is enough.
        let mut n = k;
        loop {
            let nearest = copy.nearest(query_vec, n, accepts, centering);
            let exhausted = nearest.len() < n || n >= copy.len();
            let results = self.vector_rows(&sql, &mut values, &nearest, k)?;
            if results.len() >= k || allowed.is_some() || exhausted {
                return Ok((results, built.applied));
            }
            n = n.saturating_mul(2);
        }
    }

    /// The chunks of the vectors `nearest` (`(vector id, score, cosine)`) as hits,
    /// ordered by score (best first), then path and position, at most `k`.
    fn vector_rows(
        &self,
        sql: &str,
        values: &mut [Value],
        nearest: &[(i64, f32, f32)],
        k: usize,
    ) -> Result<Vec<VectorHit>, SearchError> {
        if nearest.is_empty() {
            return Ok(Vec::new());
        }
        let scored: HashMap<i64, (f32, f32)> = nearest
            .iter()
            .map(|&(id, score, cosine)| (id, (score, cosine)))
            .collect();
        values[0] = Value::Text(
            serde_json::to_string(&nearest.iter().map(|(id, _, _)| *id).collect::<Vec<_>>())
                .expect("a list of integers serialises"),
        );
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values.iter()), |row| {
            let vector_id: i64 = row.get(0)?;
            let (score, cosine) = scored.get(&vector_id).copied().unwrap_or((0.0, 0.0));
            Ok((
                VectorHit {
                    chunk_id: row.get(1)?,
                    score: f64::from(score),
                    similarity: f64::from(cosine),
                },
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
            ))
        })?;
        let mut hits = rows.collect::<Result<Vec<_>, _>>()?;
        hits.sort_by(|a, b| {
            b.0.score
                .total_cmp(&a.0.score)
                .then_with(|| a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
        });
        hits.truncate(k);
        Ok(hits.into_iter().map(|(hit, _, _)| hit).collect())
    }
}
