//! `textDocument/definition`, `textDocument/references` and `textDocument/hover`.

use serde_json::{Value, json};

use crate::common::{Enc, range};
use crate::{at, start};

both_encodings!(definition, alias_definition, references, hover);

async fn definition(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let a = c.uri("a.md");
    // `[b](b.md#beta-two)` after the emoji.
    let r = c
        .call(
            "textDocument/definition",
            at(&c, "a.md", 4, enc.col(15, 17)),
        )
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(2, 0, 2, 11)}));
    // `[self](#set-up)`.
    let r = c
        .call(
            "textDocument/definition",
            at(&c, "a.md", 4, enc.col(40, 42)),
        )
        .await;
    assert_eq!(r, json!({"uri": a, "range": range(2, 0, 2, 9)}));
    // `[[b#Beta Two]]`, `[[b]]`, `[r][lbl]`.
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 33))
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(2, 0, 2, 11)}));
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 19))
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(0, 0, 0, 0)}));
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 5))
        .await;
    assert_eq!(r, json!({"uri": a, "range": range(8, 0, 8, 11)}));
    // Plain text: nothing.
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 4, 2))
        .await;
    assert_eq!(r, Value::Null);
}

/// `[[alias]]` leads to the note whose frontmatter gives that alias; with a heading, to
/// the heading; and the link is no broken one.
async fn alias_definition(enc: Enc) {
    let mut c = crate::common::Client::start(
        &[
            (
                "Project Plan.md",
                "---\naliases: [Roadmap, \"Q3 plan\"]\n---\n# Project Plan\n\n## Milestones\n",
            ),
            (
                "notes.md",
                "# Notes\n\nSee [[Roadmap]] and [[q3 plan#Milestones]].\n",
            ),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("notes.md").await;
    assert_eq!(c.diagnostics("notes.md").await, json!([]));
    let plan = c.uri("Project Plan.md");
    let r = c
        .call("textDocument/definition", at(&c, "notes.md", 2, 8))
        .await;
    assert_eq!(r, json!({"uri": plan, "range": range(0, 0, 0, 0)}));
    let r = c
        .call("textDocument/definition", at(&c, "notes.md", 2, 26))
        .await;
    assert_eq!(r, json!({"uri": plan, "range": range(5, 0, 5, 13)}));
}

async fn references(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    // From the heading `## Set Up`.
    let mut params = at(&c, "a.md", 2, 4);
    params["context"] = json!({"includeDeclaration": true});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(
        r,
        json!([
            {"uri": a, "range": range(2, 0, 2, 9)},
            {"uri": a, "range": range(4, enc.col(37, 39), 4, enc.col(52, 54))},
            {"uri": b, "range": range(4, 8, 4, 24)},
        ])
    );
    // A position past the last line names nothing.
    let mut params = at(&c, "a.md", 99_999, 0);
    params["context"] = json!({"includeDeclaration": true});
    assert_eq!(c.call("textDocument/references", params).await, Value::Null);
    // From the reference definition `[lbl]`.
    let mut params = at(&c, "a.md", 8, 2);
    params["context"] = json!({"includeDeclaration": false});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(r, json!([{"uri": a, "range": range(6, 4, 6, 12)}]));
    // From the file (cursor on plain text of b.md): every link to b.md.
    c.open("b.md").await;
    let mut params = at(&c, "b.md", 4, 2);
    params["context"] = json!({"includeDeclaration": false});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(
        r,
        json!([
            {"uri": a, "range": range(4, enc.col(14, 16), 4, enc.col(32, 34))},
            {"uri": a, "range": range(5, 24, 5, 42)},
            {"uri": a, "range": range(6, 17, 6, 22)},
            {"uri": a, "range": range(6, 27, 6, 41)},
            {"uri": a, "range": range(8, 0, 8, 11)},
        ])
    );
}

async fn hover(enc: Enc) {
    let mut c = start(enc).await;
    let r = c
        .call("textDocument/hover", at(&c, "a.md", 4, enc.col(20, 22)))
        .await;
    assert_eq!(
        r,
        json!({
            "contents": {"kind": "markdown", "value": "`b.md`\n\n---\n\n## Beta Two\n\nBack to [a](a.md#set-up)."},
            "range": range(4, enc.col(14, 16), 4, enc.col(32, 34))
        })
    );
}
