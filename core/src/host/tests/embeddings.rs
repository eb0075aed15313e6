//! Tests of the operations that need embeddings (kb_graph, semantic kb_search) when
//! embeddings are off or the provider cannot be reached.

use serde_json::json;

use super::{INDEX, err, ok, setup};
use crate::host::search::SearchRequest;
use crate::host::{Host, Options};

#[test]
fn kb_graph_needs_embeddings_and_checks_its_arguments() {
    let (_dir, kb) = setup(false);
    use crate::host::similarity::GraphArgs;
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            ..GraphArgs::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": "kb_graph needs embeddings: embeddings are off: embeddings are off in this test; see kb_status `embedding`"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            depth: Some(4),
            ..GraphArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "depth must be 0..=3, got 4"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            seed_strategy: Some("mean".into()),
            ..GraphArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "unknown seed_strategy `mean`; use all_chunks or centroid"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "nope.md".into(),
            ..GraphArgs::default()
        }))["code"],
        "NOT_FOUND"
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "../etc/passwd".into(),
            ..GraphArgs::default()
        }))["code"],
        "INVALID_PATH"
    );
}

/// An embedding provider that cannot be reached: after the background pass gives up,
/// `semantic` kb_search and kb_graph say so with the provider's error (not "still
/// running"), and `hybrid` runs lexical.
#[test]
fn an_unavailable_provider_is_named_in_not_configured() {
    use crate::config::EmbedConfig;
    use crate::embed::pass::EmbedState;
    use crate::embed::settings::{EmbedSettings, ProviderKind};
    // A port that nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let workspace = EmbedConfig {
        provider: Some(ProviderKind::Ollama),
        model: Some("m".into()),
        endpoint: Some(endpoint.clone()),
        timeout_ms: Some(2_000),
        ..EmbedConfig::default()
    };
    let settings = EmbedSettings::resolve(&workspace, &Default::default(), false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.md"), INDEX).unwrap();
    let kb = Host::open(Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Ok(settings),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap();
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // The runner thread clears `is_running` just after the pass records the state.
    while kb.embedding.snapshot().state != EmbedState::Unavailable || kb.embedding.is_running() {
        assert!(
            std::time::Instant::now() < deadline,
            "still {:?}",
            kb.embedding.snapshot()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let reason = kb.embedding.snapshot().reason.unwrap();
    let reason = reason
        .strip_prefix("embedding provider unavailable: ")
        .unwrap()
        .to_owned();
    assert!(reason.contains(&format!("127.0.0.1:{port}")), "{reason}");
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "widget".into(),
            mode: Some("semantic".into()),
            ..SearchRequest::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": format!("semantic search is not available: the embedding provider is unavailable: {reason}; use mode lexical")})
    );
    assert_eq!(
        err(kb.graph(&crate::host::similarity::GraphArgs {
            start: "index.md".into(),
            ..Default::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": format!("kb_graph needs embeddings: the embedding provider is unavailable: {reason}; see kb_status `embedding`")})
    );
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        ..SearchRequest::default()
    }));
    assert_eq!(
        (&v["mode"], &v["embedding"]),
        (&json!("lexical"), &json!(false))
    );
}
