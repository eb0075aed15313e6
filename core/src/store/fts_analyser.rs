//! Keeps the full-text table written by one analyser: the index records the
//! [`Lexical::id`] that wrote `chunks_fts`, and opening it with another rewrites the
//! table ([`ensure_lexical`]).

use rusqlite::{Connection, TransactionBehavior};

use super::lexical::{LEXICAL_KEY, Lexical};
use super::{StoreError, meta_in, set_meta_in};

/// The analyser recorded in `meta`, if any.
fn recorded(conn: &Connection) -> rusqlite::Result<Option<String>> {
    meta_in(conn, LEXICAL_KEY)
}

/// Makes the full-text table agree with `lexical`:
///
/// - `meta` records `lexical`'s id: nothing is written.
/// - Otherwise (another id, or none: an index of a folio that did not record it):
///   every row of `chunks_fts` is deleted and written again from the `chunks` and
///   `documents` tables with `lexical` (`fill_fts`), and the id recorded, in one
///   transaction. Chunks, documents and vectors do not change; nothing is parsed or
///   embedded again.
///
/// Returns whether the table was written again. Errors: SQLite's.
///
/// Called when a store opens, and again before each lexical search and write batch
/// ([`super::Store::keep_lexical`]): another process with another analyser (a shell
/// without the Japanese dictionary next to an editor with it) may have written the
/// table again meanwhile, and a long-running server must not query or add words to a
/// table of bigrams. The check is one `meta` read.
pub(crate) fn ensure_lexical(conn: &Connection, lexical: &Lexical) -> Result<bool, StoreError> {
    // What this process writes: words, or (its dictionary failed) the fell-back id, so a
    // table it wrote is not written again at every search.
    if recorded(conn)?.as_deref() == Some(lexical.recorded_id()) {
        return Ok(false);
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Another process may have done it between the read and the lock.
    let stored = recorded(&tx)?;
    if stored.as_deref() == Some(lexical.recorded_id()) {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')",
        [],
    )?;
    let rows = super::fill_fts(&tx, lexical)?;
    // Read after the fill: the dictionary is loaded (or fails) while it runs.
    let current = lexical.recorded_id();
    tracing::info!(
        from = stored.as_deref().unwrap_or("none"),
        to = current,
        rows,
        "full-text index written again with another analyser"
    );
    set_meta_in(&tx, LEXICAL_KEY, current)?;
    tx.commit()?;
    Ok(true)
}

/// At the end of a write batch: when the dictionary failed while the batch wrote
/// Japanese text (so it went in as bigrams), records [`Lexical::recorded_id`] instead of
/// the words id, in the batch's transaction. Nothing otherwise.
pub(crate) fn record_fallback(conn: &Connection, lexical: &Lexical) -> rusqlite::Result<()> {
    let id = lexical.recorded_id();
    if id != lexical.id() && recorded(conn)?.as_deref() != Some(id) {
        tracing::warn!(
            "the Japanese dictionary failed while indexing: the index records bigrams for it ({id})"
        );
        set_meta_in(conn, LEXICAL_KEY, id)?;
    }
    Ok(())
}
