//! `workspace/didChangeWatchedFiles`: files created, changed and deleted on disk update the
//! diagnostics of the documents that link to them.

use serde_json::{Value, json};

use crate::common::{self, Client, Enc, range, summarize};
use crate::{A, B};

both_encodings!(watched_files_update_dependents);

async fn watched_files_update_dependents(enc: Enc) {
    let mut c = Client::start(
        &[("a.md", A), ("b.md", B)],
        enc,
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    )
    .await;
    c.open("a.md").await;
    assert_eq!(c.diagnostics("a.md").await.as_array().unwrap().len(), 2);
    // Creating `missing.md` fixes the missing-file diagnostic of a.md, which links to it.
    common::write_files(c.dir.path(), &[("missing.md", "# M\n")]);
    let uri = c.uri("missing.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 1}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d).into_iter().map(|d| d.0).collect::<Vec<_>>(),
        ["missing-heading"]
    );
    // Changing b.md's headings on disk fixes the anchor; deleting b.md breaks every link to it.
    common::write_files(c.dir.path(), &[("b.md", "# Beta\n## Beta Tow\n")]);
    let b = c.uri("b.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 2}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    let found: Vec<(String, Value)> = summarize(&d).into_iter().map(|d| (d.0, d.1)).collect();
    assert_eq!(
        found,
        [
            (
                "missing-heading".to_string(),
                range(4, enc.col(23, 25), 4, enc.col(31, 33))
            ),
            ("missing-heading".to_string(), range(6, 31, 6, 39)),
        ]
    );
    std::fs::remove_file(c.path("b.md")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 3}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    let codes: Vec<String> = summarize(&d).into_iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        [
            "missing-file",
            "missing-file",
            "missing-wiki-target",
            "missing-wiki-target",
            "missing-file"
        ]
    );
    assert!(
        c.server_requests
            .iter()
            .any(|(m, _)| m == "client/registerCapability")
    );
}

/// A file changed while the folders load — after the server read it, before its own
/// `notify` watch is live (the client cannot watch files) — is not lost: once the watch
/// is live, the server compares the files' stamps with those taken at the read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_while_the_folders_load_is_not_lost() {
    let mut c = Client::start_loading_many(&[
        ("a.md", "# A\n\n[b](b.md#new-part)\n"),
        ("b.md", "# B\n\n## Old part\n"),
    ])
    .await;
    // Answered from the outlines of the texts as read: the read is over.
    let early = c
        .call("workspace/symbol", json!({"query": "Old part"}))
        .await;
    assert_eq!(early.as_array().unwrap().len(), 1, "{early}");
    common::write_files(c.dir.path(), &[("b.md", "# B\n\n## New part\n")]);
    c.open("a.md").await;
    let mut codes = Vec::new();
    for _ in 0..20 {
        let d = tokio::time::timeout(std::time::Duration::from_secs(10), c.diagnostics("a.md"))
            .await
            .expect("a.md's diagnostics are published again once b.md's change applies");
        codes = summarize(&d).into_iter().map(|d| d.0).collect::<Vec<_>>();
        if codes.is_empty() {
            break;
        }
        assert_eq!(codes, ["missing-heading"]);
    }
    assert_eq!(codes, Vec::<String>::new());
    let symbols = c
        .call("workspace/symbol", json!({"query": "New part"}))
        .await;
    assert_eq!(symbols.as_array().unwrap().len(), 1, "{symbols}");
}
