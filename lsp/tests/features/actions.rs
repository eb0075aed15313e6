//! `textDocument/codeAction`: creating a missing file, fixing a broken anchor, and the
//! repair core attaches to a link whose file exists under another letter case.

use serde_json::json;

use crate::common::{Client, Enc, range};
use crate::{A, B, start};

both_encodings!(code_actions, case_mismatch_fix);

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

async fn case_mismatch_fix(enc: Enc) {
    // `é` is one UTF-16 unit and two UTF-8 bytes, `☕` one unit and three bytes.
    let mut c = Client::start(
        &[
            ("a.md", "Café ☕ [t](Sub/Topic.md)\n"),
            ("sub/topic.md", "# Topic\n"),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    let dest = range(0, enc.col(11, 14), 0, enc.col(23, 26));
    assert_eq!(d.as_array().unwrap().len(), 1);
    assert_eq!(d[0]["code"], "case-mismatch");
    assert_eq!(d[0]["range"], dest);
    let a = c.uri("a.md");
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": range(0, 0, 0, 5), "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(r, json!([]));
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": dest, "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(
        r,
        json!([{
            "title": "Change link to `sub/topic.md`", "kind": "quickfix", "diagnostics": [d[0]], "isPreferred": true,
            "edit": {"changes": {a: [{"range": dest, "newText": "sub/topic.md"}]}}
        }])
    );
}
