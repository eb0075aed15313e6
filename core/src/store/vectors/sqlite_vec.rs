//! sqlite-vec itself: registering the extension with SQLite, and the blob format of the
//! vectors it stores.

use std::sync::Once;

/// Registers sqlite-vec as an SQLite auto extension, once per process, so
/// every connection opened afterwards has `vec0` and the `vec_*` functions.
pub(crate) fn register_sqlite_vec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        type EntryPoint = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::ffi::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::ffi::c_int;
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, built
        // with SQLITE_CORE against the same bundled SQLite; the crate declares it
        // without arguments, but its C signature is exactly `EntryPoint`.
        let rc = unsafe {
            let init: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init))
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::error!(
                rc,
                "registering sqlite-vec failed; semantic search will be unavailable"
            );
        }
    });
}

/// `f32`s as the little-endian bytes sqlite-vec reads.
pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes back to `f32`s.
pub(super) fn from_blob(blob: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(blob.len() / 4);
    extend_from_blob(&mut out, blob);
    out
}

/// Appends the `f32`s of a blob to `out` (no new vector per blob).
pub(super) fn extend_from_blob(out: &mut Vec<f32>, blob: &[u8]) {
    out.extend(
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    );
}
