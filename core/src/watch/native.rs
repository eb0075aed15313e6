//! The native backend: the system's file notifications through `notify`, debounced by
//! `notify-debouncer-full` (which also pairs the two halves of a rename).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use notify_debouncer_full::notify::{self, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use super::{Batch, DEBOUNCE, Shared, is_private};

/// The debouncer and the folders it watches.
pub(super) struct Native {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    folders: Arc<Mutex<Vec<PathBuf>>>,
}

impl Native {
    /// Starts the debouncer over no folder.
    ///
    /// Errors: the system's notifications cannot be used (no inotify instance left, say),
    /// in words for `kb_status`.
    pub(super) fn start(shared: Arc<Shared>) -> Result<Native, String> {
        let folders: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
        let watched = Arc::clone(&folders);
        let debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let folders = watched
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            shared.deliver(batch_of(&folders, result));
        })
        .map_err(|e| format!("the system's file notifications are unavailable ({e})"))?;
        Ok(Native { debouncer, folders })
    }

    /// Watches `folder` recursively.
    ///
    /// Errors: the watch could not be set up (the folder is gone, or the system's limit on
    /// watches is reached), in words that say what to do; nothing of it stays watched.
    pub(super) fn watch(&mut self, folder: &Path) -> Result<(), String> {
        match self.debouncer.watch(folder, RecursiveMode::Recursive) {
            Ok(()) => {
                self.folders
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(folder.to_path_buf());
                Ok(())
            }
            Err(e) => {
                // A recursive watch that failed midway keeps the watches it made.
                let _ = self.debouncer.unwatch(folder);
                Err(match e.kind {
                    notify::ErrorKind::MaxFilesWatch => format!(
                        "the system's limit on watched folders is reached while watching {} \
                         (on Linux, raise fs.inotify.max_user_watches)",
                        folder.display()
                    ),
                    _ => format!("cannot watch {}: {e}", folder.display()),
                })
            }
        }
    }
}

/// The batch of one debounced report: changed paths (not reads, not folio's or git's
/// state), each once; the folders whose events were lost when the system asks for a
/// rescan; on an error, every folder (what the error hid is unknown).
fn batch_of(folders: &[PathBuf], result: DebounceEventResult) -> Batch {
    let mut batch = Batch::default();
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            tracing::warn!("file watcher errors: {errors:?}");
            batch.rescan = folders.to_vec();
            return batch;
        }
    };
    for event in &events {
        if event.need_rescan() {
            for folder in folders {
                if !batch.rescan.contains(folder) {
                    batch.rescan.push(folder.clone());
                }
            }
            continue;
        }
        if event.kind.is_access() {
            continue;
        }
        for path in &event.paths {
            let private = folders.iter().any(|f| is_private(f, path));
            if private || batch.changes.iter().any(|(p, _)| p == path) {
                continue;
            }
            batch.changes.push((path.clone(), path.exists()));
        }
    }
    batch
}
