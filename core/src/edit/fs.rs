//! File writes for edits: atomic replacement, creation, moves and deletion.
//!
//! A write goes to a temporary file in the same folder, is flushed with `fsync`, and
//! is renamed over the target, so readers see the old bytes or the new bytes, never a
//! mix. Callers pass paths that went through the path policy first.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync, rename).
///
/// The new file keeps the permissions of the file it replaces.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".folio-write-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Creates `path` with `bytes`, failing with `AlreadyExists` if it exists; creates missing folders.
pub fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".folio-write-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // `persist_noclobber` fails if the target appeared meanwhile.
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Moves `from` to `to` without replacing an existing `to`; creates missing folders.
pub fn move_file(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // A hard link then unlink refuses to clobber an existing target on every Unix.
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from)?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {
            if to.exists() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "target exists",
                ));
            }
            std::fs::rename(from, to)?;
        }
    }
    if let Some(dir) = to.parent() {
        sync_dir(dir);
    }
    Ok(())
}

fn sync_dir(dir: &Path) {
    // Persisting the rename needs the folder flushed; not every platform allows it.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_create_refuses_existing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        create_new(&p, b"one").unwrap();
        assert_eq!(
            create_new(&p, b"two").unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        write_atomic(&p, b"three").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        let q = dir.path().join("sub/b.md");
        move_file(&p, &q).unwrap();
        assert!(!p.exists());
        assert_eq!(std::fs::read(&q).unwrap(), b"three");
        // No temp files are left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
