//! `textDocument/documentLink`.

use serde_json::json;

use crate::common::{Enc, range};
use crate::start;

both_encodings!(document_links);

async fn document_links(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let r = c
        .call(
            "textDocument/documentLink",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    let link =
        |l1, c1, l2, c2| json!({"range": range(l1, c1, l2, c2), "target": b, "tooltip": "b.md"});
    assert_eq!(
        r,
        json!([
            link(4, enc.col(18, 20), 4, enc.col(31, 33)),
            link(5, 28, 5, 41),
            link(6, 19, 6, 20),
            link(6, 29, 6, 30),
            link(8, 7, 8, 11),
        ])
    );
}
