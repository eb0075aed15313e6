//! `folio/search` and `folio/reindex`: custom requests over the core index of the root.

mod common;

use common::{Client, Enc};
use serde_json::json;

const A: &str =
    "# Gardening\n\nTomatoes need sun.\n\n## Watering\n\nWater the tomatoes every morning.\n";
const B: &str = "# Kitchen\n\nA salad of cucumbers.\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_returns_kb_search_hits_with_file_uris() {
    let mut c = Client::start(&[("notes/a.md", A), ("b.md", B)], Enc::Utf16, json!({})).await;
    let result = c
        .call(
            "folio/search",
            json!({"query": "watering tomatoes", "limit": 5}),
        )
        .await;
    let file_uri = c.uri("notes/a.md");
    let source_hash = folio_core::pointer::hex(folio_core::pointer::hash_bytes(A.as_bytes()));
    let got = result.to_string();
    assert_eq!(result["low_confidence"], false);
    assert_eq!(result["filter_applied"], json!([]));
    let hits = result["results"].as_array().unwrap();
    // The note takes one place; its other matching chunk is listed on its hit.
    assert_eq!(hits.len(), 1, "{got}");
    assert_eq!(
        result["results"],
        json!([
            {
                "path": "notes/a.md", "uri": "kb://doc/notes/a.md", "file_uri": file_uri,
                "pointer": "1.1~d1f758122ce4e00e~daac4f6f01046a4d",
                "heading_path": ["Gardening", "Watering"], "start_line": 5, "end_line": 7,
                "score": 0.8436164521307193, "lexical_rank": 1,
                "sections": [{
                    "pointer": "1~7ad737fc1d069d3f~a60cdd47679f3e94",
                    "heading_path": ["Gardening"], "start_line": 1, "end_line": 3,
                    "score": 1.0620689655172414e-6
                }],
                "snippet": "## Watering Water the tomatoes every morning.",
                "indexedSourceHash": source_hash
            }
        ])
    );
    // The index lives in the root's .folio/index.db.
    assert!(c.path(".folio/index.db").is_file());

    // Path globs filter, and the filter is named.
    let result = c
        .call(
            "folio/search",
            json!({"query": "tomatoes", "path_globs": ["b.md"]}),
        )
        .await;
    assert_eq!(
        result,
        json!({"results": [], "low_confidence": true, "filter_applied": ["path_globs"], "mode": "lexical", "indexing": false, "embedding": false})
    );
    // Without embeddings, semantic is refused with the reason and hybrid runs lexical.
    let r = c
        .request(
            "folio/search",
            json!({"query": "tomatoes", "mode": "semantic"}),
        )
        .await;
    assert_eq!(
        r["error"]["message"],
        "NOT_CONFIGURED: semantic search is not available: embeddings are off: this language server runs without embeddings (Options::no_embeddings); use mode lexical"
    );
    let r = c
        .request(
            "folio/search",
            json!({"query": "tomatoes", "mode": "fuzzy"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "unknown search mode `fuzzy` (expected lexical, semantic or hybrid)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_sees_files_changed_on_disk_and_reindex_reports_the_pass() {
    let mut c = Client::start(&[("a.md", A), ("b.md", B)], Enc::Utf16, json!({})).await;
    let summary = c.call("folio/reindex", json!(null)).await;
    assert_eq!(
        (
            summary["files"].clone(),
            summary["indexed"].clone(),
            summary["unchanged"].clone()
        ),
        (json!(2), json!(2), json!(0)),
        "{summary}"
    );
    assert_eq!(
        summary["root"],
        json!(c.path("").to_string_lossy().trim_end_matches('/'))
    );
    std::fs::write(c.path("b.md"), "# Kitchen\n\nA salad of zucchini.\n").unwrap();
    let summary = c.call("folio/reindex", json!(null)).await;
    assert_eq!(
        (
            summary["files"].clone(),
            summary["indexed"].clone(),
            summary["unchanged"].clone(),
            summary["removed"].clone()
        ),
        (json!(2), json!(1), json!(1), json!(0)),
        "{summary}"
    );
    // A file another program writes reaches search through the host's file watcher
    // (no pass per search): ask until it is indexed.
    std::fs::write(c.path("c.md"), "# Zucchini\n").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let paths = loop {
        let result = c.call("folio/search", json!({"query": "zucchini"})).await;
        let mut paths: Vec<_> = result["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        if paths.len() == 2 || std::time::Instant::now() > deadline {
            break paths;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(paths, ["b.md", "c.md"]);
    // The searches ran no pass of their own: the two asked for, and passes over what the
    // watcher reported.
    let status = c.call("folio/status", json!(null)).await;
    assert_eq!(status["indexing"]["full_passes"], 2, "{status}");
    assert_eq!(status["watch"]["mode"], "native", "{status}");
}

/// The editor's own search sees its unsaved buffers, through the same host `kb_search`
/// uses: a hit in an open document carries the buffer's text, pointer and lines, and
/// searching runs no index pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_answers_from_unsaved_buffers_without_a_pass_per_request() {
    let mut c = Client::start(&[("a.md", A), ("b.md", B)], Enc::Utf16, json!({})).await;
    c.call("folio/reindex", json!(null)).await;
    let edited = A.replace(
        "Water the tomatoes every morning.",
        "Intro line.\n\nWater the tomatoes every evening, not saved yet.",
    );
    let uri = c.uri("a.md");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 3, "text": edited}}),
    )
    .await;
    for _ in 0..3 {
        let result = c
            .call(
                "folio/search",
                json!({"query": "watering tomatoes", "limit": 1}),
            )
            .await;
        let hit = &result["results"][0];
        assert_eq!(
            (
                hit["path"].clone(),
                hit["snippet"].clone(),
                hit["start_line"].clone(),
                hit["end_line"].clone(),
                hit["editor"].clone()
            ),
            (
                json!("a.md"),
                json!("## Watering Intro line. Water the tomatoes every evening, not saved yet."),
                json!(5),
                json!(9),
                json!("test-editor")
            ),
            "{result}"
        );
    }
    // On disk nothing changed: the file still says "morning".
    assert!(
        std::fs::read_to_string(c.path("a.md"))
            .unwrap()
            .contains("morning")
    );
    let status = c.call("folio/status", json!(null)).await;
    assert_eq!(
        (
            status["indexing"]["full_passes"].clone(),
            status["indexing"]["changes_passes"].clone(),
            status["index"]["documents"].clone()
        ),
        (json!(1), json!(0), json!(2)),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_rejects_bad_params() {
    let mut c = Client::start(&[("a.md", A)], Enc::Utf16, json!({})).await;
    let r = c.request("folio/search", json!({"query": "  "})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c
        .request("folio/search", json!({"query": "x", "limit": 0}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c
        .request("folio/search", json!({"query": "x", "pathGlobs": ["[" ]}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// An embedding provider that cannot be reached (the root's folio.toml names a closed
/// loopback port): once the lazily started pass gives up, `semantic` says the provider is
/// unavailable, with its error, instead of a guess; `hybrid` runs lexical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_search_names_an_unavailable_provider() {
    let (port, toml) = closed_port_ollama();
    let mut c = start_with_embeddings(&toml).await;
    let prefix =
        "NOT_CONFIGURED: semantic search is not available: the embedding provider is unavailable: ";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let message = loop {
        let r = c
            .request(
                "folio/search",
                json!({"query": "tomatoes", "mode": "semantic"}),
            )
            .await;
        let message = r["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if message.starts_with(prefix) {
            break message;
        }
        assert!(std::time::Instant::now() < deadline, "still: {r}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(
        message.contains(&format!("127.0.0.1:{port}")) && message.ends_with("; use mode lexical"),
        "{message}"
    );
    let r = c.call("folio/search", json!({"query": "tomatoes"})).await;
    // One note, one place (its two matching chunks).
    assert_eq!(
        (r["mode"].clone(), r["results"].as_array().unwrap().len()),
        (json!("lexical"), 1)
    );
}

/// Embedding settings folio refuses (here a remote endpoint the workspace's folio.toml
/// names) are shown to the user once, as a warning, and search matches words meanwhile;
/// after the `[embed]` table changes, the next search makes a new runner from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_embedding_settings_are_shown_once_and_reread_when_embed_changes() {
    // `.invalid` never resolves; the endpoint is refused before any request.
    let mut c = start_with_embeddings(
        "[embed]\nprovider = \"openai\"\nmodel = \"m\"\nendpoint = \"https://embed.example.invalid/v1\"\n",
    )
    .await;
    assert_eq!(
        c.take("window/showMessage"),
        Vec::<serde_json::Value>::new()
    );
    let r = c.call("folio/search", json!({"query": "tomatoes"})).await;
    // One note, one place (its two matching chunks).
    assert_eq!(
        (r["mode"].clone(), r["results"].as_array().unwrap().len()),
        (json!("lexical"), 1)
    );
    let refusal = format!(
        "folio: the embedding endpoint `https://embed.example.invalid` is chosen by the workspace's folio.toml \
         ([embed].endpoint) and is not on this machine; a workspace may only name an endpoint on this machine. \
         To send your notes to it, set [embed] provider and endpoint in your own config ({}) and allow it \
         there; embeddings are off, so folio/search matches words only until it is fixed",
        folio_core::config::user::UserConfig::location()
    );
    assert_eq!(
        c.take("window/showMessage"),
        vec![json!({"type": 2, "message": refusal})]
    );
    // Once per runner: the next search says nothing again.
    c.call("folio/search", json!({"query": "tomatoes"})).await;
    assert_eq!(
        c.take("window/showMessage"),
        Vec::<serde_json::Value>::new()
    );

    // A loopback endpoint: accepted, so a new runner and no message.
    let (port, toml) = closed_port_ollama();
    common::write_files(c.dir.path(), &[("folio.toml", &toml)]);
    let uri = c.uri("folio.toml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 2}]}),
    )
    .await;
    // The change is applied in order with other notifications: ask until the new
    // runner's provider is the one named in the semantic mode's error.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let r = c
            .request(
                "folio/search",
                json!({"query": "tomatoes", "mode": "semantic"}),
            )
            .await;
        let message = r["error"]["message"].as_str().unwrap_or_default();
        if message.contains(&format!("127.0.0.1:{port}")) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still: {r}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        c.take("window/showMessage"),
        Vec::<serde_json::Value>::new()
    );
}

/// A loopback port nothing listens on, and a `folio.toml` whose `[embed]` names an Ollama
/// server there (a provider folio accepts and cannot reach).
fn closed_port_ollama() -> (u16, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let toml = format!(
        "[embed]\nprovider = \"ollama\"\nmodel = \"m\"\nendpoint = \"http://127.0.0.1:{port}\"\ntimeout_ms = 2000\n"
    );
    (port, toml)
}

/// A server with embeddings on (the default options), over a root holding `a.md` and
/// `folio_toml`.
async fn start_with_embeddings(folio_toml: &str) -> Client {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("a.md"), A).unwrap();
    std::fs::write(dir.path().join("folio.toml"), folio_toml).unwrap();
    let folders =
        json!([{"uri": common::uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
    Client::start_opts(
        dir,
        Enc::Utf16,
        json!({}),
        folders,
        folio_lsp::Options::default(),
    )
    .await
}
