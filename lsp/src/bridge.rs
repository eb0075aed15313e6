//! The server side of the live bridge (core `bridge`): one Unix socket per root this
//! language server serves, through which `folio mcp` reads open buffers and sends
//! edits that reach the editor as `workspace/applyEdit` with a versioned
//! `TextDocumentEdit`.
//!
//! Endpoints follow the session's roots (`Endpoints::sync` after every change of the
//! roots); each socket is removed when its root goes away and when the server stops
//! (dropping an [`Endpoint`] removes its file). A connection from another uid gets
//! `ERR_FORBIDDEN` and is closed.
//!
//! Edits are serialised by one async lock: the version check, the request to the
//! editor and the wait for the editor's `didChange` run as one step, so two bridge
//! clients never interleave and each edit is checked against the buffer the previous
//! one produced. An edit counts as applied only when the editor says so and its buffer,
//! as reported by `didChange`, holds exactly the expected text. File operations on open
//! documents (`deleteFile`, `renameFile`) go the same way as LSP resource operations and
//! count as done once the editor closed the document and the file system shows it.
//!
//! An editor that does not answer `workspace/applyEdit` within [`ANSWER_TIMEOUT`] is
//! taken to be out of reach (code-server keeps its extension host, and so this server,
//! running while no browser tab shows it): until it answers that request, later edits
//! are refused at once instead of each waiting out the timeout behind it.
//! See docs/bridge.md.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use folio_core::bridge::{
    ApplyEditParams, ApplyEditResult, ByteEdit, ERR_FORBIDDEN, ERR_NOT_OPEN, ERR_REFUSED,
    ERR_UNCONFIRMED, ERR_VERSION_CONFLICT, ERR_VERSION_MISMATCH, FileOperationParams,
    FileOperationResult, HelloParams, HelloResult, OpenDocument, PROTOCOL_VERSION, ReadParams,
    ReadResult,
};
use folio_core::document::{Document, TextEdit as CoreEdit, keep_final_line_break};
use folio_core::path_policy::check_syntax;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tower_lsp_server::ls_types::{
    ApplyWorkspaceEditParams, DeleteFile, DocumentChangeOperation, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, RenameFile, ResourceOp, TextDocumentEdit, TextEdit,
    WorkspaceEdit, request::ApplyWorkspaceEdit,
};

use crate::convert;
use crate::session::Session;
use crate::state::ServerState;

/// How long the editor may take to answer `workspace/applyEdit`.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the editor may take, after saying it applied an edit, to report the change
/// with `didChange` (Neovim debounces `didChange` by 150 ms).
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(3);

/// A JSON-RPC error: code and message.
type RpcError = (i64, String);

/// When the `workspace/applyEdit` request the editor left unanswered past
/// [`ANSWER_TIMEOUT`] was sent, while it is still unanswered. One per server, shared by
/// its endpoints: they all talk to the same editor.
#[derive(Debug, Default)]
struct Unanswered(Mutex<Option<Instant>>);

impl Unanswered {
    fn since(&self) -> Option<Instant> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, since: Option<Instant>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = since;
    }
}

fn invalid_params(message: impl Into<String>) -> RpcError {
    (-32602, message.into())
}

/// One listening socket and the task accepting on it.
#[derive(Debug)]
pub struct Endpoint {
    /// The socket file.
    pub socket: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The endpoints of this server, one per root folder.
#[derive(Debug)]
pub struct Endpoints {
    /// The folder holding every root's endpoints (normally core `bridge::base_dir`).
    base: PathBuf,
    open: HashMap<PathBuf, Endpoint>,
    unanswered: Arc<Unanswered>,
    /// Set by [`Endpoints::close`] (the client's `shutdown`): no endpoint opens again, so a
    /// load that finishes after `shutdown` leaves no socket behind.
    closed: bool,
}

impl Endpoints {
    /// No endpoints yet; sockets go under `base`.
    pub fn new(base: PathBuf) -> Endpoints {
        Endpoints {
            base,
            open: HashMap::new(),
            unanswered: Arc::default(),
            closed: false,
        }
    }

    /// The socket of the endpoint serving `folder`, if one is open.
    pub fn socket(&self, folder: &Path) -> Option<&Path> {
        self.open.get(folder).map(|e| e.socket.as_path())
    }

    /// Opens an endpoint for each root folder that has none and closes the endpoints of
    /// folders that are no longer roots. Must run inside a Tokio runtime.
    pub(crate) fn sync(&mut self, folders: &[PathBuf], shared: &ServerState) {
        if self.closed {
            return;
        }
        self.open.retain(|folder, _| folders.contains(folder));
        for folder in folders {
            if self.open.contains_key(folder) {
                continue;
            }
            match open_endpoint(&self.base, folder, shared, &self.unanswered) {
                Ok(endpoint) => {
                    tracing::info!(
                        "bridge for {} at {}",
                        folder.display(),
                        endpoint.socket.display()
                    );
                    self.open.insert(folder.clone(), endpoint);
                }
                Err(e) => tracing::warn!("no bridge for {}: {e:#}", folder.display()),
            }
        }
    }

    /// Closes every endpoint (removing its socket) for good: later syncs with the roots
    /// open none.
    pub fn close(&mut self) {
        self.open.clear();
        self.closed = true;
    }
}

fn open_endpoint(
    base: &Path,
    folder: &Path,
    shared: &ServerState,
    unanswered: &Arc<Unanswered>,
) -> anyhow::Result<Endpoint> {
    let dir = folio_core::bridge::root_dir(base, folder);
    folio_core::bridge::ensure_private_dir(base, &dir)?;
    // Sockets of dead servers of this root are stale: remove them.
    folio_core::bridge::live_endpoints(base, folder);
    let socket = folio_core::bridge::socket_path(base, folder, std::process::id());
    // The name holds our pid, so a file there is left over from a dead process that had it.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)?;
    // The folder is 0700 already; the socket itself is 0600 too.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    let context = Arc::new(Context {
        shared: shared.clone(),
        root: folder.to_path_buf(),
        unanswered: Arc::clone(unanswered),
    });
    let task = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, Arc::clone(&context)));
                }
                Err(e) => {
                    tracing::warn!("bridge accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(Endpoint { socket, task })
}

/// What a connection needs: the server state, the root the endpoint serves and the
/// editor's unanswered edit request.
struct Context {
    shared: ServerState,
    root: PathBuf,
    unanswered: Arc<Unanswered>,
}

fn answer(id: &Value, result: Result<Value, RpcError>) -> String {
    let mut message = json!({"jsonrpc": "2.0", "id": id});
    match result {
        Ok(value) => message["result"] = value,
        Err((code, text)) => message["error"] = json!({"code": code, "message": text}),
    }
    let mut line = message.to_string();
    line.push('\n');
    line
}

async fn serve_connection(stream: UnixStream, context: Arc<Context>) {
    let peer = stream.peer_cred().map(|c| c.uid());
    let ours = folio_core::bridge::current_uid();
    let (read, mut write) = stream.into_split();
    if peer.as_ref().ok() != Some(&ours) {
        let who = peer.map_or_else(
            |e| format!("an unknown user ({e})"),
            |uid| format!("uid {uid}"),
        );
        tracing::warn!("bridge: refused a connection from {who}");
        let message = format!("this folio bridge accepts only uid {ours}, not {who}");
        let _ = write
            .write_all(answer(&Value::Null, Err((ERR_FORBIDDEN, message))).as_bytes())
            .await;
        let _ = write.shutdown().await;
        return;
    }
    let mut lines = BufReader::new(read).lines();
    let mut greeted = false;
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                let reply = answer(&Value::Null, Err((-32700, format!("parse error: {e}"))));
                if write.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
        };
        // Notifications need no answer and the protocol has none.
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "hello" => {
                let result = hello(&context, params);
                greeted = result.is_ok();
                result
            }
            _ if !greeted => Err((-32600, "say `hello` first".to_string())),
            "openDocuments" => Ok(json!(open_documents(&context.shared.lock(), &context.root))),
            "read" => parse::<ReadParams>(params)
                .and_then(|p| read_buffer(&context.shared.lock(), &context.root, &p.path)),
            "applyEdit" => match parse::<ApplyEditParams>(params) {
                Ok(p) => apply_edit(&context, p).await.map(|r| json!(r)),
                Err(e) => Err(e),
            },
            "deleteFile" | "renameFile" => match parse::<FileOperationParams>(params) {
                Ok(p) if (method == "renameFile") != p.new_path.is_some() => Err(invalid_params(
                    "`newPath` is required by renameFile and refused by deleteFile",
                )),
                Ok(p) => file_operation(&context, p).await.map(|r| json!(r)),
                Err(e) => Err(e),
            },
            other => Err((-32601, format!("unknown method `{other}`"))),
        };
        if write
            .write_all(answer(&id, result).as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| invalid_params(format!("invalid params: {e}")))
}

fn hello(context: &Context, params: Value) -> Result<Value, RpcError> {
    let params: HelloParams = parse(params)?;
    if params.protocol_version != PROTOCOL_VERSION {
        return Err((
            ERR_VERSION_MISMATCH,
            format!(
                "this folio lsp ({} {}) speaks bridge protocol {PROTOCOL_VERSION}, the client speaks {}; run the same folio version on both sides",
                "folio",
                env!("CARGO_PKG_VERSION"),
                params.protocol_version
            ),
        ));
    }
    let asked = Path::new(&params.root);
    let asked = asked.canonicalize().unwrap_or_else(|_| asked.to_path_buf());
    if asked != context.root {
        return Err(invalid_params(format!(
            "this endpoint serves {}, not {}",
            context.root.display(),
            params.root
        )));
    }
    let session = context.shared.lock();
    let (editor, editor_version) = session
        .client_info
        .clone()
        .unwrap_or_else(|| ("unknown editor".to_string(), None));
    Ok(json!(HelloResult {
        protocol_version: PROTOCOL_VERSION,
        root: context.root.to_string_lossy().into_owned(),
        editor,
        editor_version,
        pid: std::process::id(),
    }))
}

/// The documents open in the editor under `root`, as KB-relative paths, sorted.
pub fn open_documents(s: &Session, root: &Path) -> Vec<OpenDocument> {
    let mut out: Vec<OpenDocument> = s
        .open
        .iter()
        .filter_map(|(abs, version)| {
            let rel = abs.strip_prefix(root).ok()?;
            let parts: Option<Vec<&str>> =
                rel.components().map(|c| c.as_os_str().to_str()).collect();
            Some(OpenDocument {
                path: parts?.join("/"),
                version: *version,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The absolute path of an open document, its version and its buffer.
pub(crate) fn open_buffer(
    s: &Session,
    root: &Path,
    path: &str,
) -> Result<(PathBuf, i32, Document), RpcError> {
    check_syntax(path).map_err(|e| invalid_params(format!("{path}: {e}")))?;
    let mut abs = root.to_path_buf();
    abs.extend(path.split('/'));
    let not_open = || (ERR_NOT_OPEN, format!("{path} is not open in the editor"));
    let version = *s.open.get(&abs).ok_or_else(not_open)?;
    let doc = s.locate(&abs).ok_or_else(not_open)?;
    let entry = s.entry(&doc).ok_or_else(not_open)?;
    Ok((abs, version, entry.doc.clone()))
}

/// The buffer of an open document, unsaved changes included.
pub fn read_buffer(s: &Session, root: &Path, path: &str) -> Result<Value, RpcError> {
    let (_, version, doc) = open_buffer(s, root, path)?;
    Ok(json!(ReadResult {
        version,
        text: doc.text()
    }))
}

/// The text `edits` (sorted, disjoint byte ranges of `doc`) produce, or why they are invalid.
fn edited_text(doc: &Document, edits: &[ByteEdit]) -> Result<String, RpcError> {
    let mut previous_end = 0;
    for edit in edits {
        if edit.start > edit.end || edit.start < previous_end {
            return Err(invalid_params(format!(
                "edits must be sorted and must not overlap (edit {}..{} after one ending at {previous_end})",
                edit.start, edit.end
            )));
        }
        previous_end = edit.end;
    }
    let mut result = doc.clone();
    // From the last to the first, so each range still means the same bytes.
    let reversed: Vec<CoreEdit> = edits
        .iter()
        .rev()
        .map(|e| CoreEdit {
            range: e.start..e.end,
            new_text: e.new_text.clone(),
        })
        .collect();
    result
        .apply_edits(&reversed)
        .map_err(|e| invalid_params(e.to_string()))?;
    Ok(result.text())
}

/// An edit checked against the buffer, ready to send.
struct Prepared {
    abs: PathBuf,
    before: String,
    expected: String,
    edit: WorkspaceEdit,
}

fn prepare(s: &Session, root: &Path, params: &ApplyEditParams) -> Result<Prepared, RpcError> {
    let (abs, version, doc) = open_buffer(s, root, &params.path)?;
    if version != params.version {
        return Err((
            ERR_VERSION_CONFLICT,
            format!(
                "{} is at version {version} in the editor, not {}; read it again",
                params.path, params.version
            ),
        ));
    }
    // Sent as `documentChanges` even to a client that does not advertise them (Neovim
    // 0.11 handles them, version check included, but does not say so): a client that
    // ignored the edit and still said `applied` fails the confirmation below.
    let expected = edited_text(&doc, &params.edits)?;
    let before = doc.text();
    let uri = s
        .client_uri(&abs)
        .ok_or_else(|| invalid_params(format!("no URI for {}", abs.display())))?;
    let edits = params
        .edits
        .iter()
        .map(|e| {
            // Neovim applies an edit after the final line break with an extra empty line.
            let (range, new_text) = keep_final_line_break(&before, e.start..e.end, &e.new_text);
            OneOf::Left(TextEdit {
                range: convert::range(&doc, &range, s.encoding),
                new_text,
            })
        })
        .collect();
    let edit = WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri,
                version: Some(version),
            },
            edits,
        }])),
        ..WorkspaceEdit::default()
    };
    Ok(Prepared {
        abs,
        before,
        expected,
        edit,
    })
}

/// The version of the open buffer at `abs` and whether it holds `expected`.
fn buffer_state(s: &Session, abs: &Path, expected: &str) -> Option<(i32, bool)> {
    let version = *s.open.get(abs)?;
    let doc = s.locate(abs)?;
    let entry = s.entry(&doc)?;
    Some((
        version,
        entry.doc.len_bytes() == expected.len() && entry.doc.text() == expected,
    ))
}

async fn apply_edit(
    context: &Context,
    params: ApplyEditParams,
) -> Result<ApplyEditResult, RpcError> {
    let shared = &context.shared;
    // One edit at a time, from the check to the editor's confirmation.
    let _turn = shared.edit_lock.lock().await;
    let mut changes = shared.changes.subscribe();
    let prepared = prepare(&shared.lock(), &context.root, &params)?;
    if prepared.expected == prepared.before {
        return Ok(ApplyEditResult {
            applied: true,
            version: params.version,
            failure_reason: None,
        });
    }
    let response = send_edit(context, prepared.edit, params.label.clone()).await?;
    if !response.applied {
        let version = shared
            .lock()
            .open
            .get(&prepared.abs)
            .copied()
            .unwrap_or(params.version);
        return Ok(ApplyEditResult {
            applied: false,
            version,
            failure_reason: Some(
                response
                    .failure_reason
                    .unwrap_or_else(|| "the editor refused the edit".to_string()),
            ),
        });
    }
    // The editor says it applied the edit; the answer is its buffer once `didChange`
    // reports it (a client may skip an edit for a newer buffer and still say `applied`).
    let deadline = tokio::time::Instant::now() + CONFIRM_TIMEOUT;
    let mut last_version;
    loop {
        let state = buffer_state(&shared.lock(), &prepared.abs, &prepared.expected);
        match state {
            Some((version, true)) if version != params.version => {
                return Ok(ApplyEditResult {
                    applied: true,
                    version,
                    failure_reason: None,
                });
            }
            Some((version, _)) => last_version = version,
            None => {
                return Err((
                    ERR_VERSION_CONFLICT,
                    format!("{} was closed while the edit was applied", params.path),
                ));
            }
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                return Err((
                    ERR_REFUSED,
                    "the language server is shutting down".to_string(),
                ));
            }
            Err(_) => {
                let what = if last_version == params.version {
                    "the buffer did not change (the edit was skipped)".to_string()
                } else {
                    format!(
                        "the buffer changed to version {last_version} but does not hold the result (the user typed meanwhile, or the editor applied the edit differently)"
                    )
                };
                return Err((
                    ERR_UNCONFIRMED,
                    format!(
                        "the editor said it applied the edit to {}, but within {} ms {what}",
                        params.path,
                        CONFIRM_TIMEOUT.as_millis()
                    ),
                ));
            }
        }
    }
}

/// Sends a workspace edit and waits for the editor's answer ([`ANSWER_TIMEOUT`]).
///
/// A request left unanswered keeps waiting in the background; until its answer comes,
/// no other edit is sent (each would queue behind it in an editor that is out of reach)
/// and the bridge client is told so at once.
async fn send_edit(
    context: &Context,
    edit: WorkspaceEdit,
    label: Option<String>,
) -> Result<tower_lsp_server::ls_types::ApplyWorkspaceEditResponse, RpcError> {
    if let Some(since) = context.unanswered.since() {
        return Err((
            ERR_REFUSED,
            format!(
                "the editor has not answered the workspace/applyEdit sent {} s ago, so it cannot be reached now (code-server keeps running without a window when its browser goes away)",
                since.elapsed().as_secs()
            ),
        ));
    }
    let client = context.shared.client.clone();
    let request = ApplyWorkspaceEditParams { label, edit };
    let sent = Instant::now();
    let mut answer =
        tokio::spawn(async move { client.send_request::<ApplyWorkspaceEdit>(request).await });
    let response = match tokio::time::timeout(ANSWER_TIMEOUT, &mut answer).await {
        Ok(joined) => joined.map_err(|e| (ERR_REFUSED, format!("workspace/applyEdit: {e}")))?,
        Err(_) => {
            context.unanswered.set(Some(sent));
            let unanswered = Arc::clone(&context.unanswered);
            tokio::spawn(async move {
                let late = answer.await;
                unanswered.set(None);
                let waited = sent.elapsed().as_secs();
                match late {
                    Ok(Ok(r)) if r.applied => tracing::warn!(
                        "the editor applied a workspace edit {waited} s after it was sent, although the bridge client had been told it failed"
                    ),
                    _ => tracing::info!(
                        "the editor answered a workspace edit {waited} s after it was sent"
                    ),
                }
            });
            return Err((
                ERR_REFUSED,
                format!(
                    "the editor did not answer workspace/applyEdit within {} ms",
                    ANSWER_TIMEOUT.as_millis()
                ),
            ));
        }
    };
    response.map_err(|e| {
        (
            ERR_REFUSED,
            format!("the editor failed workspace/applyEdit: {}", e.message),
        )
    })
}

/// Deletes or renames the file of an open document through the editor (LSP resource
/// operations), after checking the buffer's version. Resource operations carry no
/// version, so the check is the server's; the answer counts as done only once the
/// editor closed the old document (`didClose`) and the file system shows the result.
async fn file_operation(
    context: &Context,
    params: FileOperationParams,
) -> Result<FileOperationResult, RpcError> {
    let shared = &context.shared;
    let _turn = shared.edit_lock.lock().await;
    let mut changes = shared.changes.subscribe();
    let (abs, target, op) = {
        let s = shared.lock();
        let (abs, version, _) = open_buffer(&s, &context.root, &params.path)?;
        if version != params.version {
            return Err((
                ERR_VERSION_CONFLICT,
                format!(
                    "{} is at version {version} in the editor, not {}; read it again",
                    params.path, params.version
                ),
            ));
        }
        let uri = s
            .client_uri(&abs)
            .ok_or_else(|| invalid_params(format!("no URI for {}", abs.display())))?;
        match &params.new_path {
            None => {
                if !s.flags.delete_files {
                    return Err((
                        ERR_REFUSED,
                        "the editor cannot delete files through LSP (resourceOperations)"
                            .to_string(),
                    ));
                }
                (
                    abs,
                    None,
                    ResourceOp::Delete(DeleteFile {
                        uri,
                        options: None,
                        annotation_id: None,
                    }),
                )
            }
            Some(new_path) => {
                if !s.flags.rename_files {
                    return Err((
                        ERR_REFUSED,
                        "the editor cannot rename files through LSP (resourceOperations)"
                            .to_string(),
                    ));
                }
                check_syntax(new_path).map_err(|e| invalid_params(format!("{new_path}: {e}")))?;
                let mut new_abs = context.root.clone();
                new_abs.extend(new_path.split('/'));
                if std::fs::symlink_metadata(&new_abs).is_ok() {
                    return Err(invalid_params(format!("{new_path} already exists")));
                }
                let new_uri = convert::path_to_uri(&new_abs)
                    .ok_or_else(|| invalid_params(format!("no URI for {}", new_abs.display())))?;
                (
                    abs,
                    Some(new_abs),
                    ResourceOp::Rename(RenameFile {
                        old_uri: uri,
                        new_uri,
                        options: None,
                        annotation_id: None,
                    }),
                )
            }
        }
    };
    let edit = WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(vec![
            DocumentChangeOperation::Op(op),
        ])),
        ..WorkspaceEdit::default()
    };
    let response = send_edit(context, edit, None).await?;
    if !response.applied {
        return Ok(FileOperationResult {
            applied: false,
            failure_reason: Some(
                response
                    .failure_reason
                    .unwrap_or_else(|| "the editor refused the operation".to_string()),
            ),
        });
    }
    let deadline = tokio::time::Instant::now() + CONFIRM_TIMEOUT;
    loop {
        let closed = !shared.lock().open.contains_key(&abs);
        let on_disk = !abs.exists() && target.as_ref().is_none_or(|t| t.exists());
        if closed && on_disk {
            return Ok(FileOperationResult {
                applied: true,
                failure_reason: None,
            });
        }
        // The file system has no notification here; poll it along with the session changes.
        match tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + Duration::from_millis(50)),
            changes.changed(),
        )
        .await
        {
            Ok(Err(_)) => {
                return Err((
                    ERR_REFUSED,
                    "the language server is shutting down".to_string(),
                ));
            }
            _ if tokio::time::Instant::now() >= deadline => {
                return Err((
                    ERR_VERSION_CONFLICT,
                    format!(
                        "the editor said it did the operation on {}, but within {} ms it did not (closed: {closed}, file system: {on_disk})",
                        params.path,
                        CONFIRM_TIMEOUT.as_millis()
                    ),
                ));
            }
            _ => {}
        }
    }
}
