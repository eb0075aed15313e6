//! The `notify` watcher over every root, for clients that cannot watch files for the
//! server (`workspace/didChangeWatchedFiles` without dynamic registration).

use std::path::PathBuf;
use std::sync::PoisonError;
use std::time::Duration;

use notify_debouncer_full::notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::server::Backend;

/// How long the file watcher waits for more events before reporting a batch.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

impl Backend {
    /// Starts the `notify` watcher over `folders` (the workspace folders of `initialize`,
    /// for clients that cannot watch files). Folders added later are watched as they come.
    pub(crate) fn start_watcher(&self, folders: &[PathBuf]) {
        let shared = self.shared.clone();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<(PathBuf, bool)>>();
        let debouncer = new_debouncer(WATCH_DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let mut paths: Vec<(PathBuf, bool)> = Vec::new();
            // Reads (open, close after reading) change nothing; the server's own walk
            // would otherwise report every file it reads.
            for event in events.iter().filter(|e| !e.kind.is_access()) {
                for path in &event.paths {
                    if !paths.iter().any(|(p, _)| p == path) {
                        paths.push((path.clone(), path.exists()));
                    }
                }
            }
            if !paths.is_empty() {
                let _ = tx.send(paths);
            }
        });
        let mut debouncer = match debouncer {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!("cannot start the file watcher: {e}");
                return;
            }
        };
        for folder in folders {
            if let Err(e) = debouncer.watch(folder, RecursiveMode::Recursive) {
                tracing::warn!("cannot watch {}: {e}", folder.display());
            }
        }
        tokio::spawn(async move {
            while let Some(paths) = rx.recv().await {
                shared.files_changed(paths).await;
            }
        });
        *self.watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(debouncer);
    }
}
