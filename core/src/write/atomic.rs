//! File primitives for writes: atomic replacement, creation without clobbering, moves and
//! the clean-up of temporary files a killed writer left behind.
//!
//! A write goes to a temporary file in the target's folder (named
//! `.folio-write-<pid>-<random>`), is flushed with `fsync`, and is renamed over the
//! target, so readers see the old bytes or the new bytes, never a mix, and a crash leaves
//! the target whole. Callers pass paths that went through the path policy first, and hold
//! the root's write lock ([`super::Writer::lock`]).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The name prefix of every temporary file folio writes next to a note.
pub const TEMP_PREFIX: &str = ".folio-write-";

/// The folder of `path` (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A new temporary file in `dir` holding `bytes`, flushed to disk.
///
/// It is created with mode `0666` minus the umask, as a new file made by any other
/// program would be (the `tempfile` default, `0600`, would hide new notes from a group).
fn temp_with(dir: &Path, bytes: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// A temporary file holding the new content of `path`, ready to be renamed over it with
/// [`StagedWrite::commit`]. Dropping it without committing removes the temporary file.
#[derive(Debug)]
pub struct StagedWrite {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl StagedWrite {
    /// Writes `bytes` to a temporary file next to `path` and flushes it; the file at
    /// `path` is not touched. The temporary file takes the permissions of the file it
    /// will replace, when there is one.
    pub fn new(path: &Path, bytes: &[u8]) -> std::io::Result<StagedWrite> {
        let tmp = temp_with(folder_of(path), bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(tmp.path(), meta.permissions())?;
        }
        Ok(StagedWrite {
            tmp,
            target: path.to_path_buf(),
        })
    }

    /// Renames the temporary file over the target and flushes the folder.
    pub fn commit(self) -> std::io::Result<()> {
        let dir = folder_of(&self.target).to_path_buf();
        self.tmp.persist(&self.target).map_err(|e| e.error)?;
        sync_dir(&dir);
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync, rename).
///
/// The new file keeps the permissions of the file it replaces.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    StagedWrite::new(path, bytes)?.commit()
}

/// Creates `path` with `bytes`, failing with `AlreadyExists` if it exists; creates missing folders.
pub fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let dir = folder_of(path);
    let tmp = temp_with(dir, bytes)?;
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
    sync_dir(folder_of(to));
    if folder_of(from) != folder_of(to) {
        sync_dir(folder_of(from));
    }
    Ok(())
}

/// Flushes a folder, so that a rename or a removal in it survives a crash. Not every
/// platform allows it; failures are ignored.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// True when `name` is a temporary file folio writes ([`TEMP_PREFIX`]) and the process
/// that made it is gone, so nobody will rename it any more.
///
/// The writer's process id is part of the name; a process that still runs under that
/// id (the writer, or in rare cases another process that got its id) keeps its files.
pub fn is_stale_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX) else {
        return false;
    };
    let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        // An older folio named them `.folio-write-<random>`: nobody renames those either.
        return true;
    };
    !process_alive(pid)
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 performs only the existence and permission checks of kill(2).
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(pid: u32) -> bool {
    pid == std::process::id()
}

/// Removes the stale temporary files ([`is_stale_temp_name`]) among `paths`
/// (KB-relative, as a walk of `root` lists them); returns how many were removed.
pub fn remove_stale_temp_files<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> usize {
    let mut removed = 0;
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        if is_stale_temp_name(name) && std::fs::remove_file(root.join(path)).is_ok() {
            tracing::info!(
                path,
                "removed a temporary file left by an interrupted write"
            );
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

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
        assert_eq!(names(dir.path()), ["sub"]);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_follow_the_umask_and_replacements_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        create_new(&p, b"one").unwrap();
        // SAFETY: umask(2) only reads and sets this process's file mode mask.
        let mask = unsafe {
            let old = libc::umask(0);
            libc::umask(old);
            old
        };
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // `mode_t` is `u32` on Linux and `u16` on macOS.
        #[allow(clippy::useless_conversion)]
        let mask = u32::from(mask);
        assert_eq!(mode, 0o666 & !mask);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"two").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_dropped_staged_write_leaves_the_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        std::fs::write(&p, "old").unwrap();
        let staged = StagedWrite::new(&p, b"new").unwrap();
        assert_eq!(names(dir.path()).len(), 2);
        drop(staged);
        assert_eq!(names(dir.path()), ["a.md"]);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
    }

    #[test]
    fn stale_temp_files_are_those_of_processes_that_are_gone() {
        let own = format!("{TEMP_PREFIX}{}-abc", std::process::id());
        assert!(!is_stale_temp_name(&own));
        // Process ids above the kernel's pid_max (4,194,304 at most) never run.
        assert!(is_stale_temp_name(&format!("{TEMP_PREFIX}999999999-abc")));
        assert!(is_stale_temp_name(&format!("{TEMP_PREFIX}Xy12ab")));
        assert!(!is_stale_temp_name("notes.md"));
        let dir = tempfile::tempdir().unwrap();
        let stale = format!("sub/{TEMP_PREFIX}999999999-abc");
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join(&stale), "x").unwrap();
        std::fs::write(dir.path().join(&own), "y").unwrap();
        let removed = remove_stale_temp_files(dir.path(), [stale.as_str(), own.as_str()]);
        assert_eq!(removed, 1);
        assert!(!dir.path().join(&stale).exists());
        assert!(dir.path().join(&own).exists());
    }
}
