//! The host's live index: the core file watcher ([`crate::watch`]) over the root feeds
//! the one incremental index path ([`crate::index::index_changes`]), so `folio mcp`
//! answers from what is on disk now, whoever changed it.

use std::path::Path;
use std::sync::{Arc, PoisonError, Weak};

use crate::index::Changed;
use crate::pointer::{hash_bytes, hex};
use crate::watch::{Batch, FolderWatcher, Sink, WatchStatus};
use crate::workspace::{is_markdown, relative};

use super::Host;

/// Files whose change changes which files the walk leaves out: after one, every file
/// counts as changed.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".folioignore"];

/// The most own writes remembered at once (forgotten all together beyond it; a
/// forgotten one only costs the report being indexed, which finds it unchanged).
const OWN_WRITES_KEPT: usize = 4096;

impl Host {
    /// Starts following changes other programs make under the root, as `[index].watch`
    /// says, on a thread of its own (setting up a native watch walks every folder).
    /// Each batch of changes becomes an incremental index pass ([`crate::index::index_changes`]);
    /// a second call does nothing. Searches then answer from the disk as it is
    /// ([`Host::search`]); [`Host::watch_status`] says how the root is followed.
    pub fn start_watching(self: &Arc<Self>) {
        let mut slot = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_some() {
            return;
        }
        let host: Weak<Host> = Arc::downgrade(self);
        let sink: Sink = Arc::new(move |batch: Batch| {
            if let Some(host) = host.upgrade() {
                let mut changed = changed_of(host.root(), &batch);
                host.drop_own_writes(&mut changed);
                host.queue_changes(changed);
            }
        });
        let watcher = Arc::new(FolderWatcher::new(sink));
        *slot = Some(Arc::clone(&watcher));
        drop(slot);
        let (root, config) = (self.root.clone(), self.config.clone());
        let spawned = std::thread::Builder::new()
            .name("folio-watch".into())
            .spawn(move || {
                let status = watcher.watch(&root, &config);
                tracing::info!(mode = %status.mode, "watching {}", root.display());
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the file watcher: {e}");
        }
    }

    /// Remembers that this host wrote `path` (`text`, or deleted it with `None`) and
    /// indexed it as written, so the watcher's report of that write is not indexed again
    /// ([`Host::drop_own_writes`]).
    pub(crate) fn note_own_write(&self, path: &str, text: Option<&str>) {
        if self.watcher.lock().map(|w| w.is_none()).unwrap_or(true) {
            return;
        }
        let hash = text.map(|t| hex(hash_bytes(t.as_bytes())));
        let mut own = self
            .own_writes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if own.len() >= OWN_WRITES_KEPT {
            own.clear();
        }
        own.insert(path.to_owned(), hash);
    }

    /// Takes out of `changed` the files whose content is what this host last wrote and
    /// indexed itself (or that it deleted and are still gone): their report is this
    /// host's own write coming back. A file changed again since stays.
    fn drop_own_writes(&self, changed: &mut Changed) {
        let mut own = self
            .own_writes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if own.is_empty() {
            return;
        }
        changed.files.retain(|path| {
            let Some(written) = own.get(path) else {
                return true;
            };
            let now = crate::workspace::read_markdown_lossy_in(
                &self.root,
                path,
                self.config.index.max_file_size,
            )
            .ok()
            .map(|(text, _)| hex(hash_bytes(text.as_bytes())));
            let ours = now == *written;
            if ours {
                own.remove(path);
            }
            !ours
        });
    }

    /// Whether [`Host::start_watching`] set up a watch of the root.
    pub(crate) fn is_watching(&self) -> bool {
        self.watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// How changes made by other programs reach the index: what runs and why, and the
    /// last change seen. `starting` until the watch is set up; `off` when
    /// [`Host::start_watching`] was not called (a one-shot command).
    pub fn watch_status(&self) -> WatchStatus {
        let watcher = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match watcher {
            Some(w) => WatchStatus {
                configured: self.config.index.watch.as_str().to_owned(),
                ..w.status()
            },
            None => WatchStatus {
                configured: self.config.index.watch.as_str().to_owned(),
                mode: "off".to_owned(),
                reason: Some("this process does not watch the root".to_owned()),
                poll_interval_ms: None,
                changes_seen: 0,
                last_change_ms: None,
                last_change_path: None,
            },
        }
    }
}

/// The paths of `batch` that can change what the index holds, KB-relative: Markdown
/// files and files of a registered format ([`crate::formats`]); folders, and every path gone (a gone path's kind cannot be told, and a folder
/// renamed or deleted with its notes is reported as the folder alone); the whole root
/// for an ignore file or a rescan. Other files that exist (pictures, editors' swap
/// files) change nothing the index holds and are left out.
fn changed_of(root: &Path, batch: &Batch) -> Changed {
    let mut changed = Changed::default();
    if !batch.rescan.is_empty() {
        changed.folders.insert(String::new());
    }
    for (abs, exists) in &batch.changes {
        let Some(rel) = relative(root, abs).filter(|r| !r.is_empty()) else {
            continue;
        };
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if is_markdown(&rel) || crate::formats::Format::of_path(&rel).is_some() {
            changed.files.insert(rel);
        } else if IGNORE_FILES.contains(&name) {
            changed.folders.insert(String::new());
        } else if !*exists || abs.is_dir() {
            // A folder (`v1.0/` as much as `notes/`): every file under it may have changed.
            changed.folders.insert(rel);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_batch_becomes_the_paths_that_can_change_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("new")).unwrap();
        std::fs::write(root.join("pic.png"), "png").unwrap();
        let batch = Batch {
            changes: vec![
                (root.join("a.md"), true),
                (root.join("b.md"), false),
                (root.join("new"), true),
                (root.join("old"), false),
                (root.join("pic.png"), true),
                (root.join("report.pdf"), true),
                (root.join("gone.png"), false),
                (root.join("v1.0"), false),
                (PathBuf::from("/elsewhere/c.md"), true),
            ],
            rescan: vec![],
        };
        let changed = changed_of(root, &batch);
        assert_eq!(
            changed.files.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md", "b.md", "report.pdf"]
        );
        assert_eq!(
            changed
                .folders
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["gone.png", "new", "old", "v1.0"]
        );
        assert!(changed.covers("new/x.md") && !changed.covers("newer/x.md"));
        let ignore = Batch {
            changes: vec![(root.join("sub/.folioignore"), true)],
            rescan: vec![],
        };
        assert!(changed_of(root, &ignore).covers("any/where.md"));
    }
}
