//! Which file a path names, to tell an index file from another built or restored at the
//! same path.

use std::path::Path;
use std::time::SystemTime;

/// A file's device, inode and creation time (where the platform and file system have
/// them). Equal only for the same file: a file deleted while a connection holds it keeps
/// its inode, and one whose inode number is reused after it is gone has another creation
/// time (a restored copy cannot carry its original's: `cp -a` sets modification times,
/// not creation times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    dev: u64,
    ino: u64,
    created: Option<SystemTime>,
}

impl FileIdentity {
    /// The identity of the file at `path`; `None` when there is none, and on a platform
    /// without inodes (where nothing is told apart by it).
    pub(crate) fn of(path: &Path) -> Option<FileIdentity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(path).ok().map(|m| FileIdentity {
                dev: m.dev(),
                ino: m.ino(),
                created: m.created().ok(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_built_again_at_the_same_path_is_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        assert_eq!(FileIdentity::of(&path), None);
        std::fs::write(&path, b"one").unwrap();
        let first = FileIdentity::of(&path).unwrap();
        std::fs::write(&path, b"one, written again in place").unwrap();
        assert_eq!(FileIdentity::of(&path), Some(first));
        // Kept open, as a connection keeps it, so its inode cannot be reused.
        let _held = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"one").unwrap();
        assert_ne!(FileIdentity::of(&path), Some(first));
    }
}
