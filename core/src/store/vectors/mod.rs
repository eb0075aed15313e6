//! Vectors in sqlite-vec `vec0` tables: one per chunk text and one per document, all of
//! one embedding model.
//!
//! Chunk vectors are keyed by `(model_id, content_hash)` in `vector_keys`, whose
//! `id` is the rowid of the vector in the `chunk_vectors` vec0 table.
//! `content_hash` is the hash of exactly the text the embedder was given
//! ([`super::embedding_text`]), so a vector is computed once per distinct
//! chunk, shared by identical chunks in several files, and recomputed only when
//! a chunk's heading path or text changes. Whole-document vectors are keyed the same
//! way by `(model_id, source_hash)` in `doc_vector_keys` and `doc_vectors`.
//!
//! The index holds the vectors of one model at a time. The vec0 tables are
//! created when the first model is known, since its dimension comes with the
//! model; the model id and dimension are kept in `meta` (`vector_model`,
//! `vector_dims`). [`Store::ensure_vector_model`](super::Store::ensure_vector_model) with another model id or
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
//!
//! The files here: `model.rs` (which model the index holds), `chunks.rs` (chunk vectors:
//! what lacks one, storing, reading), `documents.rs` (whole-document vectors),
//! `ensemble.rs` (the ensemble model's
//! whole-document vectors, in a plain table of their own), `keyed.rs` (storing and pruning either kind by its key), `scan.rs` (the in-memory
//! copy of the chunk vectors that search scans), `status.rs` (the counts
//! `folio status` and `kb_status` show) and `sqlite_vec.rs` (the extension and its blob
//! format).

mod centering;
mod chunks;
mod documents;
mod ensemble;
mod keyed;
mod model;
mod scan;
mod sqlite_vec;
mod status;

pub use centering::{Centering, MIN_GROUP_VECTORS};
pub use chunks::PendingChunk;
pub use documents::{DOCUMENT_TEXT_BYTES, PendingDocument};
pub use model::VectorModel;
pub(crate) use model::{ensure_embedding_text, read_model};
pub(crate) use scan::{CopySlot, ensure_index_id, slot_for};
#[cfg(test)]
pub(crate) use scan::{VectorCopy, current_key};
pub(crate) use sqlite_vec::register_sqlite_vec;
pub use status::VectorStatus;

/// The largest `k` [`Store::vector_search`](super::Store::vector_search) returns; it
/// clamps to it (sqlite-vec's own limit for one KNN query, which the search used before
/// it scanned an in-memory copy, kept as the contract).
pub const MAX_VECTOR_K: usize = 4096;

/// The vec0 table holding the vectors.
pub(crate) const VEC_TABLE: &str = "chunk_vectors";

/// The vec0 table holding whole-document vectors.
pub(crate) const DOC_VEC_TABLE: &str = "doc_vectors";

/// Whether the database has a table called `name`.
pub(crate) fn has_table(conn: &rusqlite::Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
        [name],
        |row| row.get(0),
    )
}

#[cfg(test)]
mod tests;
