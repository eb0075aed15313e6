//! The journal of multi-file writes: a move that rewrites links in several files is
//! written down before its first change, so a crash midway can be finished.
//!
//! A journal entry is one JSON file in `<state dir>/journal/`, named
//! `<pid>-<nanoseconds>.json`, holding the operation's [`Step`]s with the text each file
//! had when the operation was planned and the text it gets. It is written (and flushed)
//! under the root's write lock before the first file changes, and removed after the last
//! (once the folders of the renamed files are flushed). Since every folio writer holds
//! that lock from its first change to its last, an entry found by the next lock holder
//! belongs to a writer that died.
//!
//! The new texts of an operation's `Replace` steps may be staged before the lock is taken
//! ([`StagedSteps`]): temporary files next to their files, flushed, that the operation
//! renames into place once every file is found to hold the text its step was planned
//! against. A writer killed before it took the lock leaves only temporary files, removed
//! by the next start ([`atomic::is_stale_temp_name`]).
//!
//! **Recovery finishes the operation** (roll forward): each step whose file still holds
//! its planned-against text, or already holds the new text, is brought to the new text;
//! a file that holds anything else was changed by someone after the crash and is left
//! as it is (logged, and listed in [`RecoveryReport::left`]). Finishing is chosen over
//! undoing because the operation was acknowledged to nobody yet either way, and
//! finishing leaves every link consistent with where the moved file is.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{StagedWrite, WriteError, WriteGuard, atomic, io_error};
use crate::path_policy::check_syntax;
use crate::workspace::beneath::{Folder, parent};

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
    /// The binary file at `from` (an image, whose bytes hash to `sha256`) moves to `to`
    /// (which must not exist), unchanged. The journal records the hash, not the bytes.
    MoveBinary {
        /// KB-relative path before.
        from: String,
        /// KB-relative path after.
        to: String,
        /// SHA-256 of its bytes, lowercase hex.
        sha256: String,
    },
}

/// The steps of a multi-file operation with the new text of every `Replace` step already
/// in a temporary file next to its file, flushed ([`super::Writer::stage`]), for
/// [`WriteGuard::run_staged`] to rename into place under the root's write lock. Dropping
/// it removes the temporary files that were not renamed.
#[derive(Debug)]
pub struct StagedSteps {
    root: PathBuf,
    steps: Vec<Step>,
    /// For each step, in order: its staged new text (`Replace` steps), else `None`.
    staged: Vec<Option<StagedWrite>>,
}

impl StagedSteps {
    /// The steps, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }
}

/// Stages `steps` of a root (see [`StagedSteps`]); each folder is opened once, never
/// through a symbolic link, and its handle shared by the files staged in it.
///
/// Errors: [`WriteError::Changed`] when a file's folder is gone (the file is not what the
/// step was planned against), [`WriteError::Io`] when a temporary file cannot be written
/// (those already written are removed).
pub(super) fn stage(root: &Path, steps: Vec<Step>) -> Result<StagedSteps, WriteError> {
    let failed = |path: &String, e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => WriteError::Changed { path: path.clone() },
        _ => io_error(path, e),
    };
    let mut folders: HashMap<&str, Arc<Folder>> = HashMap::new();
    let mut staged = Vec::with_capacity(steps.len());
    for step in &steps {
        let Step::Replace { path, new, .. } = step else {
            staged.push(None);
            continue;
        };
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
        let folder = match folders.get(dir) {
            Some(folder) => Arc::clone(folder),
            None => {
                let (folder, _) = parent(root, path, false).map_err(|e| failed(path, e))?;
                let folder = Arc::new(folder);
                folders.insert(dir, Arc::clone(&folder));
                folder
            }
        };
        staged.push(Some(
            StagedWrite::in_folder(&folder, name, new.as_bytes()).map_err(|e| failed(path, e))?,
        ));
    }
    Ok(StagedSteps {
        root: root.to_path_buf(),
        staged,
        steps,
    })
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

/// Runs `staged` under `guard` (see [`WriteGuard::run_staged`]).
pub(super) fn run(guard: &WriteGuard<'_>, staged: StagedSteps) -> Result<(), WriteError> {
    let root = guard.root().to_path_buf();
    assert_eq!(staged.root, root, "steps staged for another root");
    let StagedSteps {
        steps,
        staged: mut writes,
        ..
    } = staged;
    // Every file must still hold what the plan was made against.
    for step in &steps {
        match step {
            Step::Replace { path, old, .. } => guard.check_unchanged(path, old.as_bytes())?,
            Step::Move { from, to, old, .. } => {
                guard.check_unchanged(from, old.as_bytes())?;
                if matches!(atomic::read(&root, to), Ok(Some(_))) {
                    return Err(WriteError::AlreadyExists { path: to.clone() });
                }
            }
            Step::MoveBinary { from, to, sha256 } => {
                if !holds_hash(&root, from, sha256) {
                    return Err(WriteError::Changed { path: from.clone() });
                }
                if matches!(atomic::read(&root, to), Ok(Some(_))) {
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
        steps: steps.clone(),
    })
    .map_err(|e| journal_io(std::io::Error::other(e)))?;
    atomic::write_state_file(&entry_path, &json).map_err(journal_io)?;
    let mut done = 0;
    let mut failure = None;
    // The folders of the renamed files, flushed once each after the last rename.
    let mut renamed_in: Vec<Arc<Folder>> = Vec::new();
    for (step, write) in steps.iter().zip(writes.iter_mut()) {
        let result = match step {
            Step::Replace { path, old, .. } => {
                let write = write.take().expect("a Replace step is staged");
                guard
                    .commit_staged(path, old.as_bytes(), write)
                    .map(|folder| {
                        if !renamed_in.iter().any(|f| Arc::ptr_eq(f, &folder)) {
                            renamed_in.push(folder);
                        }
                    })
            }
            Step::Move { from, to, old, new } => {
                guard.rename(from, to, old.as_bytes()).and_then(|()| {
                    if new == old {
                        return Ok(());
                    }
                    guard
                        .replace(to, old.as_bytes(), new.as_bytes())
                        .inspect_err(|_| {
                            // Put the file back where it was, as it was.
                            let _ = atomic::move_file(&root, to, from);
                        })
                })
            }
            Step::MoveBinary { from, to, sha256 } => match atomic::read(&root, from) {
                Ok(Some(bytes)) if crate::digest::sha256_hex(&bytes) == *sha256 => {
                    guard.rename(from, to, &bytes)
                }
                _ => Err(WriteError::Changed { path: from.clone() }),
            },
        };
        match result {
            Ok(()) => done += 1,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    for folder in &renamed_in {
        folder.sync();
    }
    // Temporary files of the steps not reached go now.
    drop(writes);
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

fn holds(root: &Path, path: &str, text: &str) -> bool {
    matches!(atomic::read(root, path), Ok(Some(bytes)) if bytes == text.as_bytes())
}

/// True when the file at `path` exists and its bytes hash to `sha256`.
fn holds_hash(root: &Path, path: &str, sha256: &str) -> bool {
    matches!(atomic::read(root, path), Ok(Some(bytes)) if crate::digest::sha256_hex(&bytes) == sha256)
}

fn absent(root: &Path, path: &str) -> bool {
    matches!(atomic::read(root, path), Ok(None))
}

/// Takes a step back after a later step failed (the file changed under the operation).
/// A file that no longer holds what the step wrote is left alone.
fn undo(root: &Path, step: &Step) {
    match step {
        Step::Replace { path, old, new } => {
            if holds(root, path, new) {
                let _ = atomic::write_atomic(root, path, old.as_bytes());
            }
        }
        Step::Move { from, to, old, new } => {
            if holds(root, to, new) {
                if new != old {
                    let _ = atomic::write_atomic(root, to, old.as_bytes());
                }
                let _ = atomic::move_file(root, to, from);
            }
        }
        Step::MoveBinary { from, to, sha256 } => {
            if holds_hash(root, to, sha256) && absent(root, from) {
                let _ = atomic::move_file(root, to, from);
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
    for path in entries_of(listing) {
        let Some(entry) = read_entry(&path) else {
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

/// The journal entries among `listing`, in name order (`<pid>-<nanoseconds>.json`).
fn entries_of(listing: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = listing
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    entries
}

/// The entry at `path`; `None` when it cannot be read or parsed.
fn read_entry(path: &Path) -> Option<Entry> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Brings one step to its end state; returns the path when the file holds something else.
/// Paths are checked by the path policy's syntax again, and never followed through a
/// symbolic link ([`crate::workspace::beneath`]).
fn finish(root: &Path, step: &Step) -> Option<String> {
    match step {
        Step::Replace { path, old, new } => {
            if check_syntax(path).is_err() {
                return Some(path.clone());
            }
            if holds(root, path, new) {
                None
            } else if holds(root, path, old) {
                atomic::write_atomic(root, path, new.as_bytes())
                    .err()
                    .map(|_| path.clone())
            } else {
                Some(path.clone())
            }
        }
        Step::Move { from, to, old, new } => {
            if check_syntax(from).is_err() || check_syntax(to).is_err() {
                return Some(from.clone());
            }
            let moved = if holds(root, from, old) && absent(root, to) {
                atomic::move_file(root, from, to).is_ok()
            } else if holds(root, from, old) && holds(root, to, old) {
                // Interrupted between the hard link and the unlink.
                atomic::remove(root, from).is_ok()
            } else {
                absent(root, from) && (holds(root, to, old) || holds(root, to, new))
            };
            if !moved {
                return Some(from.clone());
            }
            if new != old && !holds(root, to, new) {
                return atomic::write_atomic(root, to, new.as_bytes())
                    .err()
                    .map(|_| to.clone());
            }
            None
        }
        Step::MoveBinary { from, to, sha256 } => {
            if check_syntax(from).is_err() || check_syntax(to).is_err() {
                return Some(from.clone());
            }
            let at_from = holds_hash(root, from, sha256);
            let done = if at_from && absent(root, to) {
                atomic::move_file(root, from, to).is_ok()
            } else if at_from && holds_hash(root, to, sha256) {
                // Interrupted between the hard link and the unlink.
                atomic::remove(root, from).is_ok()
            } else {
                absent(root, from) && holds_hash(root, to, sha256)
            };
            (!done).then(|| from.clone())
        }
    }
}

/// A multi-file operation a folio writer began and did not finish (it was killed): what
/// `folio status`, `folio check`, `kb_status` and the language server report until a
/// writer finishes it ([`recover`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Interrupted {
    /// The journal entry's file name (in the state folder's `journal/`).
    pub entry: String,
    /// The files it moves, `from` → `to` (KB-relative).
    pub moves: Vec<MovedPath>,
    /// Files it changes: moved ones and ones whose links it rewrites.
    pub files: usize,
    /// Of those, files already in their end state.
    pub done: usize,
}

/// One moved file of an [`Interrupted`] operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MovedPath {
    /// KB-relative path before.
    pub from: String,
    /// KB-relative path after.
    pub to: String,
}

impl Interrupted {
    /// One line for people: `a move of notes/a.md → archive/a.md was interrupted with 295
    /// of 402 files not yet changed` (the first move named, with how many more).
    pub fn describe(&self) -> String {
        let what = match self.moves.as_slice() {
            [] => "a multi-file edit".to_owned(),
            [one] => format!("a move of {} → {}", one.from, one.to),
            [one, rest @ ..] => format!(
                "a move of {} → {} (and {} more)",
                one.from,
                one.to,
                rest.len()
            ),
        };
        format!(
            "{what} was interrupted with {} of {} files not yet changed",
            self.files - self.done,
            self.files
        )
    }
}

/// The operations journaled in `dir` (a state folder's `journal/`), read without
/// changing anything. The caller knows no writer holds the root's lock (an entry is
/// then an interrupted operation, not one in progress).
pub(super) fn interrupted(root: &Path, dir: &Path) -> Vec<Interrupted> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries_of(listing.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .into_iter()
        .filter_map(|path| {
            let entry = read_entry(&path)?;
            let moves = entry
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::Move { from, to, .. } | Step::MoveBinary { from, to, .. } => {
                        Some(MovedPath {
                            from: from.clone(),
                            to: to.clone(),
                        })
                    }
                    Step::Replace { .. } => None,
                })
                .collect();
            let done = entry.steps.iter().filter(|s| is_finished(root, s)).count();
            Some(Interrupted {
                entry: path.file_name()?.to_string_lossy().into_owned(),
                moves,
                files: entry.steps.len(),
                done,
            })
        })
        .collect()
}

/// Whether `step` is in its end state on disk.
fn is_finished(root: &Path, step: &Step) -> bool {
    match step {
        Step::Replace { path, new, .. } => holds(root, path, new),
        Step::Move { from, to, new, .. } => absent(root, from) && holds(root, to, new),
        Step::MoveBinary { from, to, sha256 } => absent(root, from) && holds_hash(root, to, sha256),
    }
}
