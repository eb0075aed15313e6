//! Embedding providers against a real local HTTP server process
//! (tests/support/model_server.py, run by python3 on a free loopback port),
//! through the library and through the `folio` binary.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use folio_core::embed::http::{HttpApi, HttpEmbedder};
use folio_core::embed::pass::{EmbedProgress, SkippedFile, embed_pending};
use folio_core::embed::{EmbedError, Embedder};
use folio_core::index::index_root;
use folio_core::store::{Store, embedding_text};
use folio_core::workspace::Config;
use support::{ModelServer, closed_port};

fn write(root: &Path, path: &str, text: &str) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, text).unwrap();
}

/// a.md (2 chunks), b.md (1 chunk, holding the server's refusal marker), c.md (2 chunks).
fn corpus(root: &Path, with_marker: bool) {
    write(
        root,
        "a.md",
        "# Alpha\n\nFirst part.\n\n## More\n\nSecond part.\n",
    );
    let b = if with_marker {
        "# Bad\n\nThis one says REFUSE-ME.\n"
    } else {
        "# Bad\n\nThis one is fine.\n"
    };
    write(root, "b.md", b);
    write(root, "c.md", "# Gamma\n\nThird.\n\n## Tail\n\nFourth.\n");
}

/// The chunks of `path` with the vector the server gives for their embedded text.
fn expected_vectors(store: &Store, path: &str) -> Vec<(folio_core::store::ChunkRecord, Vec<f32>)> {
    store
        .chunks_of(path)
        .unwrap()
        .into_iter()
        .map(|c| {
            let v =
                ModelServer::expected_vector(&embedding_text(&c.heading_path.join(" > "), &c.text));
            (c, v)
        })
        .collect()
}

#[test]
fn openai_provider_skips_only_the_refused_file() {
    let server = ModelServer::start(&["--require-key", "sekret"]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    corpus(&root, true);
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    let endpoint = server.endpoint();
    let e = HttpEmbedder::new(
        HttpApi::OpenAi,
        &endpoint,
        "test-embed",
        Some("sekret".to_owned()),
        4,
        Duration::from_secs(20),
        true,
    )
    .unwrap();
    assert_eq!(e.model_id(), format!("openai:test-embed@{endpoint}"));
    let mut store = Store::open(&db).unwrap();
    let summary = embed_pending(
        &mut store,
        &e,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(
        summary.skipped_files,
        vec![SkippedFile {
            path: "b.md".to_owned(),
            reason: format!(
                "input refused: HTTP 400 from {endpoint}/v1/embeddings: {{\"error\": \"input rejected: contains REFUSE-ME\"}}"
            ),
        }]
    );
    assert_eq!(
        (
            summary.embedded,
            summary.reused,
            summary.unavailable.as_deref()
        ),
        (4, 0, None)
    );
    let status = store.vector_status().unwrap();
    assert_eq!(
        (status.embedded_chunks, status.total_chunks, status.vectors),
        (4, 5, 4)
    );
    assert_eq!(status.model.as_ref().map(|m| m.dims), Some(8));
    // The stored vectors are the server's, normalised, in input order (the
    // server lists `data` in reverse, so this checks the sort by `index`).
    assert_eq!(
        store.vectors_of("a.md").unwrap(),
        expected_vectors(&store, "a.md")
    );
    assert_eq!(
        store.vectors_of("c.md").unwrap(),
        expected_vectors(&store, "c.md")
    );
    assert_eq!(store.vectors_of("b.md").unwrap(), vec![]);
    // Requests: the probe; [a0 a1 b0 c0] refused; then a, b (refused), c0 one
    // by one; then [c1]; then the whole-document texts [a b c] refused, and a,
    // b (refused), c one by one.
    let stats = server.stats();
    assert_eq!(
        (
            stats["requests"].as_u64(),
            stats["ok_inputs"].as_u64(),
            stats["refused_requests"].as_u64()
        ),
        (Some(10), Some(7), Some(4))
    );
    assert_eq!(summary.documents_embedded, 2);
    assert_eq!(stats["models"], serde_json::json!(["test-embed"]));
    // A query finds its own chunk first.
    let c = &store.chunks_of("c.md").unwrap()[1];
    let q = e
        .embed_query(&embedding_text(&c.heading_path.join(" > "), &c.text))
        .unwrap();
    let hits = store
        .vector_search(e.model_id(), &q, 2, &Default::default())
        .unwrap()
        .results;
    assert_eq!(
        (hits[0].path.as_str(), hits[0].start_line),
        ("c.md", c.start_line)
    );
    assert!((hits[0].score - 1.0).abs() < 1e-6, "{}", hits[0].score);
}

#[test]
fn ollama_provider_answers_and_maps_errors() {
    let server = ModelServer::start(&["--require-key", "k"]);
    let endpoint = server.endpoint();
    let make = |key: Option<&str>, endpoint: &str| {
        HttpEmbedder::new(
            HttpApi::Ollama,
            endpoint,
            "m",
            key.map(str::to_owned),
            2,
            Duration::from_secs(20),
            true,
        )
        .unwrap()
    };
    let e = make(Some("k"), &endpoint);
    assert_eq!(e.dimensions(), 0, "unknown before the first answer");
    let got = e.embed_passages(&["one", "two", "three"]).unwrap();
    assert_eq!(
        got,
        vec![
            ModelServer::expected_vector("one"),
            ModelServer::expected_vector("two"),
            ModelServer::expected_vector("three")
        ]
    );
    assert_eq!(e.dimensions(), 8);
    assert_eq!(server.stats()["requests"].as_u64(), Some(2), "batches of 2");
    match e.embed_passages(&["fine", "REFUSE-ME"]) {
        Err(EmbedError::Refused(m)) => {
            assert_eq!(
                m,
                format!(
                    "HTTP 400 from {endpoint}/api/embed: {{\"error\": \"input rejected: contains REFUSE-ME\"}}"
                )
            )
        }
        other => panic!("{other:?}"),
    }
    match make(None, &endpoint).embed_query("x") {
        Err(EmbedError::Unavailable(m)) => {
            assert_eq!(
                m,
                format!(
                    "HTTP 401 from {endpoint}/api/embed: {{\"error\": \"missing or wrong API key\"}}"
                )
            )
        }
        other => panic!("{other:?}"),
    }
    let down = format!("http://127.0.0.1:{}", closed_port());
    match make(Some("k"), &down).embed_query("x") {
        Err(EmbedError::Unavailable(m)) => {
            assert!(m.starts_with(&format!("{down}/api/embed: ")), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let failing = ModelServer::start(&["--mode", "fail500"]);
    match make(None, &failing.endpoint()).embed_query("x") {
        Err(EmbedError::Unavailable(m)) => {
            assert_eq!(
                m,
                format!(
                    "HTTP 500 from {}/api/embed: model crashed",
                    failing.endpoint()
                )
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_slow_endpoint_times_out_as_unavailable() {
    let server = ModelServer::start(&["--delay-ms", "5000"]);
    let e = HttpEmbedder::new(
        HttpApi::OpenAi,
        &server.endpoint(),
        "m",
        None,
        4,
        Duration::from_millis(300),
        true,
    )
    .unwrap();
    match e.embed_query("x") {
        Err(EmbedError::Unavailable(m)) => {
            assert_eq!(m, format!("{}/v1/embeddings: timed out", server.endpoint()))
        }
        other => panic!("{other:?}"),
    }
}

/// Runs `folio` with a private user config folder and no API key or proxy
/// from the environment, plus `env`.
fn folio(args: &[&str], config_home: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_folio"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", config_home);
    for var in [
        "FOLIO_EMBED_API_KEY",
        "OPENAI_API_KEY",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("folio runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn openai_toml(endpoint: &str) -> String {
    format!(
        "[embed]\nprovider = \"openai\"\nmodel = \"test-embed\"\nendpoint = \"{endpoint}\"\nbatch_size = 4\ntimeout_ms = 20000\n"
    )
}

#[test]
fn cli_index_embeds_with_the_key_from_the_environment() {
    let server = ModelServer::start(&["--require-key", "sekret"]);
    let dir = tempfile::tempdir().unwrap();
    let (root, home) = (dir.path().join("kb"), dir.path().join("config"));
    corpus(&root, true);
    write(&root, "folio.toml", &openai_toml(&server.endpoint()));
    let r = root.to_str().unwrap();

    let out = folio(
        &["index", "--root", r, "--json"],
        &home,
        &[("FOLIO_EMBED_API_KEY", "sekret")],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "a skipped file makes exit 3: {}",
        stderr(&out)
    );
    let v = json(&out);
    assert_eq!(v["indexed"], 3);
    let embed = &v["embed"];
    assert_eq!(
        (
            embed["state"].as_str(),
            embed["embedded"].as_u64(),
            embed["reused"].as_u64()
        ),
        (Some("done"), Some(4), Some(0))
    );
    let reason = format!(
        "input refused: HTTP 400 from {}/v1/embeddings: {{\"error\": \"input rejected: contains REFUSE-ME\"}}",
        server.endpoint()
    );
    assert_eq!(
        embed["skipped_files"],
        serde_json::json!([{"path": "b.md", "reason": reason}])
    );
    assert!(
        stderr(&out).contains(&format!("folio: skipped b.md (embedding): {reason}")),
        "{}",
        stderr(&out)
    );

    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    let e = &status["embedding"];
    assert_eq!(
        (
            e["provider"].as_str(),
            e["embedded_chunks"].as_u64(),
            e["total_chunks"].as_u64(),
            e["dims"].as_u64()
        ),
        (Some("openai"), Some(4), Some(5), Some(8))
    );
    assert_eq!(
        e["model"].as_str(),
        Some(format!("openai:test-embed@{}", server.endpoint()).as_str())
    );
    assert_eq!(e["last_unavailable"], serde_json::Value::Null);

    // The key falls back to OPENAI_API_KEY; without any key the server answers
    // 401: the pass stops, says why, and the index keeps what it had.
    let out = folio(
        &["index", "--root", r, "--json"],
        &home,
        &[("OPENAI_API_KEY", "sekret")],
    );
    assert_eq!(
        json(&out)["embed"]["skipped_files"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let out = folio(&["index", "--root", r, "--json"], &home, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let unavailable = format!(
        "embedding provider unavailable: HTTP 401 from {}/v1/embeddings: {{\"error\": \"missing or wrong API key\"}}",
        server.endpoint()
    );
    let v = json(&out);
    assert_eq!(
        (
            v["embed"]["state"].as_str(),
            v["embed"]["unavailable"].as_str()
        ),
        (Some("unavailable"), Some(unavailable.as_str()))
    );
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(
        status["embedding"]["last_unavailable"].as_str(),
        Some(unavailable.as_str())
    );
    assert_eq!(status["embedding"]["embedded_chunks"].as_u64(), Some(4));
}

#[test]
fn cli_unavailable_endpoint_keeps_the_lexical_index() {
    let server = ModelServer::start(&["--mode", "fail500"]);
    let dir = tempfile::tempdir().unwrap();
    let (root, home) = (dir.path().join("kb"), dir.path().join("config"));
    corpus(&root, false);
    write(&root, "folio.toml", &openai_toml(&server.endpoint()));
    let r = root.to_str().unwrap();
    let out = folio(&["index", "--root", r, "--json"], &home, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["indexed"].as_u64(), v["chunks"].as_u64()),
        (Some(3), Some(5))
    );
    let reason = format!(
        "embedding provider unavailable: HTTP 500 from {}/v1/embeddings: model crashed",
        server.endpoint()
    );
    assert_eq!(
        (
            v["embed"]["state"].as_str(),
            v["embed"]["unavailable"].as_str()
        ),
        (Some("unavailable"), Some(reason.as_str()))
    );
    assert!(stderr(&out).contains(&format!(
        "folio: warning: embeddings incomplete, the provider is unavailable: {reason}"
    )));
    let hits = json(&folio(
        &["search", "Third", "--root", r, "--no-reindex", "--json"],
        &home,
        &[],
    ));
    assert_eq!(hits["results"][0]["path"].as_str(), Some("c.md"));
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(
        (
            status["index"]["documents"].as_u64(),
            status["embedding"]["embedded_chunks"].as_u64()
        ),
        (Some(3), Some(0))
    );

    // Nothing listening at all: the same, with the connection error as the reason.
    let down = format!("http://127.0.0.1:{}", closed_port());
    write(&root, "folio.toml", &openai_toml(&down));
    let out = folio(&["index", "--root", r, "--json"], &home, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let reason = v["embed"]["unavailable"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        reason,
        format!("embedding provider unavailable: {down}/v1/embeddings: connection refused")
    );
    assert_eq!(v["unchanged"].as_u64(), Some(3));
}

#[test]
fn cli_force_probes_the_provider_before_changing_anything() {
    let server = ModelServer::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (root, home) = (dir.path().join("kb"), dir.path().join("config"));
    corpus(&root, false);
    write(&root, "folio.toml", &openai_toml(&server.endpoint()));
    let r = root.to_str().unwrap();
    let out = folio(&["index", "--root", r, "--json"], &home, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["embed"]["embedded"].as_u64(), Some(5));
    let endpoint = server.endpoint();
    drop(server);

    write(
        &root,
        "c.md",
        "# Gamma\n\nThird zebra.\n\n## Tail\n\nFourth.\n",
    );
    let out = folio(&["index", "--root", r, "--force"], &home, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "folio: error: the embedding provider did not answer the probe before `--force` (embedding provider unavailable: {endpoint}/v1/embeddings: "
        )) && err.trim_end().ends_with("nothing was changed (fix the provider, or use --no-embed to rebuild the lexical index only)"),
        "{err}"
    );
    // The index is as it was: the edit is not in it, and the vectors are all there.
    let hits = json(&folio(
        &["search", "zebra", "--root", r, "--no-reindex", "--json"],
        &home,
        &[],
    ));
    assert_eq!(hits["results"], serde_json::json!([]));
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(
        (
            status["index"]["chunks"].as_u64(),
            status["embedding"]["embedded_chunks"].as_u64()
        ),
        (Some(5), Some(5))
    );

    // Without embeddings the rebuild goes ahead.
    let out = folio(
        &["index", "--root", r, "--force", "--no-embed", "--json"],
        &home,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["embed"], serde_json::json!({"state": "skipped"}));
    let hits = json(&folio(
        &["search", "zebra", "--root", r, "--no-reindex", "--json"],
        &home,
        &[],
    ));
    assert_eq!(hits["results"][0]["path"].as_str(), Some("c.md"));
}

#[test]
fn cli_remote_endpoint_needs_the_users_permission() {
    let dir = tempfile::tempdir().unwrap();
    let (root, home) = (dir.path().join("kb"), dir.path().join("config"));
    corpus(&root, false);
    // `.invalid` never resolves; no test here sends a request anywhere.
    write(
        &root,
        "folio.toml",
        &openai_toml("https://embed.example.invalid/v1"),
    );
    let r = root.to_str().unwrap();
    // A remote endpoint the workspace names is never used, however the user allows them.
    // Messages name the user's config file where folio reads it (XDG_CONFIG_HOME here).
    let users_file = home.join("folio/config.toml");
    let refusal = format!(
        "the embedding endpoint `https://embed.example.invalid` is chosen by the workspace's folio.toml \
         ([embed].endpoint) and is not on this machine; a workspace may only name an endpoint on this \
         machine. To send your notes to it, set [embed] provider and endpoint in your own config \
         ({}) and allow it there",
        users_file.display()
    );
    let refusal = refusal.as_str();
    let out = folio(&["index", "--root", r], &home, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), format!("folio: error: {refusal}\n"));
    assert!(
        !root.join(".folio/index.db").exists(),
        "refused before indexing"
    );
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(status["embedding"]["reason"].as_str(), Some(refusal));
    let status = json(&folio(
        &["status", "--root", r, "--json", "--allow-remote-embeddings"],
        &home,
        &[],
    ));
    assert_eq!(status["embedding"]["reason"].as_str(), Some(refusal));
    write(&home, "folio/config.toml", "[embed]\nallow_remote = true\n");
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(status["embedding"]["reason"].as_str(), Some(refusal));

    // The same endpoint in the user's own config: refused until the user allows it.
    std::fs::remove_file(root.join("folio.toml")).unwrap();
    let users = openai_toml("https://embed.example.invalid/v1");
    write(&home, "folio/config.toml", &users);
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(
        status["embedding"]["reason"].as_str(),
        Some(
            format!(
                "the embedding endpoint `https://embed.example.invalid` (from your config.toml) is not on this \
                 machine; remote endpoints are refused unless you allow them in your own config (`[embed] allow_remote = \
                 true` in {}) or with --allow-remote-embeddings; a workspace's folio.toml cannot \
                 allow them",
                users_file.display()
            )
            .as_str()
        )
    );
    // The flag allows it.
    let status = json(&folio(
        &["status", "--root", r, "--json", "--allow-remote-embeddings"],
        &home,
        &[],
    ));
    assert_eq!(
        (
            status["embedding"]["reason"].clone(),
            status["embedding"]["endpoint"].as_str()
        ),
        (
            serde_json::Value::Null,
            Some("https://embed.example.invalid")
        )
    );
    // So does the user's own config.
    write(
        &home,
        "folio/config.toml",
        &format!("{users}allow_remote = true\n"),
    );
    let status = json(&folio(&["status", "--root", r, "--json"], &home, &[]));
    assert_eq!(status["embedding"]["reason"], serde_json::Value::Null);
    std::fs::remove_file(home.join("folio/config.toml")).unwrap();

    // The workspace cannot allow it itself.
    write(
        &root,
        "folio.toml",
        &format!(
            "{}allow_remote = true\n",
            openai_toml("https://embed.example.invalid")
        ),
    );
    let out = folio(&["index", "--root", r], &home, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!(
            "[embed].allow_remote cannot be set in a workspace's folio.toml: only your own config ({}) or \
             --allow-remote-embeddings may allow a remote embedding endpoint",
            users_file.display()
        )),
        "{}",
        stderr(&out)
    );

    // --no-embed indexes lexically whatever the embedding settings say.
    write(
        &root,
        "folio.toml",
        &openai_toml("https://embed.example.invalid"),
    );
    let out = folio(&["index", "--root", r, "--no-embed"], &home, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `folio lsp` reads the user's config at each `folio/search`: an edited `[embed]`
/// table in config.toml makes a new embedder on the next search, with no restart and
/// no change to the workspace.
#[test]
fn lsp_search_follows_an_edited_user_config() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    corpus(&root, false);
    let config_home = dir.path().join("config");
    let ollama_at = |port: u16| {
        write(
            &config_home,
            "folio/config.toml",
            &format!(
                "[embed]\nprovider = \"ollama\"\nmodel = \"m\"\nendpoint = \"http://127.0.0.1:{port}\"\ntimeout_ms = 2000\n"
            ),
        )
    };
    // The embedder loads in the background ("is loading" meanwhile): ask until the
    // error names the provider's address, or give up after 30 s.
    let semantic_error_naming = |lsp: &mut support::lsp::Lsp, port: u16| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let r = lsp.request(
                "folio/search",
                serde_json::json!({"query": "third", "mode": "semantic"}),
            );
            let message = r["error"]["message"].as_str().unwrap_or_default();
            if message.contains(&format!("127.0.0.1:{port}")) {
                return message.to_owned();
            }
            assert!(std::time::Instant::now() < deadline, "still: {r}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let (first, second) = (closed_port(), closed_port());
    ollama_at(first);
    let mut lsp = support::lsp::Lsp::start_with_env(
        &root,
        &[
            ("FOLIO_EMBED_PROVIDER", Path::new("")),
            ("XDG_CONFIG_HOME", &config_home),
        ],
    );
    let refused = |port: u16| {
        format!(
            "NOT_CONFIGURED: semantic search is not available: the embedding provider is unavailable: \
             http://127.0.0.1:{port}/api/embed: connection refused; use mode lexical"
        )
    };
    assert_eq!(semantic_error_naming(&mut lsp, first), refused(first));
    ollama_at(second);
    assert_eq!(semantic_error_naming(&mut lsp, second), refused(second));
}
