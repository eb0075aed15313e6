//! Lifecycle and session behaviour through the real server loop: multi-root folders
//! added and removed at run time, single-file mode, pull diagnostics, a BOM on disk,
//! closing a buffer, and a failing request that leaves the server running.

mod common;

use common::{Client, Enc, pos, range, summarize, uri_of, write_files};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_folders_are_added_and_removed_at_run_time() {
    let mut c = Client::start(&[("one/a.md", "# Apple\n")], Enc::Utf16, json!({})).await;
    let second = tempfile::tempdir().unwrap();
    write_files(second.path(), &[("b.md", "# Banana\n")]);
    let second_uri = uri_of(&second.path().canonicalize().unwrap());
    let names = |r: &Value| {
        r.as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&c.call("workspace/symbol", json!({"query": "banana"})).await),
        Vec::<String>::new()
    );
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": second_uri, "name": "two"}], "removed": []}}),
    )
    .await;
    assert_eq!(
        names(&c.call("workspace/symbol", json!({"query": "banana"})).await),
        ["Banana", "Banana"]
    );
    // Symbols come from every root.
    assert_eq!(
        names(&c.call("workspace/symbol", json!({"query": "a"})).await).len(),
        4
    );
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": second_uri, "name": "two"}]}}),
    )
    .await;
    assert_eq!(
        names(&c.call("workspace/symbol", json!({"query": "banana"})).await),
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_file_mode_without_a_root() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "lone.md",
                "# Lone\n\n[x](#nope) [s](sibling.txt) [m](gone.md)\n",
            ),
            ("sibling.txt", "x"),
        ],
    );
    let dir_path = dir.path().to_path_buf();
    let mut c = Client::start_with(dir, Enc::Utf8, json!({}), Value::Null).await;
    c.open("lone.md").await;
    let d = c.diagnostics("lone.md").await;
    assert_eq!(
        summarize(&d),
        vec![
            (
                "missing-heading".to_string(),
                range(2, 5, 2, 9),
                "no heading or anchor `#nope` in this document".to_string()
            ),
            (
                "missing-file".to_string(),
                range(2, 32, 2, 39),
                "file `gone.md` does not exist (resolved to `gone.md`)".to_string()
            ),
        ]
    );
    let r = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("lone.md")}}),
        )
        .await;
    assert_eq!(r[0]["name"], "Lone");
    // The user is told, once, why links to notes elsewhere are not checked.
    c.until_pending("window/showMessage", 1).await;
    let folder = dir_path.canonicalize().unwrap();
    assert_eq!(
        c.take("window/showMessage"),
        vec![json!({"type": 2, "message": format!(
            "folio: no folio.toml or .git in {} or above it, so folio serves the files of that folder alone \
             (single-file mode); create folio.toml, even empty, at the root of your notes",
            folder.display()
        )})]
    );
    // Closing the last document of a single-file root clears its diagnostics.
    let uri = c.uri("lone.md");
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    assert_eq!(c.diagnostics("lone.md").await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_diagnostics_when_the_client_supports_them() {
    let mut c = Client::start(
        &[("a.md", "# A\n[b](b.md)\n")],
        Enc::Utf16,
        json!({
            "textDocument": {"diagnostic": {"dynamicRegistration": false}},
            "workspace": {"diagnostics": {"refreshSupport": true}}
        }),
    )
    .await;
    c.open("a.md").await;
    let uri = c.uri("a.md");
    let r = c
        .call(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    assert_eq!(r["kind"], "full");
    assert_eq!(summarize(&r["items"])[0].0, "missing-file");
    assert_eq!(summarize(&r["items"])[0].1, range(1, 4, 1, 8));
    // Nothing is pushed to a pulling client.
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert!(
        !c.notifications
            .iter()
            .any(|n| n["method"] == "textDocument/publishDiagnostics")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_pulls_but_cannot_refresh_gets_pushes() {
    let mut c = Client::start(
        &[("a.md", "# A\n[b](b.md)\n")],
        Enc::Utf16,
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
    )
    .await;
    c.open("a.md").await;
    assert_eq!(summarize(&c.diagnostics("a.md").await)[0].0, "missing-file");
    // Another file appears on disk: the open document's diagnostics are pushed again.
    write_files(c.dir.path(), &[("b.md", "# B\n")]);
    let b = c.uri("b.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 1}]}),
    )
    .await;
    assert_eq!(c.diagnostics("a.md").await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulling_client_is_asked_to_refresh_when_a_linked_file_appears() {
    let mut c = Client::start(
        &[("a.md", "# A\n[b](b.md)\n")],
        Enc::Utf16,
        json!({
            "textDocument": {"diagnostic": {"dynamicRegistration": false}},
            "workspace": {"diagnostics": {"refreshSupport": true}, "didChangeWatchedFiles": {"dynamicRegistration": true}}
        }),
    )
    .await;
    c.open("a.md").await;
    write_files(c.dir.path(), &[("b.md", "# B\n")]);
    let b = c.uri("b.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 1}]}),
    )
    .await;
    // The refresh request arrives before the answer to a later request.
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert!(
        c.server_requests
            .iter()
            .any(|(m, _)| m == "workspace/diagnostic/refresh"),
        "{:?}",
        c.server_requests
    );
    let r = c
        .call(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(r["items"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bom_on_disk_is_not_counted_in_columns() {
    let mut c = Client::start(
        &[
            ("a.md", "[b](b.md#beta-)\n"),
            ("b.md", "\u{feff}# Beta 😀\n[a](a.md)\n"),
        ],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    let b = c.uri("b.md");
    let r = c
        .call(
            "textDocument/definition",
            json!({"textDocument": {"uri": c.uri("a.md")}, "position": pos(0, 1)}),
        )
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(0, 0, 0, 9)}));
    let mut params = json!({"textDocument": {"uri": c.uri("a.md")}, "position": pos(0, 1)});
    params["context"] = json!({"includeDeclaration": false});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(
        r,
        json!([{"uri": c.uri("a.md"), "range": range(0, 0, 0, 15)}])
    );
    // The heading's slug drops the emoji (`beta-`), so the link is fine.
    assert_eq!(c.diagnostics("a.md").await, json!([]));
    // Hover previews the section, which starts after the BOM.
    let r = c
        .call(
            "textDocument/hover",
            json!({"textDocument": {"uri": c.uri("a.md")}, "position": pos(0, 1)}),
        )
        .await;
    assert_eq!(
        r["contents"]["value"],
        "`b.md`\n\n---\n\n# Beta 😀\n[a](a.md)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_buffer_makes_the_disk_copy_current() {
    let mut c = Client::start(
        &[("a.md", "# A\n"), ("b.md", "[a](a.md#a)\n")],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    c.open("b.md").await;
    assert_eq!(c.diagnostics("b.md").await, json!([]));
    let a = c.uri("a.md");
    // Rename the heading in the buffer only: b.md's link breaks.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 2}, "contentChanges": [{"range": range(0, 2, 0, 3), "text": "Z"}]}),
    )
    .await;
    assert_eq!(
        summarize(&c.diagnostics("b.md").await)[0].0,
        "missing-heading"
    );
    // Closing without saving: the disk copy (`# A`) is current again and the link works.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": a}}))
        .await;
    assert_eq!(c.diagnostics("b.md").await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_request_does_not_stop_the_server() {
    let mut c = Client::start(&[("a.md", "# A\n")], Enc::Utf16, json!({})).await;
    c.open("a.md").await;
    let r = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": c.uri("a.md")}, "position": pos(0, 2), "newName": "  "}),
        )
        .await;
    // A name the rules refuse: LSP's RequestFailed.
    assert_eq!(r["error"]["code"], -32803);
    let r = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(r[0]["name"], "A");
    let r = c.call("shutdown", Value::Null).await;
    assert_eq!(r, Value::Null);
}

#[test]
fn a_panic_in_a_handler_becomes_an_error_for_that_request() {
    let r: Result<(), _> = folio_lsp::guard::guarded("test/method", || panic!("boom"));
    let err = r.unwrap_err();
    assert_eq!(
        err.code,
        tower_lsp_server::jsonrpc::ErrorCode::InternalError
    );
    assert_eq!(err.message, "test/method failed: internal error (boom)");
    let ok = folio_lsp::guard::guarded("test/method", || Ok(7)).unwrap();
    assert_eq!(ok, 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_watcher_sees_files_created_on_disk() {
    // This client cannot register file watchers, so the server watches the root itself.
    let mut c = Client::start(&[("a.md", "# A\n[n](new.md)\n")], Enc::Utf16, json!({})).await;
    c.open("a.md").await;
    assert_eq!(summarize(&c.diagnostics("a.md").await)[0].0, "missing-file");
    // Give the watcher a moment to be set up after `initialized`, then create the file.
    c.call("workspace/symbol", json!({"query": ""})).await;
    write_files(c.dir.path(), &[("new.md", "# New\n")]);
    assert_eq!(c.diagnostics("a.md").await, json!([]));
    assert!(
        !c.server_requests
            .iter()
            .any(|(m, _)| m == "client/registerCapability")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folio_toml_configures_diagnostics() {
    let mut c = Client::start(
        &[
            (
                "folio.toml",
                "[diagnostics]\nsilence = [\"missing-file\"]\nfragment_case_sensitive = true\n",
            ),
            ("a.md", "# Title\n[x](gone.md) [t](#Title) [w](#title)\n"),
        ],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d),
        vec![(
            "missing-heading".to_string(),
            range(1, 18, 1, 23),
            "no heading or anchor `#Title` in this document".to_string()
        )]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_in_a_large_workspace_is_filtered_and_incomplete() {
    let names: Vec<(String, String)> = (0..1005)
        .map(|i| (format!("doc-{i:04}.md"), format!("# Doc {i}\n")))
        .collect();
    let mut files: Vec<(&str, &str)> = names
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.push(("a.md", "see [[doc-100\n"));
    let mut c = Client::start(&files, Enc::Utf16, json!({})).await;
    c.open("a.md").await;
    let r = c
        .call(
            "textDocument/completion",
            json!({"textDocument": {"uri": c.uri("a.md")}, "position": pos(0, 13)}),
        )
        .await;
    assert_eq!(r["isIncomplete"], true);
    let labels: Vec<&str> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["doc-1000", "doc-1001", "doc-1002", "doc-1003", "doc-1004"]
    );
    assert_eq!(r["items"][0]["textEdit"]["range"], range(0, 6, 0, 13));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_own_watcher_polls_when_folio_toml_says_so() {
    let mut c = Client::start(
        &[
            (
                "folio.toml",
                "[index]\nwatch = \"poll\"\npoll_interval_ms = 200\n",
            ),
            ("a.md", "# A\n[n](new.md)\n"),
        ],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    assert_eq!(summarize(&c.diagnostics("a.md").await)[0].0, "missing-file");
    c.call("workspace/symbol", json!({"query": ""})).await;
    write_files(c.dir.path(), &[("new.md", "# New\n")]);
    assert_eq!(c.diagnostics("a.md").await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_a_killed_writer_left_half_done_is_finished_on_start_and_said() {
    // Killed after rewriting index.md, before moving task.md: index.md's link is broken.
    let entry = json!({"steps": [
        {"kind": "replace", "path": "index.md", "old": "[t](task.md)\n", "new": "[t](archive/task.md)\n"},
        {"kind": "move", "from": "task.md", "to": "archive/task.md",
         "old": "[home](index.md)\n", "new": "[home](../index.md)\n"},
    ]});
    let entry = entry.to_string();
    let mut c = Client::start(
        &[
            ("index.md", "[t](archive/task.md)\n"),
            ("task.md", "[home](index.md)\n"),
            (".folio/journal/4242-1.json", &entry),
        ],
        Enc::Utf16,
        json!({}),
    )
    .await;
    let message = c.notification("window/showMessage").await;
    assert_eq!(message["type"], json!(3), "{message}");
    assert_eq!(
        message["message"],
        json!(format!(
            "folio finished what an interrupted folio process left half done in {}: a move of task.md → archive/task.md \
             was interrupted with 1 of 2 files not yet changed",
            c.dir.path().canonicalize().unwrap().display()
        ))
    );
    c.open("index.md").await;
    assert_eq!(c.diagnostics("index.md").await, json!([]));
    assert_eq!(
        std::fs::read_to_string(c.path("archive/task.md")).unwrap(),
        "[home](../index.md)\n"
    );
    assert!(!c.path("task.md").exists());
}

/// A change that makes a document large (past the size the server parses under its lock)
/// is parsed on another thread: a request on another document is answered before the
/// large one's parse ends (its diagnostics come later), and requests on the large one
/// wait for every change sent before them, the large one and a small edit after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_documents_answer_while_a_large_change_is_parsed() {
    let mut c = Client::start(
        &[("a.md", "# A\n"), ("b.md", "# B\n\n## Second\n")],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    c.open("b.md").await;
    assert_eq!(c.diagnostics("a.md").await, json!([]));
    assert_eq!(c.diagnostics("b.md").await, json!([]));
    let (big, end_line) = large_text();
    let a = c.uri("a.md");
    c.change("a.md", vec![json!({"text": big})]).await;
    c.change(
        "a.md",
        vec![json!({"range": range(end_line, 3, end_line, 6), "text": "Finish"})],
    )
    .await;
    let b_uri = c.uri("b.md");
    let b = document_symbols(&mut c, &b_uri).await;
    assert_eq!(b[0]["name"], "B");
    assert_eq!(b[0]["children"][0]["name"], "Second");
    assert_eq!(
        published(&c, &a),
        0,
        "b.md's answer waited for a.md's parse"
    );
    // a.md's request waits for both of its changes, the parse included.
    let symbols = document_symbols(&mut c, &a).await;
    assert_eq!(symbols[0]["name"], "A");
    assert_eq!(symbols[0]["children"][0]["name"], "Finish");
    assert_eq!(
        symbols[0]["children"][0]["range"]["start"],
        pos(end_line, 0)
    );
    let diagnostics = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&diagnostics),
        vec![(
            "missing-file".to_string(),
            range(end_line + 2, 4, end_line + 2, 14),
            "file `missing.md` does not exist (resolved to `missing.md`)".to_string()
        )]
    );
}

/// The `documentSymbol` answer for `uri`.
async fn document_symbols(c: &mut Client, uri: &str) -> Value {
    c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
}

/// How many `publishDiagnostics` for `uri` the client has received and not consumed.
fn published(c: &Client, uri: &str) -> usize {
    c.notifications
        .iter()
        .filter(|n| n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri)
        .count()
}

/// 1.87 MB (57 bytes a paragraph), seven times the size parsed under the session's lock:
/// `# A`, 32,768 paragraphs, then `## End` (on the line returned) and a link to a missing
/// file two lines below it.
fn large_text() -> (String, u32) {
    let paragraphs = 2 * 1024 * 1024 / 64;
    let mut big = String::from("# A\n\n");
    for i in 0..paragraphs {
        big.push_str(&format!(
            "Paragraph {i:07} of plain words, long enough to count.\n\n"
        ));
    }
    big.push_str("## End\n\n[x](missing.md)\n");
    assert!(big.len() >= 7 * folio_lsp::session::PARSE_ELSEWHERE_BYTES);
    (big, 2 + 2 * paragraphs as u32)
}

/// A large document opened is parsed aside as a large change is: another document's
/// request is answered first, and the large one's request waits for its parse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_document_opened_is_parsed_aside() {
    let mut c = Client::start(&[("b.md", "# B\n")], Enc::Utf16, json!({})).await;
    c.open("b.md").await;
    assert_eq!(c.diagnostics("b.md").await, json!([]));
    let (big, end_line) = large_text();
    let a = c.uri("a.md");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": a, "languageId": "markdown", "version": 1, "text": big}}),
    )
    .await;
    let b_uri = c.uri("b.md");
    let b = document_symbols(&mut c, &b_uri).await;
    assert_eq!(b[0]["name"], "B");
    assert_eq!(
        published(&c, &a),
        0,
        "b.md's answer waited for a.md's parse"
    );
    let symbols = document_symbols(&mut c, &a).await;
    assert_eq!(symbols[0]["children"][0]["name"], "End");
    assert_eq!(
        symbols[0]["children"][0]["range"]["start"],
        pos(end_line, 0)
    );
    assert_eq!(
        summarize(&c.diagnostics("a.md").await)[0].1,
        range(end_line + 2, 4, end_line + 2, 14)
    );
}

/// A buffer longer than `[index] max_file_size` is served by its headings only (a line
/// scan, no links): the user is told once, with the sizes; its symbols follow its edits;
/// closing and opening it again tells again; under the limit again it is parsed in full.
#[tokio::test]
async fn a_buffer_over_the_size_limit_is_served_by_its_headings_and_the_user_told_once() {
    let section = "## Part\n\nSome words of this long note, repeated often.\n\n";
    let text = format!("# Big\n\n[gone](gone.md)\n\n{}", section.repeat(60));
    assert!(text.len() > 2048);
    let mut c = Client::start(
        &[
            ("folio.toml", "[index]\nmax_file_size = 2048\n"),
            ("small.md", "# Small\n"),
            ("big.md", &text),
        ],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("big.md").await;
    let warning = json!({"type": 2, "message": format!(
        "folio: big.md is {:.1} KiB, over [index] max_file_size (2.0 KiB): while it is this large, folio reads \
         only its headings (a line scan), so its links are not checked and requests about it \
         see no other content; raise max_file_size in folio.toml to have it parsed in full",
        text.len() as f64 / 1024.0
    )});
    c.until_pending("window/showMessage", 1).await;
    assert_eq!(c.take("window/showMessage"), vec![warning.clone()]);
    let codes =
        |d: &Value| -> Vec<String> { summarize(d).into_iter().map(|(code, _, _)| code).collect() };
    // Its link to a missing note is not read while it is this large.
    assert_eq!(codes(&c.diagnostics("big.md").await), Vec::<String>::new());

    // An edit renaming the title: its symbols follow, no second warning.
    c.change(
        "big.md",
        vec![json!({"range": range(0, 2, 0, 5), "text": "Large"})],
    )
    .await;
    c.diagnostics("big.md").await;
    let symbols = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("big.md")}}),
        )
        .await;
    assert_eq!(symbols[0]["name"], "Large");
    let parts = symbols[0]["children"].as_array().unwrap();
    assert_eq!(parts.len(), 60);
    assert_eq!(parts[59]["name"], "Part");
    assert_eq!(c.take("window/showMessage"), Vec::<Value>::new());

    // Under the limit again: parsed in full, its broken link found.
    c.change(
        "big.md",
        vec![json!({"text": "# Small now\n\n[gone](gone.md)\n"})],
    )
    .await;
    assert_eq!(codes(&c.diagnostics("big.md").await), ["missing-file"]);

    // Closed and opened again: told again.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": c.uri("big.md")}}),
    )
    .await;
    c.open("big.md").await;
    c.until_pending("window/showMessage", 1).await;
    assert_eq!(c.take("window/showMessage"), vec![warning]);
}
