//! One search contract (core `host::search`): `folio search --json`, MCP `kb_search` and
//! LSP `folio/search` return the same hits with the same fields for the same request.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::lsp::Lsp;
use support::mcp::Mcp;
use support::{copy_dir, fixture};

#[test]
fn the_cli_mcp_and_lsp_give_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("foam");
    std::fs::create_dir_all(&root).unwrap();
    copy_dir(&fixture("foam-docs"), &root);
    let root = root.canonicalize().unwrap();
    let query = "daily notes template";

    let cli = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["search", query, "--json", "--limit", "5", "--mmr", "--root"])
        .arg(&root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();

    let request = json!({"query": query, "limit": 5, "mmr": true});
    let mut mcp = Mcp::start(&root, &[]);
    // The server's start-up reindex finds nothing to do; wait until it has finished.
    for _ in 0..400 {
        let status = mcp.call("kb_status", json!({})).unwrap();
        if status["indexing"]["state"] == "idle" && status["indexing"]["last"].is_object() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let from_mcp = mcp.call("kb_search", request.clone()).unwrap();

    let mut lsp = Lsp::start(&root);
    let from_lsp = lsp.request("folio/search", request);
    let from_lsp = from_lsp.get("result").cloned().unwrap_or(from_lsp);

    let hits = cli["results"].as_array().unwrap();
    assert_eq!(hits.len(), 5, "{cli:#}");
    assert_eq!(
        hits[0]["file_uri"],
        format!(
            "file://{}/{}",
            root.display(),
            hits[0]["path"].as_str().unwrap()
        )
    );
    for field in [
        "path",
        "pointer",
        "heading_path",
        "start_line",
        "end_line",
        "score",
        "lexical_rank",
        "snippet",
        "indexedSourceHash",
        "uri",
        "file_uri",
    ] {
        assert!(
            hits[0].get(field).is_some(),
            "{field} missing from {:#}",
            hits[0]
        );
    }
    assert_eq!(from_mcp, cli);
    assert_eq!(from_lsp, cli);
}
