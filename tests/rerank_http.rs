//! Rerank providers against a real local HTTP server process
//! (tests/support/model_server.py), through the library and through `folio search`,
//! MCP `kb_search` and LSP `folio/search`.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use folio_core::config::user::UserRerankConfig;
use folio_core::rerank::{HttpReranker, RerankSettings};
use folio_core::search::pipeline::Reranker;
use folio_core::workspace::Config;
use serde_json::{Value, json};
use support::lsp::Lsp;
use support::mcp::Mcp;
use support::{ModelServer, closed_port};

/// The reranker of a workspace `[rerank]` table (no user config).
fn reranker(table: &str) -> HttpReranker {
    let config = Config::from_toml(table).expect("valid folio.toml");
    let settings = RerankSettings::resolve(&config.rerank, &UserRerankConfig::default())
        .expect("settings accepted")
        .expect("a reranker configured");
    HttpReranker::new(&settings)
}

#[test]
fn cohere_and_tei_answers_are_put_back_in_passage_order_batch_by_batch() {
    let passages = [
        "zero",
        "one RERANK-TOP RERANK-TOP",
        "two",
        "three RERANK-TOP",
        "four",
    ];
    for (provider, path, endpoint_tail) in
        [("cohere", "/v1/rerank", "/v1/"), ("tei", "/rerank", "")]
    {
        let server = ModelServer::start(&[]);
        let endpoint = format!("{}{endpoint_tail}", server.endpoint());
        let r = reranker(&format!(
            "[rerank]\nprovider = \"{provider}\"\nmodel = \"test-rerank\"\nendpoint = \"{endpoint}\"\nbatch_size = 2\n"
        ));
        assert_eq!(r.url(), format!("{}{path}", server.endpoint()));
        let scores = r.score("which one", &passages).unwrap();
        assert_eq!(scores, [0.0, 2.0, 0.0, 1.0, 0.0], "{provider}");
        let stats = server.stats();
        let bodies: Vec<&Value> = stats["reranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                assert_eq!(r["path"], path);
                &r["body"]
            })
            .collect();
        let expected: Vec<Value> = passages
            .chunks(2)
            .map(|batch| match provider {
                "cohere" => json!({"model": "test-rerank", "query": "which one", "documents": batch, "top_n": batch.len()}),
                _ => json!({"model": "test-rerank", "query": "which one", "texts": batch, "truncate": true}),
            })
            .collect();
        assert_eq!(bodies, expected.iter().collect::<Vec<_>>(), "{provider}");
    }
}

#[test]
fn a_failing_or_odd_rerank_server_is_an_error_naming_its_url() {
    let table =
        |endpoint: &str| format!("[rerank]\nprovider = \"tei\"\nendpoint = \"{endpoint}\"\n");
    let server = ModelServer::start(&["--mode", "fail500"]);
    let r = reranker(&table(&server.endpoint()));
    assert_eq!(
        r.score("q", &["a", "b"]),
        Err(format!(
            "HTTP 500 from {}/rerank: model crashed",
            server.endpoint()
        ))
    );
    let server = ModelServer::start(&["--mode", "rerank-twice"]);
    let r = reranker(&table(&server.endpoint()));
    assert_eq!(
        r.score("q", &["a RERANK-TOP", "b"]),
        Err(format!(
            "{}/rerank scored passage index 0 twice",
            server.endpoint()
        ))
    );
    let server = ModelServer::start(&["--require-key", "sekret"]);
    let r = reranker(&table(&server.endpoint()));
    assert_eq!(
        r.score("q", &["a"]),
        Err(format!(
            "HTTP 401 from {}/rerank: {{\"error\": \"missing or wrong API key\"}}",
            server.endpoint()
        ))
    );
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let r = reranker(&table(&endpoint));
    assert_eq!(
        r.score("q", &["a"]),
        Err(format!("{endpoint}/rerank: connection refused"))
    );
}

fn write(root: &Path, path: &str, text: &str) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(path), text).unwrap();
}

/// Three notes; `deploy release` finds rollback.md first by its words, while the
/// server prefers canary.md (it holds the marker).
fn notes(root: &Path, folio_toml: &str) {
    write(
        root,
        "rollback.md",
        "# Rollback\n\nRoll back a deploy to the previous release.\n",
    );
    write(
        root,
        "canary.md",
        "# Canary\n\nShip a canary build before the release. RERANK-TOP\n",
    );
    write(
        root,
        "cache.md",
        "# Cache\n\nCache invalidation after a deploy.\n",
    );
    write(root, "folio.toml", folio_toml);
}

/// `folio ARGS ROOT` with lexical search and the user config of `config_home`.
fn folio(root: &Path, config_home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .arg(root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap()
}

fn folio_search(root: &Path, config_home: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["search", "deploy release", "--json", "--root"])
        .arg(root)
        .args(extra)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap()
}

/// `(path, score)` of each hit of a search answer.
fn ranked(answer: &Value) -> Vec<(String, f64)> {
    answer["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {answer:#}"))
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_owned(),
                h["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn wait_for_index(mcp: &mut Mcp) {
    for _ in 0..400 {
        let status = mcp.call("kb_status", json!({})).unwrap();
        if status["indexing"]["state"] == "idle" && status["indexing"]["last"].is_object() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the start-up index pass did not finish");
}

#[test]
fn the_cli_mcp_and_lsp_rerank_with_the_configured_server() {
    let server = ModelServer::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    let config_home = dir.path().join("config");
    std::fs::create_dir_all(&config_home).unwrap();
    notes(
        &root,
        &format!(
            "[rerank]\nprovider = \"cohere\"\nmodel = \"test-rerank\"\nendpoint = \"{}\"\n",
            server.endpoint()
        ),
    );
    let reranked = vec![
        ("canary.md".to_owned(), 1.0),
        ("rollback.md".to_owned(), 0.0),
        ("cache.md".to_owned(), 0.0),
    ];

    // The command line: the configured reranker without a flag, and not with --no-rerank.
    let out = folio_search(&root, &config_home, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ranked(&cli), reranked);
    assert_eq!(cli["reranked"], true);
    let text = folio(&root, &config_home, &["search", "deploy release", "--root"]);
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .starts_with("canary.md:1-3 — Canary  (rerank 1.000, lexical rank 3)\n"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    let stats = server.stats();
    let body = &stats["reranks"][0]["body"];
    assert_eq!(
        (
            &body["model"],
            &body["query"],
            body["documents"].as_array().map(Vec::len)
        ),
        (&json!("test-rerank"), &json!("deploy release"), Some(3))
    );
    let out = folio_search(&root, &config_home, &["--no-rerank"]);
    let plain: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plain.get("reranked"), None);
    let plain_paths: Vec<String> = ranked(&plain).into_iter().map(|(p, _)| p).collect();
    assert_eq!(plain_paths[0], "rollback.md", "{plain:#}");
    assert_eq!(server.stats()["reranks"].as_array().unwrap().len(), 2);
    let status = folio(&root, &config_home, &["status", "--root"]);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains(&format!(
            "\nreranker: cohere, model test-rerank at {}/v1/rerank\n",
            server.endpoint()
        )),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );

    // MCP kb_search: the same answer; `rerank: false` turns it off.
    let mut mcp = Mcp::start_with_env(&root, &[], &[("XDG_CONFIG_HOME", &config_home)]);
    wait_for_index(&mut mcp);
    assert_eq!(
        mcp.call("kb_status", json!({})).unwrap()["rerank"],
        json!({"state": "on", "provider": "cohere", "url": format!("{}/v1/rerank", server.endpoint()), "model": "test-rerank"})
    );
    let from_mcp = mcp
        .call("kb_search", json!({"query": "deploy release"}))
        .unwrap();
    assert_eq!(ranked(&from_mcp), reranked);
    let off = mcp
        .call(
            "kb_search",
            json!({"query": "deploy release", "rerank": false}),
        )
        .unwrap();
    assert_eq!(ranked(&off), ranked(&plain));

    // LSP folio/search.
    let mut lsp = Lsp::start(&root);
    let from_lsp = lsp.request(
        "folio/search",
        json!({"query": "deploy release", "rerank": true}),
    );
    assert_eq!(ranked(&from_lsp["result"]), reranked, "{from_lsp:#}");
    assert_eq!(server.stats()["reranks"].as_array().unwrap().len(), 4);

    // The server gone: each front end says the reranker is unavailable, naming its URL.
    let url = format!("{}/v1/rerank", server.endpoint());
    drop(server);
    let out = folio_search(&root, &config_home, &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "unavailable: the reranker failed: {url}: connection refused"
        )),
        "{stderr}"
    );
    assert_eq!(
        mcp.call("kb_search", json!({"query": "deploy release"})),
        Err(
            json!({"code": "UNAVAILABLE", "message": format!("the reranker failed: {url}: connection refused")})
        )
    );
    let from_lsp = lsp.request("folio/search", json!({"query": "deploy release"}));
    assert_eq!(
        from_lsp["error"]["message"],
        format!("UNAVAILABLE: the reranker failed: {url}: connection refused"),
        "{from_lsp:#}"
    );
}

#[test]
fn a_remote_rerank_endpoint_the_workspace_names_is_refused_and_rerank_false_still_searches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    let config_home = dir.path().join("config");
    std::fs::create_dir_all(config_home.join("folio")).unwrap();
    // Even with the user allowing remote rerank endpoints.
    std::fs::write(
        config_home.join("folio/config.toml"),
        "[rerank]\nallow_remote = true\n",
    )
    .unwrap();
    notes(
        &root,
        "[rerank]\nprovider = \"tei\"\nendpoint = \"https://rerank.example.invalid\"\n",
    );
    let out = folio_search(&root, &config_home, &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let user_config = config_home.join("folio/config.toml");
    assert!(
        stderr.contains(&format!(
            "not configured: the [rerank] settings are refused: the rerank endpoint `https://rerank.example.invalid` \
             is chosen by the workspace's folio.toml ([rerank].endpoint) and is not on this machine; a workspace may \
             only name an endpoint on this machine. To send your notes to it, set [rerank] provider and endpoint in \
             your own config ({}) and allow it there; fix them, or search without the reranker (rerank: false, \
             folio search --no-rerank)",
            user_config.display()
        )),
        "{stderr}"
    );
    let out = folio_search(&root, &config_home, &["--no-rerank"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ranked(&answer)[0].0, "rollback.md");
}
