//! `folio bench-lsp`: language server figures measured against the real `folio lsp`
//! process over stdio, as an editor would see them.
//!
//! - Time from spawning the server (and from sending `initialize`) to the first
//!   `workspace/symbol` answer, with a workspace folder of Markdown.
//! - The server's resident memory (VmRSS) after that answer.
//! - The median and 90th percentile time from a `didChange` to the
//!   `publishDiagnostics` of that version, on one (large) document of a root.
//! - For a client that pulls diagnostics: the time of a first `workspace/diagnostic` over
//!   the startup root, of a repeat with every `previousResultId` (all `unchanged`), and of
//!   a repeat after an edit to one reported document.
//!
//! These are figures, not tests: a shared machine makes them vary.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// A `folio lsp` child process and a blocking JSON-RPC connection to it.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Server {
    fn spawn() -> Result<Server> {
        let exe = std::env::current_exe().context("cannot find the folio binary")?;
        let mut child = Command::new(exe)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start folio lsp")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        Ok(Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        })
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body)?;
        self.stdin.flush()?;
        Ok(())
    }

    fn read(&mut self) -> Result<Value> {
        let mut length = None;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("the server closed its output");
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = Some(n.parse::<usize>()?);
            }
        }
        let mut body = vec![0; length.context("no Content-Length")?];
        self.stdout.read_exact(&mut body)?;
        Ok(serde_json::from_slice(&body)?)
    }

    /// Reads until `done` accepts a message; answers server requests with `null`.
    fn read_until(&mut self, mut done: impl FnMut(&Value) -> bool) -> Result<Value> {
        loop {
            let message = self.read()?;
            if message.get("method").is_some() && message.get("id").is_some() {
                self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": null}))?;
                continue;
            }
            if done(&message) {
                return Ok(message);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let response = self.read_until(|m| m["id"] == id)?;
        if let Some(error) = response.get("error") {
            bail!("{method} failed: {error}");
        }
        Ok(response["result"].clone())
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn initialize(&mut self, root: &Path) -> Result<()> {
        self.initialize_with(root, json!({"general": {"positionEncodings": ["utf-16"]}}))
    }

    fn initialize_with(&mut self, root: &Path, capabilities: Value) -> Result<()> {
        let uri = file_uri(root)?;
        self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities,
                   "workspaceFolders": [{"uri": uri, "name": "bench"}]}),
        )?;
        self.notify("initialized", json!({}))
    }

    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null);
        let _ = self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

fn file_uri(path: &Path) -> Result<String> {
    let abs = path
        .canonicalize()
        .with_context(|| format!("{} does not exist", path.display()))?;
    let mut uri = String::from("file://");
    for byte in abs.to_str().context("non-UTF-8 path")?.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(byte as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    Ok(uri)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Spawn → first `workspace/symbol` answer, and RSS after it.
fn startup(root: &Path, query: &str) -> Result<(f64, f64, usize, Option<u64>)> {
    let spawned = Instant::now();
    let mut server = Server::spawn()?;
    let init_sent = Instant::now();
    server.initialize(root)?;
    let symbols = server.request("workspace/symbol", json!({"query": query}))?;
    let done = Instant::now();
    let rss = server.rss_kib();
    let n = symbols.as_array().map_or(0, Vec::len);
    server.stop();
    Ok((ms(done - spawned), ms(done - init_sent), n, rss))
}

/// `didChange` → `publishDiagnostics` of that version, `edits` times on `file` under `root`.
fn keystrokes(root: &Path, file: &Path, edits: usize) -> Result<(Vec<f64>, usize)> {
    let mut server = Server::spawn()?;
    server.initialize(root)?;
    let uri = file_uri(file)?;
    let text = std::fs::read_to_string(file)?;
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
    )?;
    let first = server.read_until(|m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
    })?;
    let n_diagnostics = first["params"]["diagnostics"]
        .as_array()
        .map_or(0, Vec::len);
    // Type and delete one character on a line in the middle of the document, like a keystroke.
    let line = text.lines().count() / 2;
    let mut times = Vec::with_capacity(edits);
    for i in 0..edits {
        let version = 2 + i as i64;
        let change = if i % 2 == 0 {
            json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "x"})
        } else {
            json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}}, "text": ""})
        };
        let sent = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        )?;
        server.read_until(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        })?;
        times.push(ms(sent.elapsed()));
    }
    server.stop();
    Ok((times, n_diagnostics))
}

/// The figures of [`workspace_diagnostics`]: times in ms and counts of reports.
struct PullFigures {
    full_ms: f64,
    reports: usize,
    problems: usize,
    repeat_ms: f64,
    unchanged: usize,
    edited_ms: Option<f64>,
    edited_full: usize,
}

/// `workspace/diagnostic` on `root` for a pulling client: the first pull, a repeat with
/// every result id, and a repeat after one edit (a typed character on the first line of
/// the first reported document).
fn workspace_diagnostics(root: &Path) -> Result<PullFigures> {
    let mut server = Server::spawn()?;
    server.initialize_with(
        root,
        json!({"general": {"positionEncodings": ["utf-16"]},
               "textDocument": {"diagnostic": {}},
               "workspace": {"diagnostics": {"refreshSupport": true}}}),
    )?;
    // The first request waits for the initial scan.
    server.request("workspace/symbol", json!({"query": "x"}))?;
    let pull = |server: &mut Server, previous: &Value| -> Result<(f64, Vec<Value>)> {
        let sent = Instant::now();
        let r = server.request(
            "workspace/diagnostic",
            json!({"previousResultIds": previous}),
        )?;
        let elapsed = ms(sent.elapsed());
        Ok((elapsed, r["items"].as_array().cloned().unwrap_or_default()))
    };
    let (full_ms, reports) = pull(&mut server, &json!([]))?;
    let problems = reports
        .iter()
        .map(|r| r["items"].as_array().map_or(0, Vec::len))
        .sum();
    let previous: Vec<Value> = reports
        .iter()
        .map(|r| json!({"uri": r["uri"], "value": r["resultId"]}))
        .collect();
    let previous = Value::Array(previous);
    let (repeat_ms, again) = pull(&mut server, &previous)?;
    let unchanged = again.iter().filter(|r| r["kind"] == "unchanged").count();
    let (mut edited_ms, mut edited_full) = (None, 0);
    if let Some(uri) = reports.first().and_then(|r| r["uri"].as_str()) {
        let path = uri.strip_prefix("file://").unwrap_or(uri);
        let text = std::fs::read_to_string(percent_decode(path))?;
        server.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        )?;
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
        )?;
        let (t, after) = pull(&mut server, &previous)?;
        edited_ms = Some(t);
        edited_full = after.iter().filter(|r| r["kind"] == "full").count();
    }
    server.stop();
    Ok(PullFigures {
        full_ms,
        reports: reports.len(),
        problems,
        repeat_ms,
        unchanged,
        edited_ms,
        edited_full,
    })
}

/// Percent-decodes a URI path (the reverse of [`file_uri`]).
fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = path
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx]
}

/// Runs the benchmarks and prints the figures.
pub fn run(
    symbols_root: &Path,
    query: &str,
    edit_root: &Path,
    edit_file: &Path,
    edits: usize,
    repeat: usize,
) -> Result<ExitCode> {
    let mut out = crate::output::stdout();
    writeln!(
        out,
        "folio bench-lsp (release build recommended; figures vary on a shared machine)"
    )?;
    for run in 1..=repeat {
        let (from_spawn, from_init, n, rss) = startup(symbols_root, query)?;
        writeln!(
            out,
            "startup run {run}: {} — first workspace/symbol ({n} symbols for {query:?}) {from_spawn:.0} ms after spawn, {from_init:.0} ms after initialize; RSS {}",
            symbols_root.display(),
            rss.map_or("unknown".to_string(), |k| format!(
                "{:.0} MiB",
                k as f64 / 1024.0
            ))
        )?;
    }
    let pull = workspace_diagnostics(symbols_root)?;
    writeln!(
        out,
        "workspace/diagnostic: {} — first pull {:.0} ms ({} documents reported, {} problems); repeat with every previousResultId {:.0} ms ({} unchanged); after one edit {} ({} full reports)",
        symbols_root.display(),
        pull.full_ms,
        pull.reports,
        pull.problems,
        pull.repeat_ms,
        pull.unchanged,
        pull.edited_ms
            .map_or("not measured".to_string(), |t| format!("{t:.0} ms")),
        pull.edited_full,
    )?;
    let file: PathBuf = if edit_file.is_absolute() {
        edit_file.to_path_buf()
    } else {
        edit_root.join(edit_file)
    };
    let (mut times, n_diagnostics) = keystrokes(edit_root, &file, edits)?;
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    times.sort_by(f64::total_cmp);
    writeln!(
        out,
        "keystrokes: {} ({:.2} MB, {n_diagnostics} diagnostics) — didChange→publishDiagnostics over {edits} edits: median {:.1} ms, p90 {:.1} ms, min {:.1} ms, max {:.1} ms",
        file.display(),
        size as f64 / 1e6,
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        times.first().copied().unwrap_or(f64::NAN),
        times.last().copied().unwrap_or(f64::NAN),
    )?;
    Ok(ExitCode::SUCCESS)
}
