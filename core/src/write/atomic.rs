//! File primitives for writes: atomic replacement, creation without clobbering, moves,
//! removal, and the clean-up of temporary files a killed writer left behind.
//!
//! A write goes to a temporary file in the target's folder (named
//! `.folio-write-<pid>-<n>`), is flushed with `fsync`, and is renamed over the target, so
//! readers see the old bytes or the new bytes, never a mix, and a crash leaves the target
//! whole. Every file is reached through [`crate::workspace::beneath`]: folders are opened
//! one at a time without following symbolic links, and the temporary file, the rename and
//! the final comparison all happen in the folder that was opened, so a folder swapped for
//! a link meanwhile cannot lead a write outside the root. Paths are KB-relative and passed
//! the path policy first; callers hold the root's write lock ([`super::Writer::lock`]).

use std::path::Path;
use std::sync::Arc;

use crate::workspace::beneath::{Folder, parent};

/// The name prefix of every temporary file folio writes next to a note.
pub const TEMP_PREFIX: &str = ".folio-write-";

/// The largest file a write compares or reads back: larger files are not notes.
const READ_CAP: u64 = 1 << 31;

/// A temporary file holding the new content of a file, ready to be renamed over it with
/// [`StagedWrite::commit`]. Dropping it without committing removes the temporary file.
#[derive(Debug)]
pub struct StagedWrite {
    folder: Arc<Folder>,
    temp: Option<String>,
    name: String,
}

impl StagedWrite {
    /// Writes `bytes` to a temporary file next to KB-relative `path` under `root` and
    /// flushes it; the file at `path` is not touched. The temporary file takes the
    /// permissions of the file it will replace, when there is one.
    pub fn new(root: &Path, path: &str, bytes: &[u8]) -> std::io::Result<StagedWrite> {
        let (folder, name) = parent(root, path, false)?;
        StagedWrite::in_folder(&Arc::new(folder), name, bytes)
    }

    /// [`StagedWrite::new`] for the file `name` of a folder already opened (with
    /// [`parent`]); staged writes of one folder share its handle.
    pub fn in_folder(
        folder: &Arc<Folder>,
        name: &str,
        bytes: &[u8],
    ) -> std::io::Result<StagedWrite> {
        let temp = folder.create_temp_like(TEMP_PREFIX, bytes, name)?;
        Ok(StagedWrite {
            name: name.to_string(),
            temp: Some(temp),
            folder: Arc::clone(folder),
        })
    }

    /// The bytes of the file the write will replace (in the folder it opened), or `None`
    /// when there is none.
    pub fn current(&self) -> std::io::Result<Option<Vec<u8>>> {
        match self.folder.read(&self.name, READ_CAP) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether another program holds the file the write will replace open for writing
    /// right now ([`open_for_writing`]).
    pub fn being_written(&self) -> Option<bool> {
        open_for_writing(&self.folder, &self.name)
    }

    /// Renames the temporary file over the target and flushes the folder.
    pub fn commit(self) -> std::io::Result<()> {
        let folder = self.commit_unflushed()?;
        folder.sync();
        Ok(())
    }

    /// Renames the temporary file over the target without flushing the folder, and
    /// returns the folder: the caller flushes it ([`Folder::sync`]) before the write
    /// counts as done, once for all the files renamed in it.
    pub fn commit_unflushed(mut self) -> std::io::Result<Arc<Folder>> {
        let temp = self.temp.clone().expect("committed once");
        self.folder.rename(&temp, &self.folder, &self.name)?;
        // Renamed: nothing is left for `drop` to remove.
        self.temp = None;
        Ok(Arc::clone(&self.folder))
    }
}

impl Drop for StagedWrite {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = self.folder.remove(&temp);
        }
    }
}

/// Writes `bytes` to KB-relative `path` atomically (temp file in the same folder, fsync,
/// rename). The new file keeps the permissions of the file it replaces.
pub fn write_atomic(root: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    StagedWrite::new(root, path, bytes)?.commit()
}

/// Creates KB-relative `path` with `bytes` (mode `0666` minus the umask, as any other
/// program's new file), failing with `AlreadyExists` if anything is there; creates
/// missing folders.
pub fn create_new(root: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let (folder, name) = parent(root, path, true)?;
    let temp = folder.create_temp(TEMP_PREFIX, bytes, None)?;
    // A hard link refuses to replace an existing file; the temporary name then goes.
    let linked = folder.link(&temp, &folder, name);
    let _ = folder.remove(&temp);
    linked?;
    folder.sync();
    Ok(())
}

/// Reads KB-relative `path` (never through a link); `None` when nothing is there.
pub fn read(root: &Path, path: &str) -> std::io::Result<Option<Vec<u8>>> {
    match crate::workspace::beneath::read(root, path, READ_CAP) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether another program holds KB-relative `path` open for writing right now
/// ([`open_for_writing`]); `None` when that cannot be told or nothing is there.
pub fn being_written(root: &Path, path: &str) -> Option<bool> {
    let (folder, name) = parent(root, path, false).ok()?;
    open_for_writing(&folder, name)
}

/// Whether any process holds the regular file `name` of `folder` open for writing right
/// now: `Some(true)` or `Some(false)` where the kernel can answer, `None` where it cannot
/// (not Linux, a file system without leases such as some network ones, a file another user
/// owns, nothing there).
///
/// A program that saves in place (a shell's `>`, Python's `open(path, "w")`, some
/// editors) empties the file and then writes it through a descriptor it keeps open. A
/// write that read the file in between would plan against an empty or partial text, and a
/// rename over the file would send that program's bytes to the replaced file, where they
/// are lost. Linux refuses a read lease (fcntl(2) `F_SETLEASE` with `F_RDLCK`) with
/// `EAGAIN` exactly while some descriptor has the file open for writing, so taking one and
/// dropping it at once answers the question without blocking anyone. While the lease is
/// held (microseconds), another program's open for writing waits for its release and the
/// kernel signals this process with `SIGIO`, whose default action would end it; the first
/// call therefore sets `SIGIO` to be ignored when nothing in the process handles it.
pub fn open_for_writing(folder: &Folder, name: &str) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        static IGNORE_SIGIO: std::sync::Once = std::sync::Once::new();
        IGNORE_SIGIO.call_once(|| {
            // SAFETY: reads the disposition of SIGIO and replaces only the default one;
            // no handler of this process is changed.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGIO, std::ptr::null(), &mut current) == 0
                    && current.sa_sigaction == libc::SIG_DFL
                {
                    libc::signal(libc::SIGIO, libc::SIG_IGN);
                }
            }
        });
        let (file, _) = folder.open_file(name).ok()?;
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is a descriptor this function owns (opened read-only above) for the
        // whole call; F_SETLEASE takes an integer argument.
        let taken = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) };
        if taken == 0 {
            // SAFETY: as above; releases the lease just taken.
            unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
            return Some(false);
        }
        let errno = std::io::Error::last_os_error().raw_os_error();
        (errno == Some(libc::EAGAIN)).then_some(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (folder, name);
        None
    }
}

/// Moves KB-relative `from` to `to` without replacing an existing `to`; creates missing
/// folders.
pub fn move_file(root: &Path, from: &str, to: &str) -> std::io::Result<()> {
    let (from_folder, from_name) = parent(root, from, false)?;
    let (to_folder, to_name) = parent(root, to, true)?;
    // A hard link then an unlink refuses to clobber an existing target on every Unix.
    match from_folder.link(from_name, &to_folder, to_name) {
        Ok(()) => from_folder.remove(from_name)?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {
            if to_folder.kind(to_name)?.is_some() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "target exists",
                ));
            }
            from_folder.rename(from_name, &to_folder, to_name)?;
        }
    }
    to_folder.sync();
    from_folder.sync();
    Ok(())
}

/// Removes KB-relative `path`.
pub fn remove(root: &Path, path: &str) -> std::io::Result<()> {
    let (folder, name) = parent(root, path, false)?;
    folder.remove(name)?;
    folder.sync();
    Ok(())
}

/// Writes a file of folio's own state (a journal entry) atomically by its path: these
/// live in the state folder, which no tool can name.
pub fn write_state_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Flushes a folder by its path, so that a rename or a removal in it survives a crash.
/// Not every platform allows it; failures are ignored.
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

/// Removes the stale temporary files ([`is_stale_temp_name`]) among `paths`
/// (KB-relative, as a walk of `root` lists them); returns how many were removed.
pub fn remove_stale_temp_files<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> usize {
    let mut removed = 0;
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        if is_stale_temp_name(name) && remove(root, path).is_ok() {
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
        let root = dir.path();
        create_new(root, "a.md", b"one").unwrap();
        assert_eq!(
            create_new(root, "a.md", b"two").unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        write_atomic(root, "a.md", b"three").unwrap();
        assert_eq!(std::fs::read(root.join("a.md")).unwrap(), b"three");
        move_file(root, "a.md", "sub/b.md").unwrap();
        assert!(!root.join("a.md").exists());
        assert_eq!(std::fs::read(root.join("sub/b.md")).unwrap(), b"three");
        // No temp files are left behind.
        assert_eq!(names(root), ["sub"]);
        assert_eq!(names(&root.join("sub")), ["b.md"]);
    }

    #[test]
    fn new_files_follow_the_umask_and_replacements_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        create_new(root, "a.md", b"one").unwrap();
        // SAFETY: umask(2) only reads and sets this process's file mode mask.
        let mask = unsafe {
            let old = libc::umask(0);
            libc::umask(old);
            old
        };
        // `mode_t` is `u32` on Linux and `u16` on macOS.
        #[allow(clippy::useless_conversion)]
        let mask = u32::from(mask);
        let mode = std::fs::metadata(root.join("a.md"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o666 & !mask);
        std::fs::set_permissions(root.join("a.md"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        write_atomic(root, "a.md", b"two").unwrap();
        let mode = std::fs::metadata(root.join("a.md"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_dropped_staged_write_leaves_the_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "old").unwrap();
        let staged = StagedWrite::new(dir.path(), "a.md", b"new").unwrap();
        assert_eq!(names(dir.path()).len(), 2);
        assert_eq!(staged.current().unwrap().as_deref(), Some(&b"old"[..]));
        drop(staged);
        assert_eq!(names(dir.path()), ["a.md"]);
        assert_eq!(std::fs::read(dir.path().join("a.md")).unwrap(), b"old");
    }

    #[test]
    fn writes_never_go_through_a_symbolic_link() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        std::fs::write(outside.join("x.md"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.join("x.md"), root.join("file-link.md")).unwrap();
        assert!(create_new(&root, "linked/new.md", b"x").is_err());
        assert!(write_atomic(&root, "linked/x.md", b"x").is_err());
        assert_eq!(names(&outside), ["x.md"]);
        assert_eq!(std::fs::read(outside.join("x.md")).unwrap(), b"outside");
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
