//! The one path policy: every path that arrives from outside goes through here first.
//!
//! A document is named by its KB-relative path, `/`-separated, exactly as the index
//! stores it (docs/architecture.md, "The path policy"). [`check_syntax`] rejects, before any disk access
//! and with the same answer whether or not something exists there: empty and absolute
//! paths, `.`/`..` and empty segments, backslashes, NUL and control characters, `:`,
//! the characters `< > " | ? *`, Windows device names, segments ending in a dot or a
//! space, names over 255 bytes and paths over 4,096, and anything under `.git/` or
//! `.folio/`. [`resolve_existing`] and
//! [`resolve_new`] then look inside the root only: symbolic links (file or folder on the
//! way) and hard-linked files are refused, and a different spelling of an existing name
//! (letter case) is not found.

use std::path::{Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Not a name the index could hold (MCP `INVALID_PATH`).
    #[error("invalid path `{path}`: {reason}")]
    Invalid {
        /// The path as given.
        path: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// No such document or file under this exact spelling, or one folio will not follow (MCP `NOT_FOUND`).
    #[error("not found: `{path}`{detail}")]
    NotFound {
        /// The path as given.
        path: String,
        /// Extra explanation (empty, or starting with "; ").
        detail: String,
    },
    /// A new name that differs from an existing one of the same folder only in letter
    /// case or Unicode normalisation (MCP `ALREADY_EXISTS`): on case-insensitive or
    /// normalising file systems (Windows, macOS) the two are one file.
    #[error(
        "`{path}` would collide with the existing `{existing}`: the names differ only in letter case or Unicode normalisation, which Windows and macOS treat as the same file"
    )]
    Collides {
        /// The path as given.
        path: String,
        /// The existing entry's KB-relative path.
        existing: String,
    },
}

impl PathError {
    /// The MCP error code for this error: `INVALID_PATH` or `NOT_FOUND`.
    pub fn code(&self) -> &'static str {
        match self {
            PathError::Invalid { .. } => "INVALID_PATH",
            PathError::NotFound { .. } => "NOT_FOUND",
            PathError::Collides { .. } => "ALREADY_EXISTS",
        }
    }
}

/// The longest path the policy accepts, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The longest file or folder name the policy accepts, in bytes (`NAME_MAX` of Linux and
/// macOS file systems).
pub const MAX_NAME_BYTES: usize = 255;

const DEVICE_NAMES: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Checks that `path` is a name the index could hold. Touches no disk.
///
/// Errors: [`PathError::Invalid`] with the rule broken.
pub fn check_syntax(path: &str) -> Result<(), PathError> {
    let invalid = |reason| {
        Err(PathError::Invalid {
            path: path.to_string(),
            reason,
        })
    };
    if path.is_empty() {
        return invalid("empty path");
    }
    if path.len() > MAX_PATH_BYTES {
        return invalid("the path is longer than 4,096 bytes");
    }
    if path.split('/').any(|seg| seg.len() > MAX_NAME_BYTES) {
        return invalid("a file or folder name is longer than 255 bytes");
    }
    if path.starts_with('/') {
        return invalid(
            "absolute paths are not allowed; use a path relative to the knowledge base root",
        );
    }
    if path.contains('\\') {
        return invalid("backslashes are not allowed; separate folders with `/`");
    }
    if path.chars().any(|c| c.is_control()) {
        return invalid("NUL and control characters are not allowed");
    }
    if path.contains(':') {
        return invalid("`:` is not allowed (drive letters, URLs and alternate data streams)");
    }
    if path.contains(['<', '>', '"', '|', '?', '*']) {
        return invalid("the characters < > \" | ? * are not allowed");
    }
    for (i, seg) in path.split('/').enumerate() {
        match seg {
            "" => return invalid("empty path segment (`//` or a trailing `/`)"),
            "." | ".." => return invalid("`.` and `..` segments are not allowed"),
            _ => {}
        }
        if seg.ends_with('.') || seg.ends_with(' ') {
            return invalid("a path segment may not end with a dot or a space");
        }
        let stem = seg
            .split('.')
            .next()
            .unwrap_or(seg)
            .trim_end()
            .to_ascii_lowercase();
        if DEVICE_NAMES.contains(&stem.as_str()) {
            return invalid("Windows device names (CON, NUL, COM1, …) are not allowed");
        }
        if i == 0 && (seg == ".git" || seg == ".folio") {
            return invalid("`.git/` and `.folio/` are never served or written");
        }
    }
    Ok(())
}

/// Resolves an existing regular file inside `root`.
///
/// Errors: [`PathError::Invalid`] from [`check_syntax`]; [`PathError::NotFound`] when
/// nothing exists under that exact spelling, when a folder on the way or the file is a
/// symbolic link, when the file has other hard links, or when it is not a regular file.
pub fn resolve_existing(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    check_syntax(path)?;
    let not_found = |detail: &str| PathError::NotFound {
        path: path.to_string(),
        detail: detail.to_string(),
    };
    let mut current = root.to_path_buf();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        current.push(seg);
        let meta = std::fs::symlink_metadata(&current).map_err(|_| not_found(""))?;
        if meta.file_type().is_symlink() {
            return Err(not_found("; symbolic links are not followed"));
        }
        if !exact_name_exists(current.parent().unwrap_or(root), seg) {
            return Err(not_found(""));
        }
        if last {
            if !meta.is_file() {
                return Err(not_found("; not a regular file"));
            }
            if hard_link_count(&meta) > 1 {
                return Err(not_found("; files with several hard links are not served"));
            }
        } else if !meta.is_dir() {
            return Err(not_found(""));
        }
    }
    Ok(current)
}

/// Resolves a path for a file that may not exist yet (create, move target).
///
/// Folders on the way that exist must be real folders, not symbolic links; the file
/// itself, if it exists, must pass [`resolve_existing`]. Missing folders are allowed
/// (the caller creates them), but no missing segment may differ from an existing entry of
/// its folder only in letter case or Unicode normalisation.
///
/// Errors: as [`resolve_existing`], and [`PathError::Collides`].
pub fn resolve_new(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    check_syntax(path)?;
    let mut current = root.to_path_buf();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let folder = current.clone();
        current.push(seg);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(PathError::NotFound {
                    path: path.to_string(),
                    detail: "; symbolic links are not followed".into(),
                });
            }
            Ok(_) if !exact_name_exists(&folder, seg) => {
                // Another spelling of an existing name (a case-insensitive file system).
                return Err(collision(path, &segments[..i], &folder, seg));
            }
            Ok(_) if i + 1 == segments.len() => return resolve_existing(root, path),
            Ok(meta) if !meta.is_dir() => {
                return Err(PathError::NotFound {
                    path: path.to_string(),
                    detail: format!("; `{seg}` is not a folder"),
                });
            }
            Ok(_) => {}
            Err(_) => {
                if let Some(existing) = folded_twin(&folder, seg) {
                    let mut twin: Vec<&str> = segments[..i].to_vec();
                    twin.push(&existing);
                    return Err(PathError::Collides {
                        path: path.to_string(),
                        existing: twin.join("/"),
                    });
                }
                break;
            }
        }
    }
    Ok(root.join(path))
}

fn collision(path: &str, before: &[&str], folder: &Path, seg: &str) -> PathError {
    let existing = folded_twin(folder, seg).unwrap_or_else(|| seg.to_string());
    let mut twin: Vec<&str> = before.to_vec();
    twin.push(&existing);
    PathError::Collides {
        path: path.to_string(),
        existing: twin.join("/"),
    }
}

/// A name compared as case-insensitive, normalising file systems compare it: NFC, then
/// lowercased (Unicode). Link resolution uses the same folding for its fallbacks.
pub fn folded(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfc().collect::<String>().to_lowercase()
}

/// An entry of `folder` that differs from `name` but folds to the same name.
fn folded_twin(folder: &Path, name: &str) -> Option<String> {
    let want = folded(name);
    std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| {
            let entry = e.file_name().to_str()?.to_string();
            (entry != name && folded(&entry) == want).then_some(entry)
        })
}

fn exact_name_exists(dir: &Path, name: &str) -> bool {
    // On case-sensitive file systems the metadata lookup already proved it; elsewhere the
    // folder listing decides, so `README.MD` does not reach `readme.md`.
    if cfg!(target_os = "linux") {
        return true;
    }
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_str() == Some(name))
        })
        .unwrap_or(false)
}

#[cfg(unix)]
fn hard_link_count(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn hard_link_count(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// The part of KB-relative `path` inside `folder` (`""` is the root): `content/en/a/b.md`
/// in `content/en` is `a/b.md`; `path` itself when it does not lie in `folder`.
pub fn within_folder<'a>(folder: &str, path: &'a str) -> &'a str {
    match folder {
        "" => path,
        folder => path
            .strip_prefix(folder)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or(path),
    }
}

/// Joins `rel` onto the KB-relative folder `folder` (`""` for the root) and normalises
/// `.` and `..`; `None` when the result would leave the root. `("website", "../docs")` →
/// `docs`.
pub fn join_onto_folder(folder: &str, rel: &str) -> Option<String> {
    match folder {
        "" => join_relative("_", rel),
        folder => join_relative(&format!("{folder}/_"), rel),
    }
}

/// Joins `rel` onto the folder of `from` (or the root when `rel` starts with `/`) and
/// normalises `.` and `..`; `None` when the result would leave the root.
pub fn join_relative(from: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let rel = if let Some(abs) = rel.strip_prefix('/') {
        abs
    } else {
        parts.extend(from.split('/'));
        parts.pop();
        rel
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_rejections() {
        let cases = [
            ("", "empty path"),
            ("/etc/passwd", "absolute"),
            ("a\\b.md", "backslashes"),
            ("a\0.md", "control"),
            ("a\n.md", "control"),
            ("c:/x.md", "`:`"),
            ("note.md:secret", "`:`"),
            ("a/../b.md", "`.` and `..`"),
            ("./a.md", "`.` and `..`"),
            ("a//b.md", "empty path segment"),
            ("a/", "empty path segment"),
            ("CON", "device"),
            ("docs/nul.md", "device"),
            ("com1.txt", "device"),
            ("a./b.md", "dot or a space"),
            ("a /b.md", "dot or a space"),
            ("a?.md", "characters"),
            (".git/config", "never served"),
            (".folio/index.db", "never served"),
        ];
        for (path, fragment) in cases {
            match check_syntax(path) {
                Err(PathError::Invalid { reason, .. }) => {
                    assert!(reason.contains(fragment), "{path:?}: {reason}")
                }
                other => panic!("{path:?} should be invalid, got {other:?}"),
            }
        }
        for ok in [
            "a.md",
            "docs/ja/日本語.md",
            "a b/c-d_e.md",
            ".github/x.md",
            "console.md",
        ] {
            assert_eq!(check_syntax(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn disk_rejections_symlinks_hardlinks_and_case() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/a.md"), "# A\n").unwrap();
        std::fs::write(root.join("outside.md"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("docs"), root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(root.join("docs/a.md"), root.join("link.md")).unwrap();
        std::fs::hard_link(root.join("outside.md"), root.join("hard.md")).unwrap();

        assert_eq!(
            resolve_existing(root, "docs/a.md").unwrap(),
            root.join("docs/a.md")
        );
        let code = |r: Result<PathBuf, PathError>| r.unwrap_err().code();
        assert_eq!(code(resolve_existing(root, "docs/A.md")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "linkdir/a.md")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "link.md")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "hard.md")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "docs")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "missing.md")), "NOT_FOUND");
        assert_eq!(code(resolve_existing(root, "../x.md")), "INVALID_PATH");
        assert_eq!(
            resolve_new(root, "docs/new/b.md").unwrap(),
            root.join("docs/new/b.md")
        );
        assert_eq!(code(resolve_new(root, "linkdir/b.md")), "NOT_FOUND");
        assert_eq!(code(resolve_new(root, "docs/a.md/b.md")), "NOT_FOUND");
    }
}
