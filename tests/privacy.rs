//! Secrets and privacy (docs/reliability.md): what a workspace file cannot switch on, the
//! absence of document text from logs at every level, and the permissions of what folio
//! creates (the index, its folder; the editor bridge's socket is checked in
//! `core/src/bridge/tests.rs`).

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::json;
use support::lsp::Lsp;
use support::mcp::Mcp;

/// Words that appear only inside the notes (and in requests that quote them): none of
/// them may reach a log line.
const CANARIES: &[&str] = &[
    "Quillfeather",
    "zebrawood",
    "Marrowgate",
    "saffronvault",
    "Tindlemoss",
    "Oxbloodmere",
    "Kestrelhalt",
    "Brindlecove",
];

/// A root whose notes carry the canaries in every kind of element.
fn workspace(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("kb");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(
        root.join("a.md"),
        "---\ntitle: Quillfeather ledger\ntags: [zebrawood]\n---\n# Marrowgate plans\n\n\
         The saffronvault holds [the Tindlemoss](sub/b.md#tindlemoss-notes) and [[b]].\n\n\
         | Key | Value |\n|---|---|\n| Oxbloodmere | 1 |\n\n```text\nKestrelhalt\n```\n\n\
         A [broken Brindlecove link](missing.md).\n",
    )
    .unwrap();
    std::fs::write(
        root.join("sub/b.md"),
        "# Tindlemoss notes\n\nBack to [Marrowgate](../a.md#marrowgate-plans).\n",
    )
    .unwrap();
    root
}

/// The user's folders, so that no real configuration or data of the machine is read.
fn user_env(dir: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    vec![
        ("XDG_CONFIG_HOME", dir.join("config")),
        ("XDG_DATA_HOME", dir.join("data")),
        ("XDG_CACHE_HOME", dir.join("cache")),
        ("XDG_RUNTIME_DIR", dir.join("run")),
    ]
}

/// Fails naming each canary found in the log, with its line; with `require_lines`, also
/// when the log is empty (a server always logs, so an empty log means it was not captured).
fn assert_no_canary(what: &str, log: &str, require_lines: bool) {
    assert!(
        !require_lines || log.lines().count() >= 1,
        "{what}: no log line at all, so the check proves nothing"
    );
    let found: Vec<&str> = log
        .lines()
        .filter(|line| CANARIES.iter().any(|c| line.contains(c)))
        .collect();
    assert!(
        found.is_empty(),
        "{what}: document text in the log: {found:#?}"
    );
}

#[test]
fn logs_at_every_level_hold_no_document_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = workspace(dir.path());
    let env = user_env(dir.path());
    let env_refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();

    // The MCP server, through every kind of tool that reads or writes text.
    let log = dir.path().join("mcp.log");
    let mut mcp = Mcp::start_logged(&root, &["--allow-writes"], &env_refs, &log);
    let calls = [
        ("kb_read", json!({"path": "a.md"})),
        ("kb_outline", json!({"path": "a.md"})),
        ("kb_links", json!({"path": "a.md"})),
        ("kb_search", json!({"query": "Quillfeather saffronvault"})),
        (
            "kb_patch",
            json!({"path": "a.md", "operations": [
                {"kind": "insert_after", "pointer": "document", "markdown": "Added zebrawood line."}]}),
        ),
        (
            "kb_create",
            json!({"path": "sub/c.md", "markdown": "# Kestrelhalt\n\nBrindlecove text.\n"}),
        ),
        (
            "kb_move",
            json!({"sourcePath": "sub/c.md", "targetPath": "sub/d.md"}),
        ),
        ("kb_delete", json!({"path": "sub/d.md"})),
    ];
    for (tool, args) in calls {
        if let Err(e) = mcp.call(tool, args) {
            panic!("{tool}: {e}");
        }
    }
    let outline = mcp.call("kb_outline", json!({"path": "a.md"})).unwrap();
    let table = outline.to_string();
    let pointer = table
        .split('"')
        .find(|s| s.starts_with("table:"))
        .map(str::to_string);
    if let Some(pointer) = pointer {
        mcp.call(
            "kb_edit_table",
            json!({"path": "a.md", "pointer": pointer, "action": "insert_row",
                   "cells": {"Key": "Oxbloodmere two", "Value": "2"}}),
        )
        .unwrap();
    }
    // Refusals carry the request's text back to the client, never into the log.
    let refused = mcp.call(
        "kb_patch",
        json!({"path": "a.md", "operations": [
            {"kind": "replace_element", "pointer": "p:0000000000000000", "markdown": "Marrowgate again"}]}),
    );
    assert!(refused.is_err(), "{refused:?}");
    mcp.kill();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("folio mcp starting"), "{text}");
    assert_no_canary("folio mcp", &text, true);

    // The language server: open, edit, ask.
    let log = dir.path().join("lsp.log");
    {
        let mut lsp = Lsp::start_logged(&root, &log);
        let uri = format!("file://{}", root.join("a.md").display());
        let text = std::fs::read_to_string(root.join("a.md")).unwrap();
        lsp.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        );
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"text": format!("{text}\nMore Tindlemoss [x](nowhere-Oxbloodmere.md).\n")}]}),
        );
        for (method, params) in [
            (
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            ),
            (
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 26}}),
            ),
            (
                "textDocument/completion",
                json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 26}}),
            ),
            ("workspace/symbol", json!({"query": "Marrowgate"})),
            (
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
            ),
        ] {
            let answer = lsp.request(method, params);
            assert!(answer.get("id").is_some(), "{method}: {answer}");
        }
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("loaded 2 documents"), "{text}");
    assert_no_canary("folio lsp", &text, true);

    // The command line: its logs and messages go to stderr (results to stdout); at trace
    // level these commands log nothing today, so only what they print is checked.
    for args in [
        vec!["index", "--no-embed"],
        vec!["check"],
        vec!["search", "--mode", "lexical", "Quillfeather"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(&args)
            .arg("--root")
            .arg(&root)
            .env("FOLIO_LOG", "trace")
            .env("FOLIO_EMBED_PROVIDER", "none")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "folio {args:?}: {stderr}"
        );
        let _ = stdout;
        assert_no_canary(&format!("folio {}", args.join(" ")), &stderr, false);
    }
}

/// Runs `folio ARGS --root ROOT` with the user's folders under `dir`; exit code and stderr.
fn folio(dir: &Path, root: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .arg("--root")
        .arg(root)
        .envs(user_env(dir))
        .env_remove("FOLIO_EMBED_PROVIDER")
        .env_remove("FOLIO_EMBED_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kb_status` of a `folio mcp` started with the user's folders under `dir` and the
/// embedding settings of the files (no override from the environment).
fn mcp_status(dir: &Path, root: &Path) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .envs(user_env(dir))
        .env_remove("FOLIO_EMBED_PROVIDER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "folio-tests", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "kb_status", "arguments": {}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let status = loop {
        let line = lines.next().expect("an answer to kb_status").unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == json!(2) {
            break message["result"]["structuredContent"].clone();
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    status
}

#[test]
fn a_workspace_cannot_switch_on_what_only_the_user_may() {
    let dir = tempfile::tempdir().unwrap();
    let root = workspace(dir.path());
    let before = std::fs::read_to_string(root.join("a.md")).unwrap();
    // The user allows remote embedding endpoints for endpoints they choose.
    std::fs::create_dir_all(dir.path().join("config/folio")).unwrap();
    std::fs::write(
        dir.path().join("config/folio/config.toml"),
        "[embed]\nallow_remote = true\n",
    )
    .unwrap();
    // Settings only the user's own config may hold: every folio command refuses to start.
    let user_only = "it holds what only you may allow";
    let invalid: [(&str, &str); 5] = [
        ("[mcp]\nallow_writes = true\n", user_only),
        ("[mcp]\nagent_id = \"admin\"\n", user_only),
        ("[mcp.http]\ntokens_file = \"tokens.toml\"\n", user_only),
        (
            "[mcp.http]\nallowed_hosts = [\"evil.example\"]\n",
            user_only,
        ),
        (
            "[embed]\nallow_remote = true\n",
            "[embed].allow_remote cannot be set in a workspace's folio.toml",
        ),
    ];
    let mut refused = 0;
    for (toml, message) in invalid {
        std::fs::write(root.join("folio.toml"), toml).unwrap();
        for args in [&["index"][..], &["check"][..], &["mcp"][..]] {
            let (code, stderr) = folio(dir.path(), &root, args);
            assert_eq!(code, Some(2), "folio {args:?} with {toml}: {stderr}");
            assert!(
                stderr.contains(message),
                "folio {args:?} with {toml}: {stderr}"
            );
            refused += 1;
        }
    }
    // A remote embedding endpoint chosen by the workspace: indexing refuses to start, the
    // MCP server runs lexical only and says why; nothing is sent anywhere.
    let remote: [(&str, &str); 2] = [
        (
            "[embed]\nprovider = \"ollama\"\nmodel = \"m\"\nendpoint = \"http://203.0.113.7:11434\"\n",
            "the embedding endpoint `http://203.0.113.7:11434` is chosen by the workspace's folio.toml ([embed].endpoint)",
        ),
        (
            "[embed]\nprovider = \"openai\"\nmodel = \"text-embedding-3-small\"\n",
            "the embedding endpoint `https://api.openai.com` is chosen by the workspace's folio.toml ([embed].provider)",
        ),
    ];
    for (toml, message) in remote {
        std::fs::write(root.join("folio.toml"), toml).unwrap();
        let (code, stderr) = folio(dir.path(), &root, &["index"]);
        assert_eq!(code, Some(2), "folio index with {toml}: {stderr}");
        assert!(stderr.contains(message), "{stderr}");
        refused += 1;
        let status = mcp_status(dir.path(), &root);
        assert_eq!(
            (
                &status["embedding"]["state"],
                &status["search_modes"],
                &status["allow_writes"]
            ),
            (&json!("off"), &json!(["lexical"]), &json!(false)),
            "{status}"
        );
        let reason = status["embedding"]["reason"].as_str().unwrap();
        assert!(reason.starts_with(message), "{reason}");
    }
    assert_eq!(refused, 17);
    assert_eq!(std::fs::read_to_string(root.join("a.md")).unwrap(), before);
}

#[test]
fn the_index_and_its_folders_are_the_owners_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = workspace(dir.path());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let (code, stderr) = folio(dir.path(), &root, &["index", "--no-embed"]);
    assert_eq!(code, Some(0), "{stderr}");
    let state = root.join(".folio");
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&state.join("index.db")), 0o600);
    // SQLite gives the write-ahead log the database's mode while it exists.
    for suffix in ["index.db-wal", "index.db-shm"] {
        if state.join(suffix).exists() {
            assert_eq!(mode(&state.join(suffix)), 0o600, "{suffix}");
        }
    }
    // A read-only root keeps its index in the user's cache, with the same modes.
    let ro = dir.path().join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::write(ro.join("n.md"), "# Note\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let (code, stderr) = folio(dir.path(), &ro, &["index", "--no-embed"]);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    let cached: Vec<_> = std::fs::read_dir(dir.path().join("cache/folio"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert_eq!(mode(&cached[0]), 0o700);
    assert_eq!(mode(&cached[0].join("index.db")), 0o600);
    // An existing folder keeps the mode its owner gave it.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o750)).unwrap();
    let (code, stderr) = folio(dir.path(), &root, &["index", "--no-embed"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(mode(&state), 0o750);
}
