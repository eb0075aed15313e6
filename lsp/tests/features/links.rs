//! `textDocument/documentLink`.

use serde_json::json;

use crate::common::{Client, Enc, range};
use crate::start;

both_encodings!(
    document_links,
    closed_documents_keep_their_external_links_for_requests
);

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

/// A closed document's outline leaves out its external links; what is at a position still
/// comes from its whole parse: the same links and references as once it is open.
async fn closed_documents_keep_their_external_links_for_requests(enc: Enc) {
    let c_md = "# C\n\nSee [site](https://example.com/page) and <https://auto.example>.\n";
    let d_md = "# D\n\n[to c](c.md)\n";
    let mut c = Client::start(&[("c.md", c_md), ("d.md", d_md)], enc, json!({})).await;
    let (uri_c, uri_d) = (c.uri("c.md"), c.uri("d.md"));
    let mut answers = Vec::new();
    for opened in [false, true] {
        if opened {
            c.open("c.md").await;
        }
        let links = c
            .call(
                "textDocument/documentLink",
                json!({"textDocument": {"uri": uri_c}}),
            )
            .await;
        // On the external link's text.
        let mut at_site =
            json!({"textDocument": {"uri": uri_c}, "position": {"line": 2, "character": 6}});
        at_site["context"] = json!({"includeDeclaration": false});
        let on_link = c.call("textDocument/references", at_site).await;
        // On plain text: every link to c.md.
        let mut at_text =
            json!({"textDocument": {"uri": uri_c}, "position": {"line": 2, "character": 1}});
        at_text["context"] = json!({"includeDeclaration": false});
        let on_text = c.call("textDocument/references", at_text).await;
        answers.push((links, on_link, on_text));
    }
    let external = |c1, c2, target: &str| json!({"range": range(2, c1, 2, c2), "target": target});
    let expected = (
        json!([
            external(11, 35, "https://example.com/page"),
            external(42, 62, "https://auto.example"),
        ]),
        json!([]),
        json!([{"uri": uri_d, "range": range(2, 0, 2, 12)}]),
    );
    assert_eq!(answers[0], expected, "closed");
    assert_eq!(answers[1], expected, "open");
}
