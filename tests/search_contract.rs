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

/// `[search]` in `folio.toml` sets the ranking's numbers for every front end, the same
/// flags of `folio search` win over it, and a number out of its range is refused with
/// its name. Observable exactly: with both centring weights at 0 a semantic hit's
/// `score` is its plain cosine (`similarity`); with the defaults (0.5) it is not.
/// Needs the built-in model (scripts/fetch-model); without it this test fails and says so.
#[test]
fn the_search_table_and_the_flags_set_the_ranking_numbers() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("kb-eval"), dir.path());
    let root = dir.path().join("kb");
    let search = |extra: &[&str]| -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_folio"))
            .args([
                "search",
                "roll back a release that broke",
                "--mode",
                "semantic",
                "--json",
                "--root",
            ])
            .arg(&root)
            .args(extra)
            .env("FOLIO_EMBED_PROVIDER", "builtin")
            .output()
            .unwrap()
    };
    // How many of the hits score exactly their cosine, and how many hits there are.
    let plain_cosines = |extra: &[&str]| -> (usize, usize) {
        let out = search(extra);
        assert!(
            out.status.success(),
            "folio search failed (is the built-in model installed? run `folio model install`): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let hits = v["results"].as_array().unwrap();
        let equal = hits
            .iter()
            .filter(|h| h["score"].as_f64().unwrap() == h["similarity"].as_f64().unwrap())
            .count();
        (equal, hits.len())
    };
    assert_eq!(plain_cosines(&[]), (0, 10), "centred by default");
    std::fs::write(
        root.join("folio.toml"),
        "[search]\ncorpus_centering = 0\nwriting_system_centering = 0\n",
    )
    .unwrap();
    assert_eq!(plain_cosines(&[]), (10, 10), "turned off in folio.toml");
    assert_eq!(
        plain_cosines(&["--corpus-centering", "0.5"]),
        (0, 10),
        "a flag wins over folio.toml"
    );

    let refused = |extra: &[&str]| -> String {
        let out = search(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    };
    assert_eq!(
        refused(&["--writing-system-centering", "3"]),
        "folio: error: invalid argument: writing_system_centering must be between 0 and 1, got 3"
    );
    std::fs::write(root.join("folio.toml"), "[search]\ndocument_weight = -2\n").unwrap();
    assert_eq!(
        refused(&[]),
        format!(
            "folio: error: invalid {}: [search] document_weight must be a finite number ≥ 0, got -2",
            root.canonicalize().unwrap().join("folio.toml").display()
        )
    );
    // The editor's folio/search answers it as an invalid argument; the MCP server does
    // not start.
    let mut lsp = Lsp::start(&root);
    let answer = lsp.request("folio/search", json!({"query": "release"}));
    assert_eq!(
        answer["error"]["message"], "[search] document_weight must be a finite number ≥ 0, got -2",
        "{answer}"
    );
    let mcp = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["mcp", "--root"])
        .arg(&root)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!mcp.status.success());
    let err = String::from_utf8_lossy(&mcp.stderr);
    assert!(
        err.contains("folio.toml: [search] document_weight must be a finite number ≥ 0, got -2"),
        "{err}"
    );
    std::fs::write(root.join("folio.toml"), "[search]\ncentering = 0\n").unwrap();
    let err = refused(&[]);
    assert!(err.contains("unknown field `centering`"), "{err}");
}
