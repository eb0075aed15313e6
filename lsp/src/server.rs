//! The `LanguageServer` implementation: dispatch only.
//!
//! Notifications that change the model run their mutation synchronously under the
//! session lock before their first `.await`, and the stdio server runs with a
//! concurrency level of 1, so document changes apply strictly in the order received.
//! Requests compute under the lock inside `catch_unwind`: a panic becomes an
//! internal error for that one request and the server keeps running.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::bridge::Endpoints;
use crate::capabilities::{capabilities, flags};
use crate::convert;
use crate::guard::guarded;
use crate::handlers;
use crate::session::{Change, ChangeToParse, ReadRoot, Session};
use crate::startup::{Outlines, Phase};
use crate::state::ServerState;

/// How long `shutdown` waits for outline caches still being written.
const OUTLINE_SAVE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Options of a server beyond what the client negotiates.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where the live-bridge endpoints go; `None` is core `bridge::base_dir()`.
    pub bridge_dir: Option<PathBuf>,
    /// Never load an embedder: `folio/search` stays lexical (tests that pin results).
    pub no_embeddings: bool,
}

/// The language server: the client handle, the session, the live-bridge endpoints and
/// (when the client cannot watch files for us) the core file watcher.
pub struct Backend {
    pub(crate) shared: ServerState,
    pub(crate) watcher: crate::watcher::Watcher,
    endpoints: Arc<Mutex<Endpoints>>,
    /// The workspace folders named in `initialize`, loaded in `initialized` (where the
    /// client can be shown progress).
    pending: Mutex<Vec<PathBuf>>,
    /// The core host of each searched root ([`crate::hosts`]).
    pub(crate) hosts: crate::hosts::Hosts,
    pub(crate) no_embeddings: bool,
}

/// The message shown once for a workspace folder without Markdown.
pub fn no_markdown_message(folder: &std::path::Path) -> String {
    format!("folio: no Markdown files under {}", folder.display())
}

impl Backend {
    /// A server talking to `client`.
    pub fn new(client: Client) -> Backend {
        Backend::with_options(client, Options::default())
    }

    /// A server talking to `client` with `options`.
    pub fn with_options(client: Client, options: Options) -> Backend {
        let shared = ServerState::new(client);
        let base = options
            .bridge_dir
            .unwrap_or_else(folio_core::bridge::base_dir);
        Backend {
            shared,
            watcher: Arc::new(Mutex::new(None)),
            endpoints: Arc::new(Mutex::new(Endpoints::new(base))),
            pending: Mutex::new(Vec::new()),
            hosts: crate::hosts::Hosts::default(),
            no_embeddings: options.no_embeddings,
        }
    }

    /// Finishes the moves killed folio writers left half done in `folders` before they
    /// are read, and says so in the window ([`crate::interrupted`]).
    async fn finish_interrupted_writes(&self, folders: Vec<PathBuf>) {
        let messages = tokio::task::spawn_blocking(move || crate::interrupted::finish(&folders))
            .await
            .unwrap_or_default();
        for (kind, message) in messages {
            self.shared.client.show_message(kind, message).await;
        }
    }

    /// Loads `folders` (those named in `initialize`), with a work-done progress
    /// (`folio/scan/N`) when the client shows them; then says once for each folder
    /// without Markdown that it has none, and sends the first `folio/status`.
    ///
    /// Returns once the folders are read and outlined, with the session locked by the
    /// loader: the messages after `initialized` wait for the whole model (changes still
    /// apply in the order received), except `workspace/symbol`, which answers from the
    /// outlines meanwhile ([`crate::startup`]). The parse and what follows it run on.
    ///
    /// With `own_watch`, the server's file watcher starts now and watches the folders
    /// once they are loaded; what changed since their read then applies
    /// ([`crate::watcher`]).
    async fn initial_scan(&self, folders: Vec<PathBuf>, own_watch: bool) {
        if own_watch {
            // Also when there is no folder yet: folders added later are watched as they come.
            crate::watcher::start(&self.watcher, self.shared.clone());
        }
        if folders.is_empty() {
            return;
        }
        self.finish_interrupted_writes(folders.clone()).await;
        let work = self
            .shared
            .begin_work(
                "scan",
                "folio: indexing",
                format!("scanning {}", folders[0].display()),
            )
            .await;
        // Off the async thread, so the output keeps flowing (the `begin` reaches the
        // client before the load, not with its `end`).
        let (outlined_tx, outlined) = tokio::sync::oneshot::channel::<()>();
        let shared = self.shared.clone();
        let to_watch = folders.clone();
        let load = tokio::task::spawn_blocking(move || {
            let _ready = ReadyOnDrop(&shared);
            let mut session = shared.lock();
            let reads: Vec<_> = folders
                .iter()
                .map(|path| guarded("initialized", || session.read_root(path)))
                .collect();
            let fresh: Vec<&ReadRoot> = reads
                .iter()
                .filter_map(|r| r.as_ref().ok()?.as_ref().ok())
                .collect();
            let outlines = Outlines::new(&fresh, session.encoding);
            shared
                .startup
                .send_replace(Phase::Outlined(Arc::new(outlines)));
            // The session stays locked here until every folder is parsed.
            let _ = outlined_tx.send(());
            let loaded = reads
                .into_iter()
                .filter_map(|read| {
                    let idx = match read.ok()? {
                        Ok(read) => guarded("initialized", || session.add_read_root(read)).ok()?,
                        Err(existing) => existing,
                    };
                    let root = &session.roots[idx];
                    Some((root.folder.clone(), root.ws().len()))
                })
                .collect::<Vec<_>>();
            // The outlines (and with them the texts as read) go, and the memory they held
            // is handed back, before the requests waiting for the session run.
            shared.startup.send_replace(Phase::Ready);
            folio_core::heap::release_free_heap();
            drop(session);
            loaded
        });
        // Err: the loader failed before the outlines; it holds nothing then.
        let _ = outlined.await;
        // Weak: a load still running when the server stops (the client sent `exit`
        // without waiting) must not keep the endpoints, and so their sockets, alive.
        let (shared, endpoints) = (self.shared.clone(), Arc::downgrade(&self.endpoints));
        let watcher = Arc::clone(&self.watcher);
        tokio::spawn(async move {
            let loaded = load.await.unwrap_or_default();
            let mut empty = Vec::new();
            for (folder, n) in loaded {
                if n == 0 {
                    empty.push(folder.clone());
                }
                if let Some(work) = &work {
                    work.report(format!("{n} documents in {}", folder.display()))
                        .await;
                }
            }
            if let Some(endpoints) = endpoints.upgrade() {
                sync_endpoints(&shared, &endpoints);
            }
            crate::watcher::watch_and_catch_up(watcher, shared.clone(), to_watch).await;
            let (status, (documents, broken), counted) = {
                let mut session = shared.lock();
                (
                    ServerState::take_status(&mut session),
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
                shared
                    .client
                    .show_message(MessageType::WARNING, no_markdown_message(&folder))
                    .await;
            }
            shared.show_warnings().await;
            shared.send_status(status).await;
            let pushed = shared.push_workspace();
            shared.publish(pushed).await;
        });
    }

    /// Opens and closes bridge endpoints so there is one per root.
    /// Opens and closes bridge endpoints, and closes the hosts of removed folders, so
    /// both follow the session's roots.
    fn sync_endpoints(&self) {
        sync_endpoints(&self.shared, &self.endpoints);
        // The folders first: the session's lock is not held while the hosts' is taken.
        let folders = self.shared.lock().root_folders();
        self.hosts.retain(&folders);
    }

    /// Like [`Backend::request`] for a handler that fills the session's caches (the
    /// diagnostics of each document, recomputed only after a change).
    /// A large document's open or change: parsed on a blocking thread, then installed
    /// and its diagnostics published, by a task that keeps the document's turn (its later
    /// messages wait) while the handler returns and messages about other documents go on
    /// (`crate::order`). Outside the ordering wrapper (no turn to hand on), done before
    /// returning. A parse that panics leaves the document as it was, with an error in the
    /// log.
    async fn parse_aside(&self, change: Box<ChangeToParse>) {
        let turn = crate::order::take_document_turn();
        let detach = turn.is_some();
        let shared = self.shared.clone();
        let parsing = async move {
            match tokio::task::spawn_blocking(move || change.parse()).await {
                Ok(parsed) => {
                    let outcome = shared.mutate("didChange", |s| Ok(s.finish_change(parsed)));
                    shared.publish(outcome).await;
                    // A buffer that grew over the limit for incremental parsing: say so.
                    shared.show_warnings().await;
                }
                Err(e) => tracing::error!("parsing a large document failed: {e}"),
            }
            drop(turn);
        };
        if detach {
            tokio::spawn(parsing);
        } else {
            parsing.await;
        }
    }

    pub(crate) fn request_mut<T>(
        &self,
        method: &str,
        f: impl FnOnce(&mut Session) -> anyhow::Result<T>,
    ) -> Result<T> {
        let mut session = self.shared.lock();
        guarded(method, || f(&mut session))
    }

    /// The bridge endpoint serving `folder`, when one is open.
    pub(crate) fn endpoint_of(&self, folder: &std::path::Path) -> Option<PathBuf> {
        let endpoints = self
            .endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        endpoints.socket(folder).map(std::path::Path::to_path_buf)
    }

    pub(crate) fn request<T>(
        &self,
        method: &str,
        f: impl FnOnce(&Session) -> anyhow::Result<T>,
    ) -> Result<T> {
        let session = self.shared.lock();
        guarded(method, || f(&session))
    }
}

/// Opens and closes the bridge `endpoints` so there is one per root of the session.
fn sync_endpoints(shared: &ServerState, endpoints: &Mutex<Endpoints>) {
    let folders = shared.lock().root_folders();
    endpoints
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .sync(&folders, shared);
}

/// Ends the start-up phase when the load is over, whether it finished, failed or panicked.
struct ReadyOnDrop<'a>(&'a ServerState);

impl Drop for ReadyOnDrop<'_> {
    fn drop(&mut self) {
        self.0.startup.send_replace(Phase::Ready);
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
            // Loaded in `initialized`, where progress can be shown; `workspace/symbol`
            // waits for the read from now on.
            if !folders.is_empty() {
                self.shared.startup.send_replace(Phase::Reading);
            }
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
        // Read before the loader takes the session.
        let dynamic = self.shared.lock().flags.watched_files_dynamic;
        let folders =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        // The client watches from its registration on, before the walk, so a change made
        // while the folders are read or parsed waits for the session and applies after.
        // The server's own watch starts after the load ([`crate::watcher`]).
        let mut own_watch = !dynamic;
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
            let registered = self.shared.client.register_capability(vec![registration]);
            match tokio::time::timeout(crate::progress::CLIENT_ANSWER_WAIT, registered).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(
                        "client refused to watch files ({e}); using its own file watcher"
                    );
                    own_watch = true;
                }
                Err(_) => {
                    tracing::warn!(
                        "client did not answer the file-watch registration; using its own file watcher"
                    );
                    own_watch = true;
                }
            }
        }
        self.initial_scan(folders, own_watch).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .close();
        // A cache written after the load is finished before the process exits (an
        // editor closed right after opening), waiting at most OUTLINE_SAVE_WAIT.
        let saves = self.shared.lock().take_outline_saves();
        if !saves.is_empty() {
            let joined = tokio::task::spawn_blocking(move || {
                for save in saves {
                    let _ = save.join();
                }
            });
            if tokio::time::timeout(OUTLINE_SAVE_WAIT, joined)
                .await
                .is_err()
            {
                tracing::warn!("outline cache still being written at shutdown");
            }
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let mut to_parse = None;
        let result = self.shared.mutate("didOpen", |s| {
            let abs = convert::uri_to_path(&doc.uri)
                .ok_or_else(|| anyhow::anyhow!("not a file URI: {}", doc.uri.as_str()))?;
            let before = s.roots.len();
            let change = s.did_open(&abs, &doc.text, doc.version);
            if s.roots.len() > before {
                tracing::info!("opened {} in a new root", abs.display());
            }
            Ok(match change {
                Change::Applied(affected) => affected,
                Change::Parse(change) => {
                    to_parse = Some(change);
                    BTreeSet::new()
                }
            })
        });
        self.sync_endpoints();
        self.shared.publish(result).await;
        if let Some(change) = to_parse {
            self.parse_aside(change).await;
        }
        // A file opened outside every root may have started single-file mode: say so.
        self.shared.show_warnings().await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let mut to_parse = None;
        let result = self.shared.mutate("didChange", |s| {
            let abs = convert::uri_to_path(&params.text_document.uri)
                .ok_or_else(|| anyhow::anyhow!("not a file URI"))?;
            match s.did_change(&abs, params.text_document.version, &params.content_changes)? {
                Change::Applied(affected) => Ok(affected),
                Change::Parse(change) => {
                    to_parse = Some(change);
                    Ok(BTreeSet::new())
                }
            }
        });
        self.shared.publish(result).await;
        if let Some(change) = to_parse {
            self.parse_aside(change).await;
        }
        // A buffer that grew over the limit for incremental parsing: say so.
        self.shared.show_warnings().await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let outcome = self.shared.mutate("didClose", |s| {
            let abs =
                convert::uri_to_path(&uri).ok_or_else(|| anyhow::anyhow!("not a file URI"))?;
            let mut affected = s.did_close(&abs);
            // Pushed for every document: the closed one's diagnostics are now its disk copy's.
            if let Some(doc) = s.locate(&abs)
                && s.publishes_workspace(doc.root)
                && s.entry(&doc).is_some()
            {
                affected.insert(doc);
            }
            Ok(affected)
        });
        self.sync_endpoints();
        let keep = {
            let s = self.shared.lock();
            s.flags.pull_diagnostics
                || convert::uri_to_path(&uri)
                    .and_then(|abs| s.locate(&abs))
                    .is_some_and(|d| s.publishes_workspace(d.root) && s.entry(&d).is_some())
        };
        if !keep {
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
        let adding: Vec<PathBuf> = params
            .event
            .added
            .iter()
            .filter_map(|f| convert::uri_to_path(&f.uri))
            .collect();
        self.finish_interrupted_writes(adding).await;
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
            // Open documents may now belong to another root; an added root that publishes
            // for the whole workspace pushes every document.
            Ok(s.all_documents()
                .into_iter()
                .filter(|d| {
                    s.is_open(d)
                        || (s.publishes_workspace(d.root)
                            && added.iter().any(|(f, _)| *f == s.roots[d.root].folder))
                })
                .collect())
        });
        self.sync_endpoints();
        self.shared.publish(result).await;
        if !added.is_empty() {
            let folders = added.iter().map(|(f, _)| f.clone()).collect();
            let watcher = Arc::clone(&self.watcher);
            crate::watcher::watch_and_catch_up(watcher, self.shared.clone(), folders).await;
        }
        for (folder, empty) in added {
            if empty {
                self.shared
                    .client
                    .show_message(MessageType::WARNING, no_markdown_message(&folder))
                    .await;
            }
        }
        self.shared.show_warnings().await;
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
        if let Some(outlines) = self.shared.outlines().await {
            return guarded("workspace/symbol", || {
                handlers::symbols::workspace_symbol_from_outlines(&outlines, &params)
            });
        }
        self.request("workspace/symbol", |s| {
            handlers::symbols::workspace_symbol(s, &params)
        })
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        self.request_mut("textDocument/diagnostic", |s| {
            handlers::diagnostics::pull(s, &params)
        })
    }

    async fn workspace_diagnostic(
        &self,
        params: WorkspaceDiagnosticParams,
    ) -> Result<WorkspaceDiagnosticReportResult> {
        self.request_mut("workspace/diagnostic", |s| {
            handlers::diagnostics::workspace(s, &params)
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

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.request("textDocument/codeLens", |s| {
            handlers::code_lens::code_lens(s, &params)
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
        let (edit, warning) = self.request("workspace/willRenameFiles", |s| {
            handlers::rename::will_rename_files(s, &params)
        })?;
        if let Some(warning) = warning {
            self.shared
                .client
                .show_message(MessageType::WARNING, warning)
                .await;
        }
        Ok(edit)
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

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let shown = self.request("workspace/executeCommand", |s| {
            handlers::commands::execute(s, &params)
        })?;
        let Some(shown) = shown else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "unknown command `{}`",
                params.command
            )));
        };
        if shown.created {
            // The watcher reports it too; the model has it before the editor shows it.
            self.shared
                .files_changed(vec![(shown.abs.clone(), true)])
                .await;
        }
        if self.shared.lock().flags.show_document {
            let _ = self
                .shared
                .client
                .show_document(ShowDocumentParams {
                    uri: shown.uri.clone(),
                    external: None,
                    take_focus: Some(true),
                    selection: None,
                })
                .await;
        }
        Ok(Some(serde_json::json!(shown.uri)))
    }

    async fn code_action_resolve(&self, params: CodeAction) -> Result<CodeAction> {
        self.request("codeAction/resolve", |s| {
            handlers::actions::resolve(s, params)
        })
    }
}
