//! The live bridge through the real server loop: a bridge client (core `BridgeClient`)
//! reads buffers and sends edits while a fake editor answers `workspace/applyEdit`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{ApplyPolicy, Client, Enc, range};
use folio_core::bridge::{
    ApplyEditParams, ApplyEditResult, BridgeClient, BridgeError, ByteEdit, ERR_FORBIDDEN,
    ERR_NOT_OPEN, ERR_UNCONFIRMED, ERR_VERSION_CONFLICT, ERR_VERSION_MISMATCH, OpenDocument,
    ReadResult, root_dir, socket_path,
};
use serde_json::{Value, json};

/// A workspace with `files`, served with its bridge under a private temp folder.
struct Bridged {
    c: Client,
    /// Holds the bridge base folder.
    base_dir: tempfile::TempDir,
}

impl Bridged {
    async fn start(files: &[(&str, &str)], enc: Enc) -> Bridged {
        Bridged::start_in(tempfile::tempdir().unwrap(), files, enc).await
    }

    async fn start_in(base_dir: tempfile::TempDir, files: &[(&str, &str)], enc: Enc) -> Bridged {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        common::write_files(dir.path(), files);
        let folders =
            json!([{"uri": common::uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
        let options = folio_lsp::Options {
            bridge_dir: Some(base_dir.path().join("folio")),
            no_embeddings: true,
        };
        let caps = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}}});
        let mut c = Client::start_opts(dir, enc, caps, folders, options).await;
        c.apply_policy = ApplyPolicy::Apply;
        Bridged { c, base_dir }
    }

    /// Opens a file and waits until the server has processed it: the bridge is another
    /// channel, so a bridge request could otherwise overtake the `didOpen`.
    async fn open(&mut self, rel: &str) {
        self.c.open(rel).await;
        self.c.call("workspace/symbol", json!({"query": ""})).await;
    }

    fn base(&self) -> PathBuf {
        self.base_dir.path().join("folio")
    }

    fn root(&self) -> PathBuf {
        self.c.dir.path().canonicalize().unwrap()
    }

    fn socket(&self) -> PathBuf {
        socket_path(&self.base(), &self.root(), std::process::id())
    }

    /// Runs `f` with a connected bridge client on a blocking thread.
    fn bridge<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut BridgeClient) -> T + Send + 'static,
    ) -> tokio::task::JoinHandle<T> {
        let (socket, root) = (self.socket(), self.root());
        tokio::task::spawn_blocking(move || {
            let mut client =
                BridgeClient::connect(&socket, &root, Duration::from_secs(15)).unwrap();
            f(&mut client)
        })
    }

    async fn read(&self, path: &'static str) -> Result<ReadResult, BridgeError> {
        self.bridge(move |b| b.read(path)).await.unwrap()
    }

    /// Sends an edit; when `editor_sees_it`, serves the fake editor until it got the request.
    async fn apply(
        &mut self,
        params: ApplyEditParams,
        editor_sees_it: bool,
    ) -> Result<ApplyEditResult, BridgeError> {
        let handle = self.bridge(move |b| b.apply_edit(&params));
        if editor_sees_it {
            self.c.serve_apply_edit().await;
        }
        handle.await.unwrap()
    }
}

fn edit(path: &str, version: i32, edits: &[(usize, usize, &str)]) -> ApplyEditParams {
    ApplyEditParams {
        path: path.to_string(),
        version,
        edits: edits
            .iter()
            .map(|(s, e, t)| ByteEdit {
                start: *s,
                end: *e,
                new_text: t.to_string(),
            })
            .collect(),
        label: Some("test".to_string()),
    }
}

fn remote_code<T: std::fmt::Debug>(result: Result<T, BridgeError>) -> (i64, String) {
    match result {
        Err(BridgeError::Remote { code, message, .. }) => (code, message),
        other => panic!("expected a bridge error, got {other:?}"),
    }
}

/// The result, or the message of a bridge error.
fn remote_or_ok<T>(result: Result<T, BridgeError>) -> Result<T, String> {
    result.map_err(|e| match e {
        BridgeError::Remote { message, .. } => message,
        other => panic!("expected a result or a bridge error, got {other:?}"),
    })
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_sees_the_unsaved_buffer_and_open_documents_are_listed() {
    let mut t = Bridged::start(&[("a.md", "# A\n\ntext\n"), ("b.md", "# B\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.c.change(
        "a.md",
        vec![json!({"range": range(2, 0, 2, 4), "text": "unsaved"})],
    )
    .await;
    // A request after the notification: the change has been applied.
    t.c.call("workspace/symbol", json!({"query": ""})).await;
    let hello = t.bridge(|b| b.hello.clone()).await.unwrap();
    assert_eq!(
        (hello.editor.as_str(), hello.editor_version.as_deref()),
        ("test-editor", Some("1.0"))
    );
    assert_eq!(hello.pid, std::process::id());
    assert_eq!(
        t.read("a.md").await.unwrap(),
        ReadResult {
            version: 2,
            text: "# A\n\nunsaved\n".to_string()
        }
    );
    let open = t.bridge(|b| b.open_documents()).await.unwrap().unwrap();
    assert_eq!(
        open,
        vec![OpenDocument {
            path: "a.md".to_string(),
            version: 2
        }]
    );
    assert_eq!(remote_code(t.read("b.md").await).0, ERR_NOT_OPEN);
    assert_eq!(remote_code(t.read("../a.md").await).0, -32602);
    assert_eq!(
        std::fs::read_to_string(t.c.path("a.md")).unwrap(),
        "# A\n\ntext\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_reaches_the_editor_as_a_versioned_document_edit() {
    let text = "# Café 😀\n\nold 😀 line\n";
    let mut t = Bridged::start(&[("a.md", text)], Enc::Utf16).await;
    t.open("a.md").await;
    let old = text.find("old").unwrap();
    let line = text.find("line").unwrap();
    let result = t
        .apply(
            edit("a.md", 1, &[(old, old + 3, "new"), (line, line + 4, "row")]),
            true,
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        ApplyEditResult {
            applied: true,
            version: 2,
            failure_reason: None
        }
    );
    let (_, params) =
        t.c.server_requests
            .iter()
            .find(|(m, _)| m == "workspace/applyEdit")
            .unwrap();
    assert_eq!(params["label"], "test");
    let change = &params["edit"]["documentChanges"][0];
    assert_eq!(
        change["textDocument"],
        json!({"uri": t.c.uri("a.md"), "version": 1})
    );
    // UTF-16 columns: the emoji counts two.
    assert_eq!(
        change["edits"],
        json!([{"range": range(2, 0, 2, 3), "newText": "new"}, {"range": range(2, 7, 2, 11), "newText": "row"}])
    );
    assert_eq!(
        t.read("a.md").await.unwrap(),
        ReadResult {
            version: 2,
            text: "# Café 😀\n\nnew 😀 row\n".to_string()
        }
    );
    // The next edit is checked against the buffer the first one produced.
    let result = t
        .apply(edit("a.md", 2, &[(0, 1, "##")]), true)
        .await
        .unwrap();
    assert_eq!((result.applied, result.version), (true, 3));
    assert_eq!(
        t.read("a.md").await.unwrap().text,
        "## Café 😀\n\nnew 😀 row\n"
    );
    // The disk copy is the editor's business.
    assert_eq!(std::fs::read_to_string(t.c.path("a.md")).unwrap(), text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_version_is_refused_and_nothing_changes() {
    let mut t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf8).await;
    t.open("a.md").await;
    t.c.change(
        "a.md",
        vec![json!({"range": range(0, 3, 0, 3), "text": "!"})],
    )
    .await;
    t.c.call("workspace/symbol", json!({"query": ""})).await;
    let (code, message) = remote_code(t.apply(edit("a.md", 1, &[(2, 3, "B")]), false).await);
    assert_eq!(code, ERR_VERSION_CONFLICT);
    assert!(message.contains("version 2"), "{message}");
    assert!(
        !t.c.server_requests
            .iter()
            .any(|(m, _)| m == "workspace/applyEdit")
    );
    assert_eq!(
        t.read("a.md").await.unwrap(),
        ReadResult {
            version: 2,
            text: "# A!\n".to_string()
        }
    );
    // Invalid edits are refused before anything is sent.
    assert_eq!(
        remote_code(
            t.apply(edit("a.md", 2, &[(2, 3, "x"), (0, 1, "y")]), false)
                .await
        )
        .0,
        -32602
    );
    assert_eq!(
        remote_code(t.apply(edit("a.md", 2, &[(2, 99, "x")]), false).await).0,
        -32602
    );
    assert_eq!(
        remote_code(t.apply(edit("b.md", 2, &[(0, 0, "x")]), false).await).0,
        ERR_NOT_OPEN
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusing_editor_leaves_the_buffer_unchanged() {
    let mut t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.c.apply_policy = ApplyPolicy::Refuse;
    let result = t
        .apply(edit("a.md", 1, &[(2, 3, "B")]), true)
        .await
        .unwrap();
    assert_eq!(
        result,
        ApplyEditResult {
            applied: false,
            version: 1,
            failure_reason: Some("refused by the test client".to_string())
        }
    );
    assert_eq!(
        t.read("a.md").await.unwrap(),
        ReadResult {
            version: 1,
            text: "# A\n".to_string()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_says_applied_but_does_not_change_the_buffer_is_unconfirmed() {
    let mut t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.c.apply_policy = ApplyPolicy::ClaimOnly;
    let (code, message) = remote_code(t.apply(edit("a.md", 1, &[(2, 3, "B")]), true).await);
    assert_eq!(code, ERR_UNCONFIRMED);
    assert!(
        message.ends_with("within 3000 ms the buffer did not change (the edit was skipped)"),
        "{message}"
    );
    assert_eq!(t.read("a.md").await.unwrap().text, "# A\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_editor_gives_an_error_after_a_timeout() {
    let mut t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.c.apply_policy = ApplyPolicy::Silent;
    let (code, message) = remote_code(t.apply(edit("a.md", 1, &[(2, 3, "B")]), true).await);
    assert_eq!(code, folio_core::bridge::ERR_REFUSED);
    assert!(message.contains("did not answer"), "{message}");
    assert_eq!(t.read("a.md").await.unwrap().text, "# A\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_an_edit_is_unanswered_the_next_is_refused_without_asking_the_editor() {
    let mut t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.c.apply_policy = ApplyPolicy::Silent;
    let (code, message) = remote_code(t.apply(edit("a.md", 1, &[(2, 3, "B")]), true).await);
    assert_eq!(code, folio_core::bridge::ERR_REFUSED);
    assert!(message.contains("did not answer"), "{message}");
    // The editor is out of reach (a closed code-server tab): the next edit is refused at
    // once, and the editor is not sent a second request to queue behind the first.
    let (code, message) = remote_code(t.apply(edit("a.md", 1, &[(2, 3, "C")]), false).await);
    assert_eq!(code, folio_core::bridge::ERR_REFUSED);
    assert!(
        message.starts_with("the editor has not answered the workspace/applyEdit sent ")
            && message.ends_with(" s ago, so it cannot be reached now (code-server keeps running without a window when its browser goes away)"),
        "{message}"
    );
    // A round trip after the answer: a second applyEdit would have been sent before it.
    t.c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(t.c.requests_of("workspace/applyEdit").len(), 1);
    assert_eq!(t.c.unanswered.len(), 1);
    // The editor comes back and answers the old request: edits go through again.
    let id = t.c.unanswered.remove(0);
    t.c.answer(id, json!({"applied": false, "failureReason": "late"}))
        .await;
    t.c.apply_policy = ApplyPolicy::Apply;
    let started = std::time::Instant::now();
    let applied = loop {
        let handle = t.bridge(move |b| b.apply_edit(&edit("a.md", 1, &[(2, 3, "D")])));
        // Serve the fake editor while the bridge call runs: the edit is either sent (and
        // applied by the fake editor) or refused at once while the late answer is on its way.
        while !handle.is_finished() {
            t.c.call("workspace/symbol", json!({"query": ""})).await;
        }
        let result = handle.await.unwrap();
        match remote_or_ok(result) {
            Ok(applied) => break applied,
            Err(message) => assert!(
                message.starts_with("the editor has not answered")
                    && started.elapsed() < Duration::from_secs(20),
                "the late answer did not end the refusals: {message}"
            ),
        }
    };
    assert!(applied.applied, "{applied:?}");
    assert_eq!(t.read("a.md").await.unwrap().text, "# D\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_private_stale_ones_replaced_and_removed_with_their_root() {
    // A socket left by a dead server of the same root, and one left by a dead process
    // that had our pid.
    let base_dir = tempfile::tempdir().unwrap();
    let base = base_dir.path().join("folio");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    folio_core::bridge::ensure_private_dir(&base, &root_dir(&base, &root)).unwrap();
    let stale = socket_path(&base, &root, 999_999_999);
    let ours = socket_path(&base, &root, std::process::id());
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    drop(std::os::unix::net::UnixListener::bind(&ours).unwrap());
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    common::write_files(dir.path(), &[("a.md", "# A\n")]);
    let folders = json!([{"uri": common::uri_of(&root), "name": "ws"}]);
    let options = folio_lsp::Options {
        bridge_dir: Some(base.clone()),
        no_embeddings: true,
    };
    let mut c = Client::start_opts(dir, Enc::Utf16, json!({}), folders, options).await;
    assert!(!stale.exists());
    assert_eq!(
        (mode(&base), mode(&root_dir(&base, &root)), mode(&ours)),
        (0o700, 0o700, 0o600)
    );
    assert!(
        std::fs::symlink_metadata(&ours)
            .unwrap()
            .file_type()
            .is_socket_like()
    );
    assert_eq!(
        folio_core::bridge::live_endpoints(&base, &root),
        vec![ours.clone()]
    );
    // A second root gets its own endpoint; removing a root closes its endpoint.
    let second = tempfile::tempdir().unwrap();
    let second_root = second.path().canonicalize().unwrap();
    let second_uri = common::uri_of(&second_root);
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": second_uri, "name": "two"}], "removed": []}}),
    )
    .await;
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(
        folio_core::bridge::live_endpoints(&base, &second_root).len(),
        1
    );
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": second_uri, "name": "two"}]}}),
    )
    .await;
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(
        folio_core::bridge::live_endpoints(&base, &second_root),
        Vec::<PathBuf>::new()
    );
    assert!(ours.exists());
    // `shutdown` closes every endpoint.
    c.call("shutdown", Value::Null).await;
    assert!(!ours.exists());
}

trait SocketLike {
    fn is_socket_like(&self) -> bool;
}

impl SocketLike for std::fs::FileType {
    fn is_socket_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_socket(self)
    }
}

/// Sends one line to the socket as uid 65534 (through `setpriv`) and returns the first line of the answer.
/// A refused peer gets its answer without being read, and the socket may be closed before
/// the line is sent, so a failed send is not an error.
fn exchange_as_nobody(socket: &Path, line: &str) -> String {
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let script = "import socket, sys\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.connect(sys.argv[1])\n\
        try:\n    s.sendall(sys.argv[2].encode() + b'\\n')\n\
        except OSError:\n    pass\n\
        print(s.makefile().readline().strip())\n";
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            python,
            "-c",
            script,
        ])
        .arg(socket)
        .arg(line)
        .output()
        .expect("setpriv runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_with_another_uid_is_refused() {
    if folio_core::bridge::current_uid() != 0 {
        // Only root can run a client as another uid; CI runs the tests as root.
        eprintln!("skipped: needs root to run a client as uid 65534");
        return;
    }
    let base_dir = tempfile::tempdir().unwrap();
    let t = Bridged::start_in(base_dir, &[("a.md", "# A\n")], Enc::Utf16).await;
    // The folders (0700) and the socket (0600) already keep other users out before the
    // uid check is reached. To test that check itself, this test opens the way for
    // uid 65534: its temp folders become traversable and the socket writable. Only this
    // test's own temp folder is loosened, after the server created its endpoint.
    let socket = t.socket();
    for folder in [
        t.base_dir.path().to_path_buf(),
        t.base(),
        root_dir(&t.base(), &t.root()),
    ] {
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"protocolVersion": 1, "root": t.root()}});
    let answer: Value =
        serde_json::from_str(&exchange_as_nobody(&socket, &hello.to_string())).unwrap();
    assert_eq!(answer["error"]["code"], ERR_FORBIDDEN, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("uid 65534"),
        "{answer}"
    );
    // The same request from this user is answered.
    let hello = t.bridge(|b| b.hello.clone()).await.unwrap();
    assert_eq!(hello.editor, "test-editor");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_protocol_version_gets_a_clear_error() {
    let t = Bridged::start(&[("a.md", "# A\n")], Enc::Utf16).await;
    let (socket, root) = (t.socket(), t.root());
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, Write};
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        let read = json!({"jsonrpc": "2.0", "id": 1, "method": "read", "params": {"path": "a.md"}});
        let hello = json!({"jsonrpc": "2.0", "id": 2, "method": "hello", "params": {"protocolVersion": 99, "root": root}});
        writeln!(stream, "{read}\n{hello}").unwrap();
        let mut lines = std::io::BufReader::new(stream).lines();
        let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        let second: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        (first, second)
    })
    .await
    .unwrap();
    assert_eq!(answer.0["error"]["message"], "say `hello` first");
    assert_eq!(answer.1["error"]["code"], ERR_VERSION_MISMATCH);
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("speaks bridge protocol 1, the client speaks 99"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_deletes_and_renames_open_documents() {
    let mut t = Bridged::start(&[("a.md", "# A\n"), ("b.md", "# B\n")], Enc::Utf16).await;
    t.open("a.md").await;
    t.open("b.md").await;
    // A moved version is refused before anything is sent.
    let (code, _) = remote_code(t.bridge(|b| b.delete_file("a.md", 5)).await.unwrap());
    assert_eq!(code, ERR_VERSION_CONFLICT);
    let handle = t.bridge(|b| b.delete_file("a.md", 1));
    t.c.serve_apply_edit().await;
    let result = handle.await.unwrap().unwrap();
    assert!(result.applied, "{result:?}");
    let (_, params) = t.c.server_requests.last().unwrap();
    assert_eq!(
        params["edit"]["documentChanges"],
        json!([{"kind": "delete", "uri": t.c.uri("a.md")}])
    );
    assert!(!t.c.path("a.md").exists());

    let handle = t.bridge(|b| b.rename_file("b.md", 1, "c.md"));
    t.c.serve_apply_edit().await;
    let result = handle.await.unwrap().unwrap();
    assert!(result.applied, "{result:?}");
    assert!(t.c.path("c.md").exists() && !t.c.path("b.md").exists());
    // The fake editor's didOpen for the new name follows its didClose.
    t.c.call("workspace/symbol", json!({"query": ""})).await;
    let open = t.bridge(|b| b.open_documents()).await.unwrap().unwrap();
    assert_eq!(
        open,
        vec![OpenDocument {
            path: "c.md".to_string(),
            version: 1
        }]
    );
    // A path the policy refuses, and an existing target.
    assert_eq!(
        remote_code(
            t.bridge(|b| b.rename_file("c.md", 1, "../x.md"))
                .await
                .unwrap()
        )
        .0,
        -32602
    );
    std::fs::write(t.c.path("d.md"), "# D\n").unwrap();
    assert_eq!(
        remote_code(
            t.bridge(|b| b.rename_file("c.md", 1, "d.md"))
                .await
                .unwrap()
        )
        .0,
        -32602
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_without_file_operations_is_not_asked() {
    let dir = tempfile::tempdir().unwrap();
    common::write_files(dir.path(), &[("a.md", "# A\n")]);
    let base_dir = tempfile::tempdir().unwrap();
    let folders =
        json!([{"uri": common::uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
    let options = folio_lsp::Options {
        bridge_dir: Some(base_dir.path().join("folio")),
        no_embeddings: true,
    };
    let c = Client::start_opts(dir, Enc::Utf16, json!({}), folders, options).await;
    let mut t = Bridged { c, base_dir };
    t.open("a.md").await;
    t.c.call("workspace/symbol", json!({"query": ""})).await;
    let (code, message) = remote_code(t.bridge(|b| b.delete_file("a.md", 1)).await.unwrap());
    assert_eq!(code, folio_core::bridge::ERR_REFUSED, "{message}");
    assert!(t.c.path("a.md").exists());
}
