//! Work-done progress (`window/workDoneProgress/create` and `$/progress`) during the
//! initial scan and `folio/reindex`, the `folio/status` counts, and the one message for
//! a workspace folder without Markdown.

mod common;

use common::{Client, Enc, uri_of, write_files};
use serde_json::{Value, json};

const A: &str = "# A\n\n[b](b.md) and [c](c.md#nope)\n";
const C: &str = "# C\n";

/// The client capabilities of the VS Code extension for these features.
fn caps() -> Value {
    json!({"window": {"workDoneProgress": true}, "experimental": {"folioStatus": true}})
}

fn root(c: &Client) -> String {
    c.dir.path().canonicalize().unwrap().display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_scan_and_reindex_report_progress_and_status() {
    let mut c = Client::start(&[("a.md", A), ("c.md", C)], Enc::Utf16, caps()).await;
    let status = c.notification("folio/status").await;
    assert_eq!(status, json!({"documents": 2, "brokenLinks": 2}));
    let root = root(&c);
    assert_eq!(
        c.requests_of("window/workDoneProgress/create"),
        vec![json!({"token": "folio/scan/1"})]
    );
    assert_eq!(
        c.take("$/progress"),
        vec![
            json!({"token": "folio/scan/1", "value": {"kind": "begin", "title": "folio: indexing", "cancellable": false, "message": format!("scanning {root}")}}),
            json!({"token": "folio/scan/1", "value": {"kind": "report", "message": format!("2 documents in {root}")}}),
            json!({"token": "folio/scan/1", "value": {"kind": "end", "message": "2 documents, 2 broken links"}}),
        ]
    );
    // A folder with Markdown gets no message.
    assert_eq!(c.take("window/showMessage"), Vec::<Value>::new());

    let summary = c.call("folio/reindex", json!(null)).await;
    assert_eq!(
        (summary["files"].clone(), summary["indexed"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(
        c.requests_of("window/workDoneProgress/create"),
        vec![
            json!({"token": "folio/scan/1"}),
            json!({"token": "folio/reindex/2"})
        ]
    );
    c.until_pending("$/progress", 2).await;
    assert_eq!(
        c.take("$/progress"),
        vec![
            json!({"token": "folio/reindex/2", "value": {"kind": "begin", "title": "folio: reindexing", "cancellable": false, "message": format!("indexing {root}")}}),
            json!({"token": "folio/reindex/2", "value": {"kind": "end", "message": "indexed 2 of 2 files (0 unchanged, 0 removed)"}}),
        ]
    );

    // Fixing one link in the buffer: the count follows.
    c.open("a.md").await;
    c.change(
        "a.md",
        vec![json!({"range": common::range(2, 0, 2, 9), "text": "[c](c.md)"})],
    )
    .await;
    assert_eq!(
        c.notification("folio/status").await,
        json!({"documents": 2, "brokenLinks": 1})
    );
    // A new file on disk that the other link names: watched-file events update the count too.
    write_files(c.dir.path(), &[("b.md", "# B\n")]);
    let b = c.uri("b.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 1}]}),
    )
    .await;
    assert_eq!(
        c.notification("folio/status").await,
        json!({"documents": 3, "brokenLinks": 1})
    );
    // Only changes are sent: an edit that keeps the counts sends nothing.
    c.change(
        "a.md",
        vec![json!({"range": common::range(0, 3, 0, 3), "text": "h"})],
    )
    .await;
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(c.take("folio/status"), Vec::<Value>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_progress_or_status_for_a_client_that_does_not_ask() {
    let mut c = Client::start(
        &[("a.md", A), ("c.md", C)],
        Enc::Utf16,
        json!({"window": {"workDoneProgress": false}}),
    )
    .await;
    c.call("workspace/symbol", json!({"query": ""})).await;
    c.call("folio/reindex", json!(null)).await;
    assert_eq!(
        c.requests_of("window/workDoneProgress/create"),
        Vec::<Value>::new()
    );
    assert_eq!(c.take("$/progress"), Vec::<Value>::new());
    assert_eq!(c.take("folio/status"), Vec::<Value>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_without_markdown_gets_one_message() {
    let mut c = Client::start(&[("notes.log", "no Markdown here\n")], Enc::Utf16, caps()).await;
    assert_eq!(
        c.notification("folio/status").await,
        json!({"documents": 0, "brokenLinks": 0})
    );
    let root = root(&c);
    assert_eq!(
        c.take("window/showMessage"),
        vec![json!({"type": 2, "message": format!("folio: no Markdown files under {root}")})]
    );
    assert_eq!(
        c.take("$/progress").last().unwrap()["value"],
        json!({"kind": "end", "message": "0 documents, 0 broken links"})
    );
    // A new buffer, symbols, search and reindex: answers, no further messages.
    let uri = c.uri("new.md");
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": "# New\n"}})).await;
    assert_eq!(
        c.call("workspace/symbol", json!({"query": "new"})).await[0]["name"],
        "New"
    );
    let found = c.call("folio/search", json!({"query": "anything"})).await;
    assert_eq!(found["results"], json!([]));
    let summary = c.call("folio/reindex", json!(null)).await;
    assert_eq!(summary["files"], json!(0));
    assert_eq!(c.take("window/showMessage"), Vec::<Value>::new());

    // A folder added later without Markdown: one message for it.
    let second = tempfile::tempdir().unwrap();
    write_files(second.path(), &[("data.json", "{}\n")]);
    let second_path = second.path().canonicalize().unwrap();
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri_of(&second_path), "name": "two"}], "removed": []}}),
    )
    .await;
    c.until_pending("window/showMessage", 1).await;
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(
        c.take("window/showMessage"),
        vec![
            json!({"type": 2, "message": format!("folio: no Markdown files under {}", second_path.display())})
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_folio_status_the_scan_progress_does_not_count_broken_links() {
    // Counting is a diagnostics pass over every document: only for clients that show it.
    let mut c = Client::start(
        &[("a.md", A), ("c.md", C)],
        Enc::Utf16,
        json!({"window": {"workDoneProgress": true}}),
    )
    .await;
    let root = root(&c);
    c.until_pending("$/progress", 3).await;
    assert_eq!(
        c.requests_of("window/workDoneProgress/create"),
        vec![json!({"token": "folio/scan/1"})]
    );
    assert_eq!(
        c.take("$/progress"),
        vec![
            json!({"token": "folio/scan/1", "value": {"kind": "begin", "title": "folio: indexing", "cancellable": false, "message": format!("scanning {root}")}}),
            json!({"token": "folio/scan/1", "value": {"kind": "report", "message": format!("2 documents in {root}")}}),
            json!({"token": "folio/scan/1", "value": {"kind": "end", "message": "2 documents"}}),
        ]
    );
    assert_eq!(c.take("folio/status"), Vec::<Value>::new());
}

/// A `folio.toml` the editor cannot use is shown to the user once, at start-up and after
/// each change of the file: a `[search]` number out of range (folio/search refuses it),
/// and a file that does not load (the defaults, or the previous configuration, apply).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_folio_toml_is_shown_as_a_warning() {
    let mut c = Client::start(
        &[
            ("a.md", A),
            ("folio.toml", "[search]\ncorpus_centering = 3\n"),
        ],
        Enc::Utf16,
        caps(),
    )
    .await;
    c.notification("folio/status").await;
    let root = root(&c);
    let file = format!("{root}/folio.toml");
    assert_eq!(
        c.take("window/showMessage"),
        vec![json!({"type": 2, "message": format!(
            "folio: invalid {file}: [search] corpus_centering must be between 0 and 1, got 3; folio/search refuses until it is fixed"
        )})]
    );
    let found = c
        .request("folio/search", json!({"query": "anything"}))
        .await;
    assert_eq!(
        found["error"]["message"],
        "[search] corpus_centering must be between 0 and 1, got 3"
    );
    // A typo in a key: the file does not load, the previous configuration stays.
    write_files(
        c.dir.path(),
        &[("folio.toml", "[search]\ncorpus_centring = 0\n")],
    );
    let uri = c.uri("folio.toml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 2}]}),
    )
    .await;
    let shown = c.notification("window/showMessage").await;
    let message = shown["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("folio: invalid {file}: "))
            && message.contains("unknown field `corpus_centring`")
            && message.ends_with("; keeping the previous configuration"),
        "{message}"
    );
    // Fixed: no further message, and search answers.
    write_files(
        c.dir.path(),
        &[("folio.toml", "[search]\ncorpus_centering = 0\n")],
    );
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 2}]}),
    )
    .await;
    // The change is applied in order with other notifications, not before the next
    // request: ask until the new file is read.
    let mut found = json!(null);
    for _ in 0..200 {
        found = c
            .request("folio/search", json!({"query": "anything"}))
            .await;
        if found.get("error").is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(found["result"]["results"].is_array(), "{found}");
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(c.take("window/showMessage"), Vec::<Value>::new());
}
