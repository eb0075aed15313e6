//! `textDocument/documentSymbol` and `workspace/symbol`.

use serde_json::json;

use crate::common::{Enc, range};
use crate::start;

both_encodings!(document_symbols, workspace_symbols);

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
