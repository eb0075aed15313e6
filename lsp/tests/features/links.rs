//! `textDocument/documentLink`.

use serde_json::json;

use crate::common::{Enc, range};
use crate::start;

both_encodings!(document_links);

async fn document_links(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b, missing) = (c.uri("a.md"), c.uri("b.md"), c.uri("missing.md"));
    let r = c
        .call(
            "textDocument/documentLink",
            json!({"textDocument": {"uri": a}}),
        )
        .await;
    let link = |l1, c1, l2, c2, target: String, tooltip: &str| json!({"range": range(l1, c1, l2, c2), "target": target, "tooltip": tooltip});
    // Fragments that name a heading open at its line; a missing file is still a link
    // (the editor offers to create it); a reference usage goes where its definition goes.
    assert_eq!(
        r,
        json!([
            link(
                4,
                enc.col(18, 20),
                4,
                enc.col(31, 33),
                format!("{b}#L3"),
                "b.md"
            ),
            link(
                4,
                enc.col(44, 46),
                4,
                enc.col(51, 53),
                format!("{a}#L3"),
                "a.md"
            ),
            link(
                5,
                8,
                5,
                18,
                missing.clone(),
                "missing.md (does not exist yet)"
            ),
            link(5, 28, 5, 41, b.clone(), "b.md"),
            link(6, 4, 6, 12, b.clone(), "b.md"),
            link(6, 19, 6, 20, b.clone(), "b.md"),
            link(6, 29, 6, 30, format!("{b}#L3"), "b.md"),
            link(8, 7, 8, 11, b.clone(), "b.md"),
        ])
    );
}
