//! A minimal LSP client over stdio for tests of the built binary: starts `folio lsp`,
//! initializes it on a root, and sends requests (`Content-Length` framing, JSON-RPC 2.0).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A running `folio lsp` and the client end of its stdio.
pub struct Lsp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Lsp {
    /// Starts `folio lsp` (embeddings off) and completes `initialize`/`initialized` with
    /// `root` as the one workspace folder and no client capabilities.
    pub fn start(root: &Path) -> Lsp {
        Lsp::start_with_env(root, &[])
    }

    /// [`Lsp::start`] with more environment variables, set after folio's own
    /// (`FOLIO_EMBED_PROVIDER` set to the empty string lets the configuration choose the
    /// embedding provider; `XDG_CONFIG_HOME` names the user's config folder).
    pub fn start_with_env(root: &Path, env: &[(&str, &Path)]) -> Lsp {
        let mut command = Lsp::command();
        for (name, value) in env {
            command.env(name, value);
        }
        Lsp::spawn(root, command, Stdio::null())
    }

    /// [`Lsp::start`] with every log line, at every level (`FOLIO_LOG=trace`), written to
    /// the file `log`.
    pub fn start_logged(root: &Path, log: &Path) -> Lsp {
        Lsp::start_logged_with(root, log, &[], json!({}))
    }

    /// [`Lsp::start_logged`] with more environment variables and the client's
    /// `capabilities`.
    pub fn start_logged_with(
        root: &Path,
        log: &Path,
        env: &[(&str, &Path)],
        capabilities: Value,
    ) -> Lsp {
        let file = std::fs::File::create(log).expect("create the log file");
        let mut command = Lsp::command();
        command.env("FOLIO_LOG", "trace");
        for (name, value) in env {
            command.env(name, value);
        }
        Lsp::spawn_with(root, command, Stdio::from(file), capabilities)
    }

    /// Ends the session as a client does (`shutdown`, then `exit`) and returns the
    /// server's exit code.
    pub fn stop(mut self) -> Option<i32> {
        let answer = self.request("shutdown", Value::Null);
        assert!(answer.get("error").is_none(), "shutdown: {answer}");
        self.notify("exit", Value::Null);
        self.child.wait().expect("folio lsp exits").code()
    }

    /// The `folio` binary with embeddings off (`FOLIO_EMBED_PROVIDER=none`).
    fn command() -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
        command.env("FOLIO_EMBED_PROVIDER", "none");
        command
    }

    fn spawn(root: &Path, command: Command, stderr: Stdio) -> Lsp {
        Lsp::spawn_with(root, command, stderr, json!({}))
    }

    fn spawn_with(root: &Path, mut command: Command, stderr: Stdio, capabilities: Value) -> Lsp {
        let mut child = command
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("folio lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut lsp = Lsp {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let uri = format!("file://{}", root.display());
        let init = lsp.request(
            "initialize",
            json!({"processId": null, "capabilities": capabilities,
                   "workspaceFolders": [{"uri": uri, "name": "root"}]}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        lsp.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        lsp
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn read_message(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("read from folio lsp");
            assert!(n > 0, "folio lsp closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                length = v.parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).expect("a JSON-RPC message")
    }

    /// Sends a request and returns its response (`result` or `error`); server requests and
    /// notifications in between are answered with `null` or skipped.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.read_message();
            if message.get("method").is_some() {
                if let Some(server_id) = message.get("id") {
                    let reply = json!({"jsonrpc": "2.0", "id": server_id, "result": null});
                    self.send(&reply);
                }
                continue;
            }
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
