//! Files inside a root opened without following any symbolic link, one folder at a time,
//! so that a folder swapped for a link between the path policy's check and the open
//! cannot lead outside the root.
//!
//! Every folder on the way from the root is opened with `O_DIRECTORY | O_NOFOLLOW`
//! relative to the folder before it (`openat`), and the file itself with `O_NOFOLLOW`;
//! a symbolic link anywhere fails the open (`ELOOP` or `ENOTDIR`), and the file descriptor
//! of a folder keeps naming that folder even if its path is renamed meanwhile. Writes
//! create, rename and remove files relative to their folder's descriptor too.
//!
//! Paths are KB-relative (`/`-separated, already checked by the path policy's syntax
//! rules); the root itself is opened by its path (it is canonical and chosen by the user).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// An open folder of a root.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
}

fn io(err: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(err)
}

/// A symbolic link where a folder or file was expected, as the error says it.
fn no_link(err: rustix::io::Errno, name: &str) -> std::io::Error {
    if err == rustix::io::Errno::LOOP || err == rustix::io::Errno::NOTDIR {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{name}` is a symbolic link or not a folder; folio does not follow links"),
        )
    } else {
        io(err)
    }
}

impl Folder {
    /// Opens the root folder by its path.
    pub fn root(root: &Path) -> std::io::Result<Folder> {
        let fd = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        Ok(Folder { fd })
    }

    /// Opens the folder `name` inside this one, never through a symbolic link; with
    /// `create`, makes it first when it is missing (mode `0777` minus the umask).
    pub fn open_dir(&self, name: &str, create: bool) -> std::io::Result<Folder> {
        let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC;
        match rustix::fs::openat(self.fd.as_fd(), name, flags, Mode::empty()) {
            Ok(fd) => Ok(Folder { fd }),
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(self.fd.as_fd(), name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(io(e)),
                }
                let fd = rustix::fs::openat(self.fd.as_fd(), name, flags, Mode::empty())
                    .map_err(|e| no_link(e, name))?;
                Ok(Folder { fd })
            }
            Err(e) => Err(no_link(e, name)),
        }
    }

    /// Opens the regular file `name` of this folder for reading, never through a symbolic
    /// link. Returns the file and its hard-link count.
    ///
    /// Errors: missing (`NotFound`), a link or a folder or anything but a regular file.
    pub fn open_file(&self, name: &str) -> std::io::Result<(File, u64)> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rustix::fs::openat(self.fd.as_fd(), name, flags, Mode::empty())
            .map_err(|e| no_link(e, name))?;
        let stat = rustix::fs::fstat(&fd).map_err(io)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{name}` is not a regular file"),
            ));
        }
        Ok((File::from(fd), stat.st_nlink as u64))
    }

    /// The kind of what `name` is in this folder (a link is reported as a link), or
    /// `None` when nothing is there.
    pub fn kind(&self, name: &str) -> std::io::Result<Option<FileType>> {
        match rustix::fs::statat(self.fd.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(FileType::from_raw_mode(stat.st_mode))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(io(e)),
        }
    }

    /// The permission bits of the file `name`, when it exists.
    fn mode_of(&self, name: &str) -> Option<u32> {
        rustix::fs::statat(self.fd.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|s| s.st_mode & 0o7777)
    }

    /// Creates a new file holding `bytes` under a fresh temporary name
    /// (`<prefix><pid>-<n>`), flushed to disk, with `mode` (or `0666` minus the umask);
    /// returns its name.
    pub fn create_temp(
        &self,
        prefix: &str,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> std::io::Result<String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = format!("{prefix}{}-{nanos:08x}{n}", std::process::id());
            let fd = match rustix::fs::openat(
                self.fd.as_fd(),
                name.as_str(),
                flags,
                Mode::from_bits_truncate(0o666),
            ) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(io(e)),
            };
            let mut file = File::from(fd);
            let written = (|| {
                if let Some(mode) = mode {
                    rustix::fs::fchmod(&file, Mode::from_bits_truncate(mode)).map_err(io)?;
                }
                file.write_all(bytes)?;
                file.sync_all()
            })();
            if let Err(e) = written {
                let _ = self.remove(&name);
                return Err(e);
            }
            return Ok(name);
        }
    }

    /// [`Folder::create_temp`] with the permission bits of the file `like`, when it exists.
    pub fn create_temp_like(
        &self,
        prefix: &str,
        bytes: &[u8],
        like: &str,
    ) -> std::io::Result<String> {
        self.create_temp(prefix, bytes, self.mode_of(like))
    }

    /// Renames `from` (in this folder) to `to` in `target`, replacing what is there.
    pub fn rename(&self, from: &str, target: &Folder, to: &str) -> std::io::Result<()> {
        rustix::fs::renameat(self.fd.as_fd(), from, target.fd.as_fd(), to).map_err(io)
    }

    /// Makes `to` in `target` a second name of `from` (in this folder); fails with
    /// `AlreadyExists` when `to` exists, so nothing is ever replaced.
    pub fn link(&self, from: &str, target: &Folder, to: &str) -> std::io::Result<()> {
        rustix::fs::linkat(
            self.fd.as_fd(),
            from,
            target.fd.as_fd(),
            to,
            AtFlags::empty(),
        )
        .map_err(io)
    }

    /// Removes the file `name`.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::unlinkat(self.fd.as_fd(), name, AtFlags::empty()).map_err(io)
    }

    /// Flushes the folder, so that a rename or removal in it survives a crash.
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }

    /// Reads the regular file `name`, at most `cap` bytes.
    ///
    /// Errors: as [`Folder::open_file`]; `InvalidData` when the file is larger than `cap`.
    pub fn read(&self, name: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        let (file, _) = self.open_file(name)?;
        let mut bytes = Vec::new();
        file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("`{name}` is larger than {cap} bytes"),
            ));
        }
        Ok(bytes)
    }
}

/// Opens the folder that holds KB-relative `path` (every segment but the last, from the
/// root, never through a symbolic link) and returns it with the last segment; with
/// `create`, makes the missing folders.
pub fn parent<'p>(root: &Path, path: &'p str, create: bool) -> std::io::Result<(Folder, &'p str)> {
    let mut folder = Folder::root(root)?;
    let mut segments = path.split('/').peekable();
    while let Some(segment) = segments.next() {
        if segments.peek().is_none() {
            return Ok((folder, segment));
        }
        folder = folder.open_dir(segment, create)?;
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "empty path",
    ))
}

/// Reads the regular file at KB-relative `path` under `root`, at most `cap` bytes, never
/// through a symbolic link.
pub fn read(root: &Path, path: &str, cap: u64) -> std::io::Result<Vec<u8>> {
    let (folder, name) = parent(root, path, false)?;
    folder.read(name, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_and_refuses_every_link_on_the_way() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("docs/a.md"), "inside").unwrap();
        std::fs::write(outside.join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), root.join("docs/link.md")).unwrap();
        assert_eq!(read(&root, "docs/a.md", 100).unwrap(), b"inside");
        for path in ["linked/secret.md", "docs/link.md"] {
            let err = read(&root, path, 100).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{path}: {err}");
        }
        assert_eq!(
            read(&root, "docs/a.md", 3).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        assert_eq!(
            read(&root, "docs/none.md", 3).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        // A folder swapped for a link after it was checked: the open fails.
        std::fs::rename(root.join("docs"), dir.path().join("moved-away")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("docs")).unwrap();
        std::fs::write(outside.join("a.md"), "outside").unwrap();
        assert!(read(&root, "docs/a.md", 100).is_err());
    }

    #[test]
    fn writes_stay_in_the_folder_they_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let (folder, name) = parent(&root, "new/deep/a.md", true).unwrap();
        assert_eq!(name, "a.md");
        let temp = folder.create_temp(".t-", b"bytes", None).unwrap();
        folder.link(&temp, &folder, name).unwrap();
        assert_eq!(
            folder.link(&temp, &folder, name).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        folder.remove(&temp).unwrap();
        // The folder was renamed after it was opened: the write still lands in it.
        std::fs::rename(root.join("new"), root.join("renamed")).unwrap();
        let temp = folder.create_temp(".t-", b"second", None).unwrap();
        folder.rename(&temp, &folder, "b.md").unwrap();
        assert_eq!(
            std::fs::read(root.join("renamed/deep/b.md")).unwrap(),
            b"second"
        );
        assert_eq!(
            std::fs::read(root.join("renamed/deep/a.md")).unwrap(),
            b"bytes"
        );
        assert_eq!(folder.kind("b.md").unwrap(), Some(FileType::RegularFile));
        assert_eq!(folder.kind("c.md").unwrap(), None);
    }
}
