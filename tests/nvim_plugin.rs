//! The Neovim plugin of editors/nvim, loaded from the repo with `setup()`, under real
//! Neovim 0.11 (headless) on tests/fixtures/foam-docs: diagnostics, `:FolioSearch`
//! landing on a hit, `:FolioReindex`, `:checkhealth folio`; and a missing binary.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{copy_dir, fixture, headless_nvim, nvim, nvim_results};

/// Runs tests/nvim/plugin_e2e.lua with `cmd` as the folio binary; returns its results and the root.
fn run(cmd: &Path, file: &str, query: &str, min_version: Option<&str>) -> (Value, PathBuf) {
    run_in(cmd, Some("foam-docs"), file, query, min_version)
}

/// [`run`] on a copy of the fixture `fixture`, or on a folder without Markdown when `None`.
fn run_in(
    cmd: &Path,
    fixture_name: Option<&str>,
    file: &str,
    query: &str,
    min_version: Option<&str>,
) -> (Value, PathBuf) {
    let nvim = nvim();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("foam-docs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    match fixture_name {
        Some(name) => {
            copy_dir(&fixture(name), &root);
            // New notes come from this template (the quick fix on a broken wiki link).
            std::fs::write(
                root.join("folio.toml"),
                "[notes]\ntemplate = \"templates/note.md\"\n",
            )
            .unwrap();
            std::fs::create_dir(root.join("templates")).unwrap();
            std::fs::write(
                root.join("templates/note.md"),
                "---\ntype: note\n---\n# {{title}}\n\nStarted {{date}}.\n",
            )
            .unwrap();
        }
        None => std::fs::write(root.join("data.json"), "{\"a\": 1}\n").unwrap(),
    }
    let root = root.canonicalize().unwrap();
    let out = work.path().join("results.json");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let child = headless_nvim(&nvim, work.path())
        .arg("-c")
        .arg(format!(
            "luafile {}",
            repo.join("tests/nvim/plugin_e2e.lua").display()
        ))
        .current_dir(&root)
        .env("FOLIO_PLUGIN", repo.join("editors/nvim"))
        .env("FOLIO_CMD", cmd)
        .env("FOLIO_ROOT", &root)
        .env("FOLIO_FILE", file)
        .env("FOLIO_QUERY", query)
        .env("FOLIO_OUT", &out)
        .env("FOLIO_MIN_VERSION", min_version.unwrap_or(""))
        .env(
            "FOLIO_EXPECT",
            if fixture_name.is_none() { "empty" } else { "" },
        )
        .spawn()
        .expect("nvim starts");
    let results = nvim_results(child, &out);
    (results, root)
}

#[test]
fn neovim_plugin_setup_diagnostics_search_and_health() {
    let (r, root) = run(
        Path::new(env!("CARGO_BIN_EXE_folio")),
        "user/tools/cli/search.md",
        "find broken wikilinks",
        None,
    );
    assert_eq!(r["root_dir"], json!(root.to_string_lossy()));
    assert_eq!(r["diagnostics"], json!([[10, 36, "missing-wiki-target"]]));
    assert_eq!(r["lenses"], json!([[0, "2 references to this file"]]));
    // Running it lists them: the wiki link, and the Foam-style definition that serves it.
    assert_eq!(
        r["quickfix"],
        json!([
            ["user/tools/cli/grep.md", 9],
            ["user/tools/cli/grep.md", 49]
        ])
    );
    // The stubbed vim.ui.select picks the first of the hits (one per file); the plugin
    // opens it at its first line.
    assert_eq!(
        r["select"],
        json!({"count": 4, "first": "user/tools/cli/list.md:32 — foam list > Examples"})
    );
    assert_eq!(r["landed"], json!(["user/tools/cli/list.md", 32]));
    let notes = r["notifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0][0]
            .as_str()
            .unwrap()
            .starts_with("folio: indexed 0 of 8 files (8 unchanged, 0 removed) in "),
        "{notes:?}"
    );
    let health = r["health"].as_array().unwrap();
    let bin = env!("CARGO_BIN_EXE_folio");
    assert_eq!(health[0], json!(format!("- ✅ OK binary: {bin}")));
    assert_eq!(
        health[1],
        json!(format!(
            "- ✅ OK version: folio {}",
            env!("CARGO_PKG_VERSION")
        ))
    );
    assert_eq!(health[2], json!(format!("- root: {}", root.display())));
    assert!(
        health[3]
            .as_str()
            .unwrap()
            .starts_with("- ✅ OK server running (client 1) on "),
        "{health:?}"
    );
    assert_eq!(health.len(), 4, "no ERROR or WARNING lines: {health:?}");
    // Neovim's local date, as the server's.
    let date = r["today"][2].as_str().unwrap();
    assert_eq!(
        r["created"],
        json!([
            "cli-grep.md",
            [
                "---",
                "type: note",
                "---",
                "# cli-grep",
                "",
                format!("Started {date}.")
            ]
        ])
    );
    assert_eq!(
        r["today"],
        json!([format!("journal/{date}.md"), [format!("# {date}")], date])
    );
}

#[test]
fn neovim_plugin_missing_binary_gives_one_clear_error() {
    let (r, _) = run(
        Path::new("/nonexistent/folio"),
        "user/tools/cli/search.md",
        "x",
        None,
    );
    assert_eq!(r["clients"], 0);
    // One error at setup, then one warning per command run: no storm, no Lua error.
    assert_eq!(
        r["notifications"],
        json!([
            [
                "folio: `/nonexistent/folio` not found: install folio (cargo install --path . in the folio repository) or set cmd in require(\"folio\").setup{}",
                4
            ],
            [
                "folio: `/nonexistent/folio` not found; see :checkhealth folio",
                3
            ],
            [
                "folio: `/nonexistent/folio` not found; see :checkhealth folio",
                3
            ],
        ])
    );
}

#[test]
fn neovim_plugin_warns_once_about_a_server_older_than_it_needs() {
    let (r, _) = run(
        Path::new(env!("CARGO_BIN_EXE_folio")),
        "user/tools/cli/search.md",
        "find broken wikilinks",
        Some("99.0.0"),
    );
    let notes = r["notifications"].as_array().unwrap();
    assert_eq!(
        notes[0],
        json!([
            format!(
                "folio: the server is version {}; this plugin needs 99.0.0 or newer",
                env!("CARGO_PKG_VERSION")
            ),
            3
        ])
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    // The search still works, and :checkhealth names the problem.
    assert_eq!(r["landed"], json!(["user/tools/cli/list.md", 32]));
    let health: Vec<&str> = r["health"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        health[1],
        format!(
            "- ⚠️ WARNING folio {} is older than 99.0.0, which this plugin needs",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn neovim_plugin_in_a_workspace_without_markdown_says_so_once() {
    // A new buffer (not on disk yet) in a folder whose only file is JSON (no document).
    let (r, root) = run_in(
        Path::new(env!("CARGO_BIN_EXE_folio")),
        None,
        "new.md",
        "",
        None,
    );
    assert_eq!(r["root_dir"], json!(root.to_string_lossy()));
    // One warning, nothing else; then each command answers once, without errors.
    assert_eq!(
        r["first"],
        json!([[
            format!("folio: no Markdown files under {}", root.display()),
            3
        ]])
    );
    let notes = r["notifications"].as_array().unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert_eq!(notes[1], json!(["folio: no results for anything", 2]));
    let reindex = notes[2][0].as_str().unwrap();
    assert!(
        reindex.starts_with("folio: indexed 0 of 0 files (0 unchanged, 0 removed) in "),
        "{notes:?}"
    );
    assert_eq!(notes[2][1], json!(2));
    assert_eq!(r["diagnostics"], json!(0));
}

/// A server that crashes is started again for the open buffer, once per `max_restarts`
/// within 3 minutes; past it the plugin says so and leaves it stopped.
#[test]
fn neovim_plugin_restarts_a_crashed_server_a_bounded_number_of_times() {
    let nvim = nvim();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("foam-docs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    copy_dir(&fixture("foam-docs"), &root);
    let root = root.canonicalize().unwrap();
    let out = work.path().join("results.json");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let child = headless_nvim(&nvim, work.path())
        .arg("-c")
        .arg(format!(
            "luafile {}",
            repo.join("tests/nvim/restart_e2e.lua").display()
        ))
        .current_dir(&root)
        .env("FOLIO_PLUGIN", repo.join("editors/nvim"))
        .env("FOLIO_CMD", env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_PIDS", work.path().join("pids"))
        .env("FOLIO_ROOT", &root)
        .env("FOLIO_FILE", "user/tools/cli/search.md")
        .env("FOLIO_OUT", &out)
        .spawn()
        .expect("nvim starts");
    let results = nvim_results(child, &out);
    assert_eq!(results["starts_after_first_kill"], 2);
    assert_eq!(results["starts_after_second_kill"], 2);
    assert_eq!(results["clients_after_second_kill"], 0);
    assert_eq!(results["second_id_gone"], true);
    assert_eq!(
        results["notifications"],
        json!([
            [
                "folio: the language server stopped (exit code 0, signal 9); starting it again (1 of 1 in 3 minutes)",
                3
            ],
            [
                "folio: the language server stopped (exit code 0, signal 9); it stopped 2 times in 3 minutes, so it is not started again: see :LspLog and :checkhealth folio, then reopen a Markdown file",
                4
            ]
        ])
    );
    // The restarted server answers: the outline of the note.
    assert_eq!(results["symbols_after_restart"], json!(["foam search"]));
}
