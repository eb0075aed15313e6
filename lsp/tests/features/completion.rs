//! `textDocument/completion` after incremental changes: anchors, paths, wiki targets and
//! reference labels.

use serde_json::json;

use crate::common::{Enc, range};
use crate::{at, start};

both_encodings!(completion_after_incremental_change);

async fn completion_after_incremental_change(enc: Enc) {
    let mut c = start(enc).await;
    let uri = c.uri("a.md");
    // Type ` [c](b.md#` at the end of the emoji line, in two changes applied in order.
    let end = enc.col(53, 55);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": range(4, end, 4, end), "text": " [c](b.md"},
            {"range": range(4, end + 9, 4, end + 9), "text": "#"},
        ]}),
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "a.md", 4, end + 10))
        .await;
    let edit_range = range(4, end + 10, 4, end + 10);
    assert_eq!(
        r,
        json!([
            {"label": "beta", "kind": 18, "detail": "Beta", "filterText": "beta", "textEdit": {"range": edit_range, "newText": "beta"}},
            {"label": "beta-two", "kind": 18, "detail": "Beta Two", "filterText": "beta-two", "textEdit": {"range": edit_range, "newText": "beta-two"}},
        ])
    );
    // Paths: after `](` on a new line.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
            {"range": range(9, 0, 9, 0), "text": "😀 [z]("}
        ]}),
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "a.md", 9, enc.col(7, 9)))
        .await;
    let labels: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["b.md"]);
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(7, 9), 9, enc.col(7, 9))
    );
    // Wiki targets and reference labels.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [
            {"range": range(9, enc.col(7, 9), 9, enc.col(7, 9)), "text": ") [[b"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(12, 14)),
        )
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(11, 13), 9, enc.col(12, 14))
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5}, "contentChanges": [
            {"range": range(9, enc.col(12, 14), 9, enc.col(12, 14)), "text": "]] [q][l"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(20, 22)),
        )
        .await;
    assert_eq!(r[0]["label"], "lbl");
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(19, 21), 9, enc.col(20, 22))
    );
    // Anchors of this document after `](#`, with a partly typed anchor replaced.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 6}, "contentChanges": [
            {"range": range(9, enc.col(20, 22), 9, enc.col(20, 22)), "text": "] [s](#se"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(29, 31)),
        )
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["alpha", "set-up"]
    );
    assert_eq!(
        r[1]["textEdit"],
        json!({"range": range(9, enc.col(27, 29), 9, enc.col(29, 31)), "newText": "set-up"})
    );
}
