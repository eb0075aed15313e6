//! `textDocument/foldingRange`.

use serde_json::json;

use crate::common::Enc;
use crate::start;

both_encodings!(folding_ranges, folding_ranges_of_a_closed_document);

async fn folding_ranges(enc: Enc) {
    let mut c = start(enc).await;
    let r = c
        .call(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(
        r,
        json!([{"startLine": 0, "endLine": 8}, {"startLine": 2, "endLine": 8}])
    );
}

/// A document no editor has open is held as an outline (its headings and links); its
/// folding ranges still cover its code blocks and lists, the same as once it is open.
async fn folding_ranges_of_a_closed_document(enc: Enc) {
    let text = "# T\n\n```\none\ntwo\n```\n\n- a\n  - b\n- c\n";
    let mut c = crate::common::Client::start(&[("c.md", text)], enc, json!({})).await;
    let params = json!({"textDocument": {"uri": c.uri("c.md")}});
    let closed = c.call("textDocument/foldingRange", params.clone()).await;
    let expected = json!([
        {"startLine": 0, "endLine": 9},
        {"startLine": 2, "endLine": 5},
        {"startLine": 7, "endLine": 8}
    ]);
    assert_eq!(closed, expected);
    c.open("c.md").await;
    assert_eq!(c.call("textDocument/foldingRange", params).await, expected);
}
