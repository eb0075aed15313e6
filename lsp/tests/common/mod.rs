//! A minimal in-process LSP client for tests: the real server loop over an in-memory
//! duplex stream, JSON-RPC framing by hand, and helpers for URIs and positions.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

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
    tower_lsp_server::ls_types::Uri::from_file_path(path).unwrap().as_str().to_string()
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
    pub async fn start_with(dir: tempfile::TempDir, enc: Enc, extra_caps: Value, folders: Value) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 22);
        let (server_read, server_write) = tokio::io::split(server_side);
        tokio::spawn(folio_lsp::serve(server_read, server_write));
        let (reader, writer) = tokio::io::split(client_side);
        let mut client = Client {
            writer,
            reader: BufReader::new(reader),
            next_id: 1,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            dir,
        };
        let encodings = match enc {
            Enc::Utf16 => json!(["utf-16"]),
            Enc::Utf8 => json!(["utf-8", "utf-16"]),
        };
        let mut caps = json!({"general": {"positionEncodings": encodings}});
        merge(&mut caps, &extra_caps);
        let result = client
            .request("initialize", json!({"processId": null, "rootUri": null, "capabilities": caps, "workspaceFolders": folders}))
            .await;
        let expected = match enc {
            Enc::Utf16 => "utf-16",
            Enc::Utf8 => "utf-8",
        };
        assert_eq!(result["result"]["capabilities"]["positionEncoding"], expected, "{result}");
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
        let message = tokio::time::timeout(Duration::from_secs(20), self.read_message()).await.expect("timed out waiting for the server");
        if message.get("method").is_some() && message.get("id").is_some() {
            let id = message["id"].clone();
            self.server_requests.push((message["method"].as_str().unwrap().to_string(), message["params"].clone()));
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": null})).await;
            return None;
        }
        if message.get("method").is_some() {
            self.notifications.push(message);
            return None;
        }
        Some(message)
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
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
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Opens a workspace file with its disk text.
    pub async fn open(&mut self, rel: &str) {
        let text = std::fs::read_to_string(self.path(rel)).unwrap();
        let uri = self.uri(rel);
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}))
            .await;
    }

    /// Waits for the next `publishDiagnostics` of `rel` and returns its diagnostics.
    pub async fn diagnostics(&mut self, rel: &str) -> Value {
        let uri = self.uri(rel);
        loop {
            if let Some(i) = self
                .notifications
                .iter()
                .position(|n| n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri)
            {
                return self.notifications.remove(i)["params"]["diagnostics"].clone();
            }
            self.pump().await;
        }
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
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["range"].clone(), d["message"].as_str().unwrap().to_string()))
        .collect()
}
