//! The `LanguageServer` implementation: dispatch only.
//!
//! Notifications that change the model run their mutation synchronously under the
//! session lock before their first `.await`, and the stdio server runs with a
//! concurrency level of 1, so document changes apply strictly in the order received.
//! Requests compute under the lock inside `catch_unwind`: a panic becomes an
//! internal error for that one request and the server keeps running.

use std::collections::{BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::bridge::Endpoints;
use crate::convert;
use crate::handlers;
use crate::session::{ClientFlags, DocRef, Session};

/// How long the file watcher waits for more events before reporting a batch.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

/// Options of a server beyond what the client negotiates.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where the live-bridge endpoints go; `None` is core `bridge::base_dir()`.
    pub bridge_dir: Option<PathBuf>,
    /// Never load an embedder: `folio/search` stays lexical (tests that pin results).
    pub no_embeddings: bool,
}

/// The language server: the client handle, the session, the live-bridge endpoints and
/// (when the client cannot watch files for us) a `notify` watcher.
pub struct Backend {
    shared: Shared,
    watcher: Mutex<Option<Debouncer<RecommendedWatcher, RecommendedCache>>>,
    endpoints: Mutex<Endpoints>,
    /// The workspace folders named in `initialize`, loaded in `initialized` (where the
    /// client can be shown progress).
    pending: Mutex<Vec<PathBuf>>,
    /// Background embedding per searched root, created by the first `folio/search` or
    /// `folio/reindex` of that root (editors that never search load no model).
    embeddings:
        Mutex<std::collections::HashMap<PathBuf, Arc<folio_core::embed::runner::Embedding>>>,
    no_embeddings: bool,
}

/// What a background task (the file watcher, a bridge connection) needs to update or
/// read the model and talk to the client.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) client: Client,
    session: Arc<Mutex<Session>>,
    /// Bumped after every mutation of the session, so a bridge edit can wait for the
    /// editor's `didChange`.
    pub(crate) changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// Held by a bridge edit from its version check to the editor's confirmation.
    pub(crate) edit_lock: Arc<tokio::sync::Mutex<()>>,
    /// Numbers the work-done progress tokens (`folio/scan/1`, `folio/reindex/2`, …).
    progress_seq: Arc<AtomicU64>,
}

/// Diagnostics ready to publish: URI, items, version of the open buffer.
type Batch = Vec<(Uri, Vec<Diagnostic>, Option<i32>)>;

/// What a mutation leaves to send: diagnostics to push, whether to ask the client to
/// re-pull, and a `folio/status` when the counts changed.
#[derive(Default)]
struct Outcome {
    batch: Batch,
    refresh: bool,
    status: Option<(usize, usize)>,
}

/// The `folio/status` notification: documents and broken links over every root, sent to
/// clients that set `experimental.folioStatus` (the VS Code extension's status bar).
pub enum StatusNotification {}

impl notification::Notification for StatusNotification {
    type Params = serde_json::Value;
    const METHOD: &'static str = "folio/status";
}

/// A work-done progress the client was asked to create (see [`Shared::begin_work`]).
pub(crate) struct Work {
    client: Client,
    token: ProgressToken,
}

impl Work {
    async fn send(&self, progress: WorkDoneProgress) {
        let params = ProgressParams {
            token: self.token.clone(),
            value: ProgressParamsValue::WorkDone(progress),
        };
        self.client
            .send_notification::<notification::Progress>(params)
            .await;
    }

    /// `$/progress` report with a message.
    pub(crate) async fn report(&self, message: String) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            message: Some(message),
            ..Default::default()
        }))
        .await;
    }

    /// `$/progress` end with a message.
    pub(crate) async fn end(self, message: String) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }
}

/// The message shown once for a workspace folder without Markdown.
pub fn no_markdown_message(folder: &std::path::Path) -> String {
    format!("folio: no Markdown files under {}", folder.display())
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// Runs `f`, turning an error or a panic into a JSON-RPC internal error naming `method`.
pub fn guarded<T>(method: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            tracing::warn!("{method}: {err:#}");
            Err(Error {
                code: ErrorCode::InternalError,
                message: format!("{method}: {err:#}").into(),
                data: None,
            })
        }
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            tracing::error!("{method} panicked: {message}");
            Err(Error {
                code: ErrorCode::InternalError,
                message: format!("{method} failed: internal error ({message})").into(),
                data: None,
            })
        }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Session> {
        // A panic while holding the lock leaves the model as it was between mutations.
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a work-done progress when the client shows them: asks it to create the
    /// token `folio/{kind}/{n}`, then sends `begin`. `None` when the client cannot or refused.
    pub(crate) async fn begin_work(
        &self,
        kind: &str,
        title: &str,
        message: String,
    ) -> Option<Work> {
        if !self.lock().flags.work_done_progress {
            return None;
        }
        let n = self.progress_seq.fetch_add(1, Ordering::Relaxed) + 1;
        let token = NumberOrString::String(format!("folio/{kind}/{n}"));
        if let Err(e) = self.client.create_work_done_progress(token.clone()).await {
            tracing::warn!("the client refused progress {kind}: {e}");
            return None;
        }
        let work = Work {
            client: self.client.clone(),
            token,
        };
        let begin = WorkDoneProgressBegin {
            title: title.to_string(),
            cancellable: Some(false),
            message: Some(message),
            percentage: None,
        };
        work.send(WorkDoneProgress::Begin(begin)).await;
        Some(work)
    }

    /// The status to send, when the client wants it and it changed since the last one.
    fn take_status(session: &mut Session) -> Option<(usize, usize)> {
        let status = session.status();
        if !session.flags.status_notification || session.last_status == Some(status) {
            return None;
        }
        session.last_status = Some(status);
        Some(status)
    }

    async fn send_status(&self, status: Option<(usize, usize)>) {
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
    fn mutate(
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
        // Diagnostics pushed for open documents also give their broken-link counts.
        let mut counted = HashMap::new();
        let batch = if session.flags.pull_diagnostics {
            Vec::new()
        } else {
            guarded(method, || {
                let mut batch = Batch::new();
                for doc in session.open_among(&affected) {
                    let Some(uri) = session.uri(doc.root, &doc.path) else {
                        continue;
                    };
                    let version = session
                        .open
                        .get(&session.abs_path(doc.root, &doc.path))
                        .copied();
                    let items = handlers::diagnostics::for_document(&session, &doc);
                    counted.insert(
                        doc,
                        items
                            .iter()
                            .filter(|d| d.severity == Some(DiagnosticSeverity::ERROR))
                            .count(),
                    );
                    batch.push((uri, items, version));
                }
                Ok(batch)
            })
            .unwrap_or_default()
        };
        // didChange and didOpen never remove a document; other mutations may.
        let prune = !matches!(method, "didChange" | "didOpen");
        let _ = guarded(method, || {
            session.recount(&affected, &counted, prune);
            Ok(())
        });
        let status = Shared::take_status(&mut session);
        Outcome {
            batch,
            refresh,
            status,
        }
    }

    async fn publish(&self, outcome: Outcome) {
        for (uri, items, version) in outcome.batch {
            self.client.publish_diagnostics(uri, items, version).await;
        }
        if outcome.refresh {
            let _ = self.client.workspace_diagnostic_refresh().await;
        }
        self.send_status(outcome.status).await;
    }

    /// Handles files that changed on disk.
    async fn files_changed(&self, events: Vec<(PathBuf, bool)>) {
        let result = self.mutate("didChangeWatchedFiles", |s| {
            let mut affected = BTreeSet::new();
            for (abs, exists) in &events {
                affected.extend(s.file_event(abs, *exists));
            }
            Ok(affected)
        });
        self.publish(result).await;
    }
}

impl Backend {
    /// A server talking to `client`.
    pub fn new(client: Client) -> Backend {
        Backend::with_options(client, Options::default())
    }

    /// A server talking to `client` with `options`.
    pub fn with_options(client: Client, options: Options) -> Backend {
        let shared = Shared {
            client,
            session: Arc::new(Mutex::new(Session::default())),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
            edit_lock: Arc::new(tokio::sync::Mutex::new(())),
            progress_seq: Arc::new(AtomicU64::new(0)),
        };
        let base = options
            .bridge_dir
            .unwrap_or_else(folio_core::bridge::base_dir);
        Backend {
            shared,
            watcher: Mutex::new(None),
            endpoints: Mutex::new(Endpoints::new(base)),
            pending: Mutex::new(Vec::new()),
            embeddings: Mutex::new(std::collections::HashMap::new()),
            no_embeddings: options.no_embeddings,
        }
    }

    /// Loads the workspace folders named in `initialize`, with a work-done progress
    /// (`folio/scan/N`) when the client shows them; then says once for each folder
    /// without Markdown that it has none, and sends the first `folio/status`.
    async fn initial_scan(&self) {
        let folders =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        if folders.is_empty() {
            return;
        }
        let work = self
            .shared
            .begin_work(
                "scan",
                "folio: indexing",
                format!("scanning {}", folders[0].display()),
            )
            .await;
        let mut empty = Vec::new();
        for (i, folder) in folders.iter().enumerate() {
            if i > 0
                && let Some(work) = &work
            {
                work.report(format!("scanning {}", folder.display())).await;
            }
            // Off the async thread, so the output keeps flowing (the `begin` reaches the
            // client before the scan, not with its `end`); no other message is handled meanwhile.
            let (shared, path) = (self.shared.clone(), folder.clone());
            let loaded = tokio::task::spawn_blocking(move || {
                let mut session = shared.lock();
                guarded("initialized", || session.add_root(&path)).map(|idx| {
                    (
                        session.roots[idx].folder.clone(),
                        session.roots[idx].ws().len(),
                    )
                })
            })
            .await;
            let Ok(Ok((folder, n))) = loaded else {
                continue;
            };
            if n == 0 {
                empty.push(folder.clone());
            }
            if let Some(work) = &work {
                work.report(format!("{n} documents in {}", folder.display()))
                    .await;
            }
        }
        self.sync_endpoints();
        let (status, (documents, broken), counted) = {
            let mut session = self.shared.lock();
            (
                Shared::take_status(&mut session),
                session.status(),
                session.flags.status_notification,
            )
        };
        if let Some(work) = work {
            let message = if counted {
                format!("{documents} documents, {broken} broken links")
            } else {
                format!("{documents} documents")
            };
            work.end(message).await;
        }
        for folder in empty {
            self.shared
                .client
                .show_message(MessageType::WARNING, no_markdown_message(&folder))
                .await;
        }
        self.shared.send_status(status).await;
    }

    /// Opens and closes bridge endpoints so there is one per root.
    fn sync_endpoints(&self) {
        let folders = self.shared.lock().root_folders();
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sync(&folders, &self.shared);
    }

    fn request<T>(&self, method: &str, f: impl FnOnce(&Session) -> anyhow::Result<T>) -> Result<T> {
        let session = self.shared.lock();
        guarded(method, || f(&session))
    }

    /// Starts the `notify` watcher over every root (for clients that cannot watch files).
    fn start_watcher(&self) {
        let shared = self.shared.clone();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<(PathBuf, bool)>>();
        let debouncer = new_debouncer(WATCH_DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let mut paths: Vec<(PathBuf, bool)> = Vec::new();
            for event in events {
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
        for root in self.shared.lock().roots.iter().filter(|r| !r.single_file) {
            if let Err(e) = debouncer.watch(&root.folder, RecursiveMode::Recursive) {
                tracing::warn!("cannot watch {}: {e}", root.folder.display());
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

fn flags(caps: &ClientCapabilities) -> ClientFlags {
    let td = caps.text_document.as_ref();
    let ws = caps.workspace.as_ref();
    let resource_operation = |kind: ResourceOperationKind| {
        ws.and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.resource_operations.as_ref())
            .is_some_and(|ops| ops.contains(&kind))
    };
    let diagnostic_refresh = ws
        .and_then(|w| w.diagnostics.as_ref())
        .and_then(|d| d.refresh_support)
        .unwrap_or(false);
    ClientFlags {
        // Pull only from a client that can be asked to pull again: without
        // `workspace/diagnostic/refresh` (Neovim 0.11) a change to another file (a link
        // target edited on disk, say) could not reach its diagnostics, so those clients get pushes.
        pull_diagnostics: td.and_then(|t| t.diagnostic.as_ref()).is_some() && diagnostic_refresh,
        diagnostic_refresh,
        watched_files_dynamic: ws
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
        create_files: resource_operation(ResourceOperationKind::Create),
        delete_files: resource_operation(ResourceOperationKind::Delete),
        rename_files: resource_operation(ResourceOperationKind::Rename),
        document_changes: ws
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false),
        work_done_progress: caps
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
        status_notification: caps
            .experimental
            .as_ref()
            .and_then(|e| e.get("folioStatus"))
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    }
}

/// The server's capabilities; diagnostics are advertised for pull only when the client pulls.
pub fn capabilities(s: &Session) -> ServerCapabilities {
    let all_files = FileOperationRegistrationOptions {
        filters: vec![FileOperationFilter {
            scheme: Some("file".to_string()),
            pattern: FileOperationPattern {
                glob: "**/*".to_string(),
                matches: None,
                options: None,
            },
        }],
    };
    ServerCapabilities {
        position_encoding: Some(convert::encoding_kind(s.encoding)),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..TextDocumentSyncOptions::default()
            },
        )),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(
                handlers::completion::TRIGGER_CHARACTERS
                    .iter()
                    .map(|c| c.to_string())
                    .collect(),
            ),
            ..CompletionOptions::default()
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        diagnostic_provider: s.flags.pull_diagnostics.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some("folio".to_string()),
                inter_file_dependencies: true,
                workspace_diagnostics: false,
                work_done_progress_options: Default::default(),
            })
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                will_rename: Some(all_files),
                ..Default::default()
            }),
        }),
        ..ServerCapabilities::default()
    }
}

impl Backend {
    /// `folio/search`: the hits of kb_search, from the core index of the first root
    /// (brought up to date incrementally first; see `handlers::search`).
    pub async fn folio_search(
        &self,
        params: handlers::search::SearchParams,
    ) -> Result<handlers::search::SearchResult> {
        params.plan().map_err(convert::host_error)?;
        let (folder, config) = self.request("folio/search", handlers::search::target)?;
        let embedding = self.embedding_of(&folder, &config);
        let result = tokio::task::spawn_blocking(move || {
            let result = handlers::search::search(&folder, &config, &params, embedding.as_deref());
            // Embeds what changed, in the background, after answering: the next search can use it.
            if let Some(embedding) = &embedding {
                embedding.start(folio_core::index::default_db_path(&folder));
            }
            result
        })
        .await
        .map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: format!("folio/search: {e}").into(),
            data: None,
        })?;
        result.map_err(|err| {
            tracing::warn!("folio/search: {}", err.message);
            convert::host_error(err)
        })
    }

    /// The embedding runner of `folder`, made on first use from its `folio.toml` and the
    /// user's configuration (`None` with `Options::no_embeddings`).
    fn embedding_of(
        &self,
        folder: &std::path::Path,
        config: &folio_core::workspace::Config,
    ) -> Option<Arc<folio_core::embed::runner::Embedding>> {
        if self.no_embeddings {
            return None;
        }
        let mut map = self
            .embeddings
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let runner = map.entry(folder.to_path_buf()).or_insert_with(|| {
            let settings = folio_core::config::user::UserConfig::load().and_then(|user| {
                folio_core::embed::settings::EmbedSettings::resolve(
                    &config.embed,
                    &user.embed,
                    false,
                )
            });
            if let Err(reason) = &settings {
                tracing::warn!(%reason, "embeddings are off");
            }
            Arc::new(folio_core::embed::runner::Embedding::new(settings))
        });
        Some(Arc::clone(runner))
    }

    /// `folio/reindex`: an incremental index pass of the first root; returns its summary.
    /// With a work-done progress (`folio/reindex/N`) when the client shows them.
    pub async fn folio_reindex(&self) -> Result<handlers::search::ReindexResult> {
        let (folder, config) = self.request("folio/reindex", handlers::search::target)?;
        let embedding = self.embedding_of(&folder, &config);
        let work = self
            .shared
            .begin_work(
                "reindex",
                "folio: reindexing",
                format!("indexing {}", folder.display()),
            )
            .await;
        let result = tokio::task::spawn_blocking(move || {
            let summary = handlers::search::reindex(&folder, &config)
                .map(|s| handlers::search::summary(&folder, &s));
            if let Some(embedding) = &embedding {
                embedding.start(folio_core::index::default_db_path(&folder));
            }
            summary
        })
        .await
        .map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: format!("folio/reindex: {e}").into(),
            data: None,
        })
        .and_then(|r| {
            r.map_err(|err| Error {
                code: ErrorCode::InternalError,
                message: format!("folio/reindex: {err:#}").into(),
                data: None,
            })
        });
        if let Some(work) = work {
            let message = match &result {
                Ok(r) => format!(
                    "indexed {} of {} files ({} unchanged, {} removed)",
                    r.indexed, r.files, r.unchanged, r.removed
                ),
                Err(e) => format!("failed: {}", e.message),
            };
            work.end(message).await;
        }
        result
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let mut session = self.shared.lock();
        guarded("initialize", || {
            session.encoding = convert::negotiate(
                params
                    .capabilities
                    .general
                    .as_ref()
                    .and_then(|g| g.position_encodings.as_deref()),
            );
            session.flags = flags(&params.capabilities);
            session.client_info = params
                .client_info
                .as_ref()
                .map(|c| (c.name.clone(), c.version.clone()));
            if let Some(options) = &params.initialization_options {
                session.apply_settings(Some(options.clone()))?;
            }
            let mut folders: Vec<PathBuf> = params
                .workspace_folders
                .iter()
                .flatten()
                .filter_map(|f| convert::uri_to_path(&f.uri))
                .collect();
            #[allow(deprecated)]
            if folders.is_empty()
                && let Some(root) = params.root_uri.as_ref().and_then(convert::uri_to_path)
            {
                folders.push(root);
            }
            // Loaded in `initialized`, where progress can be shown.
            *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = folders
                .into_iter()
                .map(|f| f.canonicalize().unwrap_or(f))
                .collect();
            Ok(())
        })?;
        let capabilities = capabilities(&session);
        drop(session);
        // The bridge endpoints open now, as they did when the folders loaded here: until the
        // scan is done a bridge request finds no open buffer and the agent reads the disk.
        let folders = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sync(&folders, &self.shared);
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "folio".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.initial_scan().await;
        let dynamic = self.shared.lock().flags.watched_files_dynamic;
        if dynamic {
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/*".to_string()),
                    kind: None,
                }],
            };
            let registration = Registration {
                id: "folio-watched-files".to_string(),
                method: "workspace/didChangeWatchedFiles".to_string(),
                register_options: Some(json!(options)),
            };
            if let Err(e) = self
                .shared
                .client
                .register_capability(vec![registration])
                .await
            {
                tracing::warn!("client refused to watch files ({e}); using notify");
                self.start_watcher();
            }
        } else {
            self.start_watcher();
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let result = self.shared.mutate("didOpen", |s| {
            let abs = convert::uri_to_path(&doc.uri)
                .ok_or_else(|| anyhow::anyhow!("not a file URI: {}", doc.uri.as_str()))?;
            let before = s.roots.len();
            let affected = s.did_open(&abs, &doc.text, doc.version);
            if s.roots.len() > before {
                tracing::info!("opened {} in a new root", abs.display());
            }
            Ok(affected)
        });
        self.sync_endpoints();
        self.shared.publish(result).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let result = self.shared.mutate("didChange", |s| {
            let abs = convert::uri_to_path(&params.text_document.uri)
                .ok_or_else(|| anyhow::anyhow!("not a file URI"))?;
            s.did_change(&abs, params.text_document.version, &params.content_changes)
        });
        self.shared.publish(result).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let outcome = self.shared.mutate("didClose", |s| {
            let abs =
                convert::uri_to_path(&uri).ok_or_else(|| anyhow::anyhow!("not a file URI"))?;
            Ok(s.did_close(&abs))
        });
        self.sync_endpoints();
        let pull = self.shared.lock().flags.pull_diagnostics;
        if !pull {
            // Diagnostics are published for open documents only.
            self.shared
                .client
                .publish_diagnostics(uri, Vec::new(), None)
                .await;
        }
        self.shared.publish(outcome).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let events = params
            .changes
            .iter()
            .filter_map(|e| {
                let abs = convert::uri_to_path(&e.uri)?;
                let exists = e.typ != FileChangeType::DELETED && abs.exists();
                Some((abs, exists))
            })
            .collect();
        self.shared.files_changed(events).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let result = self.shared.mutate("didChangeConfiguration", |s| {
            let settings = if params.settings.is_null() {
                None
            } else {
                Some(params.settings.clone())
            };
            s.apply_settings(settings)?;
            Ok(s.all_documents())
        });
        self.shared.publish(result).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let mut added = Vec::new();
        let result = self.shared.mutate("didChangeWorkspaceFolders", |s| {
            for removed in &params.event.removed {
                if let Some(folder) = convert::uri_to_path(&removed.uri) {
                    s.remove_root(&folder);
                }
            }
            for folder in &params.event.added {
                if let Some(path) = convert::uri_to_path(&folder.uri) {
                    let idx = s.add_root(&path)?;
                    added.push((s.roots[idx].folder.clone(), s.roots[idx].ws().is_empty()));
                }
            }
            Ok(s.all_documents()
                .into_iter()
                .filter(|d| s.is_open(d))
                .collect())
        });
        self.sync_endpoints();
        if let Some(debouncer) = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            for (folder, _) in &added {
                if let Err(e) = debouncer.watch(folder, RecursiveMode::Recursive) {
                    tracing::warn!("cannot watch {}: {e}", folder.display());
                }
            }
        }
        self.shared.publish(result).await;
        for (folder, empty) in added {
            if empty {
                self.shared
                    .client
                    .show_message(MessageType::WARNING, no_markdown_message(&folder))
                    .await;
            }
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.request("textDocument/documentSymbol", |s| {
            handlers::symbols::document_symbol(s, &params)
        })
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        self.request("workspace/symbol", |s| {
            handlers::symbols::workspace_symbol(s, &params)
        })
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        self.request("textDocument/diagnostic", |s| {
            handlers::diagnostics::pull(s, &params)
        })
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        self.request("textDocument/definition", |s| {
            handlers::navigation::definition(s, &params)
        })
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        self.request("textDocument/references", |s| {
            handlers::navigation::references(s, &params)
        })
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        self.request("textDocument/hover", |s| {
            handlers::navigation::hover(s, &params)
        })
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        self.request("textDocument/completion", |s| {
            handlers::completion::completion(s, &params)
        })
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        self.request("textDocument/prepareRename", |s| {
            handlers::rename::prepare_rename(s, &params)
        })
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        self.request("textDocument/rename", |s| {
            handlers::rename::rename(s, &params)
        })
    }

    async fn will_rename_files(&self, params: RenameFilesParams) -> Result<Option<WorkspaceEdit>> {
        self.request("workspace/willRenameFiles", |s| {
            handlers::rename::will_rename_files(s, &params)
        })
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        self.request("textDocument/documentLink", |s| {
            handlers::links::document_link(s, &params)
        })
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.request("textDocument/foldingRange", |s| {
            handlers::folding::folding_range(s, &params)
        })
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.request("textDocument/codeAction", |s| {
            handlers::actions::code_action(s, &params)
        })
    }
}
