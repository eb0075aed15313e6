//! The Neovim snippets of docs/clients.md and editors/nvim/README.md, run as written under
//! headless Neovim 0.11 with the built `folio` first on `PATH`: each must start folio on a
//! Markdown file of tests/fixtures/foam-docs and show its diagnostics. The lazy.nvim spec
//! runs under real lazy.nvim (`FOLIO_LAZY_NVIM`, installed by `scripts/test`), with only
//! `dir` added so that lazy.nvim loads this checkout instead of cloning the repository.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{copy_dir, fixture, headless_nvim, nvim, nvim_results};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first ```lua block after the line `heading` of `file` (relative to the repo).
fn lua_block(file: &str, heading: &str) -> String {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let after = text
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}` in {file}"))
        .1;
    let block = after
        .split_once("```lua\n")
        .unwrap_or_else(|| panic!("no lua block after `{heading}` in {file}"))
        .1;
    block.split_once("\n```").unwrap().0.to_string()
}

/// lazy.nvim's folder: `FOLIO_LAZY_NVIM`, else the copy `scripts/test` puts in `.venv`.
fn lazy_nvim() -> PathBuf {
    let dir = std::env::var_os("FOLIO_LAZY_NVIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/lazy.nvim"));
    assert!(
        dir.join("lua/lazy/init.lua").is_file(),
        "lazy.nvim not found at {}; run scripts/test, which installs it",
        dir.display()
    );
    dir
}

/// Runs tests/nvim/snippet_e2e.lua on `snippet` in `mode`; returns its results and the root.
fn run(snippet: &str, mode: &str) -> (Value, PathBuf) {
    let nvim = nvim();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("foam-docs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    copy_dir(&fixture("foam-docs"), &root);
    let root = root.canonicalize().unwrap();
    let snippet_file = work.path().join("snippet.lua");
    std::fs::write(&snippet_file, snippet).unwrap();
    let out = work.path().join("results.json");
    // `folio` on PATH is the built binary.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_folio")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = headless_nvim(&nvim, work.path());
    cmd.arg("-c")
        .arg(format!(
            "luafile {}",
            repo().join("tests/nvim/snippet_e2e.lua").display()
        ))
        .current_dir(&root)
        .env("PATH", path)
        .env("FOLIO_SNIPPET", &snippet_file)
        .env("FOLIO_MODE", mode)
        .env("FOLIO_REPO", repo())
        .env("FOLIO_ROOT", &root)
        .env("FOLIO_FILE", "user/tools/cli/search.md")
        .env("FOLIO_OUT", &out);
    if mode == "lazy" {
        cmd.env("FOLIO_LAZY_NVIM", lazy_nvim());
    }
    let child = cmd.spawn().expect("nvim starts");
    let results = nvim_results(child, &out);
    (results, root)
}

fn assert_attached(r: &Value, root: &Path, plugin: bool) {
    assert_eq!(r["cmd"], json!(["folio", "lsp"]));
    assert_eq!(r["root_dir"], json!(root.to_string_lossy()));
    assert_eq!(r["diagnostics"], json!([[10, 36, "missing-wiki-target"]]));
    assert_eq!(
        r["commands"],
        json!(plugin),
        "the plugin's commands exist exactly when the plugin is loaded"
    );
    assert_eq!(r["notifications"], json!([]));
}

#[test]
fn lazy_nvim_spec_of_the_docs_loads_the_plugin_on_markdown() {
    let spec = lua_block(
        "docs/clients.md",
        "### Plugin (`editors/nvim`), with lazy.nvim",
    );
    let (r, root) = run(&spec, "lazy");
    assert_eq!(
        r["lazy"],
        json!({"version": "11.17.5", "name": "folio", "loaded_before_open": false, "loaded_by": "markdown"})
    );
    assert_attached(&r, &root, true);
}

#[test]
fn lazy_nvim_spec_of_the_plugin_readme_loads_the_plugin_on_markdown() {
    let spec = lua_block("editors/nvim/README.md", "## lazy.nvim");
    let (r, root) = run(&spec, "lazy");
    assert_eq!(
        r["lazy"],
        json!({"version": "11.17.5", "name": "folio", "loaded_before_open": false, "loaded_by": "markdown"})
    );
    assert_attached(&r, &root, true);
}

#[test]
fn plugin_without_a_plugin_manager_as_in_the_docs() {
    let snippet = lua_block("docs/clients.md", "### Plugin, without a plugin manager");
    assert!(
        snippet.contains("'/path/to/folio/editors/nvim'"),
        "{snippet}"
    );
    let snippet = snippet.replace("/path/to/folio", &repo().to_string_lossy());
    let (r, root) = run(&snippet, "plain");
    assert_attached(&r, &root, true);
}

#[test]
fn plain_neovim_0_11_without_the_plugin_as_in_the_docs() {
    let snippet = lua_block("docs/clients.md", "### Plain Neovim 0.11, no plugin");
    let (r, root) = run(&snippet, "plain");
    assert_attached(&r, &root, false);
}

#[test]
fn neovim_0_11_enables_folio_from_lsp_folio_lua_as_in_the_docs() {
    let snippet = lua_block(
        "docs/clients.md",
        "### Neovim 0.11 with `lsp/folio.lua`, no plugin",
    );
    assert!(
        snippet.contains("'/path/to/folio/editors/nvim'"),
        "{snippet}"
    );
    let snippet = snippet.replace("/path/to/folio", &repo().to_string_lossy());
    let (r, root) = run(&snippet, "plain");
    assert_attached(&r, &root, false);
}
