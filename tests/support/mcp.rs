//! A minimal MCP client over stdio for tests of the built binary: starts `folio mcp`,
//! initializes, and calls tools (newline-delimited JSON-RPC, as the MCP stdio transport
//! defines it).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A running `folio mcp` and the client end of its stdio.
pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Mcp {
    /// Starts `folio mcp --root ROOT EXTRA…` (embeddings off, so nothing loads a model)
    /// and completes the `initialize` handshake.
    pub fn start(root: &Path, extra: &[&str]) -> Mcp {
        Mcp::start_with_env(root, extra, &[])
    }

    /// [`Mcp::start`] with more environment variables (e.g. the `XDG_RUNTIME_DIR` of an
    /// editor's `folio lsp`, so the server finds its live bridge).
    pub fn start_with_env(root: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Mcp {
        Mcp::spawn(root, extra, env, Stdio::null())
    }

    /// [`Mcp::start_with_env`] with every log line, at every level (`FOLIO_LOG=trace`),
    /// written to the file `log`.
    pub fn start_logged(root: &Path, extra: &[&str], env: &[(&str, &Path)], log: &Path) -> Mcp {
        let file = std::fs::File::create(log).expect("create the log file");
        let mut env = env.to_vec();
        env.push(("FOLIO_LOG", Path::new("trace")));
        Mcp::spawn(root, extra, &env, Stdio::from(file))
    }

    fn spawn(root: &Path, extra: &[&str], env: &[(&str, &Path)], stderr: Stdio) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(extra)
            .env("FOLIO_EMBED_PROVIDER", "none")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("folio mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let init = mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "folio-tests", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        mcp.notify("notifications/initialized", json!({}));
        mcp
    }

    /// The process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to folio mcp");
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns the whole response message (`result` or `error`);
    /// notifications in between are skipped.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.try_request(method, params)
            .unwrap_or_else(|| panic!("folio mcp closed its output while `{method}` was pending"))
    }

    /// [`Mcp::request`], or `None` when the server is gone (killed) before it answered.
    pub fn try_request(&mut self, method: &str, params: Value) -> Option<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if writeln!(self.stdin, "{message}")
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return None;
        }
        loop {
            let mut line = String::new();
            match self.stdout.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message.get("id") == Some(&json!(id)) {
                return Some(message);
            }
        }
    }

    /// Calls a tool: `Ok(structured result)` or `Err({code, message})` for a tool error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Value> {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("{tool}: protocol error {response}"));
        if result["isError"] == json!(true) {
            let text = result["content"][0]["text"].as_str().unwrap_or("{}");
            return Err(serde_json::from_str(text).unwrap_or_else(|_| json!({"message": text})));
        }
        Ok(result["structuredContent"].clone())
    }

    /// [`Mcp::call`], or `None` when the server is gone before it answered.
    pub fn try_call(&mut self, tool: &str, arguments: Value) -> Option<Result<Value, Value>> {
        let response =
            self.try_request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let result = response.get("result")?;
        if result["isError"] == json!(true) {
            let text = result["content"][0]["text"].as_str().unwrap_or("{}");
            return Some(Err(
                serde_json::from_str(text).unwrap_or_else(|_| json!({"message": text}))
            ));
        }
        Some(Ok(result["structuredContent"].clone()))
    }

    /// Kills the server at once (`SIGKILL`), as a crash would.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
