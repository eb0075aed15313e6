//! `textDocument/codeAction`: creating a missing file and fixing a broken anchor.

use serde_json::json;

use crate::common::{Client, Enc, range};
use crate::{A, B, start};

both_encodings!(code_actions);

async fn code_actions(enc: Enc) {
    let mut c = Client::start(
        &[("a.md", A), ("b.md", B)],
        enc,
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}}}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    let (a, missing) = (c.uri("a.md"), c.uri("missing.md"));
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": range(5, 0, 5, 43), "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(
        r,
        json!([
            {
                "title": "Create `missing.md`", "kind": "quickfix", "diagnostics": [d[0]],
                "edit": {"documentChanges": [{"kind": "create", "uri": missing, "options": {"overwrite": false, "ignoreIfExists": true}}]}
            },
            {
                "title": "Change anchor to `#beta-two`", "kind": "quickfix", "diagnostics": [d[1]], "isPreferred": true,
                "edit": {"changes": {a: [{"range": range(5, 33, 5, 41), "newText": "beta-two"}]}}
            },
        ])
    );
    // A client that cannot create files gets only the anchor fix.
    let mut c = start(enc).await;
    let d = c.diagnostics("a.md").await;
    let a = c.uri("a.md");
    let r = c
        .call("textDocument/codeAction", json!({"textDocument": {"uri": a}, "range": range(5, 0, 5, 43), "context": {"diagnostics": d}}))
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|x| x["title"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Change anchor to `#beta-two`"]
    );
}
