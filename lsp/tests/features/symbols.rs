//! `textDocument/documentSymbol` and `workspace/symbol`.

use serde_json::json;

use crate::common::{Client, Enc, range, summarize, uri_of, write_files};
use crate::start;

both_encodings!(
    document_symbols,
    workspace_symbols,
    a_document_opened_through_a_folder_link_is_one_document
);

async fn document_symbols(enc: Enc) {
    let mut c = start(enc).await;
    let result = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(
        result,
        json!([{
            "name": "Alpha", "detail": "# #alpha", "kind": 15,
            "range": range(0, 0, 8, 11), "selectionRange": range(0, 0, 0, 7),
            "children": [{
                "name": "Set Up", "detail": "## #set-up", "kind": 15,
                "range": range(2, 0, 8, 11), "selectionRange": range(2, 0, 2, 9)
            }]
        }])
    );
}

async fn workspace_symbols(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let r = c
        .call("workspace/symbol", json!({"query": "betatwo"}))
        .await;
    assert_eq!(
        r,
        json!([{"name": "Beta Two", "kind": 15, "location": {"uri": b, "range": range(2, 0, 2, 11)}, "containerName": "b.md"}])
    );
    let r = c.call("workspace/symbol", json!({"query": "alpha"})).await;
    let names: Vec<(&str, i64)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["kind"].as_i64().unwrap()))
        .collect();
    assert_eq!(names, [("Alpha", 1), ("Alpha", 15)]);
}

/// A note opened through a symbolic link to a folder of the root (`link/a.md` for
/// `real/a.md`; the walk does not follow links) is the one document `real/a.md`: it is not
/// listed twice, and answers name it as the client does.
async fn a_document_opened_through_a_folder_link_is_one_document(enc: Enc) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    write_files(
        dir.path(),
        &[
            ("real/a.md", "# Install guide\n\n\u{e9} [gone](gone.md)\n"),
            ("b.md", "# B\n\n[a](real/a.md#install-guide)\n"),
        ],
    );
    std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
    let folders = json!([{"uri": uri_of(&dir.path().canonicalize().unwrap()), "name": "ws"}]);
    let mut c = Client::start_with(dir, enc, json!({}), folders).await;
    let symbols = |r: &serde_json::Value| -> Vec<(String, i64)> {
        r.as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["location"]["uri"].as_str().unwrap().to_string(),
                    s["kind"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let (real, link) = (c.uri("real/a.md"), c.uri("link/a.md"));
    let r = c
        .call("workspace/symbol", json!({"query": "install"}))
        .await;
    assert_eq!(symbols(&r), [(real.clone(), 1), (real.clone(), 15)]);

    c.open("link/a.md").await;
    let d = c.diagnostics("link/a.md").await;
    assert_eq!(
        summarize(&d),
        [(
            "missing-file".to_string(),
            range(2, enc.col(9, 10), 2, enc.col(16, 17)),
            "file `gone.md` does not exist (resolved to `real/gone.md`)".to_string()
        )]
    );
    let r = c
        .call("workspace/symbol", json!({"query": "install"}))
        .await;
    assert_eq!(symbols(&r), [(link.clone(), 1), (link.clone(), 15)]);
    // The other note's link reaches the open document, named as the client names it.
    let r = c
        .call(
            "textDocument/definition",
            json!({"textDocument": {"uri": c.uri("b.md")}, "position": {"line": 2, "character": 5}}),
        )
        .await;
    assert_eq!(
        r["uri"].as_str().or(r[0]["uri"].as_str()),
        Some(link.as_str())
    );

    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": link}}),
    )
    .await;
    let r = c
        .call("workspace/symbol", json!({"query": "install"}))
        .await;
    assert_eq!(symbols(&r), [(real.clone(), 1), (real, 15)]);
}

/// Notes whose outlines hold every kind of heading the line scan reads (ATX, setext,
/// quoted, with markup, with a custom id, after a frontmatter title, next to code), and
/// non-ASCII text before and in headings, so UTF-16 and UTF-8 columns differ.
const OUTLINED: &[(&str, &str)] = &[
    (
        "guide.md",
        "---\ntitle: Install Guide\n---\n# Installing *folio*\n\nCafé ☕ text.\n\n## Set up `cargo` {#setup}\n\n```sh\n# not a heading\n```\n\nSetext ☕ heading\n---\n",
    ),
    (
        "notes/b.md",
        "> ## Quoted install notes\n\nPlain [link](x.md).\n\n### Ünïcode setup ☕ ###\n",
    ),
    ("notes/empty.md", "no headings here\n"),
];

/// While the folders load, `workspace/symbol` answers from the documents' outlines; the
/// answers are the ones the loaded session gives, positions included, in both encodings.
#[test]
fn outline_answers_equal_the_loaded_answers() {
    use folio_core::document::Encoding;
    use folio_lsp::handlers::symbols::{workspace_symbol, workspace_symbol_from_outlines};
    use tower_lsp_server::ls_types::WorkspaceSymbolParams;
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), OUTLINED);
    for encoding in [Encoding::Utf16, Encoding::Utf8] {
        let mut session = folio_lsp::session::Session {
            encoding,
            ..Default::default()
        };
        let read = session.read_root(dir.path()).unwrap().unwrap();
        let outlines = folio_lsp::startup::Outlines::new(&[&read], encoding);
        let queries = [
            "",
            "install",
            "setup",
            "café",
            "ünï",
            "quoted",
            "notes/empty",
            "zzz",
        ];
        let params: Vec<WorkspaceSymbolParams> = queries
            .iter()
            .map(|q| serde_json::from_value(json!({"query": q})).unwrap())
            .collect();
        let early: Vec<_> = params
            .iter()
            .map(|p| workspace_symbol_from_outlines(&outlines, p).unwrap())
            .collect();
        session.add_read_root(read).unwrap();
        let loaded: Vec<_> = params
            .iter()
            .map(|p| workspace_symbol(&session, p).unwrap())
            .collect();
        assert_eq!(early, loaded, "{encoding:?}");
        // Not vacuous: every heading and file of the notes is in the empty query's answer.
        let all = serde_json::to_value(&loaded[0]).unwrap();
        assert_eq!(all.as_array().unwrap().len(), 3 + 5, "{all}");
    }
}

/// A `workspace/symbol` sent right after `initialized`, while the folders load, gets the
/// whole answer, the same as once they are loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_symbol_during_the_load_is_complete() {
    let mut c = Client::start_loading_many(OUTLINED).await;
    let early = c
        .call("workspace/symbol", json!({"query": "install"}))
        .await;
    let guide = c.uri("guide.md");
    let b = c.uri("notes/b.md");
    // notes/b.md is titled `b` (its file name: a quoted level-2 heading never titles a
    // note), so only its heading matches.
    let expected = json!([
        {"name": "Install Guide", "kind": 1, "location": {"uri": guide, "range": range(0, 0, 0, 0)}, "containerName": "guide.md"},
        {"name": "Installing folio", "kind": 15, "location": {"uri": guide, "range": range(3, 0, 3, 20)}, "containerName": "guide.md"},
        {"name": "Quoted install notes", "kind": 15, "location": {"uri": b, "range": range(0, 2, 0, 25)}, "containerName": "notes/b.md"}
    ]);
    assert_eq!(early, expected);
    // Once loaded (a request that needs the session), the same answer.
    c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": c.uri("guide.md")}}),
    )
    .await;
    assert_eq!(
        c.call("workspace/symbol", json!({"query": "install"}))
            .await,
        expected
    );
}
