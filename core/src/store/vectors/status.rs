//! The counts `folio status` and `kb_status` show about vectors, and the note an
//! embedding pass leaves when its provider was unavailable.

use super::{VectorModel, read_model};
use crate::store::{Store, StoreError};
use crate::store::{meta_in, set_meta_in};

/// Counts for `folio status` and `kb_status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
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

impl Store {
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
}
