//! The core file watcher ([`folio_core::watch`]) over every root, for clients that
//! cannot watch files for the server (`workspace/didChangeWatchedFiles` without dynamic
//! registration); each root is followed as its `[index].watch` says (native
//! notifications, a periodic scan, or not at all).
//!
//! It watches a folder once the folder is loaded, not before the walk: the system
//! reports every open of a watched file, so a watch live during the read turns each of
//! the server's own reads into an event to sort out (38,000 of them on a large root;
//! the watcher drops them, but only after receiving them). What changed
//! between a folder's read and the watch is found by comparing stamps instead
//! ([`catch_up`]), as is everything under a folder whose events the system lost.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use folio_core::config::Config;
use folio_core::watch::{Batch, FolderWatcher, Sink};
use folio_core::workspace::DiskState;

use crate::state::ServerState;

/// Starts the server's file watcher into `watcher`, over no folder yet (for clients
/// that cannot watch files): [`watch_and_catch_up`] adds each folder once it is loaded.
/// Its changes apply to `shared` as watched-file events.
pub(crate) fn start(watcher: &Watcher, shared: ServerState) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Batch>();
    let sink: Sink = Arc::new(move |batch: Batch| {
        let _ = tx.send(batch);
    });
    tokio::spawn(async move {
        while let Some(batch) = rx.recv().await {
            if !batch.changes.is_empty() {
                shared.files_changed(batch.changes).await;
            }
            if !batch.rescan.is_empty() {
                catch_up(shared.clone()).await;
            }
        }
    });
    *watcher.lock().unwrap_or_else(PoisonError::into_inner) =
        Some(Arc::new(FolderWatcher::new(sink)));
}

/// The server's own file watcher, when it runs: shared with the task that adds the
/// folders once they are read.
pub(crate) type Watcher = Arc<Mutex<Option<Arc<FolderWatcher>>>>;

/// Watches `folders` (off the async threads: a native watch walks every folder, a
/// polled one takes its first walk) when the server's own watcher runs, each as its
/// root's `[index].watch` says, then applies what changed since they were read
/// ([`catch_up`]). Does nothing when the client watches files.
pub(crate) async fn watch_and_catch_up(
    watcher: Watcher,
    shared: ServerState,
    folders: Vec<PathBuf>,
) {
    let Some(watcher) = watcher
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
    else {
        return;
    };
    let configs: Vec<(PathBuf, Config)> = {
        let session = shared.lock();
        folders
            .into_iter()
            .map(|folder| {
                let config = session
                    .roots
                    .iter()
                    .find(|r| r.folder == folder)
                    .map(|r| r.model.config().clone())
                    .unwrap_or_default();
                (folder, config)
            })
            .collect()
    };
    let watched = tokio::task::spawn_blocking(move || {
        for (folder, config) in &configs {
            let status = watcher.watch(folder, config);
            tracing::info!(mode = %status.mode, "watching {}", folder.display());
        }
    })
    .await;
    if watched.is_ok() {
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
