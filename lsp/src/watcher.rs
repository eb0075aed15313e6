//! The `notify` watcher over every root, for clients that cannot watch files for the
//! server (`workspace/didChangeWatchedFiles` without dynamic registration).
//!
//! It watches a folder once the folder is loaded, not before the walk: `notify` reports
//! every open of a watched file, so a watch live during the read turns each of the
//! server's own reads into an event (38,000 of them on a large root). What changed
//! between a folder's read and the watch is found by comparing stamps instead
//! ([`catch_up`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use folio_core::workspace::DiskState;

use crate::state::ServerState;

/// How long the file watcher waits for more events before reporting a batch.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

/// Starts the server's `notify` watcher into `watcher`, over no folder yet (for clients
/// that cannot watch files): [`watch_and_catch_up`] adds each folder once it is loaded.
/// Its events apply to `shared` as watched-file events.
pub(crate) fn start(watcher: &Watcher, shared: ServerState) {
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
    let debouncer = match debouncer {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!("cannot start the file watcher: {e}");
            return;
        }
    };
    tokio::spawn(async move {
        while let Some(paths) = rx.recv().await {
            shared.files_changed(paths).await;
        }
    });
    *watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(debouncer);
}

/// The server's own `notify` watcher, when it runs: shared with the task that adds the
/// folders once they are read.
pub(crate) type Watcher = Arc<Mutex<Option<Debouncer<RecommendedWatcher, RecommendedCache>>>>;

/// Watches `folders` (recursively, off the async threads: `notify` walks every folder to
/// watch it) when the server's own watcher runs, then applies what changed since they
/// were read ([`catch_up`]). Does nothing when the client watches files.
pub(crate) async fn watch_and_catch_up(
    watcher: Watcher,
    shared: ServerState,
    folders: Vec<PathBuf>,
) {
    let watched = tokio::task::spawn_blocking(move || {
        let mut watcher = watcher.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(debouncer) = watcher.as_mut() else {
            return false;
        };
        for folder in &folders {
            if let Err(e) = debouncer.watch(folder, RecursiveMode::Recursive) {
                tracing::warn!("cannot watch {}: {e}", folder.display());
            }
        }
        true
    })
    .await
    .unwrap_or(false);
    if watched {
        catch_up(shared).await;
    }
}

/// Brings every root (but the folders of lone files) up to date with the disk once the
/// watch over it is live: the changes made between its read and the watch
/// ([`folio_core::host::Model::drift`]) apply as watched-file events and publish their
/// diagnostics. The walk and the stamps (one `lstat` per Markdown file) are taken
/// without the session's lock; only the comparison holds it.
async fn catch_up(shared: ServerState) {
    let state = shared.clone();
    let events = tokio::task::spawn_blocking(move || {
        let roots: Vec<_> = {
            let session = state.lock();
            session
                .roots
                .iter()
                .filter(|r| !r.single_file)
                .map(|r| (r.folder.clone(), r.model.config().clone()))
                .collect()
        };
        let disks: Vec<_> = roots
            .into_iter()
            .filter_map(|(folder, config)| Some((DiskState::read(&folder, &config).ok()?, folder)))
            .collect();
        let session = state.lock();
        let mut events: Vec<(PathBuf, bool)> = Vec::new();
        for (disk, folder) in disks {
            if let Some(root) = session.roots.iter().find(|r| r.folder == folder) {
                let drift = root.model.drift(&disk);
                events.extend(drift.into_iter().map(|(p, e)| (folder.join(p), e)));
            }
        }
        events
    })
    .await
    .unwrap_or_default();
    if !events.is_empty() {
        tracing::info!("{} files changed while the folders loaded", events.len());
        shared.files_changed(events).await;
    }
}
