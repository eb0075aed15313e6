//! The live-bridge endpoint of the built `folio lsp`: created at `initialize` under
//! `$XDG_RUNTIME_DIR/folio`, and removed when the server stops — on `exit`, when stdin
//! closes, and on SIGTERM or SIGINT.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use folio_core::bridge::{BridgeClient, socket_path};
use serde_json::json;

fn frame(message: &serde_json::Value) -> Vec<u8> {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// A running `folio lsp` initialized on a fresh root, its runtime folder and socket.
struct Server {
    child: Child,
    runtime: tempfile::TempDir,
    root: tempfile::TempDir,
    socket: PathBuf,
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn start() -> Server {
    let runtime = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.md"), "# A\n").unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("lsp")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FOLIO_EMBED_PROVIDER", "none")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let uri = format!("file://{}", root_path.display());
    let stdin = child.stdin.as_mut().unwrap();
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": null, "rootUri": uri, "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "kb"}],
                "clientInfo": {"name": "lifecycle-test"}
            }}),
        ))
        .unwrap();
    stdin.flush().unwrap();
    let socket = socket_path(&runtime.path().join("folio"), &root_path, child.id());
    wait_for("the bridge socket", || socket.exists());
    Server {
        child,
        runtime,
        root,
        socket,
    }
}

fn wait_exit(server: &mut Server) {
    wait_for("the server to exit", || {
        server.child.try_wait().unwrap().is_some()
    });
}

fn check_answers(server: &Server) {
    let client = BridgeClient::connect(
        &server.socket,
        &server.root.path().canonicalize().unwrap(),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(client.hello.editor, "lifecycle-test");
    assert!(server.runtime.path().join("folio").is_dir());
}

fn kill(server: &Server, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn the_socket_is_removed_on_sigterm() {
    let mut server = start();
    check_answers(&server);
    kill(&server, "TERM");
    wait_exit(&mut server);
    assert!(
        !server.socket.exists(),
        "{} is left behind",
        server.socket.display()
    );
}

#[test]
fn the_socket_is_removed_on_sigint() {
    let mut server = start();
    kill(&server, "INT");
    wait_exit(&mut server);
    assert!(!server.socket.exists());
}

#[test]
fn the_socket_is_removed_when_stdin_closes() {
    let mut server = start();
    drop(server.child.stdin.take());
    wait_exit(&mut server);
    assert!(!server.socket.exists());
}

#[test]
fn the_socket_is_removed_after_shutdown_and_exit() {
    let mut server = start();
    let stdin = server.child.stdin.as_mut().unwrap();
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ))
        .unwrap();
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        ))
        .unwrap();
    stdin
        .write_all(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})))
        .unwrap();
    stdin.flush().unwrap();
    wait_exit(&mut server);
    assert!(!server.socket.exists());
    assert!(
        Path::new(&server.runtime.path().join("folio")).is_dir(),
        "the folder stays for other servers"
    );
}
