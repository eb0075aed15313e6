//! The vector leg's nearest-neighbour search: an in-memory copy of every chunk vector,
//! scanned exhaustively.
//!
//! sqlite-vec's vec0 KNN is a brute-force scan too, but it reads every vector out of the
//! database file on every query (on k8s-community, 12.5k vectors of 384 dimensions, about
//! 11 ms of a 24 ms hybrid search, most of it copying pages). The copy is read once (96 ms
//! there) and scanned in 2.6 ms (p50, one core, bound by memory bandwidth); it costs
//! `4 × dims` bytes per distinct chunk text (1.5 KiB for the built-in model, 19 MiB on
//! k8s-community), held while the process lives.
//!
//! **One copy per database file per process.** Every `Store` opened on the
//! same file shares one [`CopySlot`] (a language server opens a store per request), so the
//! copy is read once. An in-memory store has a slot of its own.
//!
//! **Never stale.** Each search reads a [`CopyKey`] of the file (one statement of a few
//! lookups, and the identity its store recorded when it opened the file) and reads the
//! copy again when it differs from the copy's:
//! - `meta.vector_generation`, which every transaction that adds, deletes or drops chunk
//!   vectors increments ([`bump_generation`]), whichever process or connection writes;
//! - `meta.index_id`, random, written when a file is first opened by a folio that knows
//!   it ([`ensure_index_id`]): an index deleted and built again is another file even
//!   when its history gave it the same generation and keys;
//! - the identity of the file the store opened (device, inode, creation time): an index
//!   restored from a copy keeps its `index_id`, not its inode and creation time;
//! - SQLite's schema cookie (`PRAGMA schema_version`), which every `DROP` and `CREATE`
//!   changes: a writer that does not bump the generation (an older folio, another
//!   program) and drops the vectors to embed them again is seen by it;
//! - the largest vector key: a vector such a writer adds gets a larger one.
//!
//! What is left unseen: a writer that does not bump the generation, deletes the vector
//! with the largest key and adds another in its place. Counting the keys as well would
//! not see it either and cost 0.7 ms per search on k8s-community. The copy is read inside
//! one read transaction, so it is one snapshot of the file.
//!
//! **Same answers as the vec0 scan.** Similarity is the cosine similarity of the query
//! and the stored vector, `a·b / (|a| |b|)`: the stored vectors are kept divided by their
//! length, and the query is divided by its own. The sums run in `f32` in another order
//! than sqlite-vec's, so a similarity may differ from vec0's in the last bits (a few
//! 1e-6 at most: 1.5e-6 seen with 384 dimensions; a test compares them). Of two equally
//! similar vectors the one with the smaller key (`vector_keys.id`) is taken first; hits
//! are then ordered by similarity, path and position, as before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::Connection;

use super::VEC_TABLE;
use super::VectorModel;
use super::centering::{Centering, CorpusStatistics};
use super::sqlite_vec::extend_from_blob;
use crate::store::meta_in;
use crate::store::writing_system::{SAMPLE_CHARS, ScriptProfile, script_profile};
use crate::store::{FileIdentity, Store, embedding_text};

/// The `meta` key counting the transactions that changed the chunk vectors.
pub(crate) const GENERATION_KEY: &str = "vector_generation";

/// The `meta` key of a random id telling one index file from another.
pub(crate) const INDEX_ID_KEY: &str = "index_id";

/// Writes a random [`INDEX_ID_KEY`] (16 hex digits) when the file has none; writes
/// nothing when it has one. Call it when a file is opened.
///
/// A file that cannot be written (read-only, or locked past the busy timeout) keeps no
/// id, which is logged and not an error: the id only tells copies apart.
pub(crate) fn ensure_index_id(conn: &Connection) -> rusqlite::Result<()> {
    if meta_in(conn, INDEX_ID_KEY)?.is_none() {
        // Another process may write one first: theirs is kept.
        if let Err(err) = conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, lower(hex(randomblob(8))))
             ON CONFLICT(key) DO NOTHING",
            [INDEX_ID_KEY],
        ) {
            tracing::debug!(%err, "the index keeps no index_id");
        }
    }
    Ok(())
}

/// Increments the `meta` value [`GENERATION_KEY`] (from 0 when absent). Call it inside
/// every transaction that adds, deletes or drops chunk vectors.
pub(crate) fn bump_generation(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        [GENERATION_KEY],
    )?;
    Ok(())
}

/// What a copy was read from: the model, the file (its identity, `None` in memory), its
/// [`INDEX_ID_KEY`] (empty when absent), its schema cookie, the [`GENERATION_KEY`] value
/// (0 when absent) and the largest `vector_keys.id` (0 when there is none). A copy is
/// current while all of them are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyKey {
    pub model_id: String,
    pub file: Option<FileIdentity>,
    pub index_id: String,
    pub schema_version: i64,
    pub generation: i64,
    pub last_id: i64,
}

/// Reads the [`CopyKey`] of the stored vectors of `model_id` in the file `file` that
/// `conn` opened, now, in one statement.
pub(crate) fn current_key(
    conn: &Connection,
    file: Option<FileIdentity>,
    model_id: &str,
) -> rusqlite::Result<CopyKey> {
    let mut stmt = conn.prepare_cached(
        "SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1),
                (SELECT max(id) FROM vector_keys),
                (SELECT value FROM meta WHERE key = ?2),
                (SELECT schema_version FROM pragma_schema_version)",
    )?;
    stmt.query_row([GENERATION_KEY, INDEX_ID_KEY], |row| {
        Ok(CopyKey {
            model_id: model_id.to_owned(),
            file,
            generation: row.get::<_, Option<i64>>(0)?.unwrap_or(0),
            last_id: row.get::<_, Option<i64>>(1)?.unwrap_or(0),
            index_id: row.get::<_, Option<String>>(2)?.unwrap_or_default(),
            schema_version: row.get(3)?,
        })
    })
}

/// Every chunk vector of one model, in memory.
pub(crate) struct VectorCopy {
    key: CopyKey,
    dims: usize,
    /// `vector_keys.id` of each vector, in the order vec0 returned them.
    ids: Vec<i64>,
    /// `ids.len() × dims` values: row `i` is the vector of `ids[i]` divided by its length
    /// (all zeros for a zero vector).
    unit: Vec<f32>,
    /// The collection's mean and writing systems, for centring (`centering`).
    stats: CorpusStatistics,
}

impl std::fmt::Debug for VectorCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCopy")
            .field("key", &self.key)
            .field("dims", &self.dims)
            .field("vectors", &self.ids.len())
            .finish()
    }
}

impl Store {
    /// The in-memory copy of `model`'s chunk vectors in this store's file, read again
    /// when the file changed since it was last read ([`VectorCopy::current`]).
    ///
    /// Errors: the database cannot be read.
    pub(crate) fn current_vector_copy(
        &self,
        model: &VectorModel,
    ) -> rusqlite::Result<Arc<VectorCopy>> {
        let key = current_key(self.conn(), self.file_identity(), &model.model_id)?;
        VectorCopy::current(self.vector_copy_slot(), self.conn(), &key, model.dims)
    }
}

/// The copy of one database file, shared by its stores in this process; `None` until
/// the first vector search.
pub(crate) type CopySlot = Arc<Mutex<Option<Arc<VectorCopy>>>>;

/// The slot of the database at `db_path`, shared by every store of that file in this
/// process (the path is canonicalised when it can be); a new slot of its own for an
/// in-memory store (`None`).
pub(crate) fn slot_for(db_path: Option<&Path>) -> CopySlot {
    let Some(path) = db_path else {
        return CopySlot::default();
    };
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, CopySlot>>> = OnceLock::new();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut slots = SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    slots.entry(key).or_default().clone()
}

impl VectorCopy {
    /// The copy in `slot` when it was read with `key`; else reads every vector of the
    /// stored model from `conn` (in one read transaction when `conn` has none open), puts
    /// the copy in `slot` and returns it.
    ///
    /// Errors: the database cannot be read.
    pub(crate) fn current(
        slot: &CopySlot,
        conn: &Connection,
        key: &CopyKey,
        dims: usize,
    ) -> rusqlite::Result<Arc<VectorCopy>> {
        let mut guard = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(copy) = guard.as_ref()
            && copy.key == *key
            && copy.dims == dims
        {
            return Ok(copy.clone());
        }
        // Drop the old copy before reading the new one: at most one is held.
        *guard = None;
        let copy = Arc::new(Self::read(conn, key.file, &key.model_id, dims)?);
        *guard = Some(copy.clone());
        Ok(copy)
    }

    /// Reads every vector of `model_id` and the key they were read at, as one snapshot.
    fn read(
        conn: &Connection,
        file: Option<FileIdentity>,
        model_id: &str,
        dims: usize,
    ) -> rusqlite::Result<VectorCopy> {
        let tx = if conn.is_autocommit() {
            Some(conn.unchecked_transaction()?)
        } else {
            None
        };
        let key = current_key(conn, file, model_id)?;
        // Counted once per read, so the buffers are allocated once.
        let count: i64 =
            conn.query_row("SELECT count(*) FROM vector_keys", [], |row| row.get(0))?;
        let count = usize::try_from(count).unwrap_or(0);
        let mut ids = Vec::with_capacity(count);
        let mut unit = Vec::with_capacity(count.saturating_mul(dims));
        {
            let mut stmt = conn.prepare(&format!("SELECT rowid, embedding FROM {VEC_TABLE}"))?;
            let mut query = stmt.query([])?;
            while let Some(row) = query.next()? {
                let blob = row.get_ref(1)?.as_blob()?;
                // vec0 enforces the dimension; a row without it is not a vector of this model.
                if blob.len() != dims * 4 {
                    continue;
                }
                ids.push(row.get::<_, i64>(0)?);
                let start = unit.len();
                extend_from_blob(&mut unit, blob);
                normalise(&mut unit[start..]);
            }
        }
        let profiles = script_profiles(conn, model_id, &ids)?;
        if let Some(tx) = tx {
            tx.finish()?;
        }
        ids.shrink_to_fit();
        unit.shrink_to_fit();
        let stats = CorpusStatistics::new(&unit, dims, &ids, &profiles);
        Ok(VectorCopy {
            key,
            dims,
            ids,
            unit,
            stats,
        })
    }

    /// How many vectors the copy holds.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The `n` vectors that score highest for `query`, among those whose key `allowed`
    /// accepts (all when `None`): `(vector_keys.id, score, cosine similarity)`, best
    /// first, ties by id. The score is the cosine corrected by `centering` (the module
    /// `centering`; the cosine itself with [`Centering::NONE`]). Fewer than `n` when fewer
    /// are allowed.
    ///
    /// `query` must have the copy's dimension (the caller checks it).
    pub(crate) fn nearest(
        &self,
        query: &[f32],
        n: usize,
        allowed: Option<&dyn Fn(i64) -> bool>,
        centering: Centering,
    ) -> Vec<(i64, f32, f32)> {
        debug_assert_eq!(query.len(), self.dims);
        if n == 0 || self.dims == 0 {
            return Vec::new();
        }
        let q = unit_vector(query);
        let terms = self.stats.offset_terms(&q);
        let mut scored: Vec<(i64, f32, f32)> = self
            .ids
            .iter()
            .zip(self.unit.chunks_exact(self.dims))
            .enumerate()
            .filter(|(_, (id, _))| allowed.is_none_or(|accepts| accepts(**id)))
            .map(|(i, (&id, row))| {
                let cosine = dot(&q, row);
                (id, self.stats.score(i, cosine, &terms, centering), cosine)
            })
            .collect();
        let order =
            |a: &(i64, f32, f32), b: &(i64, f32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > n {
            scored.select_nth_unstable_by(n - 1, order);
            scored.truncate(n);
        }
        scored.sort_unstable_by(order);
        scored
    }

    /// The collection's statistics (mean, writing systems) the copy was read with.
    pub(crate) fn statistics(&self) -> &CorpusStatistics {
        &self.stats
    }
}

/// The writing systems ([`script_profile`]) of the embedded text
/// ([`embedding_text`]: heading path and chunk text) of each vector key in `ids`, from
/// the first of its chunks (chunks of one key have the same text); a key whose chunk is
/// gone has no writing system. Only the first [`SAMPLE_CHARS`] characters of the chunk text
/// are read from the database.
fn script_profiles(
    conn: &Connection,
    model_id: &str,
    ids: &[i64],
) -> rusqlite::Result<Vec<ScriptProfile>> {
    let mut by_id: HashMap<i64, ScriptProfile> = HashMap::with_capacity(ids.len());
    let mut stmt = conn.prepare(
        "SELECT k.id, c.heading_path, substr(c.text, 1, ?2)
         FROM vector_keys k
         JOIN chunks c ON c.id = (SELECT min(c2.id) FROM chunks c2
                                  WHERE c2.content_hash = k.content_hash)
         WHERE k.model_id = ?1",
    )?;
    let mut rows = stmt.query(rusqlite::params![model_id, SAMPLE_CHARS as i64])?;
    while let Some(row) = rows.next()? {
        let heading_path: String = row.get(1)?;
        let text: String = row.get(2)?;
        by_id.insert(
            row.get(0)?,
            script_profile(&embedding_text(&heading_path, &text)),
        );
    }
    let none = script_profile("");
    Ok(ids
        .iter()
        .map(|id| by_id.remove(id).unwrap_or_else(|| none.clone()))
        .collect())
}

/// `v` divided by its length; all zeros when the length is zero.
pub(crate) fn unit_vector(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    normalise(&mut v);
    v
}

/// Divides `v` by its length in place; a zero vector stays zero.
fn normalise(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// `a · b` over the shorter length, in eight independent sums (which the compiler keeps
/// in SIMD registers).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut sums = [0.0f32; LANES];
    let (a8, b8) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_rest, b_rest) = (a8.remainder(), b8.remainder());
    for (x, y) in a8.zip(b8) {
        for i in 0..LANES {
            sums[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum_with_and_without_a_tail() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.25).collect();
        let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
        // Every product and partial sum here is exact in f32 (multiples of 1/8 below 2^10).
        assert_eq!(f64::from(dot(&a, &b)), plain);
        assert_eq!(dot(&a[..16], &b[..16]), {
            let s: f32 = a[..16].iter().zip(&b[..16]).map(|(x, y)| x * y).sum();
            s
        });
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn unit_vector_divides_by_the_length_and_keeps_zero() {
        assert_eq!(unit_vector(&[3.0, 4.0]), vec![0.6, 0.8]);
        assert_eq!(unit_vector(&[0.0, 0.0, 0.0]), vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn slots_are_shared_by_path_and_private_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("index.db");
        std::fs::write(&a, b"").unwrap();
        let same = dir.path().join(".").join("index.db");
        assert!(Arc::ptr_eq(&slot_for(Some(&a)), &slot_for(Some(&same))));
        assert!(!Arc::ptr_eq(
            &slot_for(Some(&a)),
            &slot_for(Some(&dir.path().join("other.db")))
        ));
        assert!(!Arc::ptr_eq(&slot_for(None), &slot_for(None)));
    }
}
