//! `textDocument/prepareRename`, `textDocument/rename` (headings and reference labels, and
//! from a link: the heading its fragment names or the file its path names) and
//! `workspace/willRenameFiles`.

use serde_json::{Value, json};

use crate::common::{Client, Enc, range};
use crate::{A, B, at, start};

both_encodings!(
    rename_heading,
    rename_reference_label,
    will_rename_files,
    rename_heading_from_links,
    rename_file_from_link_path,
    rename_file_needs_client_support
);

async fn rename_heading(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    // prepareRename on the anchor after the emoji names the heading.
    let r = c
        .call(
            "textDocument/prepareRename",
            at(&c, "a.md", 4, enc.col(46, 48)),
        )
        .await;
    assert_eq!(
        r,
        json!({"range": range(4, enc.col(45, 47), 4, enc.col(51, 53)), "placeholder": "Set Up"})
    );
    let r = c
        .call("textDocument/prepareRename", at(&c, "a.md", 2, 5))
        .await;
    assert_eq!(
        r,
        json!({"range": range(2, 3, 2, 9), "placeholder": "Set Up"})
    );
    let mut params = at(&c, "a.md", 4, enc.col(46, 48));
    params["newName"] = json!("Getting Started");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(2, 3, 2, 9), "newText": "Getting Started"},
                {"range": range(4, enc.col(45, 47), 4, enc.col(51, 53)), "newText": "getting-started"},
            ],
            b.clone(): [{"range": range(4, 17, 4, 23), "newText": "getting-started"}],
        }})
    );
    // Renaming `# Alpha` to "Set Up" turns the later `## Set Up` (#set-up, which links
    // use) into #set-up-1: the links to it follow in the same edit.
    let mut params = at(&c, "a.md", 0, 3);
    params["newName"] = json!("Set Up");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(0, 2, 0, 7), "newText": "Set Up"},
                {"range": range(4, enc.col(45, 47), 4, enc.col(51, 53)), "newText": "set-up-1"},
            ],
            b.clone(): [{"range": range(4, 17, 4, 23), "newText": "set-up-1"}],
        }})
    );
    // Renaming the later heading to an earlier one's name is safe: it becomes #alpha-1.
    let mut params = at(&c, "a.md", 2, 5);
    params["newName"] = json!("Alpha");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r["changes"][b.clone()],
        json!([{"range": range(4, 17, 4, 23), "newText": "alpha-1"}])
    );
    // Nothing to rename on plain text: an error for this request only, LSP's
    // RequestFailed (the request was well formed).
    let mut params = at(&c, "a.md", 4, 1);
    params["newName"] = json!("x");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(r["error"]["code"], -32803, "{r}");
    assert_eq!(
        c.call("textDocument/prepareRename", at(&c, "a.md", 4, 1))
            .await,
        Value::Null
    );
}

async fn rename_reference_label(enc: Enc) {
    let mut c = start(enc).await;
    let a = c.uri("a.md");
    let mut params = at(&c, "a.md", 6, 9);
    params["newName"] = json!("label");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {a: [
            {"range": range(6, 8, 6, 11), "newText": "label"},
            {"range": range(8, 1, 8, 4), "newText": "label"},
        ]}})
    );
}

async fn will_rename_files(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    let new = c.uri("sub/bee.md");
    let r = c
        .call(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": b, "newUri": new}]}),
        )
        .await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "newText": "sub/bee.md"},
                {"range": range(5, 28, 5, 32), "newText": "sub/bee.md"},
                {"range": range(6, 19, 6, 20), "newText": "bee"},
                {"range": range(6, 29, 6, 30), "newText": "bee"},
                {"range": range(8, 7, 8, 11), "newText": "sub/bee.md"},
            ],
            b.clone(): [{"range": range(4, 12, 4, 16), "newText": "../a.md"}],
        }})
    );
    // A name no wiki link can hold: the client renames anyway, so the Markdown links are
    // updated, the wiki links left as written, and the user is told.
    let r = c
        .call(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": b, "newUri": c.uri("b #2.md")}]}),
        )
        .await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "newText": "b%20%232.md"},
                {"range": range(5, 28, 5, 32), "newText": "b%20%232.md"},
                {"range": range(8, 7, 8, 11), "newText": "b%20%232.md"},
            ],
        }})
    );
    let shown = c.notification("window/showMessage").await;
    assert_eq!(
        shown,
        json!({"type": 2, "message": "folio: no wiki link can name `b #2.md`: `#` starts a heading, `|` an alias, and `[` or `]` end the link; 2 wiki links in 1 document (first in `a.md`) would break; they were left as written. Rename the file again to a name without these characters to keep them"})
    );
}

/// The edit that renames `## Beta Two` of b.md to "Second Beta", wherever it is asked for.
fn beta_renamed(c: &Client, enc: Enc) -> Value {
    json!({"changes": {
        c.uri("a.md"): [
            {"range": range(4, enc.col(23, 25), 4, enc.col(31, 33)), "newText": "second-beta"},
            {"range": range(6, 31, 6, 39), "newText": "Second Beta"},
        ],
        c.uri("b.md"): [{"range": range(2, 3, 2, 11), "newText": "Second Beta"}],
    }})
}

async fn rename_heading_from_links(enc: Enc) {
    let mut c = start(enc).await;
    // On the fragment of `[b](b.md#beta-two)`, after the emoji.
    let r = c
        .call(
            "textDocument/prepareRename",
            at(&c, "a.md", 4, enc.col(25, 27)),
        )
        .await;
    assert_eq!(
        r,
        json!({"range": range(4, enc.col(23, 25), 4, enc.col(31, 33)), "placeholder": "Beta Two"})
    );
    let mut params = at(&c, "a.md", 4, enc.col(25, 27));
    params["newName"] = json!("Second Beta");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(r, beta_renamed(&c, enc));
    // On the heading part of `[[b#Beta Two]]`: the same heading, the same edit.
    let r = c
        .call("textDocument/prepareRename", at(&c, "a.md", 6, 33))
        .await;
    assert_eq!(
        r,
        json!({"range": range(6, 31, 6, 39), "placeholder": "Beta Two"})
    );
    let mut params = at(&c, "a.md", 6, 33);
    params["newName"] = json!("Second Beta");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(r, beta_renamed(&c, enc));
    // And at the heading itself.
    let mut params = at(&c, "b.md", 2, 5);
    params["newName"] = json!("Second Beta");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(r, beta_renamed(&c, enc));
}

/// A client that applies file renames in workspace edits (VS Code).
async fn start_renaming(enc: Enc) -> Client {
    let caps = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}}});
    let mut c = Client::start(&[("a.md", A), ("b.md", B)], enc, caps).await;
    c.open("a.md").await;
    c
}

async fn rename_file_from_link_path(enc: Enc) {
    let mut c = start_renaming(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    // On the path of `[b](b.md#beta-two)`, after the emoji: the file, as written.
    let r = c
        .call(
            "textDocument/prepareRename",
            at(&c, "a.md", 4, enc.col(19, 21)),
        )
        .await;
    assert_eq!(
        r,
        json!({"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "placeholder": "b.md"})
    );
    // The new name is read as the link reads its path: relative to a.md. The link edits
    // are willRenameFiles' (one engine), then the rename; a.md is open at version 1.
    let mut params = at(&c, "a.md", 4, enc.col(19, 21));
    params["newName"] = json!("sub/bee.md");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"documentChanges": [
            {"textDocument": {"uri": a.clone(), "version": 1}, "edits": [
                {"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "newText": "sub/bee.md"},
                {"range": range(5, 28, 5, 32), "newText": "sub/bee.md"},
                {"range": range(6, 19, 6, 20), "newText": "bee"},
                {"range": range(6, 29, 6, 30), "newText": "bee"},
                {"range": range(8, 7, 8, 11), "newText": "sub/bee.md"},
            ]},
            {"textDocument": {"uri": b.clone(), "version": null}, "edits": [
                {"range": range(4, 12, 4, 16), "newText": "../a.md"},
            ]},
            {"kind": "rename", "oldUri": b.clone(), "newUri": c.uri("sub/bee.md"),
             "options": {"overwrite": false, "ignoreIfExists": false}},
        ]})
    );
    // On the name of the wiki link `[[b]]`: a new name in b.md's folder, `.md` kept.
    let r = c
        .call("textDocument/prepareRename", at(&c, "a.md", 6, 20))
        .await;
    assert_eq!(r, json!({"range": range(6, 19, 6, 20), "placeholder": "b"}));
    let mut params = at(&c, "a.md", 6, 20);
    params["newName"] = json!("bee");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"documentChanges": [
            {"textDocument": {"uri": a.clone(), "version": 1}, "edits": [
                {"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "newText": "bee.md"},
                {"range": range(5, 28, 5, 32), "newText": "bee.md"},
                {"range": range(6, 19, 6, 20), "newText": "bee"},
                {"range": range(6, 29, 6, 30), "newText": "bee"},
                {"range": range(8, 7, 8, 11), "newText": "bee.md"},
            ]},
            {"kind": "rename", "oldUri": b.clone(), "newUri": c.uri("bee.md"),
             "options": {"overwrite": false, "ignoreIfExists": false}},
        ]})
    );
    // A name that is taken is refused with the reason.
    let mut params = at(&c, "a.md", 6, 20);
    params["newName"] = json!("a");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(
        r["error"]["message"], "textDocument/rename: `a.md` already exists",
        "{r}"
    );
    // A name no wiki link can hold (`[[b #2]]` reads as note `b`, heading `2`) is refused.
    let mut params = at(&c, "a.md", 6, 20);
    params["newName"] = json!("b #2");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(
        r["error"]["message"],
        "textDocument/rename: no wiki link can name `b #2.md`: `#` starts a heading, `|` an alias, and `[` or `]` end the link; 2 wiki links in 1 document (first in `a.md`) would break. Choose a name without these characters",
        "{r}"
    );
}

async fn rename_file_needs_client_support(enc: Enc) {
    let mut c = start(enc).await;
    let mut params = at(&c, "a.md", 4, enc.col(19, 21));
    params["newName"] = json!("bee.md");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(
        r["error"]["message"],
        "textDocument/rename: renaming a file needs a client that applies file renames in workspace edits (documentChanges with the `rename` resource operation)",
        "{r}"
    );
}
