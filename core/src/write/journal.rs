//! The journal of multi-file writes: a move that rewrites links in several files is
//! written down before its first change, so a crash midway can be finished.
//!
//! A journal entry is one JSON file in `<state dir>/journal/`, named
//! `<pid>-<nanoseconds>.json`, holding the operation's [`Step`]s with the text each file
//! had when the operation was planned and the text it gets. It is written (and flushed)
//! under the root's write lock before the first file changes, and removed after the last.
//! Since every folio writer holds that lock from plan to finish, an entry found by the
//! next lock holder belongs to a writer that died.
//!
//! **Recovery finishes the operation** (roll forward): each step whose file still holds
//! its planned-against text, or already holds the new text, is brought to the new text;
//! a file that holds anything else was changed by someone after the crash and is left
//! as it is (logged, and listed in [`RecoveryReport::left`]). Finishing is chosen over
//! undoing because the operation was acknowledged to nobody yet either way, and
//! finishing leaves every link consistent with where the moved file is.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{WriteError, WriteGuard, atomic};
use crate::workspace::path_policy::{check_syntax, resolve_new};

/// One file change of a multi-file operation. Paths are KB-relative and passed the path
/// policy when the operation was planned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// The file at `path` goes from `old` to `new`.
    Replace {
        /// KB-relative path.
        path: String,
        /// Its text when the operation was planned.
        old: String,
        /// Its text afterwards.
        new: String,
    },
    /// The file at `from` (holding `old`) moves to `to` (which must not exist) and then
    /// holds `new` (its own links rewritten for the new folder).
    Move {
        /// KB-relative path before.
        from: String,
        /// KB-relative path after.
        to: String,
        /// Its text when the operation was planned.
        old: String,
        /// Its text afterwards.
        new: String,
    },
}

/// What [`recover`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Interrupted operations found and finished.
    pub finished: usize,
    /// Files left as they were because someone changed them after the crash, or a
    /// journal entry that could not be read (its file is renamed to `….failed`).
    pub left: Vec<String>,
}

impl RecoveryReport {
    /// True when there was nothing to recover.
    pub fn is_empty(&self) -> bool {
        self.finished == 0 && self.left.is_empty()
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    steps: Vec<Step>,
}

fn read_opt(abs: &Path) -> Option<Vec<u8>> {
    std::fs::read(abs).ok()
}

/// Runs `steps` under `guard` (see [`WriteGuard::run_journaled`]).
pub(super) fn run(guard: &WriteGuard<'_>, steps: &[Step]) -> Result<(), WriteError> {
    let root = guard.root().to_path_buf();
    let abs = |path: &str| -> Result<PathBuf, WriteError> {
        resolve_new(&root, path).map_err(|e| WriteError::Io {
            path: path.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
        })
    };
    // Every file must still hold what the plan was made against.
    for step in steps {
        match step {
            Step::Replace { path, old, .. } => {
                guard.check_unchanged(&abs(path)?, old.as_bytes())?
            }
            Step::Move { from, to, old, .. } => {
                guard.check_unchanged(&abs(from)?, old.as_bytes())?;
                if std::fs::symlink_metadata(abs(to)?).is_ok() {
                    return Err(WriteError::AlreadyExists { path: to.clone() });
                }
            }
        }
    }
    let dir = guard.journal_dir();
    let entry_path = dir.join(format!(
        "{}-{}.json",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let journal_io = |source| WriteError::Io {
        path: entry_path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(journal_io)?;
    let json = serde_json::to_vec(&Entry {
        steps: steps.to_vec(),
    })
    .map_err(|e| journal_io(std::io::Error::other(e)))?;
    atomic::write_atomic(&entry_path, &json).map_err(journal_io)?;
    let mut done = 0;
    let mut failure = None;
    for step in steps {
        let result = match step {
            Step::Replace { path, old, new } => {
                guard.replace(&abs(path)?, old.as_bytes(), new.as_bytes())
            }
            Step::Move { from, to, old, new } => {
                let (from_abs, to_abs) = (abs(from)?, abs(to)?);
                guard
                    .rename(&from_abs, &to_abs, old.as_bytes())
                    .and_then(|()| {
                        if new == old {
                            return Ok(());
                        }
                        guard
                            .replace(&to_abs, old.as_bytes(), new.as_bytes())
                            .inspect_err(|_| {
                                // Put the file back where it was, as it was.
                                let _ = atomic::move_file(&to_abs, &from_abs);
                            })
                    })
            }
        };
        match result {
            Ok(()) => done += 1,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if failure.is_some() {
        for step in steps[..done].iter().rev() {
            undo(&root, step);
        }
    }
    let _ = std::fs::remove_file(&entry_path);
    atomic::sync_dir(&dir);
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The file of a journaled path: the path's syntax is checked again and no folder on the
/// way may be a symbolic link. Unlike the path policy's `resolve_existing` it accepts a
/// file with two hard links, which is what a move interrupted between its link and its
/// unlink leaves.
fn locate(root: &Path, path: &str) -> Option<PathBuf> {
    check_syntax(path).ok()?;
    let mut current = root.to_path_buf();
    for seg in path.split('/') {
        current.push(seg);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => return None,
            Ok(_) => {}
            Err(_) => return Some(root.join(path)),
        }
    }
    Some(current)
}

/// Takes a step back after a later step failed (the file changed under the operation).
/// A file that no longer holds what the step wrote is left alone.
fn undo(root: &Path, step: &Step) {
    match step {
        Step::Replace { path, old, new } => {
            if let Some(abs) = locate(root, path)
                && read_opt(&abs).as_deref() == Some(new.as_bytes())
            {
                let _ = atomic::write_atomic(&abs, old.as_bytes());
            }
        }
        Step::Move { from, to, old, new } => {
            if let (Some(to_abs), Some(from_abs)) = (locate(root, to), locate(root, from))
                && read_opt(&to_abs).as_deref() == Some(new.as_bytes())
            {
                if new != old {
                    let _ = atomic::write_atomic(&to_abs, old.as_bytes());
                }
                let _ = atomic::move_file(&to_abs, &from_abs);
            }
        }
    }
}

/// Finishes every journaled operation found in the state folder (see the module docs).
/// Called by [`super::Writer::lock`] each time the lock is taken; costs one folder
/// listing when there is nothing to do.
pub fn recover(guard: &WriteGuard<'_>) -> RecoveryReport {
    let mut report = RecoveryReport::default();
    let dir = guard.journal_dir();
    let Ok(listing) = std::fs::read_dir(&dir) else {
        return report;
    };
    let listing: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).collect();
    // A journal entry whose writer was killed while writing it never took effect.
    for path in &listing {
        if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(atomic::is_stale_temp_name)
        {
            let _ = std::fs::remove_file(path);
        }
    }
    let mut entries: Vec<PathBuf> = listing
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    for path in entries {
        let entry = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok());
        let Some(entry) = entry else {
            tracing::warn!(journal = %path.display(), "an unreadable journal entry; kept as .failed");
            let _ = std::fs::rename(&path, path.with_extension("json.failed"));
            report.left.push(path.display().to_string());
            continue;
        };
        for step in &entry.steps {
            if let Some(left) = finish(guard.root(), step) {
                tracing::warn!(path = %left, "changed after an interrupted folio write; left as it is");
                report.left.push(left);
            }
        }
        let _ = std::fs::remove_file(&path);
        report.finished += 1;
    }
    atomic::sync_dir(&dir);
    report
}

/// Brings one step to its end state; returns the path when the file holds something else.
fn finish(root: &Path, step: &Step) -> Option<String> {
    match step {
        Step::Replace { path, old, new } => {
            let Some(abs) = locate(root, path) else {
                return Some(path.clone());
            };
            let now = read_opt(&abs);
            if now.as_deref() == Some(new.as_bytes()) {
                None
            } else if now.as_deref() == Some(old.as_bytes()) {
                atomic::write_atomic(&abs, new.as_bytes())
                    .err()
                    .map(|_| path.clone())
            } else {
                Some(path.clone())
            }
        }
        Step::Move { from, to, old, new } => {
            let (Some(from_abs), Some(to_abs)) = (locate(root, from), locate(root, to)) else {
                return Some(from.clone());
            };
            let at_from = read_opt(&from_abs);
            let at_to = read_opt(&to_abs);
            let is =
                |bytes: &Option<Vec<u8>>, text: &str| bytes.as_deref() == Some(text.as_bytes());
            let moved = if is(&at_from, old) && at_to.is_none() {
                atomic::move_file(&from_abs, &to_abs).is_ok()
            } else if is(&at_from, old) && is(&at_to, old) {
                // Interrupted between the hard link and the unlink.
                std::fs::remove_file(&from_abs).is_ok()
            } else {
                at_from.is_none() && (is(&at_to, old) || is(&at_to, new))
            };
            if !moved {
                return Some(from.clone());
            }
            if new != old && !is(&read_opt(&to_abs), new) {
                return atomic::write_atomic(&to_abs, new.as_bytes())
                    .err()
                    .map(|_| to.clone());
            }
            None
        }
    }
}
