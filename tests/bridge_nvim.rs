//! The live bridge under real Neovim 0.11 (headless): `folio lsp` runs in Neovim on a
//! temp copy of tests/fixtures/k8s-community, and a bridge client (core `BridgeClient`,
//! what `folio mcp` uses) reads the unsaved buffer and edits it. The test drives and
//! inspects Neovim through its RPC socket (`nvim --server … --remote-expr`) with the
//! helpers of tests/nvim/bridge.lua.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use folio_core::bridge::{
    ApplyEditParams, BridgeClient, BridgeError, ByteEdit, ERR_VERSION_CONFLICT, live_endpoints,
};
use serde_json::{Value, json};
use support::{copy_dir, fixture, headless_nvim, nvim};

/// A headless Neovim editing a file of a temp copy of k8s-community, with `folio lsp` attached.
struct Editor {
    nvim: PathBuf,
    child: Child,
    listen: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
    _work: tempfile::TempDir,
}

fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

impl Editor {
    fn start(file: &str) -> Editor {
        let nvim = nvim();
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("k8s-community");
        std::fs::create_dir_all(&root).unwrap();
        copy_dir(&fixture("k8s-community"), &root);
        let root = root.canonicalize().unwrap();
        let runtime = work.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        let listen = work.path().join("nvim.sock");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/bridge.lua");
        let child = headless_nvim(&nvim, work.path())
            .arg("--listen")
            .arg(&listen)
            .arg(root.join(file))
            .arg("-c")
            .arg(format!("luafile {}", script.display()))
            .env("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))
            .env("FOLIO_ROOT", &root)
            .env("XDG_RUNTIME_DIR", &runtime)
            .stderr(Stdio::null())
            .spawn()
            .expect("nvim starts");
        let editor = Editor {
            nvim,
            child,
            listen,
            root,
            runtime,
            _work: work,
        };
        wait_for("Neovim and folio lsp", || {
            (editor.listen.exists() && editor.expr("get(g:, 'folio_ready', 0)") == "1")
                .then_some(())
        });
        editor
    }

    /// Evaluates a Vim expression in the editor.
    fn expr(&self, expr: &str) -> String {
        let out = Command::new(&self.nvim)
            .arg("--server")
            .arg(&self.listen)
            .arg("--remote-expr")
            .arg(expr)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs one of the `ops` of tests/nvim/bridge.lua.
    fn run(&self, op: Value) -> Value {
        let arg = op.to_string().replace('\'', "''");
        let out = self.expr(&format!("luaeval('T.run(_A)', '{arg}')"));
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{op}: {e}: {out}"))
    }

    fn state(&self) -> Value {
        self.run(json!({"op": "state"}))
    }

    fn text(&self) -> String {
        self.state()["text"].as_str().unwrap().to_string()
    }

    /// A bridge client connected to the only live endpoint of the root.
    fn bridge(&self) -> BridgeClient {
        let endpoints = live_endpoints(&self.runtime.join("folio"), &self.root);
        assert_eq!(endpoints.len(), 1, "{endpoints:?}");
        BridgeClient::connect(&endpoints[0], &self.root, Duration::from_secs(15)).unwrap()
    }

    fn disk(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = Command::new(&self.nvim)
            .arg("--server")
            .arg(&self.listen)
            .args(["--remote-send", "<Esc>:qa!<CR>"])
            .output();
        let started = Instant::now();
        while self.child.try_wait().ok().flatten().is_none()
            && started.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the server's copy of the buffer is the editor's (Neovim debounces `didChange`).
fn synced(editor: &Editor, bridge: &mut BridgeClient, path: &str) -> (i32, String) {
    let want = editor.state();
    wait_for("the server to see the buffer", || {
        let read = bridge.read(path).unwrap();
        (read.text == want["text"].as_str().unwrap()).then_some((read.version, read.text))
    })
}

fn replace(path: &str, version: i32, text: &str, old: &str, new: &str) -> ApplyEditParams {
    let start = text
        .find(old)
        .unwrap_or_else(|| panic!("`{old}` not in the buffer"));
    ApplyEditParams {
        path: path.to_string(),
        version,
        edits: vec![ByteEdit {
            start,
            end: start + old.len(),
            new_text: new.to_string(),
        }],
        label: None,
    }
}

const FILE: &str = "communication/moderators.md";

#[test]
fn a_bridge_edit_lands_in_the_neovim_buffer_and_undo_reverts_it() {
    let editor = Editor::start(FILE);
    let on_disk = editor.disk(FILE);
    let mut bridge = editor.bridge();
    assert_eq!(bridge.hello.editor, "Neovim");
    // The user changes a line and does not save.
    editor.run(
        json!({"op": "set_line", "line": 12, "text": "Unsaved: moderating Kubernetes channels."}),
    );
    let (version, text) = synced(&editor, &mut bridge, FILE);
    assert!(text.contains("Unsaved: moderating Kubernetes channels.\n"));
    assert_eq!(bridge.open_documents().unwrap()[0].path, FILE);

    let result = bridge
        .apply_edit(&replace(
            FILE,
            version,
            &text,
            "Community Moderators",
            "Channel Moderators",
        ))
        .unwrap();
    assert!(result.applied, "{result:?}");
    let state = editor.state();
    let patched = text.replace("# Community Moderators", "# Channel Moderators");
    assert_eq!(state["text"], patched.as_str());
    // The result's version is the buffer's, as Neovim reported it.
    assert_eq!(i64::from(result.version), state["tick"].as_i64().unwrap());
    assert_eq!(state["modified"], true);
    assert_eq!(
        editor.disk(FILE),
        on_disk,
        "the disk copy is the editor's business"
    );

    // Undo reverts the patch, and only the patch.
    assert_eq!(editor.run(json!({"op": "undo"}))["text"], text.as_str());
    // Writing is the editor's decision.
    editor.run(json!({"op": "write"}));
    assert_eq!(editor.disk(FILE), text);
}

#[test]
fn an_edit_against_a_buffer_that_moved_is_refused_and_nothing_changes() {
    let editor = Editor::start(FILE);
    let on_disk = editor.disk(FILE);
    let mut bridge = editor.bridge();
    let (version, text) = synced(&editor, &mut bridge, FILE);
    editor.run(json!({"op": "set_line", "line": 12, "text": "Typed by the user."}));
    let (_, moved) = synced(&editor, &mut bridge, FILE);
    let conflict = |result: Result<_, BridgeError>| match result {
        Err(BridgeError::Remote { code, message, .. }) => {
            assert_eq!(code, ERR_VERSION_CONFLICT, "{message}");
        }
        other => panic!("expected a version conflict, got {other:?}"),
    };
    // The server already knows the buffer moved.
    conflict(bridge.apply_edit(&replace(
        FILE,
        version,
        &text,
        "Community Moderators",
        "Channel Moderators",
    )));
    assert_eq!(editor.text(), moved);
    // The buffer moves while the edit is on its way (after the server checked the
    // version): Neovim skips the edit for the newer buffer, yet answers `applied`; the
    // server sees its buffer does not hold the result, and the answer is still a conflict.
    let (version, text) = synced(&editor, &mut bridge, FILE);
    editor.run(json!({"op": "arm_race", "line": 12, "text": "Typed again."}));
    conflict(bridge.apply_edit(&replace(
        FILE,
        version,
        &text,
        "Community Moderators",
        "Channel Moderators",
    )));
    let now = editor.text();
    assert!(
        now.contains("Typed again.\n") && now.contains("# Community Moderators\n"),
        "{now}"
    );
    assert_eq!(editor.disk(FILE), on_disk);
}
