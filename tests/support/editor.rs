//! A headless Neovim 0.11 with `folio lsp` attached, driven and inspected through its RPC
//! socket (`nvim --server … --remote-expr`) with the helpers of tests/nvim/bridge.lua.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use folio_core::bridge::{BridgeClient, live_endpoints};
use serde_json::{Value, json};

use super::{copy_dir, fixture, headless_nvim, nvim};

/// A headless Neovim editing a file of a temp copy of k8s-community, with `folio lsp` attached.
pub struct Editor {
    nvim: PathBuf,
    child: Child,
    listen: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
    _work: tempfile::TempDir,
}

/// Polls `probe` every 25 ms until it gives a value; fails the test after 60 s.
pub fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
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
    /// Neovim on `file` of a temp copy of tests/fixtures/k8s-community.
    pub fn start(file: &str) -> Editor {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("k8s-community");
        std::fs::create_dir_all(&root).unwrap();
        copy_dir(&fixture("k8s-community"), &root);
        Editor::start_in(work, &root, file)
    }

    /// Neovim on `file` (KB-relative) of `root`, with its state, the live-bridge runtime
    /// folder ([`Editor::runtime`]) and its RPC socket under `work`.
    pub fn start_in(work: tempfile::TempDir, root: &Path, file: &str) -> Editor {
        let nvim = nvim();
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
    pub fn expr(&self, expr: &str) -> String {
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
    pub fn run(&self, op: Value) -> Value {
        let arg = op.to_string().replace('\'', "''");
        let out = self.expr(&format!("luaeval('T.run(_A)', '{arg}')"));
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{op}: {e}: {out}"))
    }

    pub fn state(&self) -> Value {
        self.run(json!({"op": "state"}))
    }

    pub fn text(&self) -> String {
        self.state()["text"].as_str().unwrap().to_string()
    }

    /// The `XDG_RUNTIME_DIR` of the editor's `folio lsp`: a `folio mcp` given the same
    /// one finds its live bridge.
    pub fn runtime(&self) -> &Path {
        &self.runtime
    }

    /// A bridge client connected to the only live endpoint of the root.
    pub fn bridge(&self) -> BridgeClient {
        let endpoints = live_endpoints(&self.runtime.join("folio"), &self.root);
        assert_eq!(endpoints.len(), 1, "{endpoints:?}");
        BridgeClient::connect(&endpoints[0], &self.root, Duration::from_secs(15)).unwrap()
    }

    pub fn disk(&self, path: &str) -> String {
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
