//! Bridge tests: folder permissions, stale sockets, and the client against a real socket.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn folders_are_private_and_shared_ones_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("folio");
    let dir = root_dir(&base, Path::new("/some/root"));
    assert_eq!(dir, base.join(hex(hash_bytes(b"/some/root"))));
    ensure_private_dir(&base, &dir).unwrap();
    assert_eq!((mode(&base), mode(&dir)), (0o700, 0o700));
    // Checking again is fine; a folder others can enter is refused.
    ensure_private_dir(&base, &dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    match ensure_private_dir(&base, &dir) {
        Err(BridgeError::Insecure { mode, owner, .. }) => {
            assert_eq!((mode, owner), (0o755, current_uid()))
        }
        other => panic!("expected Insecure, got {other:?}"),
    }
}

#[test]
fn stale_sockets_are_removed_and_live_ones_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("folio");
    let root = Path::new("/kb");
    ensure_private_dir(&base, &root_dir(&base, root)).unwrap();
    let live_path = socket_path(&base, root, 1);
    let stale_path = socket_path(&base, root, 2);
    let _live = UnixListener::bind(&live_path).unwrap();
    drop(UnixListener::bind(&stale_path).unwrap());
    assert!(
        stale_path.exists(),
        "a dropped listener leaves its socket file"
    );
    assert_eq!(live_endpoints(&base, root), vec![live_path]);
    assert!(!stale_path.exists());
    assert_eq!(
        live_endpoints(&base, Path::new("/other")),
        Vec::<PathBuf>::new()
    );
}

/// A one-connection server answering with `respond(method, params) -> Option<answer line>`.
fn serve(
    listener: UnixListener,
    respond: impl Fn(&str, &serde_json::Value) -> Option<serde_json::Value> + Send + 'static,
) {
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut writer = stream.try_clone().unwrap();
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let request: serde_json::Value = serde_json::from_str(&line).unwrap();
            let method = request["method"].as_str().unwrap_or("").to_string();
            if let Some(answer) = respond(&method, &request["params"]) {
                let mut reply = serde_json::json!({"jsonrpc": "2.0", "id": request["id"].clone()});
                if answer.get("code").is_some() {
                    reply["error"] = answer;
                } else {
                    reply["result"] = answer;
                }
                // A notification first: the client must skip it.
                writeln!(
                    writer,
                    "{}",
                    serde_json::json!({"jsonrpc": "2.0", "method": "ping"})
                )
                .unwrap();
                writeln!(writer, "{reply}").unwrap();
            }
        }
    });
}

fn hello_answer(version: u32) -> serde_json::Value {
    serde_json::json!({"protocolVersion": version, "root": "/kb", "editor": "Neovim", "editorVersion": "0.11.4", "pid": 42})
}

#[test]
fn client_speaks_hello_read_and_apply_edit() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.sock");
    serve(
        UnixListener::bind(&path).unwrap(),
        |method, params| match method {
            "hello" => Some(hello_answer(PROTOCOL_VERSION)),
            "openDocuments" => Some(serde_json::json!([{"path": "a.md", "version": 7}])),
            "read" if params["path"] == "a.md" => {
                Some(serde_json::json!({"version": 7, "text": "# A\n"}))
            }
            "read" => Some(serde_json::json!({"code": ERR_NOT_OPEN, "message": "not open"})),
            "applyEdit" => {
                Some(serde_json::json!({"applied": true, "version": 8, "failureReason": null}))
            }
            _ => None,
        },
    );
    let mut client =
        BridgeClient::connect(&path, Path::new("/kb"), Duration::from_secs(5)).unwrap();
    assert_eq!(client.hello.editor, "Neovim");
    assert_eq!(client.hello.pid, 42);
    assert_eq!(
        client.open_documents().unwrap(),
        vec![OpenDocument {
            path: "a.md".into(),
            version: 7
        }]
    );
    assert_eq!(
        client.read("a.md").unwrap(),
        ReadResult {
            version: 7,
            text: "# A\n".into()
        }
    );
    match client.read("b.md") {
        Err(BridgeError::Remote { code, message, .. }) => {
            assert_eq!((code, message.as_str()), (ERR_NOT_OPEN, "not open"))
        }
        other => panic!("expected NOT_OPEN, got {other:?}"),
    }
    let applied = client
        .apply_edit(&ApplyEditParams {
            path: "a.md".into(),
            version: 7,
            edits: vec![ByteEdit {
                start: 2,
                end: 3,
                new_text: "B".into(),
            }],
            label: Some("kb_patch".into()),
        })
        .unwrap();
    assert_eq!(
        applied,
        ApplyEditResult {
            applied: true,
            version: 8,
            failure_reason: None
        }
    );
}

#[test]
fn a_silent_endpoint_times_out_and_a_version_mismatch_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let silent = tmp.path().join("silent.sock");
    serve(UnixListener::bind(&silent).unwrap(), |_, _| None);
    match BridgeClient::connect(&silent, Path::new("/kb"), Duration::from_millis(200)) {
        Err(BridgeError::Timeout { ms, .. }) => assert_eq!(ms, 200),
        other => panic!("expected Timeout, got {other:?}"),
    }
    let old = tmp.path().join("old.sock");
    serve(UnixListener::bind(&old).unwrap(), |_, _| {
        Some(
            serde_json::json!({"code": ERR_VERSION_MISMATCH, "message": "bridge protocol 2, client 1"}),
        )
    });
    match BridgeClient::connect(&old, Path::new("/kb"), Duration::from_secs(5)) {
        Err(BridgeError::Remote { code, .. }) => assert_eq!(code, ERR_VERSION_MISMATCH),
        other => panic!("expected a version mismatch, got {other:?}"),
    }
}
