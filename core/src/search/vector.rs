//! The vector leg: the `k` chunks nearest to a query vector among those that pass the
//! query's filters, from the sqlite-vec `vec0` table the store keeps
//! (`store::vectors`), as [`SearchHit`]s.

use rusqlite::types::Value;

use super::{
    SearchError, SearchHit, SearchQuery, SearchResults, build_filters, snippet, split_heading_path,
};
use crate::store::Store;
use crate::store::vectors::{MAX_VECTOR_K, VEC_TABLE, read_model, to_blob};

/// Hits with their `chunks.id`, and the names of the filters that applied.
type VectorRows = (Vec<(i64, SearchHit)>, Vec<String>);

impl Store {
    /// The `k` chunks nearest to `query_vec` (by cosine similarity) among the
    /// chunks that pass the filters of `filters` — the same filters, with the
    /// same validation and the same `filter_applied` names, as
    /// [`Store::search_lexical`]; its `text` and `limit` are ignored.
    ///
    /// Hits are ordered by similarity (best first), then path and position.
    /// `score` is the cosine similarity in `[-1, 1]`; `snippet` is the start of
    /// the chunk. The filters are applied before the KNN (a `rowid IN` set
    /// given to vec0), so a selective filter still returns its `k` nearest
    /// chunks. Chunks with identical text share one vector and the same score.
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
        let (rows, filter_applied) = self.vector_search_rows(model_id, query_vec, k, filters)?;
        let results: Vec<SearchHit> = rows.into_iter().map(|(_, hit)| hit).collect();
        Ok(SearchResults {
            low_confidence: results.is_empty(),
            results,
            filter_applied,
        })
    }

    /// [`Store::vector_search`] with each hit's `chunks.id` (the key the ranking
    /// pipeline fuses on), best first, and the names of the filters that applied.
    ///
    /// Errors: as [`Store::vector_search`].
    pub fn vector_search_ids(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
    ) -> Result<Vec<(i64, f64)>, SearchError> {
        let (rows, _) = self.vector_search_rows(model_id, query_vec, k, filters)?;
        Ok(rows.into_iter().map(|(id, hit)| (id, hit.score)).collect())
    }

    fn vector_search_rows(
        &self,
        model_id: &str,
        query_vec: &[f32],
        k: usize,
        filters: &SearchQuery,
    ) -> Result<VectorRows, SearchError> {
        let built = build_filters(filters)?;
        let empty = |applied: Vec<String>| (Vec::new(), applied);
        let Some(model) = read_model(self.conn())? else {
            return Ok(empty(built.applied));
        };
        if model.model_id != model_id {
            return Ok(empty(built.applied));
        }
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
            return Ok(empty(built.applied));
        }
        // ?1 is the query vector; filter values are ?2..; then the KNN's k, the model id
        // and the row limit.
        let mut values = vec![Value::Blob(to_blob(query_vec))];
        values.extend(built.values);
        values.push(Value::Integer(k as i64));
        let k_idx = values.len();
        values.push(Value::Text(model.model_id.clone()));
        let model_idx = values.len();
        values.push(Value::Integer(k as i64));
        let limit_idx = values.len();
        let prefilter = if built.sql.is_empty() {
            String::new()
        } else {
            format!(
                " AND rowid IN (SELECT vk.id FROM chunks c
                     JOIN documents d ON d.id = c.doc_id
                     JOIN vector_keys vk ON vk.model_id = ?{model_idx} AND vk.content_hash = c.content_hash
                     WHERE 1 = 1{filters})",
                filters = built.sql
            )
        };
        let sql = format!(
            "WITH knn AS MATERIALIZED (
                 SELECT rowid AS vid, distance FROM {VEC_TABLE}
                 WHERE embedding MATCH ?1 AND k = ?{k_idx}{prefilter}
             )
             SELECT d.path, c.pointer, c.heading_path, c.start_line, c.end_line, c.text, d.source_hash, knn.distance, c.id
             FROM knn
             JOIN vector_keys vk ON vk.id = knn.vid
             JOIN chunks c ON c.content_hash = vk.content_hash
             JOIN documents d ON d.id = c.doc_id
             WHERE vk.model_id = ?{model_idx}{filters}
             ORDER BY knn.distance, d.path, c.seq
             LIMIT ?{limit_idx}",
            filters = built.sql
        );
        // Vectors whose chunk changed and is not embedded again yet (a pass is running,
        // the provider is down, `--no-embed`) still take places among the KNN's k; ask
        // for more until `k` current chunks are found or every vector was considered.
        // With a prefilter every candidate is a current chunk, so one round is enough.
        let total: i64 = self.conn().query_row(
            "SELECT count(*) FROM vector_keys WHERE model_id = ?1",
            [&model.model_id],
            |row| row.get(0),
        )?;
        let ceiling = (total.max(0) as usize).min(MAX_VECTOR_K);
        let mut knn_k = k;
        loop {
            values[k_idx - 1] = Value::Integer(knn_k as i64);
            let results = self.vector_rows(&sql, &values)?;
            if results.len() >= k || !built.sql.is_empty() || knn_k >= ceiling {
                return Ok((results, built.applied));
            }
            knn_k = (knn_k * 2).min(ceiling);
        }
    }

    fn vector_rows(
        &self,
        sql: &str,
        values: &[Value],
    ) -> Result<Vec<(i64, SearchHit)>, SearchError> {
        let mut stmt = self.conn().prepare_cached(sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values.iter()), |row| {
            let heading_path: String = row.get(2)?;
            let text: String = row.get(5)?;
            let distance: f64 = row.get(7)?;
            let id: i64 = row.get(8)?;
            Ok((
                id,
                SearchHit {
                    path: row.get(0)?,
                    pointer: row.get(1)?,
                    heading_path: split_heading_path(&heading_path),
                    start_line: row.get(3)?,
                    end_line: row.get(4)?,
                    score: 1.0 - distance,
                    snippet: snippet::make_snippet(&text, &[]),
                    indexed_source_hash: row.get(6)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}
