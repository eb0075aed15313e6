//! `textDocument/foldingRange`.

use serde_json::json;

use crate::common::Enc;
use crate::start;

both_encodings!(folding_ranges);

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
