//! A minimal in-process LSP client for tests: the real server loop over an in-memory
//! duplex stream, JSON-RPC framing by hand, and helpers for URIs and positions.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};

/// Which position encoding a test offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    /// Offer only UTF-16 (the default).
    Utf16,
    /// Offer UTF-8 first.
    Utf8,
}

impl Enc {
    /// Picks the expected column for this encoding.
    pub fn col(self, utf16: u32, utf8: u32) -> u32 {
        match self {
            Enc::Utf16 => utf16,
            Enc::Utf8 => utf8,
        }
    }
}

/// How the client answers `workspace/applyEdit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyPolicy {
    /// Answer `null` like any other server request.
    Null,
    /// Apply the edit: answer `applied: true`, then send the `didChange` it makes (as Neovim does).
    Apply,
    /// Answer `applied: true` without changing anything (as Neovim does for a newer buffer).
    ClaimOnly,
    /// Answer `applied: false`.
    Refuse,
    /// Never answer.
    Silent,
}

/// A test workspace on disk plus a connected client.
pub struct Client {
    writer: WriteHalf<DuplexStream>,
    reader: BufReader<ReadHalf<DuplexStream>>,
    next_id: i64,
    /// Notifications received and not yet consumed.
    pub notifications: Vec<Value>,
    /// Requests the server sent to the client (method, params).
    pub server_requests: Vec<(String, Value)>,
    /// The workspace folder.
    pub dir: tempfile::TempDir,
    /// How `workspace/applyEdit` is answered.
    pub apply_policy: ApplyPolicy,
    /// The version of each open document (by URI), as this client numbers them.
    pub versions: std::collections::HashMap<String, i32>,
    /// The ids of the `workspace/applyEdit` requests left unanswered ([`ApplyPolicy::Silent`]).
    pub unanswered: Vec<Value>,
}

/// Writes files (`path`, text) under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let abs = dir.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
}

/// The `file:` URI of a path.
pub fn uri_of(path: &Path) -> String {
    tower_lsp_server::ls_types::Uri::from_file_path(path)
        .unwrap()
        .as_str()
        .to_string()
}

/// A range as JSON.
pub fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

/// A position as JSON.
pub fn pos(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

impl Client {
    /// Starts a server, writes `files` into a fresh folder and initializes with it as the
    /// workspace folder, offering `enc`. `extra_caps` is merged into the client capabilities.
    pub async fn start(files: &[(&str, &str)], enc: Enc, extra_caps: Value) -> Client {
        let dir = tempfile::tempdir().unwrap();
        // A marker so the folder is a root on its own, whatever is above it.
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        write_files(dir.path(), files);
        let folders = json!([{"uri": uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
        Client::start_with(dir, enc, extra_caps, folders).await
    }

    /// Like [`Client::start`] with explicit workspace folders (JSON array or null).
    pub async fn start_with(
        dir: tempfile::TempDir,
        enc: Enc,
        extra_caps: Value,
        folders: Value,
    ) -> Client {
        Client::start_opts(
            dir,
            enc,
            extra_caps,
            folders,
            folio_lsp::Options {
                no_embeddings: true,
                ..folio_lsp::Options::default()
            },
        )
        .await
    }

    /// Like [`Client::start_with`] with server [`folio_lsp::Options`].
    pub async fn start_opts(
        dir: tempfile::TempDir,
        enc: Enc,
        extra_caps: Value,
        folders: Value,
        options: folio_lsp::Options,
    ) -> Client {
        let mut client = Client::start_loading(dir, enc, extra_caps, folders, options).await;
        // The folders load while `initialized` is handled: wait for that, so the files a
        // test writes next are changes, not part of the initial scan. (A request that
        // needs the session; `workspace/symbol` may answer from outlines before that.)
        client
            .call(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": "file:///nonexistent/loaded.md"}}),
            )
            .await;
        client
    }

    /// Writes 400 linked notes under `n/` and `files` into a fresh folder, starts a
    /// server on it (UTF-16, no file watching by the client, no embeddings) and returns
    /// right after `initialized` is sent: enough documents that the load is still going
    /// on when the test's next message arrives.
    pub async fn start_loading_many(files: &[(&str, &str)]) -> Client {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let notes: Vec<(String, String)> = (0..400)
            .map(|i| {
                (
                    format!("n/{i:03}.md"),
                    format!(
                        "# Note {i}\n\n## Part {i} ☕\n\nText [next](../n/{:03}.md).\n",
                        i + 1
                    ),
                )
            })
            .collect();
        let mut all: Vec<(&str, &str)> = notes
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        all.extend_from_slice(files);
        write_files(dir.path(), &all);
        let folders = json!([{"uri": uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
        let options = folio_lsp::Options {
            no_embeddings: true,
            ..folio_lsp::Options::default()
        };
        Client::start_loading(dir, Enc::Utf16, json!({}), folders, options).await
    }

    /// Like [`Client::start_opts`], returning right after `initialized` is sent, while
    /// the server loads the folders.
    pub async fn start_loading(
        dir: tempfile::TempDir,
        enc: Enc,
        extra_caps: Value,
        folders: Value,
        options: folio_lsp::Options,
    ) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 22);
        let (server_read, server_write) = tokio::io::split(server_side);
        tokio::spawn(folio_lsp::serve_with(server_read, server_write, options));
        let (reader, writer) = tokio::io::split(client_side);
        let mut client = Client {
            writer,
            reader: BufReader::new(reader),
            next_id: 1,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            dir,
            apply_policy: ApplyPolicy::Null,
            versions: std::collections::HashMap::new(),
            unanswered: Vec::new(),
        };
        let encodings = match enc {
            Enc::Utf16 => json!(["utf-16"]),
            Enc::Utf8 => json!(["utf-8", "utf-16"]),
        };
        let mut caps = json!({"general": {"positionEncodings": encodings}});
        merge(&mut caps, &extra_caps);
        let result = client
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": null,
                    "capabilities": caps,
                    "workspaceFolders": folders,
                    "clientInfo": {"name": "test-editor", "version": "1.0"}
                }),
            )
            .await;
        let expected = match enc {
            Enc::Utf16 => "utf-16",
            Enc::Utf8 => "utf-8",
        };
        assert_eq!(
            result["result"]["capabilities"]["positionEncoding"], expected,
            "{result}"
        );
        client.notify("initialized", json!({})).await;
        client
    }

    /// The canonical absolute path of a workspace file.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(rel)
    }

    /// The URI of a workspace file.
    pub fn uri(&self, rel: &str) -> String {
        uri_of(&self.path(rel))
    }

    async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{}", body.len(), body);
        self.writer.write_all(framed.as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn read_message(&mut self) -> Value {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).await.unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Reads one message (failing after 20 s), answering server requests with `null`
    /// and storing notifications; returns responses.
    async fn pump(&mut self) -> Option<Value> {
        let message = tokio::time::timeout(Duration::from_secs(20), self.read_message())
            .await
            .expect("timed out waiting for the server");
        if message.get("method").is_some() && message.get("id").is_some() {
            let id = message["id"].clone();
            let method = message["method"].as_str().unwrap().to_string();
            self.server_requests
                .push((method.clone(), message["params"].clone()));
            if method == "workspace/applyEdit" && self.apply_policy != ApplyPolicy::Null {
                self.answer_apply_edit(id, &message["params"]).await;
                return None;
            }
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}))
                .await;
            return None;
        }
        if message.get("method").is_some() {
            self.notifications.push(message);
            return None;
        }
        Some(message)
    }

    async fn answer_apply_edit(&mut self, id: Value, params: &Value) {
        let applied = match self.apply_policy {
            ApplyPolicy::Silent => {
                self.unanswered.push(id);
                return;
            }
            ApplyPolicy::Refuse => {
                let answer =
                    json!({"applied": false, "failureReason": "refused by the test client"});
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": answer}))
                    .await;
                return;
            }
            ApplyPolicy::ClaimOnly => false,
            ApplyPolicy::Apply | ApplyPolicy::Null => true,
        };
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": {"applied": true}}))
            .await;
        if !applied {
            return;
        }
        for change in params["edit"]["documentChanges"].as_array().unwrap() {
            // File operations: done on disk, and the buffer closed (and reopened under the new name).
            match change["kind"].as_str() {
                Some("delete") => {
                    let uri = change["uri"].as_str().unwrap().to_string();
                    std::fs::remove_file(
                        tower_lsp_server::ls_types::Uri::from_str(&uri)
                            .unwrap()
                            .to_file_path()
                            .unwrap(),
                    )
                    .unwrap();
                    self.versions.remove(&uri);
                    self.notify(
                        "textDocument/didClose",
                        json!({"textDocument": {"uri": uri}}),
                    )
                    .await;
                    continue;
                }
                Some("rename") => {
                    let (old, new) = (
                        change["oldUri"].as_str().unwrap().to_string(),
                        change["newUri"].as_str().unwrap().to_string(),
                    );
                    let path = |u: &str| {
                        tower_lsp_server::ls_types::Uri::from_str(u)
                            .unwrap()
                            .to_file_path()
                            .unwrap()
                            .into_owned()
                    };
                    std::fs::rename(path(&old), path(&new)).unwrap();
                    let text = std::fs::read_to_string(path(&new)).unwrap();
                    self.versions.remove(&old);
                    self.versions.insert(new.clone(), 1);
                    self.notify(
                        "textDocument/didClose",
                        json!({"textDocument": {"uri": old}}),
                    )
                    .await;
                    self.notify("textDocument/didOpen", json!({"textDocument": {"uri": new, "languageId": "markdown", "version": 1, "text": text}}))
                        .await;
                    continue;
                }
                _ => {}
            }
            let uri = change["textDocument"]["uri"].as_str().unwrap().to_string();
            assert_eq!(
                change["textDocument"]["version"],
                json!(self.versions[&uri]),
                "the edit carries the buffer's version"
            );
            // The edits are against the original text: as sequential content changes, apply them last to first.
            let mut edits = change["edits"].as_array().unwrap().clone();
            edits.reverse();
            let changes: Vec<Value> = edits
                .iter()
                .map(|e| json!({"range": e["range"], "text": e["newText"]}))
                .collect();
            self.change_uri(&uri, changes).await;
        }
    }

    /// Sends `didChange` for a document with the next version.
    pub async fn change_uri(&mut self, uri: &str, changes: Vec<Value>) {
        let version = self.versions.get(uri).copied().unwrap_or(0) + 1;
        self.versions.insert(uri.to_string(), version);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        )
        .await;
    }

    /// Sends `didChange` for a workspace file with the next version.
    pub async fn change(&mut self, rel: &str, changes: Vec<Value>) {
        let uri = self.uri(rel);
        self.change_uri(&uri, changes).await;
    }

    /// Handles messages until the server has sent `workspace/applyEdit` and it is answered.
    pub async fn serve_apply_edit(&mut self) {
        let seen = self
            .server_requests
            .iter()
            .filter(|(m, _)| m == "workspace/applyEdit")
            .count();
        while self
            .server_requests
            .iter()
            .filter(|(m, _)| m == "workspace/applyEdit")
            .count()
            == seen
        {
            self.pump().await;
        }
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            if let Some(response) = self.pump().await
                && response["id"] == id
            {
                return response;
            }
        }
    }

    /// Sends a request and returns its `result`, failing on an error.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// Answers a request of the server with `result`.
    pub async fn answer(&mut self, id: Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Opens a workspace file with its disk text.
    pub async fn open(&mut self, rel: &str) {
        let text = std::fs::read_to_string(self.path(rel)).unwrap();
        let uri = self.uri(rel);
        self.versions.insert(uri.clone(), 1);
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}))
            .await;
    }

    /// Waits for the next `publishDiagnostics` of `rel` and returns its diagnostics.
    pub async fn diagnostics(&mut self, rel: &str) -> Value {
        let uri = self.uri(rel);
        loop {
            if let Some(i) = self.notifications.iter().position(|n| {
                n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
            }) {
                return self.notifications.remove(i)["params"]["diagnostics"].clone();
            }
            self.pump().await;
        }
    }

    /// Waits for the next notification `method` and returns its params.
    pub async fn notification(&mut self, method: &str) -> Value {
        loop {
            if let Some(i) = self
                .notifications
                .iter()
                .position(|n| n["method"] == method)
            {
                return self.notifications.remove(i)["params"].clone();
            }
            self.pump().await;
        }
    }

    /// Reads messages until `n` notifications `method` are pending (notifications and
    /// responses travel separately through the server, so one may overtake the other).
    pub async fn until_pending(&mut self, method: &str, n: usize) {
        while self
            .notifications
            .iter()
            .filter(|m| m["method"] == method)
            .count()
            < n
        {
            self.pump().await;
        }
    }

    /// The params of every pending notification `method`, in order (removed from the queue).
    pub fn take(&mut self, method: &str) -> Vec<Value> {
        let (taken, rest): (Vec<Value>, Vec<Value>) = self
            .notifications
            .drain(..)
            .partition(|n| n["method"] == method);
        self.notifications = rest;
        taken.into_iter().map(|n| n["params"].clone()).collect()
    }

    /// The params of the requests `method` the server sent so far.
    pub fn requests_of(&self, method: &str) -> Vec<Value> {
        self.server_requests
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Drops every pending notification.
    pub fn clear(&mut self) {
        self.notifications.clear();
    }
}

/// Deep-merges `extra` into `base`.
pub fn merge(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, e) => *b = e.clone(),
    }
}

/// Codes and ranges of diagnostics, for compact assertions: `(code, range, message)`.
pub fn summarize(diagnostics: &Value) -> Vec<(String, Value, String)> {
    diagnostics
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["range"].clone(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
