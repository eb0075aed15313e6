//! Inline and frontmatter tags through `textDocument/references`, `textDocument/completion`
//! and `workspace/symbol`; and references to a block id (`^id`). Line 5 of `t.md` has an
//! emoji before its tag, so the two encodings differ.

use serde_json::{Value, json};

use crate::at;
use crate::common::{Client, Enc, range};

both_encodings!(
    tag_references,
    tag_completion,
    tag_symbols,
    tag_rename,
    block_id_references
);

const T: &str = "---
tags: [project]
---
# Tasks

😀 #project/alpha and #review.

A block to cite. ^cite
";

const U: &str = "# Other

#project notes and [[t#^cite]] and [x](t.md#^cite).
";

/// The server on `t.md` and `u.md`, both open.
async fn start(enc: Enc) -> Client {
    let mut c = Client::start(&[("t.md", T), ("u.md", U)], enc, json!({})).await;
    c.open("t.md").await;
    c.open("u.md").await;
    c
}

fn references_at(c: &Client, rel: &str, line: u32, character: u32, declaration: bool) -> Value {
    let mut params = at(c, rel, line, character);
    params["context"] = json!({ "includeDeclaration": declaration });
    params
}

async fn tag_references(enc: Enc) {
    let mut c = start(enc).await;
    let (t, u) = (c.uri("t.md"), c.uri("u.md"));
    // On `#project/alpha`: only that tag.
    let r = c
        .call(
            "textDocument/references",
            references_at(&c, "t.md", 5, enc.col(6, 8), true),
        )
        .await;
    assert_eq!(
        r,
        json!([{"uri": t, "range": range(5, enc.col(3, 5), 5, enc.col(17, 19))}])
    );
    // On `#project`: the frontmatter entry, the nested tag and the inline tag.
    let r = c
        .call(
            "textDocument/references",
            references_at(&c, "u.md", 2, 3, false),
        )
        .await;
    assert_eq!(
        r,
        json!([
            {"uri": t, "range": range(1, 7, 1, 14)},
            {"uri": t, "range": range(5, enc.col(3, 5), 5, enc.col(17, 19))},
            {"uri": u, "range": range(2, 0, 2, 8)},
        ])
    );
}

async fn tag_completion(enc: Enc) {
    let mut c = start(enc).await;
    // Type `#pro` on a new last line of u.md.
    c.change(
        "u.md",
        vec![json!({"range": range(3, 0, 3, 0), "text": "See #pro"})],
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "u.md", 3, 8))
        .await;
    let edit = range(3, 5, 3, 8);
    let item = |label: &str, detail: &str| {
        json!({"label": label, "kind": 14, "detail": detail, "filterText": label,
               "textEdit": {"range": edit, "newText": label}})
    };
    assert_eq!(
        r,
        json!([
            item("project", "2 notes"),
            item("project/alpha", "1 note"),
            item("review", "1 note"),
        ])
    );
    // `#` inside a word, or in a code block, offers nothing.
    c.change(
        "u.md",
        vec![json!({"range": range(3, 8, 3, 8), "text": " C#"})],
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "u.md", 3, 11))
        .await;
    assert_eq!(r, Value::Null);
    // In a link's text, in a math block, in a code block: nothing either.
    c.change(
        "u.md",
        vec![json!({"range": range(3, 11, 3, 11), "text": " [see #re](x.md)\n$$\n#re\n$$\n```sh\n#re"})],
    )
    .await;
    for (line, col) in [(3, 20), (5, 3), (8, 3)] {
        let r = c
            .call("textDocument/completion", at(&c, "u.md", line, col))
            .await;
        assert_eq!(r, Value::Null, "line {line}");
    }
}

async fn tag_symbols(enc: Enc) {
    let mut c = start(enc).await;
    let (t, u) = (c.uri("t.md"), c.uri("u.md"));
    let r = c.call("workspace/symbol", json!({"query": "#proj"})).await;
    assert_eq!(
        r,
        json!([
            {"name": "#project", "kind": 20, "location": {"uri": t, "range": range(1, 7, 1, 14)}, "containerName": "t.md"},
            {"name": "#project", "kind": 20, "location": {"uri": u, "range": range(2, 0, 2, 8)}, "containerName": "u.md"},
            {"name": "#project/alpha", "kind": 20, "location": {"uri": t, "range": range(5, enc.col(3, 5), 5, enc.col(17, 19))}, "containerName": "t.md"},
        ])
    );
}

async fn tag_rename(enc: Enc) {
    let mut c = start(enc).await;
    let (t, u) = (c.uri("t.md"), c.uri("u.md"));
    // On `#project/alpha` (after the emoji): its name, without the `#`.
    let r = c
        .call(
            "textDocument/prepareRename",
            at(&c, "t.md", 5, enc.col(6, 8)),
        )
        .await;
    assert_eq!(
        r,
        json!({"range": range(5, enc.col(4, 6), 5, enc.col(17, 19)), "placeholder": "project/alpha"})
    );
    // Renaming `project` (from the frontmatter entry) renames the nested tag too.
    let r = c
        .call("textDocument/prepareRename", at(&c, "t.md", 1, 9))
        .await;
    assert_eq!(
        r,
        json!({"range": range(1, 7, 1, 14), "placeholder": "project"})
    );
    let mut params = at(&c, "t.md", 1, 9);
    params["newName"] = json!("work");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {
            t.clone(): [
                {"range": range(1, 7, 1, 14), "newText": "work"},
                {"range": range(5, enc.col(4, 6), 5, enc.col(11, 13)), "newText": "work"},
            ],
            u.clone(): [{"range": range(2, 1, 2, 8), "newText": "work"}],
        }})
    );
    // A name that is not a tag is refused with the reason.
    let mut params = at(&c, "u.md", 2, 3);
    params["newName"] = json!("two words");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(
        r["error"]["message"],
        "textDocument/rename: `two words` is not a tag name: use letters, digits, emoji, `_`, `-` and `/` (for nesting), with at least one letter or emoji"
    );
}

async fn block_id_references(enc: Enc) {
    let mut c = start(enc).await;
    let (t, u) = (c.uri("t.md"), c.uri("u.md"));
    let expected = json!([
        {"uri": t, "range": range(7, 17, 7, 22)},
        {"uri": u, "range": range(2, 19, 2, 30)},
        {"uri": u, "range": range(2, 35, 2, 50)},
    ]);
    // On `^cite` itself, and on a link to it.
    let r = c
        .call(
            "textDocument/references",
            references_at(&c, "t.md", 7, 19, true),
        )
        .await;
    assert_eq!(r, expected);
    let r = c
        .call(
            "textDocument/references",
            references_at(&c, "u.md", 2, 40, true),
        )
        .await;
    assert_eq!(r, expected);
}
