//! The live bridge, MCP side: documents open in an editor running `folio lsp` on this
//! root are read from the editor's buffer (unsaved changes included) and edited through
//! it (core `bridge`, docs/bridge.md).
//!
//! Endpoints are looked up on every call (core `live_endpoints`: a folder listing and a
//! connect per socket), so an editor started or closed after this server is seen at
//! once; without a live `folio lsp` nothing here touches anything and every tool works
//! on disk as before. A write to an open document becomes one byte edit against the
//! buffer version that was read; the language server checks that version, sends a
//! versioned `workspace/applyEdit`, and answers only once the editor's buffer holds the
//! result. A refusal or a moved version is `CONFLICT` with nothing changed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bridge::{
    ApplyEditParams, BridgeClient, BridgeError, ByteEdit, ERR_NOT_OPEN, ERR_REFUSED,
    ERR_UNCONFIRMED, ERR_VERSION_CONFLICT, ERR_VERSION_MISMATCH, live_endpoints,
};

use super::{ErrorCode, Host, HostError, HostResult};

/// How long a bridge call may take. The language server gives the editor 5 s to answer
/// and 3 s more to report the change, so this only fires when `folio lsp` itself hangs.
pub const BRIDGE_TIMEOUT: Duration = Duration::from_secs(10);

/// A document open in an editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// The endpoint of the `folio lsp` serving that editor.
    pub endpoint: PathBuf,
    /// The editor's name (LSP `clientInfo.name`), e.g. `Neovim`.
    pub editor: String,
    /// The buffer's version.
    pub version: i32,
    /// The buffer's text.
    pub text: String,
}

/// The editor a host runs inside, when it does (`folio lsp` holds a host per workspace
/// folder): its open documents are read from the session in process, not over the
/// bridge. Implemented by the language server's session.
pub trait EditorBuffers: Send + Sync + std::fmt::Debug {
    /// The editor's name (LSP `clientInfo.name`), e.g. `Neovim`.
    fn editor(&self) -> String;
    /// The bridge endpoint that serves this editor: where a write to one of its buffers
    /// goes; discovery skips it, since its documents are read here.
    fn endpoint(&self) -> PathBuf;
    /// Every document the editor has open under the host's root: KB-relative path →
    /// (version, the buffer's text, unsaved changes included).
    fn open_buffers(&self) -> std::collections::HashMap<String, (i32, String)>;
    /// The document at KB-relative `path` when the editor has it open: (version, text).
    fn open_buffer(&self, path: &str) -> Option<(i32, String)>;
}

/// Where a write landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Landed {
    /// Written atomically to the file.
    Disk,
    /// Applied to the buffer of the named editor (the file is the editor's to save).
    Editor(String),
}

impl Landed {
    /// `"disk"` or `"editor"`, for `appliedTo`.
    pub fn applied_to(&self) -> String {
        match self {
            Landed::Disk => "disk".to_string(),
            Landed::Editor(_) => "editor".to_string(),
        }
    }

    /// The editor's name, for `editor`.
    pub fn editor(&self) -> Option<String> {
        match self {
            Landed::Disk => None,
            Landed::Editor(name) => Some(name.clone()),
        }
    }
}

/// A buffer of the editor a host runs inside: (version, text) with its name and endpoint.
fn in_process_buffer(editor: &dyn EditorBuffers, (version, text): (i32, String)) -> Buffer {
    Buffer {
        endpoint: editor.endpoint(),
        editor: editor.editor(),
        version,
        text,
    }
}

fn unreachable_bridge(err: &BridgeError) -> HostError {
    HostError::new(
        ErrorCode::Busy,
        format!(
            "an editor's folio lsp did not answer ({err}); nothing was changed, try again or close that editor"
        ),
    )
}

impl Host {
    /// The same host inside `editor`: its buffers are read in process
    /// ([`EditorBuffers`]), other editors' over the bridge as before.
    pub fn with_editor(mut self, editor: std::sync::Arc<dyn EditorBuffers>) -> Host {
        self.editor = Some(editor);
        self
    }

    /// The buffers of the editor this host runs inside, as [`Buffer`]s by path.
    fn in_process_buffers(&self) -> std::collections::HashMap<String, Buffer> {
        let Some(editor) = &self.editor else {
            return std::collections::HashMap::new();
        };
        editor
            .open_buffers()
            .into_iter()
            .map(|(path, open)| (path, in_process_buffer(editor.as_ref(), open)))
            .collect()
    }

    /// The live endpoints of this root, but that of the editor this host runs inside.
    fn endpoints(&self) -> Vec<PathBuf> {
        let own = self.editor.as_ref().map(|e| e.endpoint());
        live_endpoints(&self.bridge_dir, &self.root)
            .into_iter()
            .filter(|e| Some(e) != own.as_ref())
            .collect()
    }

    fn connect(&self, endpoint: &Path) -> HostResult<BridgeClient> {
        BridgeClient::connect(endpoint, &self.root, self.bridge_timeout).map_err(|e| match e {
            BridgeError::Remote { .. } => {
                HostError::new(ErrorCode::Internal, format!("editor bridge: {e}"))
            }
            other => unreachable_bridge(&other),
        })
    }

    /// [`Host::connect`] for discovery: an endpoint speaking another protocol version (a
    /// `folio lsp` of another folio release) is skipped with a warning, so its documents
    /// count as not open, as without the bridge.
    fn discover(&self, endpoint: &Path) -> HostResult<Option<BridgeClient>> {
        match BridgeClient::connect(endpoint, &self.root, self.bridge_timeout) {
            Ok(client) => Ok(Some(client)),
            Err(BridgeError::Remote {
                code: ERR_VERSION_MISMATCH,
                message,
                ..
            }) => {
                tracing::warn!(endpoint = %endpoint.display(), "skipping an editor bridge: {message}");
                Ok(None)
            }
            Err(e @ BridgeError::Remote { .. }) => Err(HostError::new(
                ErrorCode::Internal,
                format!("editor bridge: {e}"),
            )),
            Err(other) => Err(unreachable_bridge(&other)),
        }
    }

    /// The editor buffer of `path` when an editor has it open (the first editor found
    /// when several do).
    ///
    /// Errors: an endpoint exists but does not answer within [`BRIDGE_TIMEOUT`] (`BUSY`):
    /// without its answer the disk copy may be stale.
    pub(crate) fn buffer(&self, path: &str) -> HostResult<Option<Buffer>> {
        if let Some(editor) = &self.editor
            && let Some(open) = editor.open_buffer(path)
        {
            return Ok(Some(in_process_buffer(editor.as_ref(), open)));
        }
        for endpoint in self.endpoints() {
            let Some(mut client) = self.discover(&endpoint)? else {
                continue;
            };
            let open = client
                .open_documents()
                .map_err(|e| unreachable_bridge(&e))?;
            if !open.iter().any(|d| d.path == path) {
                continue;
            }
            match client.read(path) {
                Ok(read) => {
                    return Ok(Some(Buffer {
                        endpoint,
                        editor: client.hello.editor.clone(),
                        version: read.version,
                        text: read.text,
                    }));
                }
                // Closed since the listing: the disk copy is current.
                Err(BridgeError::Remote {
                    code: ERR_NOT_OPEN, ..
                }) => continue,
                Err(e) => return Err(unreachable_bridge(&e)),
            }
        }
        Ok(None)
    }

    /// The buffers of every document open in an editor on this root, by path.
    pub(crate) fn buffers(&self) -> HostResult<std::collections::HashMap<String, Buffer>> {
        let mut out = self.in_process_buffers();
        for endpoint in self.endpoints() {
            let Some(mut client) = self.discover(&endpoint)? else {
                continue;
            };
            for doc in client
                .open_documents()
                .map_err(|e| unreachable_bridge(&e))?
            {
                if out.contains_key(&doc.path) {
                    continue;
                }
                match client.read(&doc.path) {
                    Ok(read) => {
                        let buffer = Buffer {
                            endpoint: endpoint.clone(),
                            editor: client.hello.editor.clone(),
                            version: read.version,
                            text: read.text,
                        };
                        out.insert(doc.path, buffer);
                    }
                    Err(BridgeError::Remote {
                        code: ERR_NOT_OPEN, ..
                    }) => {}
                    Err(e) => return Err(unreachable_bridge(&e)),
                }
            }
        }
        Ok(out)
    }

    /// Sends the edit turning `buffer.text` into `new` to the editor; returns the
    /// buffer's version after it.
    pub(crate) fn apply_to_buffer(
        &self,
        path: &str,
        buffer: &Buffer,
        new: &str,
        label: &str,
    ) -> HostResult<i32> {
        let mut client = self.connect(&buffer.endpoint)?;
        let params = ApplyEditParams {
            path: path.to_string(),
            version: buffer.version,
            edits: minimal_edit(&buffer.text, new).into_iter().collect(),
            label: Some(format!("folio {label}")),
        };
        let editor = &buffer.editor;
        match client.apply_edit(&params) {
            Ok(result) if result.applied => Ok(result.version),
            Ok(result) => Err(HostError::new(
                ErrorCode::Conflict,
                format!(
                    "{editor} refused the edit of `{path}` ({}); nothing was changed",
                    result
                        .failure_reason
                        .as_deref()
                        .unwrap_or("no reason given")
                ),
            )),
            Err(e) => Err(bridge_failure(path, editor, e)),
        }
    }

    /// Deletes (`new_path` none) or renames the file of an open document through its
    /// editor, at buffer `version`. Only for a buffer without unsaved changes (the
    /// caller checks): Neovim drops the buffer when it deletes, and saves it when it renames.
    pub(crate) fn file_operation(
        &self,
        path: &str,
        buffer: &Buffer,
        version: i32,
        new_path: Option<&str>,
    ) -> HostResult<Landed> {
        let mut client = self.connect(&buffer.endpoint)?;
        let editor = &buffer.editor;
        let result = match new_path {
            None => client.delete_file(path, version),
            Some(new_path) => client.rename_file(path, version, new_path),
        };
        match result {
            Ok(r) if r.applied => Ok(Landed::Editor(editor.clone())),
            Ok(r) => Err(HostError::new(
                ErrorCode::Conflict,
                format!(
                    "{editor} refused to {} `{path}` ({}); nothing was changed",
                    if new_path.is_some() {
                        "rename"
                    } else {
                        "delete"
                    },
                    r.failure_reason.as_deref().unwrap_or("no reason given")
                ),
            )),
            Err(e) => Err(bridge_failure(path, editor, e)),
        }
    }
}

/// A failed bridge call as a tool error: the editor refused or the buffer moved
/// (`CONFLICT`), the bridge did not answer (`BUSY`), or something else (`INTERNAL`).
fn bridge_failure(path: &str, editor: &str, err: BridgeError) -> HostError {
    match err {
        BridgeError::Remote {
            code: ERR_VERSION_CONFLICT | ERR_NOT_OPEN | ERR_REFUSED,
            message,
            ..
        } => HostError::new(
            ErrorCode::Conflict,
            format!(
                "`{path}` is open in {editor} and the change could not be made there: {message}; nothing was changed, read it again"
            ),
        ),
        BridgeError::Remote {
            code: ERR_UNCONFIRMED,
            message,
            ..
        } => HostError::new(
            ErrorCode::Conflict,
            format!(
                "`{path}` is open in {editor} and the edit could not be confirmed there: {message}; read it again before editing (an edit the editor did apply can be undone there)"
            ),
        ),
        e @ BridgeError::Remote { .. } => HostError::internal(format!("editor bridge: {e}")),
        e => unreachable_bridge(&e),
    }
}

/// The one replacement that turns `old` into `new`: the span between their common
/// prefix and common suffix (on character boundaries); `None` when they are equal.
pub fn minimal_edit(old: &str, new: &str) -> Option<ByteEdit> {
    if old == new {
        return None;
    }
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    Some(ByteEdit {
        start: prefix,
        end: old.len() - suffix,
        new_text: new[prefix..new.len() - suffix].to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;
    use std::sync::{Arc, Mutex};

    use crate::bridge::{ensure_private_dir, root_dir, socket_path};
    use serde_json::{Value, json};

    use super::*;
    use crate::host::edit::{DeleteArgs, MoveArgs, PatchArgs, PatchKindArg, PatchOperation};
    use crate::host::read::ReadArgs;
    use crate::host::{Host, Options};

    /// What the fake editor does with `applyEdit`.
    #[derive(Clone, Copy, PartialEq)]
    enum Answer {
        Apply,
        Refuse,
        Conflict,
        Silent,
        /// Answer `hello` with a protocol version mismatch.
        OldProtocol,
    }

    /// A fake `folio lsp` endpoint for `root` under `base` with `open` buffers; records
    /// the `applyEdit` params it gets.
    fn fake_editor(
        base: &Path,
        root: &Path,
        open: &[(&str, &str)],
        answer: Answer,
    ) -> Arc<Mutex<Vec<Value>>> {
        ensure_private_dir(base, &root_dir(base, root)).unwrap();
        let listener = UnixListener::bind(socket_path(base, root, 1)).unwrap();
        let open: Vec<(String, String)> = open
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (open, record) = (open.clone(), Arc::clone(&record));
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().unwrap();
                    for line in BufReader::new(stream).lines() {
                        let Ok(line) = line else { break };
                        let request: Value = serde_json::from_str(&line).unwrap();
                        let params = &request["params"];
                        let result = match request["method"].as_str().unwrap() {
                            "hello" if answer == Answer::OldProtocol => {
                                json!({"code": crate::bridge::ERR_VERSION_MISMATCH, "message": "protocol 0"})
                            }
                            "hello" => {
                                json!({"protocolVersion": 1, "root": params["root"], "editor": "FakeEd", "editorVersion": null, "pid": 1})
                            }
                            "openDocuments" => json!(
                                open.iter()
                                    .map(|(p, _)| json!({"path": p, "version": 7}))
                                    .collect::<Vec<_>>()
                            ),
                            "read" => match open.iter().find(|(p, _)| params["path"] == p.as_str())
                            {
                                Some((_, text)) => json!({"version": 7, "text": text}),
                                None => {
                                    json!({"code": crate::bridge::ERR_NOT_OPEN, "message": "not open"})
                                }
                            },
                            method @ ("deleteFile" | "renameFile") => {
                                let mut call = params.clone();
                                call["method"] = json!(method);
                                record.lock().unwrap().push(call);
                                json!({"applied": answer == Answer::Apply, "failureReason": null})
                            }
                            "applyEdit" => {
                                record.lock().unwrap().push(params.clone());
                                match answer {
                                    Answer::Apply => {
                                        json!({"applied": true, "version": 8, "failureReason": null})
                                    }
                                    Answer::Refuse => {
                                        json!({"applied": false, "version": 7, "failureReason": "no"})
                                    }
                                    Answer::Conflict => {
                                        json!({"code": ERR_VERSION_CONFLICT, "message": "at version 9"})
                                    }
                                    Answer::Silent | Answer::OldProtocol => continue,
                                }
                            }
                            _ => json!(null),
                        };
                        let mut reply = json!({"jsonrpc": "2.0", "id": request["id"]});
                        if result.get("code").is_some() {
                            reply["error"] = result;
                        } else {
                            reply["result"] = result;
                        }
                        writeln!(writer, "{reply}").unwrap();
                    }
                });
            }
        });
        seen
    }

    const A: &str = "# A\n\nFirst paragraph.\n\nSee [b](b.md).\n";
    const B: &str = "# B\n\nBack to [a](a.md).\n";

    /// A knowledge base with a.md and b.md, its bridge folder, and a fake editor with `open` buffers.
    fn setup(
        open: &[(&str, &str)],
        answer: Answer,
    ) -> (
        tempfile::TempDir,
        tempfile::TempDir,
        Host,
        Arc<Mutex<Vec<Value>>>,
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), A).unwrap();
        std::fs::write(dir.path().join("b.md"), B).unwrap();
        let run = tempfile::tempdir().unwrap();
        let mut kb = Host::open(Options {
            root: dir.path().to_path_buf(),
            db: None,
            allow_writes: true,
            embed: Err("embeddings are off in this test".into()),
            fetch: Default::default(),
            rerank: Ok(None),
        })
        .unwrap();
        kb.bridge_dir = run.path().join("folio");
        kb.bridge_timeout = Duration::from_millis(300);
        let seen = fake_editor(&kb.bridge_dir, kb.root(), open, answer);
        (dir, run, kb, seen)
    }

    fn patch_first_paragraph(kb: &Host, text: &str) -> HostResult<crate::host::edit::PatchOutput> {
        let parsed = crate::parse::parse(text);
        let para = parsed
            .elements
            .iter()
            .find(|e| e.kind == crate::parse::ElementKind::Paragraph)
            .unwrap();
        kb.patch(&PatchArgs {
            path: "a.md".into(),
            operations: vec![PatchOperation {
                kind: PatchKindArg::ReplaceElement,
                pointer: para.pointer().to_string(),
                markdown: Some("Patched.".into()),
                key: None,
                value: None,
            }],
        })
    }

    #[test]
    fn an_open_document_is_read_from_the_buffer_and_patched_through_the_editor() {
        let buffer = "# A\n\nUnsaved paragraph.\n\nSee [b](b.md).\n";
        let (dir, _run, kb, seen) = setup(&[("a.md", buffer)], Answer::Apply);
        let read = kb
            .read(&ReadArgs {
                path: "a.md".into(),
                ..ReadArgs::default()
            })
            .unwrap();
        assert_eq!(read.text, buffer);
        let out = patch_first_paragraph(&kb, buffer).unwrap();
        assert_eq!(
            (out.applied_to.as_str(), out.editor.as_deref()),
            ("editor", Some("FakeEd"))
        );
        let start = buffer.find("Unsaved").unwrap();
        assert_eq!(
            seen.lock().unwrap()[0],
            json!({"path": "a.md", "version": 7, "label": "folio kb_patch",
                   "edits": [{"start": start, "end": start + "Unsaved paragraph".len(), "newText": "Patched"}]})
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.md")).unwrap(),
            A,
            "the disk copy is the editor's"
        );
        // b.md is not open: it goes to disk.
        let b = kb.buffer("b.md").unwrap();
        assert_eq!(b, None);
    }

    #[test]
    fn a_refusal_or_a_moved_buffer_is_a_conflict_and_a_silent_bridge_is_busy() {
        for (answer, code) in [
            (Answer::Refuse, ErrorCode::Conflict),
            (Answer::Conflict, ErrorCode::Conflict),
            (Answer::Silent, ErrorCode::Busy),
        ] {
            let (dir, _run, kb, seen) = setup(&[("a.md", A)], answer);
            let err = patch_first_paragraph(&kb, A).unwrap_err();
            assert_eq!(err.code, code, "{}", err.message);
            assert!(
                err.message.contains("nothing was changed"),
                "{}",
                err.message
            );
            assert_eq!(seen.lock().unwrap().len(), 1);
            assert_eq!(std::fs::read_to_string(dir.path().join("a.md")).unwrap(), A);
        }
    }

    #[test]
    fn moving_updates_links_in_open_buffers_through_the_editor() {
        let (dir, _run, kb, seen) = setup(&[("b.md", B)], Answer::Apply);
        // Moving a.md rewrites the link in the open b.md through the editor.
        let out = kb
            .move_document(&MoveArgs {
                source_path: "a.md".into(),
                target_path: "docs/a.md".into(),
                expected_source_hash: None,
                update_links: None,
            })
            .unwrap();
        let updated = serde_json::to_value(&out.updated_links).unwrap();
        assert_eq!(
            updated,
            json!([{"path": "b.md", "links": 1, "appliedTo": "editor", "editor": "FakeEd"}, {"path": "docs/a.md", "links": 1, "appliedTo": "disk"}])
        );
        assert_eq!(out.applied_to, "disk");
        let edit = &seen.lock().unwrap()[0];
        assert_eq!(
            (edit["path"].as_str(), edit["version"].as_i64()),
            (Some("b.md"), Some(7))
        );
        // The one minimal replacement: `[a](a.md)` becomes `[a](docs/a.md)`.
        assert_eq!(edit["edits"][0]["newText"], "docs/");
        assert_eq!(std::fs::read_to_string(dir.path().join("b.md")).unwrap(), B);
        assert!(dir.path().join("docs/a.md").exists());
    }

    #[test]
    fn open_documents_are_moved_and_deleted_by_the_editor_only_when_saved() {
        // With unsaved changes: refused, nothing sent.
        let (dir, _run, kb, seen) = setup(&[("b.md", "# B, unsaved\n")], Answer::Apply);
        let err = kb
            .delete(&DeleteArgs {
                path: "b.md".into(),
                expected_source_hash: None,
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict, "{}", err.message);
        assert!(
            err.message.contains("unsaved changes in FakeEd"),
            "{}",
            err.message
        );
        let moving_b = MoveArgs {
            source_path: "b.md".into(),
            target_path: "c.md".into(),
            expected_source_hash: None,
            update_links: None,
        };
        assert_eq!(
            kb.move_document(&moving_b).unwrap_err().code,
            ErrorCode::Conflict
        );
        assert!(seen.lock().unwrap().is_empty());
        assert!(dir.path().join("b.md").exists());
        drop((dir, kb));

        // Saved: the editor does it (the fake editor only records it).
        let (_dir, _run, kb, seen) = setup(&[("b.md", B)], Answer::Apply);
        let out = kb
            .delete(&DeleteArgs {
                path: "b.md".into(),
                expected_source_hash: None,
            })
            .unwrap();
        assert_eq!(
            (out.applied_to.as_str(), out.editor.as_deref()),
            ("editor", Some("FakeEd"))
        );
        let out = kb.move_document(&moving_b).unwrap();
        assert_eq!(
            (out.applied_to.as_str(), out.editor.as_deref()),
            ("editor", Some("FakeEd"))
        );
        let calls = seen.lock().unwrap().clone();
        assert_eq!(
            calls[0],
            json!({"method": "deleteFile", "path": "b.md", "version": 7})
        );
        // b.md links to a.md with `a.md`, unchanged by the move to the same folder: only the rename.
        assert_eq!(
            calls[1],
            json!({"method": "renameFile", "path": "b.md", "version": 7, "newPath": "c.md"})
        );

        // A refusal is a conflict.
        let (dir, _run, kb, _) = setup(&[("b.md", B)], Answer::Refuse);
        let err = kb
            .delete(&DeleteArgs {
                path: "b.md".into(),
                expected_source_hash: None,
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict, "{}", err.message);
        assert!(dir.path().join("b.md").exists());
    }

    #[test]
    fn a_table_edit_in_an_open_document_goes_to_the_editor() {
        use crate::host::edit::{CellUpdate, EditTableArgs, WhereEq};
        let buffer = "# A\n\n| Item | Price |\n|---|---|\n| Widget | 10 |\n";
        let (dir, _run, kb, seen) = setup(&[("a.md", buffer)], Answer::Apply);
        let parsed = crate::parse::parse(buffer);
        let table = parsed
            .elements
            .iter()
            .find(|e| e.kind == crate::parse::ElementKind::Table)
            .unwrap();
        let out = kb
            .edit_table(&EditTableArgs {
                path: "a.md".into(),
                pointer: table.pointer().to_string(),
                action: "update_cells".into(),
                updates: vec![CellUpdate {
                    where_eq: Some(WhereEq {
                        column: "Item".into(),
                        equals: "Widget".into(),
                    }),
                    row_index: None,
                    column: Some("Price".into()),
                    column_index: None,
                    value: "12".into(),
                }],
                where_eq: None,
                row_index: None,
                column: None,
                column_index: None,
                cells: Default::default(),
                values: vec![],
                name: None,
                default: None,
                alignment: None,
                value_format: None,
            })
            .unwrap();
        assert_eq!(
            (
                out.applied_to.as_str(),
                out.editor.as_deref(),
                out.index_synchronized
            ),
            ("editor", Some("FakeEd"), false)
        );
        let edit = &seen.lock().unwrap()[0];
        assert_eq!(edit["label"], "folio kb_edit_table");
        let byte_edit: ByteEdit = serde_json::from_value(edit["edits"][0].clone()).unwrap();
        let edited = apply(buffer, &byte_edit);
        assert!(
            edited.contains("| Widget | 12 ") && !edited.contains("10"),
            "{edited}"
        );
        assert_eq!(std::fs::read_to_string(dir.path().join("a.md")).unwrap(), A);
    }

    #[test]
    fn an_editor_bridge_of_another_protocol_version_is_skipped() {
        let (dir, _run, kb, seen) = setup(&[("a.md", "# Unsaved\n")], Answer::OldProtocol);
        let read = kb
            .read(&ReadArgs {
                path: "a.md".into(),
                ..ReadArgs::default()
            })
            .unwrap();
        assert_eq!(read.text, A);
        let out = patch_first_paragraph(&kb, A).unwrap();
        assert_eq!((out.applied_to.as_str(), out.editor), ("disk", None));
        assert!(seen.lock().unwrap().is_empty());
        assert!(
            std::fs::read_to_string(dir.path().join("a.md"))
                .unwrap()
                .contains("Patched.")
        );
    }

    #[test]
    fn search_hits_in_open_documents_are_checked_against_the_buffer() {
        use crate::host::search::SearchRequest;
        let search = |kb: &Host| {
            kb.search(&SearchRequest {
                query: "paragraph".into(),
                ..SearchRequest::default()
            })
            .unwrap()
            .results
        };
        // Two lines inserted above everything: the hit moves down by two lines.
        let (_dir, _run, kb, _) = setup(&[("a.md", &format!("Intro.\n\n{A}"))], Answer::Apply);
        kb.reindex_blocking(false).unwrap();
        let hits = search(&kb);
        assert_eq!(hits.len(), 1);
        let line = hits[0].start_line;
        assert_eq!(hits[0].editor.as_deref(), Some("FakeEd"));
        let (_dir, _run, kb, _) = setup(&[], Answer::Apply);
        kb.reindex_blocking(false).unwrap();
        let on_disk = search(&kb);
        assert_eq!(
            (on_disk[0].start_line + 2, on_disk[0].editor.as_deref()),
            (line, None)
        );
        // The element is gone from the buffer: the hit is dropped.
        let (_dir, _run, kb, _) = setup(&[("a.md", "")], Answer::Apply);
        kb.reindex_blocking(false).unwrap();
        assert!(search(&kb).is_empty());
    }

    fn apply(old: &str, edit: &ByteEdit) -> String {
        format!(
            "{}{}{}",
            &old[..edit.start],
            edit.new_text,
            &old[edit.end..]
        )
    }

    #[test]
    fn minimal_edit_spans_only_the_difference() {
        assert_eq!(minimal_edit("abc", "abc"), None);
        let cases = [
            ("# A\n\nold\n", "# A\n\nnew\n"),
            ("aaa", "aaaa"),
            ("aaaa", "aa"),
            ("", "x"),
            ("x", ""),
            ("é😀z", "é😁z"),
            ("😀", "😁😀"),
        ];
        for (old, new) in cases {
            let edit = minimal_edit(old, new).unwrap();
            assert_eq!(apply(old, &edit), new, "{old:?} -> {new:?}: {edit:?}");
        }
        assert_eq!(
            minimal_edit("# A\n\nold\n", "# A\n\nnew\n"),
            Some(ByteEdit {
                start: 5,
                end: 8,
                new_text: "new".into()
            })
        );
    }
}
