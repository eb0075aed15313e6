//! The state the server's handlers and its background tasks (the file watcher, bridge
//! connections) share: the client handle, the session behind its lock, and the counters
//! that order changes. Mutations run here, under the lock, before any `.await`, and
//! leave what to send (diagnostics, a pull refresh, `folio/status`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use crate::guard::guarded;
use crate::handlers;
use crate::session::{DocRef, Session};
use crate::startup::{Outlines, Phase};

/// What a background task (the file watcher, a bridge connection) needs to update or
/// read the model and talk to the client.
#[derive(Clone)]
pub(crate) struct ServerState {
    pub(crate) client: Client,
    pub(crate) session: Arc<Mutex<Session>>,
    /// Bumped after every mutation of the session, so a bridge edit can wait for the
    /// editor's `didChange`.
    pub(crate) changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// Held by a bridge edit from its version check to the editor's confirmation.
    pub(crate) edit_lock: Arc<tokio::sync::Mutex<()>>,
    /// Numbers the work-done progress tokens (`folio/scan/1`, `folio/reindex/2`, …).
    pub(crate) progress_seq: Arc<AtomicU64>,
    /// How far loading the folders named in `initialize` is (`workspace/symbol` answers
    /// from the outlines meanwhile).
    pub(crate) startup: Arc<tokio::sync::watch::Sender<Phase>>,
}

/// How long `workspace/symbol` waits for the folders to be read before it takes the
/// session as it is.
const READ_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Diagnostics ready to publish: URI, items, version of the open buffer.
pub(crate) type Batch = Vec<(Uri, Vec<Diagnostic>, Option<i32>)>;

/// What a mutation leaves to send: diagnostics to push, whether to ask the client to
/// re-pull, and a `folio/status` when the counts changed.
#[derive(Default)]
pub(crate) struct Outcome {
    batch: Batch,
    refresh: bool,
    /// Reference counts of other documents may have changed: ask for code lenses again.
    lens_refresh: bool,
    status: Option<(usize, usize)>,
}

/// The `folio/status` notification: documents and broken links over every root, sent to
/// clients that set `experimental.folioStatus` (the VS Code extension's status bar).
pub enum StatusNotification {}

impl notification::Notification for StatusNotification {
    type Params = serde_json::Value;
    const METHOD: &'static str = "folio/status";
}

impl ServerState {
    /// A state talking to `client`, with an empty session.
    pub(crate) fn new(client: Client) -> ServerState {
        ServerState {
            client,
            session: Arc::new(Mutex::new(Session::default())),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
            edit_lock: Arc::new(tokio::sync::Mutex::new(())),
            progress_seq: Arc::new(AtomicU64::new(0)),
            startup: Arc::new(tokio::sync::watch::channel(Phase::Ready).0),
        }
    }

    /// While the workspace folders load: the documents' outlines, once they are read
    /// (waiting for the read, at most [`READ_WAIT`]); `None` once the session has them.
    pub(crate) async fn outlines(&self) -> Option<Arc<Outlines>> {
        let mut phase = self.startup.subscribe();
        let read = phase.wait_for(|p| !matches!(p, Phase::Reading));
        match tokio::time::timeout(READ_WAIT, read).await {
            Ok(Ok(p)) => match &*p {
                Phase::Outlined(outlines) => Some(Arc::clone(outlines)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl ServerState {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Session> {
        // A panic while holding the lock leaves the model as it was between mutations.
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The status to send, when the client wants it and it changed since the last one.
    pub(crate) fn take_status(session: &mut Session) -> Option<(usize, usize)> {
        let status = session.status();
        if !session.flags.status_notification || session.last_status == Some(status) {
            return None;
        }
        session.last_status = Some(status);
        Some(status)
    }

    pub(crate) async fn send_status(&self, status: Option<(usize, usize)>) {
        if let Some((documents, broken)) = status {
            self.client
                .send_notification::<StatusNotification>(
                    json!({"documents": documents, "brokenLinks": broken}),
                )
                .await;
        }
    }

    /// Applies a mutation and computes the diagnostics to publish for the open
    /// documents it affected, all before any `.await`.
    pub(crate) fn mutate(
        &self,
        method: &str,
        f: impl FnOnce(&mut Session) -> anyhow::Result<BTreeSet<DocRef>>,
    ) -> Outcome {
        let mut session = self.lock();
        let affected = guarded(method, || f(&mut session)).unwrap_or_default();
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        // A pulling client re-pulls the document it changed by itself; other documents
        // whose diagnostics may have changed need a refresh request.
        let others = if matches!(method, "didChange" | "didOpen") {
            affected.len() > 1
        } else {
            !affected.is_empty()
        };
        let refresh = session.flags.pull_diagnostics && session.flags.diagnostic_refresh && others;
        let lens_refresh = session.flags.code_lens_refresh
            && (std::mem::take(&mut session.links_edited) || others);
        session.invalidate(&affected);
        // Diagnostics pushed for open documents also give their broken-link counts.
        let mut counted = HashMap::new();
        let batch = if session.flags.pull_diagnostics {
            Vec::new()
        } else {
            guarded(method, || {
                Ok(push_batch(&mut session, &affected, &mut counted))
            })
            .unwrap_or_default()
        };
        // didChange and didOpen never remove a document; other mutations may.
        let prune = !matches!(method, "didChange" | "didOpen");
        let _ = guarded(method, || {
            session.recount(&affected, &counted, prune);
            Ok(())
        });
        let status = ServerState::take_status(&mut session);
        Outcome {
            batch,
            refresh,
            lens_refresh,
            status,
        }
    }

    /// After the initial scan: the diagnostics of every document, of the roots that
    /// publish for the whole workspace (`[diagnostics].publish = "workspace"`), for a
    /// client that does not pull (documents without diagnostics are not sent).
    pub(crate) fn push_workspace(&self) -> Outcome {
        let mut session = self.lock();
        if session.flags.pull_diagnostics {
            return Outcome::default();
        }
        let docs = session
            .all_documents()
            .into_iter()
            .filter(|d| session.publishes_workspace(d.root))
            .collect();
        let batch = guarded("initialized", || {
            Ok(push_batch(&mut session, &docs, &mut HashMap::new()))
        })
        .unwrap_or_default();
        Outcome {
            batch,
            ..Outcome::default()
        }
    }

    pub(crate) async fn publish(&self, outcome: Outcome) {
        for (uri, items, version) in outcome.batch {
            self.client.publish_diagnostics(uri, items, version).await;
        }
        if outcome.refresh {
            let _ = self.client.workspace_diagnostic_refresh().await;
        }
        if outcome.lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
        self.send_status(outcome.status).await;
    }

    /// Handles files that changed on disk.
    pub(crate) async fn files_changed(&self, events: Vec<(PathBuf, bool)>) {
        let result = self.mutate("didChangeWatchedFiles", |s| Ok(s.file_events(&events)));
        self.publish(result).await;
        self.show_warnings().await;
    }

    /// Shows each warning found since the last call (`window/showMessage`, Warning): a
    /// `folio.toml` that does not load (the defaults, or the previous configuration, apply
    /// meanwhile) or with a `[search]` number out of its range, single-file mode, a buffer
    /// over the limit for incremental parsing ([`Session::warnings`]).
    pub(crate) async fn show_warnings(&self) {
        let problems = self.lock().take_warnings();
        for problem in problems {
            self.client
                .show_message(MessageType::WARNING, problem)
                .await;
        }
    }
}

/// The diagnostics to push for `docs` (after a mutation dropped their cached ones): each
/// open document's, and with `[diagnostics].publish = "workspace"` each closed one's too —
/// a closed one only when it has diagnostics or had some pushed before, since the client
/// shows nothing for it otherwise. Closed documents pushed before that are no longer
/// pushed (deleted, or the setting went back to `open`) get an empty list. Error counts of
/// the documents pushed go into `counted`.
fn push_batch(
    session: &mut Session,
    docs: &BTreeSet<DocRef>,
    counted: &mut HashMap<DocRef, usize>,
) -> Batch {
    let mut batch = Batch::new();
    for doc in session.pushed_among(docs) {
        let Some(uri) = session.uri(doc.root, &doc.path) else {
            continue;
        };
        let version = session
            .open
            .get(&session.abs_path(doc.root, &doc.path))
            .copied();
        let items = handlers::diagnostics::cached(session, &doc)
            .map(|c| c.items.clone())
            .unwrap_or_default();
        counted.insert(
            doc.clone(),
            items
                .iter()
                .filter(|d| d.severity == Some(DiagnosticSeverity::ERROR))
                .count(),
        );
        let pushed = &mut session.roots[doc.root].pushed;
        if version.is_none() {
            let before = if items.is_empty() {
                pushed.remove(&doc.path)
            } else {
                !pushed.insert(doc.path.clone())
            };
            if items.is_empty() && !before {
                continue;
            }
        }
        batch.push((uri, items, version));
    }
    for i in 0..session.roots.len() {
        let stale: Vec<String> = session.roots[i]
            .pushed
            .iter()
            .filter(|path| {
                let doc = DocRef {
                    root: i,
                    path: (*path).clone(),
                };
                session.entry(&doc).is_none()
                    || session.is_open(&doc)
                    || !session.publishes_workspace(i)
            })
            .cloned()
            .collect();
        for path in stale {
            session.roots[i].pushed.remove(&path);
            let doc = DocRef { root: i, path };
            if session.is_open(&doc) {
                // The open buffer's diagnostics are pushed with its version.
                continue;
            }
            if let Some(uri) = session.uri(i, &doc.path) {
                batch.push((uri, Vec::new(), None));
            }
        }
    }
    batch
}
