//! The live bridge: the local protocol between `folio lsp` (which holds editor buffers)
//! and `folio mcp` (which edits on behalf of agents).
//!
//! Each `folio lsp` serves one Unix domain socket per root it serves, at
//! `$XDG_RUNTIME_DIR/folio/<root-hash>/<pid>.sock` (fallback:
//! `<temp dir>/folio-<uid>/<root-hash>/<pid>.sock`). Every folder folio creates on that
//! path is `0700` and the socket `0600`; the server also checks the peer's uid.
//! Messages are newline-delimited JSON-RPC 2.0 (docs/bridge.md):
//!
//! | method | params | result |
//! |---|---|---|
//! | `hello` | [`HelloParams`] | [`HelloResult`] |
//! | `openDocuments` | none | `[`[`OpenDocument`]`]` |
//! | `read` | [`ReadParams`] | [`ReadResult`] |
//! | `applyEdit` | [`ApplyEditParams`] | [`ApplyEditResult`] |
//! | `deleteFile` | [`FileOperationParams`] | [`FileOperationResult`] |
//! | `renameFile` | [`FileOperationParams`] with `newPath` | [`FileOperationResult`] |
//!
//! Edits are UTF-8 byte ranges into the buffer text at the given version; the server
//! converts them to the editor's positions and sends `workspace/applyEdit` with a
//! versioned `TextDocumentEdit`, so a buffer that moved on refuses the edit.
//!
//! This module holds the wire types, the socket paths and a small blocking client;
//! the server side lives in the language server.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::pointer::{hash_bytes, hex};

/// The bridge protocol version; `hello` fails when the two sides differ.
pub const PROTOCOL_VERSION: u32 = 1;

/// JSON-RPC error code: the peers speak different protocol versions.
pub const ERR_VERSION_MISMATCH: i64 = -32001;
/// JSON-RPC error code: the document is not open in this editor.
pub const ERR_NOT_OPEN: i64 = -32002;
/// JSON-RPC error code: the buffer's version is not the one the edit was made against.
pub const ERR_VERSION_CONFLICT: i64 = -32003;
/// JSON-RPC error code: the editor refused the workspace edit.
pub const ERR_REFUSED: i64 = -32004;
/// JSON-RPC error code: the peer's uid differs from the server's.
pub const ERR_FORBIDDEN: i64 = -32005;
/// JSON-RPC error code: the editor said it applied the edit, but its buffer did not come
/// to hold the result in time: it moved on to other text (the user typed, or the editor
/// applied the edit differently) or did not change at all. The buffer may have changed.
pub const ERR_UNCONFIRMED: i64 = -32006;

/// `hello` parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelloParams {
    /// The client's [`PROTOCOL_VERSION`].
    pub protocol_version: u32,
    /// The workspace root the client serves (absolute path).
    pub root: String,
}

/// `hello` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelloResult {
    /// The server's [`PROTOCOL_VERSION`].
    pub protocol_version: u32,
    /// The root this endpoint serves.
    pub root: String,
    /// The editor's name from LSP `initialize` (`clientInfo.name`), e.g. `Neovim`.
    pub editor: String,
    /// The editor's version from `clientInfo.version`, if it sent one.
    pub editor_version: Option<String>,
    /// Process id of the `folio lsp` serving this endpoint.
    pub pid: u32,
}

/// One document open in the editor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenDocument {
    /// KB-relative path.
    pub path: String,
    /// The editor's version of the buffer.
    pub version: i32,
}

/// `read` parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadParams {
    /// KB-relative path.
    pub path: String,
}

/// `read` result: the buffer as the editor has it, unsaved changes included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The editor's version of the buffer.
    pub version: i32,
    /// The buffer's text.
    pub text: String,
}

/// One replacement in an `applyEdit`, in UTF-8 bytes of the buffer text at the request's version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ByteEdit {
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced.
    pub end: usize,
    /// Replacement text.
    pub new_text: String,
}

/// `applyEdit` parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyEditParams {
    /// KB-relative path.
    pub path: String,
    /// The buffer version the edits were computed against.
    pub version: i32,
    /// Sorted, non-overlapping edits against that version's text.
    pub edits: Vec<ByteEdit>,
    /// A label the editor may show (LSP `ApplyWorkspaceEditParams.label`).
    pub label: Option<String>,
}

/// `applyEdit` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyEditResult {
    /// True when the editor applied the edit.
    pub applied: bool,
    /// The buffer's version after the edit (unchanged when not applied).
    pub version: i32,
    /// Why the editor did not apply it, if it says.
    pub failure_reason: Option<String>,
}

/// `deleteFile` and `renameFile` parameters: a file operation on an open document,
/// done by the editor (LSP `DeleteFile` / `RenameFile` resource operations).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOperationParams {
    /// KB-relative path of the open document.
    pub path: String,
    /// The buffer version the operation was decided against.
    pub version: i32,
    /// The new KB-relative path (`renameFile` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
}

/// `deleteFile` and `renameFile` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOperationResult {
    /// True when the editor did it.
    pub applied: bool,
    /// Why the editor did not, if it says.
    pub failure_reason: Option<String>,
}

/// Errors of the bridge client.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// Connecting, reading or writing failed (the endpoint may be gone).
    #[error("bridge {path}: {source}")]
    Io {
        /// The socket.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The endpoint did not answer in time.
    #[error("bridge {path}: no answer within {ms} ms")]
    Timeout {
        /// The socket.
        path: String,
        /// The time waited.
        ms: u128,
    },
    /// The endpoint answered with a JSON-RPC error.
    #[error("bridge {path}: {message} (code {code})")]
    Remote {
        /// The socket.
        path: String,
        /// JSON-RPC error code (see the `ERR_` constants).
        code: i64,
        /// The message.
        message: String,
    },
    /// The answer was not valid JSON-RPC.
    #[error("bridge {path}: invalid answer: {message}")]
    Protocol {
        /// The socket.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// A folder on the socket path is not private to this user.
    #[error(
        "bridge folder {path} is not private to this user (mode {mode:o}, owner {owner}); refusing to use it"
    )]
    Insecure {
        /// The folder.
        path: String,
        /// Its mode bits.
        mode: u32,
        /// Its owner's uid.
        owner: u32,
    },
}

/// The effective uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The folder holding every endpoint of every root: `$XDG_RUNTIME_DIR/folio`, else
/// `<temp dir>/folio-<uid>`.
pub fn base_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("folio"),
        None => std::env::temp_dir().join(format!("folio-{}", current_uid())),
    }
}

/// The folder holding the endpoints of `root` under `base` (normally [`base_dir`]):
/// `<base>/<XxHash64 of the root path>`.
pub fn root_dir(base: &Path, root: &Path) -> PathBuf {
    base.join(hex(hash_bytes(root.to_string_lossy().as_bytes())))
}

/// Creates `base` and `dir` (a folder inside it) as `0700` folders owned by this user,
/// or checks that existing ones are. Errors when a folder is shared or someone else's.
pub fn ensure_private_dir(base: &Path, dir: &Path) -> Result<(), BridgeError> {
    let io = |source| BridgeError::Io {
        path: dir.display().to_string(),
        source,
    };
    for folder in [base, dir] {
        match std::fs::symlink_metadata(folder) {
            Ok(meta) => {
                let mode = meta.mode() & 0o777;
                if !meta.is_dir() || meta.uid() != current_uid() || mode & 0o077 != 0 {
                    return Err(BridgeError::Insecure {
                        path: folder.display().to_string(),
                        mode,
                        owner: meta.uid(),
                    });
                }
            }
            Err(_) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(folder)
                    .map_err(io)?;
                // `mode` is filtered by the umask; set it exactly.
                std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
                    .map_err(io)?;
            }
        }
    }
    Ok(())
}

/// The socket path of the endpoint of process `pid` for `root` under `base`.
pub fn socket_path(base: &Path, root: &Path, pid: u32) -> PathBuf {
    root_dir(base, root).join(format!("{pid}.sock"))
}

/// The live endpoints for `root` under `base`: sockets in its folder, owned by this
/// user, that accept a connection.
///
/// A socket whose server is gone (connection refused) is stale and removed.
pub fn live_endpoints(base: &Path, root: &Path) -> Vec<PathBuf> {
    let dir = root_dir(base, root);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sock"))
        .collect();
    found.sort();
    found
        .into_iter()
        .filter(|p| {
            let owned = std::fs::symlink_metadata(p).is_ok_and(|m| m.uid() == current_uid());
            let live = owned && UnixStream::connect(p).is_ok();
            if !live && owned {
                let _ = std::fs::remove_file(p);
            }
            live
        })
        .collect()
}

/// A blocking bridge client: one connection, requests answered in order.
#[derive(Debug)]
pub struct BridgeClient {
    path: PathBuf,
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
    timeout: Duration,
    /// What the server said in `hello`.
    pub hello: HelloResult,
}

impl BridgeClient {
    /// Connects to the endpoint at `path` and says `hello` for `root`.
    ///
    /// Errors: the socket is gone, the server does not answer within `timeout`, or it
    /// speaks another protocol version ([`ERR_VERSION_MISMATCH`]).
    pub fn connect(
        path: &Path,
        root: &Path,
        timeout: Duration,
    ) -> Result<BridgeClient, BridgeError> {
        let io = |source| BridgeError::Io {
            path: path.display().to_string(),
            source,
        };
        let stream = UnixStream::connect(path).map_err(io)?;
        stream.set_read_timeout(Some(timeout)).map_err(io)?;
        stream.set_write_timeout(Some(timeout)).map_err(io)?;
        let reader = BufReader::new(stream.try_clone().map_err(io)?);
        let placeholder = HelloResult {
            protocol_version: 0,
            root: String::new(),
            editor: String::new(),
            editor_version: None,
            pid: 0,
        };
        let mut client = BridgeClient {
            path: path.to_path_buf(),
            writer: stream,
            reader,
            next_id: 1,
            timeout,
            hello: placeholder,
        };
        let params = HelloParams {
            protocol_version: PROTOCOL_VERSION,
            root: root.to_string_lossy().into_owned(),
        };
        client.hello = client.request(
            "hello",
            Some(serde_json::to_value(params).expect("serialisable")),
        )?;
        Ok(client)
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Documents open in the editor.
    pub fn open_documents(&mut self) -> Result<Vec<OpenDocument>, BridgeError> {
        self.request("openDocuments", None)
    }

    /// The buffer of `path`; [`ERR_NOT_OPEN`] when it is not open.
    pub fn read(&mut self, path: &str) -> Result<ReadResult, BridgeError> {
        self.request("read", Some(serde_json::json!({ "path": path })))
    }

    /// Asks the editor to apply edits to the buffer at `params.version`.
    pub fn apply_edit(&mut self, params: &ApplyEditParams) -> Result<ApplyEditResult, BridgeError> {
        self.request(
            "applyEdit",
            Some(serde_json::to_value(params).expect("serialisable")),
        )
    }

    /// Asks the editor to delete the file of an open document (and its buffer).
    pub fn delete_file(
        &mut self,
        path: &str,
        version: i32,
    ) -> Result<FileOperationResult, BridgeError> {
        let params = FileOperationParams {
            path: path.to_string(),
            version,
            new_path: None,
        };
        self.request(
            "deleteFile",
            Some(serde_json::to_value(params).expect("serialisable")),
        )
    }

    /// Asks the editor to rename the file of an open document (its buffer follows).
    pub fn rename_file(
        &mut self,
        path: &str,
        version: i32,
        new_path: &str,
    ) -> Result<FileOperationResult, BridgeError> {
        let params = FileOperationParams {
            path: path.to_string(),
            version,
            new_path: Some(new_path.to_string()),
        };
        self.request(
            "renameFile",
            Some(serde_json::to_value(params).expect("serialisable")),
        )
    }

    /// Sends one request and reads its answer.
    pub fn request<T: serde::de::DeserializeOwned>(
        &mut self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<T, BridgeError> {
        let path = self.path.display().to_string();
        let id = self.next_id;
        self.next_id += 1;
        let mut message = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let Some(p) = params {
            message["params"] = p;
        }
        let mut line = message.to_string();
        line.push('\n');
        let timed_out = |e: &std::io::Error| {
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            )
        };
        self.writer.write_all(line.as_bytes()).map_err(|source| {
            if timed_out(&source) {
                BridgeError::Timeout {
                    path: path.clone(),
                    ms: self.timeout.as_millis(),
                }
            } else {
                BridgeError::Io {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        let mut answer = String::new();
        loop {
            answer.clear();
            let n = self.reader.read_line(&mut answer).map_err(|source| {
                if timed_out(&source) {
                    BridgeError::Timeout {
                        path: path.clone(),
                        ms: self.timeout.as_millis(),
                    }
                } else {
                    BridgeError::Io {
                        path: path.clone(),
                        source,
                    }
                }
            })?;
            if n == 0 {
                return Err(BridgeError::Io {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the endpoint closed the connection",
                    ),
                });
            }
            let value: serde_json::Value =
                serde_json::from_str(&answer).map_err(|e| BridgeError::Protocol {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            // Skip anything that is not the answer to this request.
            if value.get("id").and_then(serde_json::Value::as_u64) != Some(id) {
                continue;
            }
            if let Some(err) = value.get("error") {
                return Err(BridgeError::Remote {
                    path,
                    code: err
                        .get("code")
                        .and_then(serde_json::Value::as_i64)
                        .unwrap_or(-32603),
                    message: err
                        .get("message")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                });
            }
            let result = value
                .get("result")
                .cloned()
                .unwrap_or(serde_json::Value::Null);
            return serde_json::from_value(result).map_err(|e| BridgeError::Protocol {
                path,
                message: e.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests;
